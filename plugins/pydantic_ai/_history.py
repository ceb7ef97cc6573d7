"""Reading a pydantic-ai message history: texts, tool results, and summaryguard's stamp.

A history is a list of ``ModelRequest`` / ``ModelResponse`` messages, each
with ``parts`` and a ``metadata`` dict that ``ModelMessagesTypeAdapter``
round-trips but never sends to the model. The stamping capability (see
:mod:`._stamp`) writes its stamp under :data:`STAMP_KEY` in the summary
message's ``metadata``, so the stamp travels with the summary wherever the
history is persisted (one JSON document: both or neither).

A reference is a tool result (a ``ToolReturnPart``), named after its tool,
whose value is its content as text. Everything here reads by duck typing
(``part_kind``, ``kind``), so this module imports nothing of pydantic-ai.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from summaryguard.guard.compactor import ProducedRef
from summaryguard.guard.model import Summary
from summaryguard.plugins.langgraph._state import text_digest

__all__ = [
    "STAMP_KEY",
    "Stamped",
    "call_ids",
    "carried_text",
    "carrier",
    "content_text",
    "make_stamp",
    "message_text",
    "stamped_summaries",
    "tool_refs",
]

#: The key of summaryguard's stamp in a summary message's ``metadata``.
STAMP_KEY = "summaryguard"

#: The stamp's own keys beside the summary's fields.
_OWN_KEYS = frozenset({"summary_sha256", "partial_reason"})

#: Parts whose content is text the model reads (a summary keeps a reference verbatim there).
_TEXT_PARTS = frozenset({"text", "user-prompt", "system-prompt", "thinking", "tool-return", "retry-prompt", "compaction"})


def content_text(content: Any) -> str:
    """A part's content as text: a string as it is, text items joined, anything else as compact JSON."""
    if isinstance(content, str):
        return content
    if content is None:
        return ""  # an opaque part (a provider's encrypted compaction)
    if isinstance(content, Sequence) and all(isinstance(c, str) or _is_text_item(c) for c in content):
        return "\n".join(c if isinstance(c, str) else c.content for c in content)
    try:
        return json.dumps(content, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(content)


def _is_text_item(item: Any) -> bool:
    return getattr(item, "kind", None) == "text-content" and isinstance(getattr(item, "content", None), str)


def message_text(message: Any) -> str:
    """The text of a message's readable parts, one part a line."""
    texts = []
    for part in getattr(message, "parts", ()) or ():
        if getattr(part, "part_kind", None) in _TEXT_PARTS:
            texts.append(content_text(getattr(part, "content", "")))
    return "\n".join(texts)


def call_ids(messages: Iterable[Any]) -> frozenset[str]:
    """The ids of the tool calls ``messages`` hold."""
    return frozenset(
        part.tool_call_id
        for message in messages
        for part in getattr(message, "parts", ()) or ()
        if getattr(part, "part_kind", None) == "tool-call"
    )


def tool_refs(message: Any, calls: frozenset[str] | None = None) -> tuple[ProducedRef, ...]:
    """Each tool result in ``message`` as a reference named after its tool.

    With ``calls`` (the history's :func:`call_ids`), only the results whose call is still in
    the history: pydantic-ai drops an orphaned tool result before every model request
    (``_clean_message_history``), so a result whose call was folded away is gone too."""
    refs = []
    for part in getattr(message, "parts", ()) or ():
        if getattr(part, "part_kind", None) == "tool-return":
            if calls is not None and getattr(part, "tool_call_id", None) not in calls:
                continue
            name = getattr(part, "tool_name", None)
            if isinstance(name, str) and name:
                refs.append(ProducedRef(name=name, value=content_text(getattr(part, "content", "")), tool=name))
    return tuple(refs)


def make_stamp(summary: Summary, text: str) -> dict[str, Any]:
    """The JSON stamp of ``summary`` (whose message text is ``text``): the summary without its text, and the text's digest."""
    data = summary.to_dict()
    del data["content"]  # the message holds it; the digest ties the two together
    return {**data, "summary_sha256": text_digest(text)}


def carrier(message: Any) -> int | None:
    """The index of the part of ``message`` that carries its stamp, or None for the message's ``metadata``.

    A ``CompactionPart`` (a summary part: pydantic-ai-harness writes its summaries as one, in a
    request) carries it in its own ``metadata``; a request without one, in a ``TextContent`` item
    of its last user prompt. pydantic-ai merges adjacent requests when it continues a history and
    keeps only its own ``__pydantic_ai__`` key of their ``metadata``: a stamp in a request's
    ``metadata`` would be erased by the next run, while a part survives the merge. The summary
    text is then that part's text; a response (never merged with a model's) keeps the message's."""
    parts = getattr(message, "parts", ()) or ()
    for index in range(len(parts) - 1, -1, -1):
        if getattr(parts[index], "part_kind", None) == "compaction":
            return index
    if getattr(message, "kind", None) != "request":
        return None
    for index in range(len(parts) - 1, -1, -1):
        if getattr(parts[index], "part_kind", None) == "user-prompt":
            return index
    return None


def carried_text(message: Any, index: int | None) -> str:
    """The summary text a stamp at ``index`` (see :func:`carrier`) vouches for."""
    if index is None:
        return message_text(message)
    return content_text(getattr(message.parts[index], "content", None) or "")


class Stamped:
    """One stamped summary of a history: where it is, the stamp read back, whether the text still matches."""

    __slots__ = ("error", "index", "matches", "message", "stamp", "summary")

    def __init__(
        self, index: int, message: Any, stamp: Any, summary: Summary | None, matches: bool, error: Exception | None
    ) -> None:
        self.index = index
        self.message = message
        self.stamp = stamp
        self.summary = summary
        self.matches = matches
        self.error = error


def read_stamp(index: int, message: Any, stamp: Any, text: str) -> Stamped:
    """The stamp of the summary ``text`` in ``message``; a malformed one is kept as its error (the check fails closed)."""
    try:
        if not isinstance(stamp, Mapping):
            raise TypeError(f"the stamp is a {type(stamp).__name__}, not a mapping")
        fields = {k: v for k, v in stamp.items() if k not in _OWN_KEYS}
        summary = Summary.from_dict({**fields, "content": text}, where=f"messages[{index}].{STAMP_KEY}")
    except Exception as exc:  # noqa: BLE001 - an unreadable stamp vouches for nothing
        return Stamped(index, message, stamp, None, False, exc)
    return Stamped(index, message, stamp, summary, stamp.get("summary_sha256") == text_digest(text), None)


def stamped_summaries(messages: Iterable[Any]) -> list[Stamped]:
    """Every summary of ``messages`` that carries a summaryguard stamp, in order (where: see :func:`carrier`)."""
    found = []
    for index, message in enumerate(messages):
        metadata = getattr(message, "metadata", None)
        if isinstance(metadata, Mapping) and STAMP_KEY in metadata:
            found.append(read_stamp(index, message, metadata[STAMP_KEY], carried_text(message, None)))
            continue
        for at, part in enumerate(getattr(message, "parts", ()) or ()):
            kind = getattr(part, "part_kind", None)
            if kind == "compaction":
                part_metadata = getattr(part, "metadata", None)
                if isinstance(part_metadata, Mapping) and STAMP_KEY in part_metadata:
                    found.append(read_stamp(index, message, part_metadata[STAMP_KEY], carried_text(message, at)))
                continue
            content = getattr(part, "content", None)
            if kind != "user-prompt" or isinstance(content, str):
                continue
            for item in content or ():
                item_metadata = getattr(item, "metadata", None) if _is_text_item(item) else None
                if isinstance(item_metadata, Mapping) and STAMP_KEY in item_metadata:
                    found.append(read_stamp(index, message, item_metadata[STAMP_KEY], carried_text(message, at)))
    return found
