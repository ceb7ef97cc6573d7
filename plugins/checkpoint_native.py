"""Built-in adapter for summaryguard's own :class:`~summaryguard.guard.Checkpoint`."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .markers import hookimpl

if TYPE_CHECKING:  # pragma: no cover
    from summaryguard.guard.model import Checkpoint, DroppedRef

#: Building the plugin manager imports this module in every analyzer run, which never
#: meets a Checkpoint: the runtime's model is looked up when one is asked about.
_MODEL = "summaryguard.guard.model"


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
    model = sys.modules.get(_MODEL)  # a Checkpoint exists only once its module is loaded
    return ADAPTER if model is not None and issubclass(checkpoint_type, model.Checkpoint) else None
