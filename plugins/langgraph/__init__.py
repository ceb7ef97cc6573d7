"""summaryguard for LangGraph: stamp every summarization, check every resume.

Two lines adopt it::

    builder.add_node("summarize", stamp_summaries(SummarizationNode(...)))
    graph = guard_graph(builder.compile(checkpointer=saver))

and ``guard_tool(tool)`` for each tool whose results a summary may drop.
LangGraph and langmem are imported only when these functions are called, so
``import summaryguard.guard`` stays free of them (``pip install
summaryguard[langgraph]`` brings them in).

What is checked follows what LangGraph guarantees: the summary lives in graph
state, written atomically with its checkpoint, so a checkpoint never holds a
half-written summary and the stamp written beside it always describes the
summary of the same step; the generation check only catches a summary replaced
behind the stamp's back. The check that matters is the dependency check, and
the refusal to re-derive at the tool.

This package is the LangGraph room: everything summaryguard knows about
LangGraph, langmem and LangChain's tools lives here (LangChain's agents,
``create_agent``, are the LangChain room's, which builds on this one), and the
core (``summaryguard.guard``) never imports it. ``plugin`` is the module the plugin manager registers (every
hookimpl of this framework); the private modules hold the runtime wrappers
(``_graph``: the guarded graph; ``_stamp``: the stamping node; ``_state``: the
stamp in graph state; ``_refs``: reference extractors; ``_tools``: guarded
LangChain tools; ``_adapters``: reading LangGraph checkpoints).

The names below load on first use (PEP 562 ``__getattr__``): the plugin manager
imports this package on its way to ``plugin``, and building the manager must
not pay for the runtime wrappers of a framework the agent may not use.
``summaryguard.guard.langgraph`` re-exports the same objects (kept for
compatibility).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover
    from ._graph import GuardedGraph, guard_graph, is_langgraph_checkpoint
    from ._refs import register_extractor, tool_message_refs
    from ._stamp import stamp_summaries
    from ._state import STAMP_KEY
    from ._tools import guard_tool

__all__ = [
    "STAMP_KEY",
    "GuardedGraph",
    "guard_graph",
    "guard_tool",
    "is_langgraph_checkpoint",
    "register_extractor",
    "stamp_summaries",
    "tool_message_refs",
]

#: Each public name, and the private module of this package that defines it.
_HOME = {
    "STAMP_KEY": "_state",
    "GuardedGraph": "_graph",
    "guard_graph": "_graph",
    "guard_tool": "_tools",
    "is_langgraph_checkpoint": "_graph",
    "register_extractor": "_refs",
    "stamp_summaries": "_stamp",
    "tool_message_refs": "_refs",
}


__getattr__, __dir__ = lazy_exports(__name__, _HOME, __all__)
