"""How the guard reads a checkpoint of any shape.

Agents keep checkpoints as their own objects, as mappings fresh from JSON, or as
framework objects. A :class:`CheckpointAdapter` turns one of those into the few
facts the invariant needs. Adapters come from plugins; the guard resolves one
per checkpoint *type*, once, and caches it, so the success path of a guarded
call never touches the plugin manager.
"""

from __future__ import annotations

from collections.abc import Container, Iterable
from typing import Any, NamedTuple, Protocol, runtime_checkable

__all__ = ["CheckpointAdapter", "CheckpointFacts", "DroppedRefLike"]


class CheckpointFacts(NamedTuple):
    """What the invariant is checked against, in the order it is checked.

    Adapters on hot paths may return a plain tuple of the same six items.
    """

    turn: int | None
    recorded_generation: int | None
    has_summary: bool
    summary_generation: int | None
    partial: bool
    verbatim_refs: Container[str]


@runtime_checkable
class DroppedRefLike(Protocol):
    """A drop-manifest entry: ``ref``, ``last_known`` and the producing ``tool``."""

    ref: str
    last_known: Any
    tool: str | None


class CheckpointAdapter(Protocol):
    """Reads one shape of checkpoint.

    ``extract`` runs on every guarded call and must be cheap, and so does
    ``drop_manifest``, read once when a resumed turn starts (the turn keeps
    that snapshot: later changes to the checkpoint do not reach it);
    ``next_turn_deps`` runs when the guarded function names no dependencies.

    Two optional declarations speed up the compiled wrapper, for adapters
    that keep their promise: ``inline_attributes = True`` (``extract`` is the
    seed's attribute reads, and ``drop_manifest`` reads
    ``checkpoint.summary.drop_manifest``, so an empty one is seen inline) and
    ``immutable = True`` (a checkpoint cannot change once made, so its
    manifest is held as it is, not copied).
    """

    #: Shown in errors and debugging output.
    name: str

    def extract(self, checkpoint: Any) -> tuple[Any, ...]:
        """Return the six :class:`CheckpointFacts` (a NamedTuple or plain tuple)."""
        ...

    def next_turn_deps(self, checkpoint: Any) -> Iterable[str]:
        """References the next turn needs, when the guarded function names none."""
        ...

    def drop_manifest(self, checkpoint: Any) -> Iterable[DroppedRefLike]:
        """What the checkpoint's summary dropped (empty when unknown): a list or tuple of entries, never a mapping."""
        ...
