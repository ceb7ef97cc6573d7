"""The resumed turn: which checkpoint the current code is running on.

``resume_guard`` enters a resumed turn around the body of the resume function;
``tool_guard`` reads it to refuse re-deriving what the summary dropped. The
state lives in a :class:`contextvars.ContextVar`, so it belongs to one thread
or one asyncio task (and the tasks it creates), never to its neighbours.
Work handed to a thread pool runs outside the turn unless the context is
carried over (``contextvars.copy_context().run``, ``asyncio.to_thread``).

Two rules keep a turn from being talked out of its drops:

- The drop manifest is read when the turn starts (a snapshot of frozen
  entries), so nothing the body does to the checkpoint afterwards (replacing
  its summary, clearing its manifest) changes what is refused.
- A turn entered inside another one (a guarded resume called from a guarded
  resume or tool, or work of one turn run inside another) refuses what it
  dropped itself *and* what the enclosing turn still refuses: nesting adds
  drops, it never replaces them. Acceptances stay with the turn they were
  made in: one made in the enclosing turn (before or during the inner one)
  covers the enclosing turn's drops wherever they are inherited; one made in
  the inner turn covers everything the inner turn refuses, for as long as the
  inner turn lasts, and is not carried back out. Each turn's
  ``divergences`` lists only its own records.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from .adapter import CheckpointAdapter
from .check import adapter_for, facts_of, reference_names, unreadable
from .model import DroppedRef
from .reconcile import DivergenceRecord, check_provenance

__all__ = ["ResumedTurn", "accept_divergence", "current_turn"]


class UnreadableManifest:
    """A drop manifest that could not be read when the turn started: every guarded tool refuses."""

    __slots__ = ("error",)

    def __init__(self, error: Exception) -> None:
        self.error = error


def snapshot_manifest(adapter: CheckpointAdapter, checkpoint: Any) -> tuple[DroppedRef, ...] | UnreadableManifest:
    """The checkpoint's drop manifest now, as frozen entries (or why it cannot be read).

    Entries the adapter gives as mappings, strings or other objects with
    ``ref`` / ``last_known`` / ``tool`` become :class:`DroppedRef`; a manifest
    that is a mapping or a string is refused (iterating it would make entries
    of its keys or characters, which name no tool and refuse nothing).
    """
    try:
        raw = adapter.drop_manifest(checkpoint)
        if not raw:
            return ()
        if isinstance(raw, (str, bytes, Mapping)):
            raise TypeError(f"a drop manifest is a list of entries, got {type(raw).__name__}")
        if type(raw) is tuple and all(type(e) is DroppedRef and (e.tool is None or type(e.tool) is str) for e in raw):
            return raw  # already frozen (summaryguard's own Summary)
        return tuple(_checked(_frozen(entry)) for entry in raw)
    except Exception as exc:  # noqa: BLE001 - an unknown manifest cannot clear any tool: refused at each tool call
        return UnreadableManifest(exc)


def _checked(entry: DroppedRef) -> DroppedRef:
    """``entry``, if it names its reference and its tool as the tool guard matches them (a
    tool named by a list or a number would never match, or fail at the tool call)."""
    if not isinstance(entry.ref, str) or not entry.ref:
        raise TypeError(f"a drop manifest entry names its reference with a string, got {entry.ref!r}")
    if entry.tool is not None and not isinstance(entry.tool, str):
        raise TypeError(f"the drop manifest entry of {entry.ref!r} names its tool with a string, got {entry.tool!r}")
    return entry


def _frozen(entry: Any) -> DroppedRef:
    if isinstance(entry, DroppedRef):
        return entry
    if isinstance(entry, str):
        return DroppedRef(ref=entry)
    if isinstance(entry, Mapping):
        return DroppedRef(entry["ref"], entry.get("last_known"), entry.get("tool"), entry.get("turn"))
    return DroppedRef(entry.ref, getattr(entry, "last_known", None), getattr(entry, "tool", None), getattr(entry, "turn", None))


class ResumedTurn:
    """State of one resumed turn: its checkpoint, what it dropped, what was accepted.

    A guarded call does not build this object: it enters the turn with a
    cell ``[checkpoint, adapter or None, None, manifest snapshot, enclosing cell or None]``
    (see :data:`Cell`) and the object is made on first use (by
    ``current_turn()``, ``tool_guard`` inside the turn, or an acceptance), so
    the success path pays for one small list.

    ``dropped`` is the manifest snapshot taken when the turn started (read
    from the checkpoint now when not given); ``outers`` are the turns this
    one was entered inside, whose unaccepted drops it refuses too.
    """

    __slots__ = ("checkpoint", "adapter", "divergences", "outers", "_facts", "_accepted", "_dropped", "_by_tool", "_extra")

    def __init__(
        self,
        checkpoint: Any,
        adapter: CheckpointAdapter,
        facts: tuple[Any, ...] | None = None,
        *,
        dropped: tuple[Any, ...] | UnreadableManifest | None = None,
        outers: tuple[ResumedTurn, ...] = (),
    ) -> None:
        self.checkpoint = checkpoint
        self.adapter = adapter
        self._facts = facts
        #: Divergences accepted during this turn, in order (its own, not the enclosing turns').
        self.divergences: list[DivergenceRecord] = []
        #: The turns this one runs inside (innermost first), whose drops it adds to its own.
        self.outers = outers
        self._accepted: set[str] | None = None
        self._dropped = snapshot_manifest(adapter, checkpoint) if dropped is None else dropped
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

    def _own(self) -> tuple[Any, ...]:
        dropped = self._dropped
        if isinstance(dropped, UnreadableManifest):
            exc = dropped.error
            raise unreadable(self.adapter, self.checkpoint, exc, "the drop manifest", self.facts) from exc
        return dropped

    def dropped_by_tool(self) -> dict[str, list[Any]]:
        """What this turn refuses, grouped by producing tool.

        Its own manifest (as it was when the turn started) and what was added
        to it, plus what each enclosing turn still refuses (its drops not
        accepted there). An unreadable manifest, here or in an enclosing turn,
        raises: it cannot clear any tool.
        """
        by_tool = self._by_tool
        if by_tool is None:
            by_tool = {}
            for entry in self._own():
                tool = getattr(entry, "tool", None)
                if tool:
                    by_tool.setdefault(tool, []).append(entry)
            self._by_tool = by_tool
        if not self.outers:
            return by_tool
        merged = {tool: list(entries) for tool, entries in by_tool.items()}
        for outer in self.outers:
            for tool, entries in outer.dropped_by_tool().items():
                for entry in entries:
                    if not outer.is_accepted(entry.ref):
                        _add_new(merged.setdefault(tool, []), entry)
        return merged

    def dropped_refs(self) -> list[Any]:
        """Every entry this turn knows as dropped: its manifest, what was added, what enclosing turns still refuse."""
        out: list[Any] = []
        for entry in (*self._own(), *self._extra):
            _add_new(out, entry)
        for outer in self.outers:
            for entry in outer.dropped_refs():
                if not outer.is_accepted(entry.ref):
                    _add_new(out, entry)
        return out

    def add_dropped(self, entries: Iterable[Any]) -> None:
        """Also refuse what another checkpoint resumed with this one dropped (a pending subgraph's, say)."""
        self.dropped_by_tool()
        by_tool = self._by_tool
        assert by_tool is not None
        known = [*self._own(), *self._extra]
        for entry in entries:
            if _add_new(known, entry):
                self._extra.append(entry)
                tool = getattr(entry, "tool", None)
                if tool:
                    by_tool.setdefault(tool, []).append(entry)

    def is_accepted(self, ref: str) -> bool:
        """Whether a divergence for ``ref`` was accepted in this turn (enclosing turns answer for their own drops)."""
        return self._accepted is not None and ref in self._accepted

    def record(self, record: DivergenceRecord) -> None:
        if self._accepted is None:
            self._accepted = set()
        if record.ref:
            self._accepted.add(record.ref)
        self.divergences.append(record)

    def __repr__(self) -> str:
        return f"<ResumedTurn turn={self.checkpoint_turn} gen={self.summary_generation} accepted={sorted(self._accepted or ())}>"


def _add_new(entries: list[Any], entry: Any) -> bool:
    """Append ``entry`` unless one with the same reference and tool is there already."""
    ref, tool = entry.ref, getattr(entry, "tool", None)
    for known in entries:
        if known.ref == ref and getattr(known, "tool", None) == tool:
            return False
    entries.append(entry)
    return True


#: A cell is ``[checkpoint, adapter or None, ResumedTurn or None, manifest snapshot or None,
#: enclosing cell or None, *more enclosing cells]``: what a guarded call enters the turn with.
#: A manifest slot of None (or a three-slot cell) means "read it when the turn object is made".
Cell = list

_make_lock = threading.Lock()


def turn_of(cell: Cell) -> ResumedTurn:
    """The turn object of a cell, made once (tasks and threads may share a cell)."""
    turn = cell[2]
    if turn is None:
        # The enclosing turns first, outside the lock (making them takes it too).
        outers = tuple(turn_of(outer) for outer in cell[4:] if outer is not None)
        # The compiled fast path leaves the adapter out; it is cached by type.
        adapter = cell[1] if cell[1] is not None else adapter_for(cell[0])
        with _make_lock:
            turn = cell[2]
            if turn is None:
                dropped = cell[3] if len(cell) > 3 else None
                turn = cell[2] = ResumedTurn(cell[0], adapter, dropped=dropped, outers=outers)
    return turn


_current: contextvars.ContextVar[Cell | None] = contextvars.ContextVar("summaryguard_turn", default=None)


def current_turn() -> ResumedTurn | None:
    """The resumed turn the caller runs in, or None outside one."""
    cell = _current.get()
    return turn_of(cell) if cell is not None else None


def accept_divergence(refs: str | Iterable[str], *, reason: str, accepted_by: str = "controller") -> list[DivergenceRecord]:
    """Accept, on record, that these dropped references will be re-derived.

    Only inside a resumed turn, and for that turn: the records are kept on the
    innermost turn (see the module docstring for nesting). Each acceptance
    becomes a :class:`DivergenceRecord` (new provenance) that is kept on the
    turn and handed to the ``summaryguard_divergence_accepted`` hook;
    afterwards ``tool_guard`` lets the producing tool run for these references.
    """
    from .errors import ReconciliationKind, SummaryReconciliationError

    turn = current_turn()
    if turn is None:
        raise RuntimeError("accept_divergence() is only meaningful inside a resumed turn (a resume_guard-ed call)")
    check_provenance("accept_divergence", reason, accepted_by)
    names = reference_names("accept_divergence", refs)
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
