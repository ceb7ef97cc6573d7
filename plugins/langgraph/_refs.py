"""Which references a LangGraph message holds, and under which name.

A drop manifest is only as good as its reference names: the stamp written at
compaction and the check made at resume must name a reference the same way.
So the function that extracts references (an *extractor*) is registered under
its qualified name, the stamp records that name, and the reader looks the same
function up again. Messages are read by duck typing (``type``, ``name``,
``content``, ``id``), so this module imports nothing from LangChain.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

from summaryguard.guard.compactor import ProducedRef

__all__ = [
    "DEFAULT_EXTRACTOR",
    "Extractor",
    "extractor_name",
    "lookup_extractor",
    "message_text",
    "every_extractor",
    "register_extractor",
    "tool_message_refs",
]

#: ``extract(message) -> references it produced``
Extractor = Callable[[Any], Iterable[ProducedRef]]


def message_text(message: Any) -> str:
    """The text of a message: a string content, or the text parts of a block list."""
    content = getattr(message, "content", message)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
        return "\n".join(parts)
    return "" if content is None else str(content)


def tool_message_refs(message: Any) -> tuple[ProducedRef, ...]:
    """The default extractor: a tool result is one reference, named after its tool.

    ``ToolMessage(name="create_vm", content="vm-1")`` holds the reference
    ``create_vm`` with the value ``vm-1``, produced by the tool ``create_vm``;
    a later result of the same tool supersedes it. The whole text is the
    value, so a summary keeps the reference only if it quotes the result
    verbatim; register your own extractor when a result holds several
    references or a larger document around one.
    """
    if getattr(message, "type", None) != "tool":
        return ()
    tool = getattr(message, "name", None) or None
    text = message_text(message)
    if not tool or not text:
        return ()
    return (ProducedRef(name=tool, value=text, tool=tool),)


def extractor_name(extract: Extractor) -> str:
    """``module.qualname`` of an extractor: the name a stamp records."""
    module = getattr(extract, "__module__", None) or "?"
    qualname = getattr(extract, "__qualname__", None) or type(extract).__qualname__
    return f"{module}.{qualname}"


DEFAULT_EXTRACTOR = extractor_name(tool_message_refs)

_lock = threading.Lock()
_registry: dict[str, Extractor] = {DEFAULT_EXTRACTOR: tool_message_refs}


def register_extractor(extract: Extractor) -> str:
    """Make ``extract`` findable by name, so a stamp that records the name can be read back."""
    if not callable(extract):
        raise TypeError(f"a reference extractor must be callable, got {type(extract).__name__}")
    name = extractor_name(extract)
    with _lock:
        _registry[name] = extract
    return name


def lookup_extractor(name: str) -> Extractor:
    """The extractor a stamp names; unknown names fail loudly (the names would not match)."""
    extract = _registry.get(name)
    if extract is None:
        raise LookupError(
            f"the summary was stamped with reference extractor {name!r}, which is not registered in this "
            "process; build the graph (stamp_summaries(..., refs=that_function)) before resuming it"
        )
    return extract


def every_extractor(message: Any) -> list[ProducedRef]:
    """The references any registered extractor finds: for a state no stamp describes yet.

    Such a state is an exact transcript (nothing was summarized), so a
    reference any extractor sees in it is there verbatim; asking all of them
    keeps the answer independent of which graphs were built first.
    """
    with _lock:
        extractors = list(_registry.values())
    found: list[ProducedRef] = []
    for extract in extractors:
        found.extend(extract(message))
    return found
