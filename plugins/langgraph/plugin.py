"""The LangGraph room's plugin: every hookimpl of LangGraph, langmem and LangChain, for both halves.

This is the module the plugin manager registers (``BUILTIN_PLUGINS``).

Runtime: adapters read LangGraph checkpoints (``StateSnapshot`` from
``graph.get_state``, ``CheckpointTuple`` from ``saver.get_tuple``) so that
``check_resume`` and ``resume_guard`` take them directly; ``tool_guard`` of a
LangChain tool object gives a guarded copy of it (``guard_tool``); an observer adds the
thread and checkpoint ids to every error about one; a resolver carries out a
controller's ``GuardedGraph.accepting(...)``.

Analyzer: the room's model (``model.py``: the frameworks' checkpointers, resume
and state calls, summarization, tools, and how a graph value comes to summarize),
handed over as data through ``summaryguard_frameworks``.

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

from summaryguard.plugins.markers import hookimpl


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


# -- analyzer model -----------------------------------------------------------------------


@hookimpl
def summaryguard_lint_rules() -> list[type]:
    # The room's own rules (SG203); they import the analyzer, so only the analyzer asks.
    from .rules import rules

    return rules()


@hookimpl
def summaryguard_frameworks() -> Iterable[Mapping[str, Any]]:
    # The room's analyzer model (pure data); its vocabulary reaches the analyzer this way.
    from .model import MODEL

    return [MODEL]
