"""The analyzer's model of LangChain v1 agents (``create_agent``), as data.

Read by the engine through the ``summaryguard_frameworks`` hook and validated
by :class:`summaryguard.plugins.framework.FrameworkModel`. ``create_agent``
builds a LangGraph graph: it summarizes when one of its arguments (its
``middleware=[...]``) is a ``SummarizationMiddleware``, and an agent built
without one resumes no summary. Its resumes are LangGraph's
(``invoke(None, config)``, ``Command(resume={"decisions": [...]})`` after a
human-in-the-loop interrupt), and what LangGraph writes atomically still holds
(the summary message and the checkpoint are one write: ``generation``); but
the middleware's fallback texts ("too long to summarize") are no summary of
what it folded, so completeness is the user's to check, as are dependencies.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["MODEL"]

_ROOM = "summaryguard.plugins.langchain"
_RESUME_METHODS = ("invoke", "ainvoke", "stream", "astream", "astream_events")

MODEL: Mapping[str, Any] = {
    "name": "langchain",
    "vocabulary": {
        "compaction-calls": (
            "langchain.agents.middleware.SummarizationMiddleware",
            "langchain.agents.middleware.summarization.SummarizationMiddleware",
            f"{_ROOM}.StampedSummarization",
        ),
        "tool-decorators": ("langchain.tools.tool",),
        # guard_agent(create_agent(...)): every resume of the agent is checked first.
        "validators": (f"{_ROOM}.guard_agent",),
    },
    "graph_factories": ("langchain.agents.create_agent", "langchain.agents.factory.create_agent"),
    "resume_methods": _RESUME_METHODS,
    "resume_none_input": True,
    "resume_input_types": ("langgraph.types.Command",),
    "resume_input_keywords": ("resume",),
    "guarantees": ("generation",),
    "words": ("create_agent", "SummarizationMiddleware", "StampedSummarization"),
}
