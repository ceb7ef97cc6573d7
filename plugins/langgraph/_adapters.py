"""Reading LangGraph checkpoints for the core: the adapters for ``StateSnapshot`` and ``CheckpointTuple``.

``check_resume`` and ``resume_guard`` take what ``graph.get_state(config)``
and ``saver.get_tuple(config)`` return directly: these adapters find the
running summary and its stamp in the channel values (see :mod:`._state`) and
the step in the metadata. The plugin hands them out only for LangGraph's own
types, and only then is this module imported.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from . import _state

__all__ = ["CHECKPOINT_TUPLE_ADAPTER", "STATE_SNAPSHOT_ADAPTER", "CheckpointTupleAdapter", "StateSnapshotAdapter"]


class StateSnapshotAdapter:
    """Reads ``graph.get_state(config)``: channel values, and the step from the metadata."""

    name = "langgraph.StateSnapshot"

    @staticmethod
    def extract(snapshot: Any) -> tuple[Any, ...]:
        return _state.facts(snapshot.values, (snapshot.metadata or {}).get("step"))

    @staticmethod
    def next_turn_deps(snapshot: Any) -> Iterable[str]:
        return _state.next_turn_deps(snapshot.values)

    @staticmethod
    def drop_manifest(snapshot: Any) -> Iterable[Any]:
        return _state.drop_manifest(snapshot.values)


class CheckpointTupleAdapter:
    """Reads ``saver.get_tuple(config)``: ``checkpoint["channel_values"]`` and ``metadata["step"]``."""

    name = "langgraph.CheckpointTuple"

    @staticmethod
    def _values(checkpoint_tuple: Any) -> Mapping[str, Any]:
        return checkpoint_tuple.checkpoint.get("channel_values") or {}

    @classmethod
    def extract(cls, checkpoint_tuple: Any) -> tuple[Any, ...]:
        return _state.facts(cls._values(checkpoint_tuple), (checkpoint_tuple.metadata or {}).get("step"))

    @classmethod
    def next_turn_deps(cls, checkpoint_tuple: Any) -> Iterable[str]:
        return _state.next_turn_deps(cls._values(checkpoint_tuple))

    @classmethod
    def drop_manifest(cls, checkpoint_tuple: Any) -> Iterable[Any]:
        return _state.drop_manifest(cls._values(checkpoint_tuple))


STATE_SNAPSHOT_ADAPTER = StateSnapshotAdapter()
CHECKPOINT_TUPLE_ADAPTER = CheckpointTupleAdapter()
