"""Reading Google ADK session events: references, compactions, what the model still sees, the stamp.

An ADK session is a list of ``Event`` objects. A tool result is a
``function_response`` part (``{"result": value}`` when the tool returned a
non-dict); a compaction is an *appended* event whose ``actions.compaction``
is an ``EventCompaction(start_timestamp, end_timestamp, compacted_content)``,
and the raw events it covers stay in the session. When ADK builds the model's
context it shows each compaction that no other one contains, and hides every
raw event inside a shown compaction's time range: so a reference is still
visible after a compaction when its value stands verbatim in a shown summary,
or when it comes from a raw event outside every compacted range.

summaryguard's stamp lives in the compaction event's ``custom_metadata``
(under ``summaryguard``): ADK appends that event in one write, so the stamp
is persisted atomically with the summary it describes.

Pure functions over ADK's objects, read by their attributes: this module
imports nothing from ADK.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from summaryguard.guard.compactor import ProducedRef
from summaryguard.guard.errors import CheckpointFormatError
from summaryguard.guard.model import Summary, canonical_json, content_digest

__all__ = [
    "STAMP_KEY",
    "Extractor",
    "Stamp",
    "compactions",
    "content_text",
    "default_refs",
    "event_refs",
    "live_events",
    "make_stamp",
    "read_stamp",
    "resumed_invocation",
    "shown_compactions",
    "text_digest",
    "unanswered_calls",
    "visible_raw_events",
]

#: The ``custom_metadata`` key of the stamp.
STAMP_KEY = "summaryguard"
FORMAT = 1

#: ``extract(tool_name, response) -> references``: what one tool response holds.
Extractor = Callable[[str, Any], Iterable[ProducedRef]]


def _scalar_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None:
        return ""
    if isinstance(value, (int, float)):
        return str(value)
    return canonical_json({"v": value}).decode("utf-8")[5:-1]


def default_refs(tool: str, response: Any) -> list[ProducedRef]:
    """The default convention of summaryguard's framework rooms, for ADK's response dicts.

    ``create_vm`` returning ``"vm-1"`` (ADK stores ``{"result": "vm-1"}``) holds
    the reference ``create_vm`` with the value ``vm-1``. A tool that returns a
    dict holds one reference per top-level field with a value, named
    ``tool.field`` (``create_vm`` returning ``{"vm": "vm-1", "log": ...}`` holds
    ``create_vm.vm`` and ``create_vm.log``), each produced by the tool.
    """
    if not isinstance(response, Mapping):
        text = _scalar_text(response)
        return [ProducedRef(tool, text, tool)] if text else []
    if set(response) == {"result"}:
        text = _scalar_text(response["result"])
        return [ProducedRef(tool, text, tool)] if text else []
    refs = []
    for key, value in response.items():
        text = _scalar_text(value)
        if text and isinstance(key, str):
            refs.append(ProducedRef(f"{tool}.{key}", text, tool))
    return refs


def live_events(events: Sequence[Any]) -> list[Any]:
    """``events`` without the invocations a rewind annulled (``actions.rewind_before_invocation_id``).

    ADK's rule (its ``_apply_rewinds``, which both its prompt building and its
    compaction follow): walking back from the end, a rewind event drops itself
    and every event back to the first event of the invocation it names. A
    rewound tool result, or a rewound compaction, is never shown to the model
    again, so it can neither keep a reference present nor be the summary a run
    continues from. Read by attributes, like everything here.
    """
    first: dict[Any, int] | None = None
    kept: list[Any] = []
    i = len(events) - 1
    while i >= 0:
        event = events[i]
        actions = getattr(event, "actions", None)
        target = getattr(actions, "rewind_before_invocation_id", None) if actions is not None else None
        if target:
            if first is None:
                first = {}
                for index, other in enumerate(events):
                    invocation = getattr(other, "invocation_id", None)
                    if invocation and invocation not in first:
                        first[invocation] = index
            back = first.get(target)
            if back is not None and back < i:
                i = back
        else:
            kept.append(event)
        i -= 1
    kept.reverse()
    return kept


def _parts(event: Any) -> Sequence[Any]:
    content = getattr(event, "content", None)
    parts = getattr(content, "parts", None)
    return parts or ()


def event_refs(event: Any, extract: Extractor = default_refs) -> list[ProducedRef]:
    """The references the tool responses of ``event`` hold."""
    refs: list[ProducedRef] = []
    for part in _parts(event):
        response = getattr(part, "function_response", None)
        name = getattr(response, "name", None)
        if response is not None and isinstance(name, str) and name:
            refs.extend(extract(name, getattr(response, "response", None)))
    return refs


def content_text(content: Any) -> str:
    """Every text part of a ``Content`` (a summary's text), joined by newlines."""
    parts = getattr(content, "parts", None) or ()
    return "\n".join(t for t in (getattr(p, "text", None) for p in parts) if isinstance(t, str) and t)


def text_digest(text: str) -> str:
    return content_digest({"text": text})


def _compaction(event: Any) -> Any:
    actions = getattr(event, "actions", None)
    return getattr(actions, "compaction", None) if actions is not None else None


def compactions(events: Sequence[Any]) -> list[tuple[int, Any]]:
    """Each compaction event of the session, with its index, in order."""
    return [(i, e) for i, e in enumerate(events) if _compaction(e) is not None]


def _range(event: Any) -> tuple[float, float] | None:
    compaction = _compaction(event)
    if compaction is None or getattr(compaction, "compacted_content", None) is None:
        return None
    start, end = getattr(compaction, "start_timestamp", None), getattr(compaction, "end_timestamp", None)
    if not isinstance(start, (int, float)) or not isinstance(end, (int, float)):
        return None
    return float(start), float(end)


def shown_compactions(events: Sequence[Any]) -> list[tuple[int, Any]]:
    """The compactions ADK shows the model: those no other compaction's range contains.

    The rule of ADK's context builder: sorted by start, then by descending end
    and index, a range is shown when it reaches past every range before it.
    """
    ranged = [(i, e, r) for i, e in enumerate(events) if (r := _range(e)) is not None]
    shown: set[int] = set()
    max_end: float | None = None
    for index, _, (_, end) in sorted(ranged, key=lambda t: (t[2][0], -t[2][1], -t[0])):
        if max_end is None or end > max_end:
            shown.add(index)
            max_end = end
    return [(i, e) for i, e, _ in ranged if i in shown]


def visible_raw_events(events: Sequence[Any]) -> list[Any]:
    """The raw (non-compaction) events outside every shown compaction's range: the model still reads them."""
    ranges = sorted(r for _, e in shown_compactions(events) if (r := _range(e)) is not None)
    out = []
    for event in events:
        if _compaction(event) is not None:
            continue
        ts = getattr(event, "timestamp", None)
        if isinstance(ts, (int, float)) and any(start <= ts <= end for start, end in ranges):
            continue
        out.append(event)
    return out


@dataclass(frozen=True)
class Stamp:
    """A compaction event's stamp: the summary's facts (without its text), the digest of the text, why partial."""

    summary: Summary
    summary_digest: str
    note: str | None = None


def make_stamp(summary: Summary, text: str, note: str | None = None) -> dict[str, Any]:
    """The JSON the compaction event's ``custom_metadata`` carries (the summary text stays in the event)."""
    body = summary.to_dict()
    body["content"] = ""
    return {"format": FORMAT, "summary": body, "summary_sha256": text_digest(text), "note": note}


def read_stamp(event: Any) -> Stamp | None:
    """The stamp of a compaction event, or None when it has none; a malformed stamp is an error (fail closed)."""
    metadata = getattr(event, "custom_metadata", None)
    if not isinstance(metadata, Mapping) or STAMP_KEY not in metadata:
        return None
    where = f"event {getattr(event, 'id', '?')}.custom_metadata.{STAMP_KEY}"
    raw = metadata[STAMP_KEY]
    if not isinstance(raw, Mapping) or raw.get("format") != FORMAT:
        raise CheckpointFormatError(where, f"not a summaryguard stamp (format {FORMAT})")
    digest, note = raw.get("summary_sha256"), raw.get("note")
    if not isinstance(digest, str) or not (note is None or isinstance(note, str)):
        raise CheckpointFormatError(where, "needs a str summary_sha256 and a str or null note")
    return Stamp(Summary.from_dict(raw.get("summary"), f"{where}.summary"), digest, note)


def _responses(content: Any) -> set[str]:
    ids = set()
    for part in getattr(content, "parts", None) or ():
        response = getattr(part, "function_response", None)
        if response is not None and isinstance(getattr(response, "id", None), str):
            ids.add(response.id)
    return ids


def resumed_invocation(events: Sequence[Any], invocation_id: str | None, new_message: Any) -> str | None:
    """The invocation a run continues: the ``invocation_id`` given, or the one whose calls ``new_message`` answers."""
    if invocation_id:
        return invocation_id
    answered = _responses(new_message)
    if not answered:
        return None
    for event in events:
        for part in _parts(event):
            call = getattr(part, "function_call", None)
            if call is not None and getattr(call, "id", None) in answered:
                return getattr(event, "invocation_id", None)
    return None


def unanswered_calls(events: Sequence[Any], invocation_id: str, new_message: Any = None) -> list[tuple[str, str, Any]]:
    """``(call_id, tool, args)`` of each call of the invocation whose result the session never recorded.

    ADK re-runs such a call when the invocation is resumed (at-least-once): the
    tool may have run before the process stopped, and its result was lost.
    A long-running call (waiting for its answer by design) and a call
    ``new_message`` answers are not among them.
    """
    answered = _responses(new_message)
    for event in events:
        answered |= _responses(getattr(event, "content", None))
    found = []
    for event in events:
        if getattr(event, "invocation_id", None) != invocation_id:
            continue
        waiting = set(getattr(event, "long_running_tool_ids", None) or ())
        for part in _parts(event):
            call = getattr(part, "function_call", None)
            call_id = getattr(call, "id", None)
            if call is None or not isinstance(call_id, str) or call_id in answered or call_id in waiting:
                continue
            found.append((call_id, str(getattr(call, "name", "")), getattr(call, "args", None)))
    return found
