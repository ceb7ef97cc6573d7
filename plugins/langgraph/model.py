"""The analyzer's model of LangGraph and langmem, as data (LangChain's ``create_agent`` is the LangChain room's).

Read by the engine through the ``summaryguard_frameworks`` hook and validated
by :class:`summaryguard.plugins.framework.FrameworkModel` when it loads. Nothing
here runs: it says which APIs load a checkpoint, resume, call a tool, compact
and write a checkpoint, how a graph value comes to summarize, and what
LangGraph guarantees on its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["MODEL"]

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
_RESUME_METHODS = ("invoke", "ainvoke", "stream", "astream", "astream_events")


def _methods(owners: Iterable[str], names: Iterable[str]) -> tuple[str, ...]:
    names = tuple(names)
    return tuple(f"{owner}.{name}" for owner in owners for name in names)


MODEL: Mapping[str, Any] = {
    "name": "langgraph",
    "vocabulary": {
        # A call of these continues a thread from its checkpoint when its input is
        # None or a Command(resume=...) (see resume_none_input / resume_input_types).
        "resume-calls": _methods(_GRAPHS, _RESUME_METHODS),
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
        ),
        "summary-types": (
            "langmem.short_term.RunningSummary",
            "langmem.short_term.summarization.RunningSummary",
        ),
        "tool-decorators": ("langchain_core.tools.tool", "langchain_core.tools.convert.tool"),
        "tool-calls": _methods(_TOOL_CLASSES, ("invoke", "ainvoke", "run", "arun"))
        + _methods(("langgraph.prebuilt.ToolNode", "langgraph.prebuilt.tool_node.ToolNode"), ("invoke", "ainvoke")),
        "interrupt-calls": ("langgraph.types.interrupt",),
        # Both import paths: the room's, and the compatibility one under summaryguard.guard.
        "validators": _methods(("summaryguard.plugins.langgraph", "summaryguard.guard.langgraph"), ("guard_graph",))
        + _methods(
            ("summaryguard.plugins.langgraph.GuardedGraph", "summaryguard.guard.langgraph.GuardedGraph"),
            ("invoke", "ainvoke", "stream", "astream"),
        ),
    },
    "graph_builders": ("langgraph.graph.StateGraph", "langgraph.graph.state.StateGraph"),
    "node_registrations": ("add_node", "add_sequence"),
    "graph_derivations": ("compile", "with_config", "with_retry", "with_listeners", "with_types"),
    "graph_factories": (
        "langgraph.prebuilt.create_react_agent",
        "langgraph.prebuilt.chat_agent_executor.create_react_agent",
    ),
    "tool_run_methods": ("invoke", "ainvoke", "run", "arun", "batch", "abatch"),
    "tool_factories": (
        "langchain_core.tools.StructuredTool.from_function",
        "langchain_core.tools.structured.StructuredTool.from_function",
        "langchain_core.tools.Tool.from_function",
        "langchain_core.tools.simple.Tool.from_function",
    ),
    "resume_methods": _RESUME_METHODS,
    "resume_none_input": True,
    "resume_input_types": ("langgraph.types.Command",),
    "resume_input_keywords": ("resume",),
    # A summary held in graph state is written atomically with its checkpoint:
    # only the dependency check is the user's to make (SPEC §5).
    "guarantees": ("generation", "partial"),
    "words": ("langgraph", "langmem", "add_node", "SummarizationNode"),
}
