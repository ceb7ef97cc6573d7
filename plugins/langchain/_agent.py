"""``guard_agent``: the LangGraph graph guard on the graph ``create_agent`` returns.

``create_agent`` returns a ``CompiledStateGraph``, so its resumes
(``invoke(None, config)``, ``Command(resume={"decisions": [...]})`` after a
human-in-the-loop interrupt, and their stream and async twins) are the
LangGraph room's to check: this is :func:`~summaryguard.plugins.langgraph.guard_graph`,
with the agent's summary layout registered first so that the check reads the
summary message and its stamp.
"""

from __future__ import annotations

from typing import Any

from summaryguard.plugins.langgraph._graph import Deps, GuardedGraph, guard_graph

from . import _summary  # noqa: F401  (registers the agent's summary layout)

__all__ = ["guard_agent"]


def guard_agent(agent: Any, *, deps: Deps = None) -> GuardedGraph:
    """Check every resume of ``agent`` (a ``create_agent`` graph) before it runs.

    ``deps`` are the references the resumed step needs verbatim (names, or a
    function of the thread's ``StateSnapshot``). A summary no
    :class:`StampedSummarization` stamped, a stale stamp and a fallback summary
    fail closed; in the resumed run, :class:`RefuseRederivation` refuses each
    tool call that would re-derive a reference the summary dropped.
    """
    return guard_graph(agent, deps=deps)
