"""Built-in plugin for LangGraph, langmem and LangChain, serving both halves.

Runtime: an adapter reads LangGraph checkpoints (``StateSnapshot`` from
``graph.get_state``, ``CheckpointTuple`` from ``saver.get_tuple``) so that
``check_resume`` and ``resume_guard`` take them directly; an observer adds the
thread and checkpoint ids to every error about one; a resolver carries out a
controller's ``GuardedGraph.accepting(...)``.

Analyzer: the qualified names of the frameworks' checkpointers, resume and
state calls, summarization and tools.

Nothing here imports LangGraph: a checkpoint can only be a LangGraph object if
LangGraph is already loaded, so the adapter looks its classes up in
``sys.modules``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from typing import Any

from summaryguard.guard.langgraph import _graph, _state

from .hookspecs import hookimpl

__all__ = ["CHECKPOINT_TUPLE_ADAPTER", "STATE_SNAPSHOT_ADAPTER", "VOCABULARY"]


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


@hookimpl
def summaryguard_checkpoint_adapter(checkpoint_type: type, checkpoint: Any) -> Any:
    types = sys.modules.get("langgraph.types")
    if types is not None and issubclass(checkpoint_type, types.StateSnapshot):
        return STATE_SNAPSHOT_ADAPTER
    base = sys.modules.get("langgraph.checkpoint.base")
    if base is not None and issubclass(checkpoint_type, base.CheckpointTuple):
        return CHECKPOINT_TUPLE_ADAPTER
    return None


@hookimpl(tryfirst=True)
def summaryguard_observe_violation(error: Any, checkpoint: Any) -> None:
    # First, so that the logging observer already sees thread_id and checkpoint_id.
    _graph.observe(error, checkpoint)


@hookimpl
def summaryguard_resolve_violation(error: Any, checkpoint: Any) -> Any:
    return _graph.resolve(error, checkpoint)


# -- analyzer vocabulary ------------------------------------------------------------------

_SAVERS = (
    "langgraph.checkpoint.memory.InMemorySaver",
    "langgraph.checkpoint.memory.MemorySaver",
    "langgraph.checkpoint.sqlite.SqliteSaver",
    "langgraph.checkpoint.sqlite.aio.AsyncSqliteSaver",
    "langgraph.checkpoint.postgres.PostgresSaver",
    "langgraph.checkpoint.postgres.aio.AsyncPostgresSaver",
    "langgraph.checkpoint.base.BaseCheckpointSaver",
)
_GRAPHS = (
    "langgraph.graph.state.CompiledStateGraph",
    "langgraph.pregel.Pregel",
    "langgraph.pregel.main.Pregel",
)
_TOOL_CLASSES = (
    "langchain_core.tools.BaseTool",
    "langchain_core.tools.base.BaseTool",
    "langchain_core.tools.StructuredTool",
    "langchain_core.tools.structured.StructuredTool",
    "langchain_core.tools.Tool",
    "langchain_core.tools.simple.Tool",
)


def _methods(owners: Iterable[str], names: Iterable[str]) -> tuple[str, ...]:
    names = tuple(names)
    return tuple(f"{owner}.{name}" for owner in owners for name in names)


#: What the analyzer learns from this plugin, by category (see ``hookspecs.VOCABULARY_CATEGORIES``).
VOCABULARY: Mapping[str, tuple[str, ...]] = {
    # A call of these continues a thread from its checkpoint when its input is
    # None or a Command(resume=...) (see "resume-inputs").
    "resume-calls": _methods(_GRAPHS, ("invoke", "ainvoke", "stream", "astream")),
    "resume-inputs": ("langgraph.types.Command",),
    "checkpointers": _SAVERS,
    "checkpoint-writes": _methods(_SAVERS, ("put", "aput", "put_writes", "aput_writes"))
    + _methods(_GRAPHS, ("update_state", "aupdate_state", "bulk_update_state", "abulk_update_state")),
    "checkpoint-loads": _methods(_SAVERS, ("get_tuple", "aget_tuple", "get", "aget", "list", "alist"))
    + _methods(_GRAPHS, ("get_state", "aget_state", "get_state_history", "aget_state_history")),
    "compaction-calls": (
        "langmem.short_term.SummarizationNode",
        "langmem.short_term.summarization.SummarizationNode",
        "langmem.short_term.summarize_messages",
        "langmem.short_term.summarization.summarize_messages",
        "langmem.short_term.asummarize_messages",
        "langmem.short_term.summarization.asummarize_messages",
        "langchain.agents.middleware.SummarizationMiddleware",
        "langchain.agents.middleware.summarization.SummarizationMiddleware",
    ),
    "summary-types": (
        "langmem.short_term.RunningSummary",
        "langmem.short_term.summarization.RunningSummary",
    ),
    "tool-decorators": ("langchain_core.tools.tool", "langchain_core.tools.convert.tool", "langchain.tools.tool"),
    "tool-calls": _methods(_TOOL_CLASSES, ("invoke", "ainvoke", "run", "arun"))
    + _methods(("langgraph.prebuilt.ToolNode", "langgraph.prebuilt.tool_node.ToolNode"), ("invoke", "ainvoke")),
    "interrupt-calls": ("langgraph.types.interrupt",),
    "validators": (
        "summaryguard.guard.langgraph.guard_graph",
        "summaryguard.guard.langgraph.GuardedGraph.invoke",
        "summaryguard.guard.langgraph.GuardedGraph.ainvoke",
        "summaryguard.guard.langgraph.GuardedGraph.stream",
        "summaryguard.guard.langgraph.GuardedGraph.astream",
    ),
}


@hookimpl
def summaryguard_vocabulary() -> Mapping[str, Iterable[str]]:
    return {category: names for category, names in VOCABULARY.items() if category in _known_categories()}


def _known_categories() -> frozenset[str]:
    """The categories the installed analyzer accepts.

    The hook specification documents every category; an analyzer older than a
    category would report it as unknown on every run, so only what it accepts is
    handed over (everything, when the analyzer cannot say).
    """
    try:
        from summaryguard.rules.engine.vocabulary import CATEGORIES
    except ImportError:
        return frozenset(VOCABULARY)
    return frozenset(CATEGORIES)
