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
"""

from __future__ import annotations

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
