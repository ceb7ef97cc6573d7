"""What an Agents SDK resume continues from, read for the core's check.

A run continues earlier work in two ways: from a session's history
(``Runner.run(agent, input, session=session)``) and from a restored
``RunState`` (``RunState.from_string`` then ``Runner.run(agent, state)``, a
human-approval resume), whose input holds the history it was started with.
Either may hold a compaction. :func:`resume_checkpoint` gathers both and the
compaction record into one :class:`AgentsCheckpoint`, whose facts the core
checks like any checkpoint's:

* a compaction no record describes, or whose items differ from the ones the
  record's latest generation wrote, has no generation to vouch for it
  (``generation-mismatch``);
* a record left at *intent* whose session no longer holds the history it
  started from is an unfinished compaction (``partial-summary``);
* a record whose compaction is gone from the session has no summary
  (``no-summary``);
* a dependency is present when a readable item holds it (a tool result after
  the compaction) or the stamp kept it verbatim; the drop manifest is the
  stamp's, less what the history now holds again.

No compaction anywhere (and no record) is not summary state: nothing to check.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from summaryguard.guard.model import DroppedRef

from ._items import as_dicts, compaction_digest, holds_compaction, items_digest, tool_refs
from ._records import CompactionRecord, RecordFolder, known_folders

__all__ = ["ADAPTER", "AgentsCheckpoint", "AgentsCheckpointAdapter", "resume_checkpoint"]


@dataclass(frozen=True)
class AgentsCheckpoint:
    """A session's history and/or a restored RunState's input, with the compaction record that describes them."""

    session_id: str | None
    facts: tuple[Any, ...]
    dropped: tuple[DroppedRef, ...] = ()
    #: Why the facts are what they are, for the error's ``details``.
    note: str | None = None
    records: str | None = None
    #: A record that could not be read: the check fails closed with it.
    error: Exception | None = None


class AgentsCheckpointAdapter:
    """Reads an :class:`AgentsCheckpoint` (facts computed when it was made)."""

    name = "openai-agents.AgentsCheckpoint"
    immutable = True

    @staticmethod
    def extract(checkpoint: AgentsCheckpoint) -> tuple[Any, ...]:
        if checkpoint.error is not None:
            raise checkpoint.error
        return checkpoint.facts

    @staticmethod
    def next_turn_deps(checkpoint: AgentsCheckpoint) -> Iterable[str]:
        return ()

    @staticmethod
    def drop_manifest(checkpoint: AgentsCheckpoint) -> tuple[DroppedRef, ...]:
        return checkpoint.dropped


ADAPTER = AgentsCheckpointAdapter()


def _state_items(input: Any) -> list[Any] | None:
    """The items a run continues without a session: the original input of a restored
    ``RunState``, or an input list that holds a compaction item (a compacted history handed
    over as input); None when ``input`` is neither."""
    if isinstance(input, list):
        return as_dicts(input) if holds_compaction(input) else None
    run_state = sys.modules.get("agents.run_state")
    if run_state is None or not isinstance(input, run_state.RunState):
        return None
    original = getattr(input, "_original_input", None)
    return as_dicts(original) if isinstance(original, list) else []


async def resume_checkpoint(input: Any, session: Any) -> AgentsCheckpoint | None:
    """The checkpoint a run with this input and session continues from, or None when it holds no summary state."""
    state_items = _state_items(input)
    carried = "the input list" if isinstance(input, list) else "the restored RunState"
    session_items = as_dicts(await session.get_items()) if session is not None else None
    if state_items is None and session_items is None:
        return None  # a fresh input and no session: nothing earlier is continued
    folder = getattr(session, "records", None)
    if not isinstance(folder, RecordFolder):
        folder = None  # not a stamped session: its compactions, if any, are recorded nowhere
    session_id = getattr(session, "session_id", None)
    state_digest = compaction_digest(state_items) if state_items else None
    session_digest = compaction_digest(session_items) if session_items else None
    try:
        record = _record(folder, session_id, state_digest)
    except Exception as exc:  # noqa: BLE001 - an unreadable record vouches for nothing: the check fails closed
        turn = len(session_items if session_items is not None else state_items or ())
        return AgentsCheckpoint(session_id, (turn, None, True, None, False, ()), error=exc)
    if record is None and session_digest is None and state_digest is None:
        return None
    path = folder.folder if folder is not None else None
    return _checkpoint(record, session_id, session_items, state_items or [], session_digest, state_digest, path, carried)


def _record(folder: RecordFolder | None, session_id: Any, state_digest: str | None) -> CompactionRecord | None:
    if folder is not None and isinstance(session_id, str):
        return folder.read(session_id)
    if state_digest is not None:
        for known in known_folders():  # a RunState resumed without its session: find who wrote its compaction
            found = known.find(state_digest)
            if found is not None:
                return found
    return None


def _checkpoint(
    record: CompactionRecord | None,
    session_id: str | None,
    session_items: list[Any] | None,
    state_items: list[Any],
    session_digest: str | None,
    state_digest: str | None,
    folder: str | None,
    carried: str = "the restored RunState",
) -> AgentsCheckpoint | None:
    present = {ref.name for _, ref in tool_refs(session_items or [])} | {ref.name for _, ref in tool_refs(state_items)}
    turn = len(session_items if session_items is not None else state_items)
    completed = record.completed if record is not None else None
    dropped = tuple(e for e in completed.summary.drop_manifest if e.ref not in present) if completed else ()

    def made(facts: tuple[Any, ...], note: str | None) -> AgentsCheckpoint:
        return AgentsCheckpoint(session_id, facts, dropped, note, folder)

    unfinished = record is not None and not record.finished
    if unfinished and session_items is not None and items_digest(session_items) != record.before:
        generation = record.generation
        return made(
            (turn, generation, True, generation, True, frozenset(present)),
            f"compaction generation {generation} was started (intent recorded) and never recorded done: "
            "the process stopped between folding the history and storing the compacted items",
        )
    digests = [(what, d) for what, d in (("the session", session_digest), (carried, state_digest)) if d]
    if completed is None:
        if not digests:
            return None  # an intent that never touched the history: nothing was compacted
        return made(
            (turn, None, True, None, False, frozenset(present)),
            f"{digests[0][0]} holds a compaction no summaryguard record describes "
            "(compact through stamp_compactions(session) so that each compaction is recorded)",
        )
    generation = completed.generation
    if session_items is not None and session_digest is None:
        return made(
            (turn, generation, False, None, False, frozenset(present)),
            f"the record says compaction generation {generation} wrote this session's history, "
            "but the session holds no compaction items",
        )
    for what, digest in digests:
        if digest != completed.summary_digest:
            return made(
                (turn, generation, True, None, False, frozenset(present)),
                f"{what} holds compaction items that are not the ones generation {generation} wrote "
                "(a compaction made behind the record's back, or a RunState saved before a later compaction)",
            )
    kept = frozenset(completed.summary.verbatim_refs) | present
    return made((turn, generation, True, generation, False, kept), None)
