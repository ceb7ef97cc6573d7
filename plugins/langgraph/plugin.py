"""The LangGraph room's plugin: every hookimpl of LangGraph, langmem and LangChain, for both halves.

This is the module the plugin manager registers (``BUILTIN_PLUGINS``).

Runtime: adapters read LangGraph checkpoints (``StateSnapshot`` from
``graph.get_state``, ``CheckpointTuple`` from ``saver.get_tuple``) so that
``check_resume`` and ``resume_guard`` take them directly; ``tool_guard`` of a
LangChain tool object gives a guarded copy of it (``guard_tool``); an observer adds the
thread and checkpoint ids to every error about one; a resolver carries out a
controller's ``GuardedGraph.accepting(...)``.

Analyzer: the qualified names of the frameworks' checkpointers, resume and
state calls, summarization and tools.

Building the plugin manager imports this module, in every analyzer run and
in agents that never use LangGraph; so it imports neither LangGraph nor the
room's runtime modules. A hookimpl imports what it needs when it is called,
and only when LangGraph can be involved: a checkpoint can only be a LangGraph
object if LangGraph is already loaded (the adapter looks its classes up in
``sys.modules``), and a guarded run or acceptance only exists once the room's
graph module is loaded.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from types import ModuleType
from typing import Any

from summaryguard.plugins.hookspecs import hookimpl

__all__ = ["VOCABULARY"]

_GRAPH_MODULE = f"{__package__}._graph"


@hookimpl
def summaryguard_checkpoint_adapter(checkpoint_type: type, checkpoint: Any) -> Any:
    types = sys.modules.get("langgraph.types")
    if types is not None and issubclass(checkpoint_type, types.StateSnapshot):
        from ._adapters import STATE_SNAPSHOT_ADAPTER

        return STATE_SNAPSHOT_ADAPTER
    base = sys.modules.get("langgraph.checkpoint.base")
    if base is not None and issubclass(checkpoint_type, base.CheckpointTuple):
        from ._adapters import CHECKPOINT_TUPLE_ADAPTER

        return CHECKPOINT_TUPLE_ADAPTER
    return None


def _graph_module() -> ModuleType | None:
    """The room's graph module when this process may have met LangGraph, else None (nothing to observe or resolve).

    Without LangGraph loaded there is no LangGraph checkpoint to enrich, and
    without the graph module loaded no guarded run or acceptance exists.
    """
    graph = sys.modules.get(_GRAPH_MODULE)
    if graph is None and "langgraph" in sys.modules:
        from . import _graph as graph
    return graph


@hookimpl
def summaryguard_wrap_tool(tool: Any, name: Any) -> Any:
    # A LangChain tool object (``@tool`` gives a StructuredTool): its run methods are
    # wrapped, so invoke/ainvoke and agents' tool nodes are guarded too.
    from . import _tools

    return _tools.guard_tool(tool, name=name) if _tools.is_langchain_tool(tool) else None


@hookimpl(tryfirst=True)
def summaryguard_observe_violation(error: Any, checkpoint: Any) -> None:
    # First, so that the logging observer already sees thread_id and checkpoint_id.
    graph = _graph_module()
    if graph is not None:
        graph.observe(error, checkpoint)


@hookimpl
def summaryguard_resolve_violation(error: Any, checkpoint: Any) -> Any:
    graph = _graph_module()
    return graph.resolve(error, checkpoint) if graph is not None else None


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
    # Both import paths: this room's, and the compatibility one under summaryguard.guard.
    "validators": _methods(
        ("summaryguard.plugins.langgraph", "summaryguard.guard.langgraph"), ("guard_graph",)
    )
    + _methods(
        ("summaryguard.plugins.langgraph.GuardedGraph", "summaryguard.guard.langgraph.GuardedGraph"),
        ("invoke", "ainvoke", "stream", "astream"),
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
