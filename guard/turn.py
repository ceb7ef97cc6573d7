"""The resumed turn: which checkpoint the current code is running on.

``resume_guard`` enters a resumed turn around the body of the resume function;
``tool_guard`` reads it to refuse re-deriving what the summary dropped. The
state lives in a :class:`contextvars.ContextVar`, so it belongs to one thread
or one asyncio task (and the tasks it creates), never to its neighbours.
Work handed to a thread pool runs outside the turn unless the context is
carried over (``contextvars.copy_context().run``, ``asyncio.to_thread``).
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Iterable
from typing import Any

from .adapter import CheckpointAdapter
from .check import adapter_for, facts_of, unreadable
from .reconcile import DivergenceRecord

__all__ = ["ResumedTurn", "accept_divergence", "current_turn"]


class ResumedTurn:
    """State of one resumed turn: its checkpoint, what it dropped, what was accepted.

    A guarded call does not build this object: it enters the turn with a
    three-slot cell ``[checkpoint, adapter or None, None]`` and the object is made on
    first use (by ``current_turn()``, ``tool_guard`` inside the turn, or an
    acceptance), so the success path pays for one small list.
    """

    __slots__ = ("checkpoint", "adapter", "divergences", "_facts", "_accepted", "_by_tool", "_extra")

    def __init__(self, checkpoint: Any, adapter: CheckpointAdapter, facts: tuple[Any, ...] | None = None) -> None:
        self.checkpoint = checkpoint
        self.adapter = adapter
        self._facts = facts
        #: Divergences accepted during this turn, in order.
        self.divergences: list[DivergenceRecord] = []
        self._accepted: set[str] | None = None
        self._by_tool: dict[str, list[Any]] | None = None
        self._extra: list[Any] = []

    @property
    def facts(self) -> tuple[Any, ...]:
        """The checkpoint's facts (read through the adapter once, when first asked)."""
        facts = self._facts
        if facts is None:
            facts = self._facts = facts_of(self.adapter, self.checkpoint)
        return facts

    @property
    def summary_generation(self) -> int | None:
        return self.facts[3]

    @property
    def checkpoint_turn(self) -> int | None:
        return self.facts[0]

    def dropped_by_tool(self) -> dict[str, list[Any]]:
        """Drop-manifest entries grouped by producing tool (computed once per turn)."""
        by_tool = self._by_tool
        if by_tool is None:
            by_tool = {}
            try:
                manifest = list(self.adapter.drop_manifest(self.checkpoint))
            except Exception as exc:  # noqa: BLE001 - an unknown manifest cannot clear any tool
                raise unreadable(self.adapter, self.checkpoint, exc, "the drop manifest", self.facts) from exc
            for entry in manifest:
                tool = getattr(entry, "tool", None)
                if tool:
                    by_tool.setdefault(tool, []).append(entry)
            self._by_tool = by_tool
        return by_tool

    def dropped_refs(self) -> list[Any]:
        return list(self.adapter.drop_manifest(self.checkpoint)) + list(self._extra)

    def add_dropped(self, entries: Iterable[Any]) -> None:
        """Also refuse what another checkpoint resumed with this one dropped (a pending subgraph's, say)."""
        by_tool = self.dropped_by_tool()
        for entry in entries:
            self._extra.append(entry)
            tool = getattr(entry, "tool", None)
            if tool:
                by_tool.setdefault(tool, []).append(entry)

    def is_accepted(self, ref: str) -> bool:
        return self._accepted is not None and ref in self._accepted

    def record(self, record: DivergenceRecord) -> None:
        if self._accepted is None:
            self._accepted = set()
        if record.ref:
            self._accepted.add(record.ref)
        self.divergences.append(record)

    def __repr__(self) -> str:
        return f"<ResumedTurn turn={self.checkpoint_turn} gen={self.summary_generation} accepted={sorted(self._accepted or ())}>"


#: A cell is ``[checkpoint, adapter, ResumedTurn | None]``; see ResumedTurn.
Cell = list

_make_lock = threading.Lock()


def turn_of(cell: Cell) -> ResumedTurn:
    """The turn object of a cell, made once (tasks and threads may share a cell)."""
    turn = cell[2]
    if turn is None:
        with _make_lock:
            turn = cell[2]
            if turn is None:
                # The compiled fast path leaves the adapter out; it is cached by type.
                adapter = cell[1] if cell[1] is not None else adapter_for(cell[0])
                turn = cell[2] = ResumedTurn(cell[0], adapter)
    return turn


_current: contextvars.ContextVar[Cell | None] = contextvars.ContextVar("summaryguard_turn", default=None)


def current_turn() -> ResumedTurn | None:
    """The resumed turn the caller runs in, or None outside one."""
    cell = _current.get()
    return turn_of(cell) if cell is not None else None


def accept_divergence(refs: str | Iterable[str], *, reason: str, accepted_by: str = "controller") -> list[DivergenceRecord]:
    """Accept, on record, that these dropped references will be re-derived.

    Only inside a resumed turn. Each acceptance becomes a
    :class:`DivergenceRecord` (new provenance) that is kept on the turn and
    handed to the ``summaryguard_divergence_accepted`` hook; afterwards
    ``tool_guard`` lets the producing tool run for these references.
    """
    from .errors import ReconciliationKind, SummaryReconciliationError

    turn = current_turn()
    if turn is None:
        raise RuntimeError("accept_divergence() is only meaningful inside a resumed turn (a resume_guard-ed call)")
    if not reason or not reason.strip():
        raise ValueError("accept_divergence() needs a reason: the record is the new fact's provenance")
    names = [refs] if isinstance(refs, str) else list(refs)
    records = []
    for ref in names:
        error = SummaryReconciliationError(
            turn.summary_generation, turn.checkpoint_turn, ref, reason, kind=ReconciliationKind.REDERIVATION
        )
        record = DivergenceRecord.from_error(error, reason, accepted_by)
        turn.record(record)
        records.append(record)
    _announce(records)
    return records


def _announce(records: list[DivergenceRecord]) -> None:
    from summaryguard.plugins.manager import get_plugin_manager

    hook = get_plugin_manager().hook.summaryguard_divergence_accepted
    for record in records:
        hook(record=record)
