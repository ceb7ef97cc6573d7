"""What an ADK run continues from, read for the core's check.

An ADK session is its own checkpoint: the runner reloads it (``get_session``)
and shows the model what its compactions left of the history. A run on a
session that holds a compaction (a new message, or ``run_async(invocation_id=...)``
resuming an invocation) continues from a summary, so :func:`session_checkpoint`
turns the session into an :class:`AdkCheckpoint`, whose facts the core checks
like any checkpoint's:

* the latest compaction with no summaryguard stamp (its summarizer was not
  :class:`~._stamp.StampedSummarizer`) has no generation anyone can vouch for
  (``generation-mismatch``), nor has one whose text no longer matches its
  stamp, or whose stamp does not extend the compaction before it;
* a stamp marked partial (a summary cut short) is ``partial-summary``;
* a dependency is present when the stamp kept it verbatim or a raw event the
  model still reads holds it; the drop manifest is the stamp's, less what the
  visible history holds again. Events a rewind annulled count for nothing
  (ADK shows them to the model no more).

A session without compaction events holds no summary: nothing to check.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from summaryguard.guard.model import DroppedRef

from ._events import (
    Extractor,
    compactions,
    content_text,
    default_refs,
    event_refs,
    live_events,
    read_stamp,
    text_digest,
    visible_raw_events,
)

__all__ = ["ADAPTER", "AdkCheckpoint", "AdkCheckpointAdapter", "session_checkpoint"]


@dataclass(frozen=True)
class AdkCheckpoint:
    """An ADK session's compaction state, as facts computed when it was read."""

    session_id: str | None
    facts: tuple[Any, ...]
    dropped: tuple[DroppedRef, ...] = ()
    #: Why the facts are what they are, for the error's ``details``.
    note: str | None = None
    #: The invocation the run resumes (``run_async(invocation_id=...)``), if any.
    invocation_id: str | None = None
    #: A stamp that could not be read: the check fails closed with it.
    error: Exception | None = None


class AdkCheckpointAdapter:
    """Reads an :class:`AdkCheckpoint` (its facts were computed when it was made)."""

    name = "adk.AdkCheckpoint"
    immutable = True

    @staticmethod
    def extract(checkpoint: AdkCheckpoint) -> tuple[Any, ...]:
        if checkpoint.error is not None:
            raise checkpoint.error
        return checkpoint.facts

    @staticmethod
    def next_turn_deps(checkpoint: AdkCheckpoint) -> Iterable[str]:
        return ()

    @staticmethod
    def drop_manifest(checkpoint: AdkCheckpoint) -> tuple[DroppedRef, ...]:
        return checkpoint.dropped


ADAPTER = AdkCheckpointAdapter()


def session_checkpoint(
    session: Any, *, invocation_id: str | None = None, refs: Extractor | None = None
) -> AdkCheckpoint | None:
    """The checkpoint a run on ``session`` continues from, or None when the session holds no compaction."""
    everything = list(getattr(session, "events", None) or ())
    events = live_events(everything)  # what a rewind annulled, the model never reads again
    found = compactions(events)
    if not found:
        return None
    session_id = getattr(session, "id", None)
    turn = len(everything)
    extract = refs or default_refs

    def made(facts: tuple[Any, ...], note: str | None, dropped: tuple[DroppedRef, ...] = ()) -> AdkCheckpoint:
        return AdkCheckpoint(session_id, facts, dropped, note, invocation_id)

    index, latest = found[-1]
    try:
        stamp = read_stamp(latest)
        before = read_stamp(found[-2][1]) if len(found) > 1 else None
    except Exception as exc:  # noqa: BLE001 - an unreadable stamp vouches for nothing: the check fails closed
        return AdkCheckpoint(session_id, (turn, None, True, None, False, ()), (), None, invocation_id, exc)
    present = {ref.name for event in visible_raw_events(events) for ref in event_refs(event, extract)}
    if stamp is None:
        return made(
            (turn, None, True, None, False, frozenset(present)),
            f"compaction event {index} carries no summaryguard stamp: the app's summarizer is not "
            "StampedSummarizer (use stamp_compactions(app)), so what the summary dropped is unknown",
        )
    summary = stamp.summary
    generation = summary.generation
    dropped = tuple(e for e in summary.drop_manifest if e.ref not in present)
    text = content_text(latest.actions.compaction.compacted_content)
    if stamp.summary_digest != text_digest(text):
        return made(
            (turn, None, True, generation, False, frozenset(present)),
            f"compaction event {index} no longer holds the summary its stamp (generation {generation}) describes",
            dropped,
        )
    parent = before.summary.generation if before is not None else None
    if len(found) > 1 and (before is None or summary.parent_generation != parent):
        return made(
            (turn, None, True, generation, False, frozenset(present)),
            f"compaction generation {generation} extends generation {summary.parent_generation}, but the "
            f"compaction before it is {'unstamped' if before is None else f'generation {parent}'}: "
            "a compaction was made behind the stamp's back",
            dropped,
        )
    kept = frozenset(summary.verbatim_refs) | present
    return made((turn, generation, True, generation, summary.partial, kept), stamp.note, dropped)
