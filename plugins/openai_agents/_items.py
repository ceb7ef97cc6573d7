"""Reading the Agents SDK's conversation items: references, readable text, digests.

A session holds Responses input items (dicts, or pydantic models the SDK
dumps). A tool result is a ``function_call_output`` whose tool is named only
by the ``function_call`` with the same ``call_id``; a compaction leaves
``{"type": "compaction", "encrypted_content": ...}`` items whose text nobody
outside OpenAI can read. So a reference is kept across a compaction only if
its value still stands verbatim in a *readable* item afterwards; what went
into the encrypted item is dropped, as far as anyone can show.

Pure functions over plain data: this module imports nothing from the SDK.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from summaryguard.guard.compactor import ProducedRef
from summaryguard.guard.model import canonical_json, content_digest

__all__ = ["COMPACTION", "as_dicts", "compaction_digest", "compaction_items", "items_digest", "readable_text", "tool_refs"]

#: The item type ``responses.compact`` writes (opaque, encrypted).
COMPACTION = "compaction"


def as_dicts(items: Iterable[Any]) -> list[Mapping[str, Any]]:
    """Items as mappings (the SDK stores dicts; a RunState may hold pydantic models)."""
    out: list[Mapping[str, Any]] = []
    for item in items:
        if isinstance(item, Mapping):
            out.append(item)
        elif hasattr(item, "model_dump"):
            out.append(item.model_dump(exclude_unset=True, warnings=False))
        else:
            out.append({"type": type(item).__name__, "text": str(item)})
    return out


def compaction_items(items: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [item for item in items if item.get("type") == COMPACTION]


def holds_compaction(items: Iterable[Any]) -> bool:
    """Whether a run's input list holds a compaction item (a compacted history handed over as
    input, without its session): read without converting the items."""
    for item in items:
        kind = item.get("type") if isinstance(item, Mapping) else getattr(item, "type", None)
        if kind == COMPACTION:
            return True
    return False


def items_digest(items: Sequence[Mapping[str, Any]]) -> str:
    """The digest of a list of items (canonical JSON, so the same items give the same digest in any process)."""
    return content_digest({"items": list(items)})


def compaction_digest(items: Sequence[Mapping[str, Any]]) -> str | None:
    """The digest of the compaction items among ``items`` (the summary, opaque as it is), or None if there are none."""
    found = compaction_items(items)
    return items_digest(found) if found else None


def tool_refs(items: Sequence[Mapping[str, Any]]) -> list[tuple[int, ProducedRef]]:
    """Each tool result as a reference named after its tool, with the index of its item.

    The default convention of summaryguard's framework rooms: ``create_vm``
    returning ``vm-1`` holds the reference ``create_vm`` with the value
    ``vm-1``; a later result of the same tool supersedes it.
    """
    names: dict[str, str] = {}
    found: list[tuple[int, ProducedRef]] = []
    for index, item in enumerate(items):
        kind = item.get("type")
        if kind == "function_call":
            call_id, name = item.get("call_id"), item.get("name")
            if isinstance(call_id, str) and isinstance(name, str) and name:
                names[call_id] = name
        elif kind == "function_call_output":
            tool = names.get(item.get("call_id"))  # type: ignore[arg-type]
            text = _output_text(item.get("output"))
            if tool and text:
                found.append((index, ProducedRef(name=tool, value=text, tool=tool)))
    return found


def readable_text(items: Sequence[Mapping[str, Any]]) -> str:
    """Every text a reader can see in ``items``; encrypted compaction content counts for nothing."""
    parts: list[str] = []
    for item in items:
        if item.get("type") == COMPACTION:
            continue
        content = item.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(_output_text(block) for block in content)
        if "output" in item:
            parts.append(_output_text(item.get("output")))
        if isinstance(item.get("arguments"), str):
            parts.append(item["arguments"])
    return "\n".join(p for p in parts if p)


def _output_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, Mapping):
        text = output.get("text")
        return text if isinstance(text, str) else ""
    if isinstance(output, list):
        return "\n".join(_output_text(part) for part in output)
    if output is None:
        return ""
    return canonical_json({"v": output}).decode("utf-8")[5:-1]
