"""Reading summaryguard's stamp out of LangGraph state, and writing it in.

LangGraph keeps the running summary in graph state (langmem puts its
``RunningSummary`` under ``state["context"]["running_summary"]``), and graph
state is written atomically with its checkpoint: a checkpoint never holds half
a summary, nor a summary without the stamp written in the same step. So the
stamp lives right next to the summary, as plain JSON data under the key
``summaryguard`` (``state["context"]["summaryguard"]``, or a top-level
``summaryguard`` key for a summary kept at the top level), and any
checkpointer stores it.

The stamp is a :class:`~summaryguard.guard.Summary` without its text plus the
SHA-256 of the text it describes. That digest is what makes the generation
check meaningful here: a running summary replaced without going through the
stamping node (``update_state``, an unwrapped summarizer) no longer matches
its stamp, so its generation is unknown and the resume fails closed.

Everything reads channel values by duck typing; nothing here imports
LangGraph or langmem.

A framework built on LangGraph that keeps its summary elsewhere in graph state
(LangChain's agents keep it as a marked message) registers a *layout*
(:func:`register_layout`): the layout that claims a state reads it instead, so
the graph guard, its adapters and its observer stay the ones of this room.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable, Iterator, Mapping
from typing import Any, Protocol

from summaryguard.guard.model import Summary
from ._refs import DEFAULT_EXTRACTOR, Extractor, every_extractor, lookup_extractor

__all__ = [
    "CONTEXT_KEY",
    "STAMP_KEY",
    "STAMP_VERSION",
    "VisibleRefs",
    "drop_manifest",
    "facts",
    "is_running_summary",
    "locate",
    "make_stamp",
    "next_turn_deps",
    "register_layout",
    "read_stamp",
    "text_digest",
    "unstamped_note",
]

STAMP_KEY = "summaryguard"
CONTEXT_KEY = "context"
RUNNING_SUMMARY_KEY = "running_summary"
MESSAGES_KEY = "messages"
DEPS_KEY = "next_turn_deps"
STAMP_VERSION = 1
_EXTRA = ("v", "summary_sha256", "refs", "messages_key")


class Layout(Protocol):
    """Where another framework keeps its summary and stamp in LangGraph state."""

    def claims(self, values: Mapping[str, Any]) -> bool: ...
    def facts(self, values: Mapping[str, Any], step: Any) -> tuple[Any, ...]: ...
    def drop_manifest(self, values: Mapping[str, Any]) -> tuple[Any, ...]: ...
    def unstamped_note(self, values: Mapping[str, Any]) -> str | None: ...


#: Replaced as a whole on registration, so readers need no lock.
_layouts: tuple[Layout, ...] = ()


def register_layout(layout: Layout) -> None:
    """Let ``layout`` read the states it claims (registering the same class again replaces it)."""
    global _layouts
    _layouts = (*(known for known in _layouts if type(known) is not type(layout)), layout)


def _claimed(values: Any) -> Layout | None:
    if _layouts and isinstance(values, Mapping):
        for layout in _layouts:
            if layout.claims(values):
                return layout
    return None


def text_digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def is_running_summary(value: Any) -> bool:
    """A langmem ``RunningSummary`` or anything shaped like one."""
    return isinstance(getattr(value, "summary", None), str) and hasattr(value, "summarized_message_ids")


def locate(values: Any) -> tuple[Any, Any, str | None]:
    """``(running_summary, stamp, container)`` of a state; ``container`` is ``"context"`` or None (top level)."""
    if not isinstance(values, Mapping):
        return None, None, None
    context = values.get(CONTEXT_KEY)
    if isinstance(context, Mapping):
        running = context.get(RUNNING_SUMMARY_KEY)
        stamp = context.get(STAMP_KEY)
        if running is not None or stamp is not None:
            return running, stamp, CONTEXT_KEY
    stamp = values.get(STAMP_KEY)
    running = next((v for v in values.values() if is_running_summary(v)), None)
    return running, stamp, None


def make_stamp(summary: Summary, text: str, extractor: str, messages_key: str) -> dict[str, Any]:
    """The JSON stamp for ``summary`` (whose text is ``text``)."""
    data = summary.to_dict()
    del data["content"]  # the running summary holds it; the digest ties the two together
    data.update(v=STAMP_VERSION, summary_sha256=text_digest(text), refs=extractor, messages_key=messages_key)
    return data


def read_stamp(stamp: Any, text: str | None) -> tuple[Summary, Mapping[str, Any]]:
    """The stamped :class:`Summary` (with ``text`` as its content) and the stamp's own fields.

    A malformed stamp raises :class:`~summaryguard.guard.CheckpointFormatError`
    naming the field; a guard reading it fails closed.
    """
    from summaryguard.guard.errors import CheckpointFormatError

    if not isinstance(stamp, Mapping):
        raise CheckpointFormatError(STAMP_KEY, f"expected an object, got {type(stamp).__name__}")
    if stamp.get("v") != STAMP_VERSION:
        raise CheckpointFormatError(f"{STAMP_KEY}.v", f"unknown stamp version {stamp.get('v')!r}")
    own = {k: stamp.get(k) for k in _EXTRA}
    body = {k: v for k, v in stamp.items() if k not in _EXTRA}
    body["content"] = text or ""
    return Summary.from_dict(body, where=STAMP_KEY), own


def unstamped_note(values: Any) -> str | None:
    """Why a state's summary cannot be vouched for, for people (None when it can)."""
    layout = _claimed(values)
    if layout is not None:
        return layout.unstamped_note(values)
    running, stamp, where = locate(values)
    if running is not None and stamp is None:
        if where is None and isinstance(values, Mapping) and STAMP_KEY not in values:
            return (
                "the running summary in this checkpoint carries no summaryguard stamp: either its summarization "
                "node is not wrapped with stamp_summaries(), or the graph's state has no 'summaryguard' key, so "
                "LangGraph discarded the stamp (declare `summaryguard: dict` in the state schema), and what "
                "the summary dropped is unknown"
            )
        return (
            "the running summary in this checkpoint carries no summaryguard stamp: it was produced by a "
            "summarization node not wrapped with stamp_summaries(), so what it dropped is unknown"
        )
    if stamp is not None and (running is None or text_digest(running.summary) != _get(stamp, "summary_sha256")):
        return (
            "the running summary in this checkpoint is not the one its summaryguard stamp describes "
            "(replaced by update_state or by an unwrapped summarization node)"
        )
    if running is None and stamp is None and _orphan_summary(values):
        return (
            "the messages hold a summary message (\"" + LANGMEM_SUMMARY_PREFIX + " ...\"), but the state holds "
            "neither its running summary nor its summaryguard stamp (the 'context' channel replaced, say by "
            "update_state, or not declared in the state schema), so what the summary dropped is unknown"
        )
    return None


#: How langmem's default final prompt opens the system message that carries the summary
#: into the conversation (``DEFAULT_FINAL_SUMMARY_PROMPT``).
LANGMEM_SUMMARY_PREFIX = "Summary of the conversation so far:"


def _orphan_summary(values: Any) -> bool:
    """The messages hold langmem's summary message while the state holds neither its running
    summary nor a stamp (the ``context`` channel replaced, or never declared): the
    conversation is a summary, not an exact transcript, and nothing says what it dropped."""
    messages = values.get(MESSAGES_KEY) if isinstance(values, Mapping) else None
    if not isinstance(messages, list):
        return False
    for message in messages:
        content = getattr(message, "content", None)
        if getattr(message, "type", None) == "system" and isinstance(content, str) and content.startswith(
            LANGMEM_SUMMARY_PREFIX
        ):
            return True
    return False


def _get(mapping: Any, key: str) -> Any:
    return mapping.get(key) if isinstance(mapping, Mapping) else None


class VisibleRefs(Collection[str]):
    """The references the next turn can read verbatim: kept by the summary, or in unfolded messages.

    Membership first looks at the summary's kept references; the messages are
    scanned once, on the first miss, so a check with no dependencies costs
    nothing.
    """

    __slots__ = ("kept", "_messages", "_folded", "_extract", "_seen")

    def __init__(self, kept: Mapping[str, str], messages: Any, folded: Any, extract: Extractor) -> None:
        self.kept = kept
        self._messages = messages if isinstance(messages, list) else []
        self._folded = folded or ()
        self._extract = extract
        self._seen: frozenset[str] | None = None

    def _scan(self) -> frozenset[str]:
        seen = self._seen
        if seen is None:
            folded = self._folded
            names = set()
            for message in self._messages:
                if getattr(message, "id", None) in folded:
                    continue
                for ref in self._extract(message):
                    names.add(ref.name)
            seen = self._seen = frozenset(names)
        return seen

    def __contains__(self, ref: object) -> bool:
        return ref in self.kept or ref in self._scan()

    def __iter__(self) -> Iterator[str]:
        return iter(set(self.kept) | self._scan())

    def __len__(self) -> int:
        return len(set(self.kept) | self._scan())

    def __repr__(self) -> str:
        return f"VisibleRefs({sorted(self)})"


def facts(values: Any, step: Any) -> tuple[Any, ...]:
    """The six checkpoint facts of a LangGraph state at checkpoint step ``step``.

    * no summary and no stamp: the state holds the exact transcript, read as
      generation 0 that dropped nothing (every reference in the messages is
      present verbatim), unless its messages hold langmem's summary message
      (:func:`_orphan_summary`): then, as for the next case, ``no-summary``;
    * a running summary without a stamp: no summary summaryguard can vouch for
      (``no-summary``);
    * a stamp whose digest does not match the running summary: the summary's
      generation is unknown (``generation-mismatch`` against the stamp's);
    * otherwise the stamp's generation on both sides (LangGraph wrote them in
      one step) and the references the summary kept plus those of the messages
      it did not fold.
    """
    layout = _claimed(values)
    if layout is not None:
        return layout.facts(values, step)
    turn = step if isinstance(step, int) and not isinstance(step, bool) else None
    running, stamp, _ = locate(values)
    messages_key = MESSAGES_KEY
    if stamp is None:
        if running is not None or _orphan_summary(values):
            return (turn, None, False, None, False, ())
        messages = values.get(messages_key) if isinstance(values, Mapping) else None
        return (turn, 0, True, 0, False, VisibleRefs({}, messages, (), every_extractor))
    text = running.summary if running is not None else None
    summary, own = read_stamp(stamp, text)
    generation = summary.generation if text is not None and text_digest(text) == own["summary_sha256"] else None
    messages_key = own["messages_key"] or MESSAGES_KEY
    extract = lookup_extractor(own["refs"] or DEFAULT_EXTRACTOR)
    folded = getattr(running, "summarized_message_ids", None) if running is not None else None
    return (
        turn,
        summary.generation,
        True,
        generation,
        summary.partial,
        VisibleRefs(summary.verbatim_refs, values.get(messages_key), folded, extract),
    )


def drop_manifest(values: Any) -> tuple[Any, ...]:
    """What the state's stamped summary dropped (empty without a stamp)."""
    layout = _claimed(values)
    if layout is not None:
        return layout.drop_manifest(values)
    running, stamp, _ = locate(values)
    if stamp is None:
        return ()
    summary, _ = read_stamp(stamp, running.summary if running is not None else None)
    return summary.drop_manifest


def next_turn_deps(values: Any) -> Iterable[str]:
    """Dependencies a state declares for its next step (``next_turn_deps``, top level or in ``context``)."""
    if not isinstance(values, Mapping):
        return ()
    deps = values.get(DEPS_KEY)
    if deps is None:
        deps = _get(values.get(CONTEXT_KEY), DEPS_KEY)
    return tuple(deps) if deps else ()
