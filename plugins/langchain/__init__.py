"""summaryguard for LangChain v1 agents: stamp the summarization middleware, check every resume.

Three lines adopt it::

    from summaryguard.plugins.langchain import RefuseRederivation, StampedSummarization, guard_agent
    agent = create_agent(model, tools, checkpointer=saver,
                         middleware=[StampedSummarization(model=model, trigger=...), RefuseRederivation()])
    agent = guard_agent(agent)

``StampedSummarization`` is ``SummarizationMiddleware`` (same arguments) that
writes a stamp (generation, drop manifest, digest of the summary text) in the
same state update as the summary, so in the same checkpoint; its fallback
texts are stamped partial. ``RefuseRederivation`` guards every tool of the
agent through ``wrap_tool_call``. ``guard_agent`` is the LangGraph room's graph
guard (``create_agent`` returns a ``CompiledStateGraph``), reading the agent's
summary message and stamp.

This package is the LangChain room: everything summaryguard knows about
LangChain's agents lives here (``model``: the analyzer model as data;
``plugin``: the hookimpls; ``_summary``: where the summary and stamp live in
agent state; ``_summarization``: the stamping middleware; ``_tools``: the tool
middleware; ``_agent``: the guard). The names below load on first use, so the
plugin manager importing this package on its way to ``plugin`` pays for no
LangChain import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover
    from ._agent import guard_agent
    from ._summarization import StampedSummarization, StampState
    from ._tools import RefuseRederivation

__all__ = ["RefuseRederivation", "StampState", "StampedSummarization", "guard_agent"]

#: Each public name, and the private module of this package that defines it.
_HOME = {
    "RefuseRederivation": "_tools",
    "StampState": "_summarization",
    "StampedSummarization": "_summarization",
    "guard_agent": "_agent",
}


__getattr__, __dir__ = lazy_exports(__name__, _HOME, __all__)
