"""What a pydantic-ai resume continues from: a message history, read for the core's check.

``agent.run(prompt, message_history=history)`` (and ``deferred_tool_results=``
after an approval, or ``conversation=``) continues the history it is handed.
When that history holds a summaryguard-stamped summary message (see
:mod:`._stamp`), :func:`history_checkpoint` turns it into a
:class:`HistoryCheckpoint` whose facts the core checks like any checkpoint's:

* the stamp is the checkpoint's record of the generation; the summary's own
  generation is the stamp's only while the message's text is the one it was
  stamped with (digest) and no earlier summary in the history claims the same
  or a later generation (``generation-mismatch`` otherwise);
* a stamp that says ``partial`` is a half-written summary (``partial-summary``);
* a dependency is present when a stamped summary kept it verbatim, or a tool
  result still in the history holds it: the dropped value verbatim, or a newer
  result after the summary (a result the fold kept but cut short bears the
  tool's name, not the value: it brings nothing back); the drop manifest is the
  latest stamp's, less what the history now holds again.

A history with no stamp is no summary state (pydantic-ai marks no message as
a summary): nothing to check.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from summaryguard.guard.compactor import occurs_verbatim
from summaryguard.guard.model import DroppedRef

from ._history import call_ids, stamped_summaries, tool_refs

__all__ = ["ADAPTER", "HistoryCheckpoint", "history_checkpoint"]


@dataclass(frozen=True)
class HistoryCheckpoint:
    """A message history holding a stamped summary, with the six facts computed when it was read."""

    facts: tuple[Any, ...]
    dropped: tuple[DroppedRef, ...] = ()
    #: Why the facts are what they are, for the error's ``details``.
    note: str | None = None
    #: Which message holds the latest summary.
    summary_index: int | None = None


class HistoryCheckpointAdapter:
    """Reads a :class:`HistoryCheckpoint` (facts computed when it was made)."""

    name = "pydantic-ai.HistoryCheckpoint"
    immutable = True

    @staticmethod
    def extract(checkpoint: HistoryCheckpoint) -> tuple[Any, ...]:
        return checkpoint.facts

    @staticmethod
    def next_turn_deps(checkpoint: HistoryCheckpoint) -> Iterable[str]:
        return ()

    @staticmethod
    def drop_manifest(checkpoint: HistoryCheckpoint) -> tuple[DroppedRef, ...]:
        return checkpoint.dropped


ADAPTER = HistoryCheckpointAdapter()


def history_checkpoint(messages: Sequence[Any]) -> HistoryCheckpoint | None:
    """The checkpoint a run handed ``messages`` continues from, or None when they hold no stamped summary."""
    stamps = stamped_summaries(messages)
    if not stamps:
        return None
    turn = len(messages)
    calls = call_ids(messages)  # a result whose call is gone is dropped by pydantic-ai before the next request
    results = [(i, ref) for i, message in enumerate(messages) for ref in tool_refs(message, calls)]
    present = {ref.name for _, ref in results}
    latest = stamps[-1]
    if latest.summary is None:
        return HistoryCheckpoint(
            (turn, None, True, None, False, frozenset(present)),
            note=f"the stamp of messages[{latest.index}] cannot be read: {latest.error}",
            summary_index=latest.index,
        )
    summary = latest.summary
    generation = summary.generation
    verbatim: set[str] = set()
    for stamp in stamps:
        if stamp.summary is not None and stamp.matches:
            verbatim.update(stamp.summary.verbatim_refs)

    def undone(entry: DroppedRef) -> bool:
        # A tool result brings a dropped reference back when it holds the dropped value verbatim, or
        # comes after the summary (a newer call). A result the fold kept but rewrote (a processor that
        # cuts long tool outputs) bears the tool's name without the value: the drop stands.
        value = entry.last_known
        return any(
            ref.name == entry.ref
            and (i > latest.index or (isinstance(value, str) and bool(value) and occurs_verbatim(value, ref.value)))
            for i, ref in results
        )

    dropped = tuple(e for e in summary.drop_manifest if e.ref not in verbatim and not undone(e))
    kept = (verbatim | present) - {e.ref for e in dropped}
    note = None
    own: int | None = generation
    if not latest.matches:
        own = None
        note = (
            f"the summary message (messages[{latest.index}]) is not the text its stamp of generation "
            f"{generation} describes: it was edited or replaced after compaction"
        )
    else:
        later = [s for s in stamps[:-1] if s.summary is not None and s.summary.generation >= generation]
        if later:
            own = None
            note = (
                f"messages[{latest.index}] holds generation {generation}, but an earlier summary "
                f"(messages[{later[0].index}]) holds generation {later[0].summary.generation}: "  # type: ignore[union-attr]
                "histories of two lineages were spliced"
            )
    if own is not None and summary.partial:
        why = latest.stamp.get("partial_reason") or "it extends a partial summary"
        note = f"the summary of generation {generation} is partial: {why}"
    facts = (turn, generation, True, own, summary.partial, frozenset(kept))
    return HistoryCheckpoint(facts, dropped, note, latest.index)
