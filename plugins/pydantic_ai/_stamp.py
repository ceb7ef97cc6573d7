"""``StampedHistory``: pydantic-ai's history processing, with every compaction stamped in the history itself.

In pydantic-ai v2 history processing is a capability (``ProcessHistory``):
before each model request the processor may rewrite the history, and what it
returns *is* the history from then on (``RunContext.messages``, hence
``all_messages()``, hence whatever the application persists). A processor
that summarizes folds older messages into a summary message and records
nothing of what the fold lost.

``StampedHistory(processor)`` runs the processor through ``ProcessHistory``
unchanged and compares the history before and after. When messages were
folded away, it stamps the summary message (the last message the processor
added; with none added, the first message it kept): generation = parent + 1,
drop manifest, SHA-256 of the summary's text. A response carries it in its
``metadata``; a request in a text item of its user prompt (its ``metadata``
would not survive: pydantic-ai merges adjacent requests when it continues a
history and keeps only its own key of theirs). Either way the stamp lives in
the summary, so the history's JSON carries summary and stamp together or neither.

A summary is ``partial`` (never a silent good stamp) when its message says it
was cut off (a ``ModelResponse`` whose ``finish_reason`` is ``length``,
``content_filter`` or ``error``, or a request left ``interrupted``), when it
has no text although messages were folded, or when it extends a partial
summary. A processor that raises leaves the history as it was: nothing is
stamped, and the run fails as pydantic-ai fails it.

``StampedCompaction(capability)`` does the same around any capability that
compacts in its ``before_model_request`` (pydantic-ai-harness's strategies,
which write their summary as a ``CompactionPart``).

It refuses to extend a summary it cannot vouch for (a stamp that no longer
matches its message's text, or one that cannot be read): summarizing a
summary of unknown provenance compounds a loss nobody recorded.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from pydantic_ai.capabilities import ProcessHistory, WrapperCapability
from pydantic_ai.messages import TextContent

from summaryguard.guard.compactor import Compactor, Turn
from summaryguard.guard.errors import ReconciliationKind, SummaryReconciliationError
from summaryguard.guard.model import Summary
from summaryguard.guard.turn import current_turn

from ._history import (
    STAMP_KEY,
    Stamped,
    call_ids,
    carried_text,
    carrier,
    make_stamp,
    message_text,
    stamped_summaries,
    tool_refs,
)

__all__ = ["StampedCompaction", "StampedHistory", "stamp_fold"]

#: Why a model stopped that means its text is not the whole summary.
_CUT_OFF = frozenset({"length", "content_filter", "error"})


@dataclasses.dataclass
class StampedHistory(ProcessHistory[Any]):
    """``ProcessHistory`` (same argument: the history processor) whose every fold is stamped in the summary message."""

    async def before_model_request(self, ctx: Any, request_context: Any) -> Any:
        before = list(request_context.messages)
        request_context = await super().before_model_request(ctx, request_context)
        stamped = stamp_fold(before, list(request_context.messages))
        if stamped is not None:
            request_context.messages = list(stamped)
            ctx.messages[:] = stamped
        return request_context

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None  # takes a callable, as ProcessHistory


@dataclasses.dataclass
class StampedCompaction(WrapperCapability[Any]):
    """Any compaction capability (pydantic-ai-harness's ``SummarizingCompaction``, ``SlidingWindowCompaction``,
    your own), every fold of which is stamped: everything else is the wrapped capability's.

    Such a capability rewrites ``RunContext.messages`` in its ``before_model_request``; the
    history before and after it is compared as for :class:`StampedHistory`."""

    async def before_model_request(self, ctx: Any, request_context: Any) -> Any:
        before = list(ctx.messages)
        request_context = await self.wrapped.before_model_request(ctx, request_context)
        stamped = stamp_fold(before, list(ctx.messages))
        if stamped is not None:
            ctx.messages[:] = stamped
            request_context.messages = list(stamped)
        return request_context

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None


def stamp_fold(before: Sequence[Any], after: Sequence[Any]) -> list[Any] | None:
    """``after`` with its summary message stamped, when the processor folded messages of ``before``; else None."""
    if len(after) == len(before) and all(a is b for a, b in zip(after, before)):
        return None  # the common case: nothing changed
    kept = [any(m is a or m == a for a in after) for m in before]
    if all(kept):
        return None  # nothing folded away (messages added or edited in place): no compaction
    olds = [m for m, k in zip(before, kept) if k]
    added = [i for i, a in enumerate(after) if not any(a is m or a == m for m in olds)]
    if added:
        at = added[-1]
    elif after:
        at = 0  # folded without a summary message (a trim): the first message kept carries the stamp
    else:
        return None  # everything dropped, nowhere to stamp: the history holds no summary to resume from
    message = after[at]
    stamps = stamped_summaries(before)
    previous, previous_folded = _previous(stamps, kept)
    turns = [
        Turn(index=i, content=message_text(m), refs=tool_refs(m))
        for i, (m, k) in enumerate(zip(before, kept))
        if not k and not _is_stamped(m, stamps)
    ]
    # A kept tool result whose call was folded away is dropped by pydantic-ai's history repair
    # before the next request (an orphan): lost to this fold as much as what it folded.
    calls = call_ids(after)
    for i, (m, k) in enumerate(zip(before, kept)):
        orphans = tuple(r for r in tool_refs(m) if r not in tool_refs(m, calls)) if k else ()
        if orphans:
            turns.append(Turn(index=i, content="", refs=orphans))
    at_part = carrier(message)
    text = carried_text(message, at_part)
    base = previous if previous is None or previous_folded else dataclasses.replace(previous, verbatim_refs={})
    summary = Compactor._stamp(base, tuple(turns), text)
    why = _cut_off(message, text)
    if why is not None or (previous is not None and previous.partial):
        summary = dataclasses.replace(summary, partial=True)
    stamp = make_stamp(summary, text)
    if why is not None:
        stamp["partial_reason"] = why
    result = list(after)
    result[at] = _with_stamp(message, at_part, stamp)
    turn = current_turn()
    if turn is not None:
        turn.add_dropped(summary.drop_manifest)  # lost to the rest of this resumed run too
    return result


def _with_stamp(message: Any, at_part: int | None, stamp: dict[str, Any]) -> Any:
    """``message`` carrying ``stamp`` where :func:`~._history.carrier` says: its ``metadata``, a
    ``CompactionPart``'s ``metadata``, or a text item of its user prompt (where a merge of requests keeps it)."""
    if at_part is None:
        return dataclasses.replace(message, metadata={**(getattr(message, "metadata", None) or {}), STAMP_KEY: stamp})
    part = message.parts[at_part]
    if part.part_kind == "compaction":
        new_part = dataclasses.replace(part, metadata={**(part.metadata or {}), STAMP_KEY: stamp})
    else:
        items = [part.content] if isinstance(part.content, str) else list(part.content)
        last = max(i for i, item in enumerate(items) if isinstance(item, (str, TextContent)))
        item = items[last]
        if isinstance(item, str):
            items[last] = TextContent(item, metadata={STAMP_KEY: stamp})
        else:
            old = item.metadata if isinstance(item.metadata, dict) else {}
            items[last] = dataclasses.replace(item, metadata={**old, STAMP_KEY: stamp})
        new_part = dataclasses.replace(part, content=items)
    parts = list(message.parts)
    parts[at_part] = new_part
    return dataclasses.replace(message, parts=parts)


def _is_stamped(message: Any, stamps: list[Stamped]) -> bool:
    return any(s.message is message for s in stamps)


def _previous(stamps: list[Stamped], kept: list[bool]) -> tuple[Summary | None, bool]:
    """The stamped summary this fold extends, and whether the fold folds it; refuses one it cannot vouch for."""
    if not stamps:
        return None, False
    latest = stamps[-1]
    if latest.summary is None or not latest.matches:
        why = (
            f"its stamp cannot be read ({latest.error})"
            if latest.summary is None
            else "its text is not the one its stamp describes (edited or replaced after it was stamped)"
        )
        raise SummaryReconciliationError(
            latest.summary.generation if latest.summary is not None else None,
            latest.index,
            "",
            f"the history's summary message (messages[{latest.index}]): {why}; refusing to extend it: "
            "summarizing a summary of unknown provenance compounds the loss",
            kind=ReconciliationKind.GENERATION_MISMATCH,
        )
    return latest.summary, not kept[latest.index]


def _cut_off(message: Any, text: str) -> str | None:
    """Why the summary message is not a whole summary, or None."""
    reason = getattr(message, "finish_reason", None)
    if reason in _CUT_OFF:
        return f"the summarizer stopped with finish_reason={reason!r}"
    if getattr(message, "state", "complete") == "interrupted":
        return "the summary message was interrupted before it was complete"
    opaque = any(getattr(p, "part_kind", None) == "compaction" and getattr(p, "content", None) is None for p in message.parts)
    if not text.strip() and not opaque:  # an opaque provider compaction holds no text to show, by design
        return "the summary message has no text"
    return None
