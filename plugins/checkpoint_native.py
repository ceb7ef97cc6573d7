"""Built-in adapter for summaryguard's own :class:`~summaryguard.guard.Checkpoint`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from summaryguard.guard.model import Checkpoint, DroppedRef

from .hookspecs import hookimpl


class NativeCheckpointAdapter:
    name = "summaryguard.Checkpoint"
    #: extract() is the seed's attribute reads: resume_guard may inline them.
    inline_attributes = True
    #: A Checkpoint is frozen (its summary and manifest too): a resumed turn holds its manifest as it is.
    immutable = True

    @staticmethod
    def extract(checkpoint: Checkpoint) -> tuple[Any, ...]:
        summary = checkpoint.summary
        if summary is None:
            return (checkpoint.turn, checkpoint.summary_generation, False, None, False, ())
        return (
            checkpoint.turn,
            checkpoint.summary_generation,
            True,
            summary.generation,
            summary.partial,
            summary.verbatim_refs,
        )

    @staticmethod
    def next_turn_deps(checkpoint: Checkpoint) -> Iterable[str]:
        return checkpoint.next_turn_deps

    @staticmethod
    def drop_manifest(checkpoint: Checkpoint) -> Iterable[DroppedRef]:
        return checkpoint.summary.drop_manifest if checkpoint.summary is not None else ()


ADAPTER = NativeCheckpointAdapter()


@hookimpl
def summaryguard_checkpoint_adapter(checkpoint_type: type, checkpoint: Any) -> NativeCheckpointAdapter | None:
    return ADAPTER if issubclass(checkpoint_type, Checkpoint) else None
