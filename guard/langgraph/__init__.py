"""Kept for compatibility: the LangGraph integration lives in :mod:`summaryguard.plugins.langgraph`.

``from summaryguard.guard.langgraph import guard_graph, guard_tool, stamp_summaries``
(and the other names below) keeps working and gives the very same objects as
``summaryguard.plugins.langgraph``, where new code imports them from. The
private modules (``_graph``, ``_state``...) moved with the room and are not
re-exported here.

This is the only module of ``summaryguard.guard`` that names a framework, and
nothing in the core imports it.
"""

from __future__ import annotations

from summaryguard.plugins.langgraph import (
    STAMP_KEY,
    GuardedGraph,
    guard_graph,
    guard_tool,
    is_langgraph_checkpoint,
    register_extractor,
    stamp_summaries,
    tool_message_refs,
)

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
