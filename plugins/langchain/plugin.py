"""The LangChain room's plugin: the hookimpls of LangChain v1 agents, for both halves.

Registered by the plugin manager (``BUILTIN_PLUGINS``); it imports neither
LangChain nor the room's runtime modules, so building the manager costs
nothing for agents and analyzer runs that never meet LangChain.

Runtime: an agent's checkpoints are LangGraph's (``StateSnapshot``,
``CheckpointTuple``), read by the LangGraph room's adapters; this room only
teaches them where the agent keeps its summary (the summary layout, see
``_summary``). The layout is registered when the room's middleware or guard is
imported, and here, when an adapter is first asked for a LangGraph checkpoint
in a process that has loaded LangChain's agents (so a process that resumes
an agent built with plain ``SummarizationMiddleware`` still fails closed on
its unstamped summary). The hook answers None: the LangGraph adapter reads.

Analyzer: the room's model (``model.py``), as data.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from typing import Any

from summaryguard.plugins.markers import hookimpl


@hookimpl(tryfirst=True)
def summaryguard_checkpoint_adapter(checkpoint_type: type, checkpoint: Any) -> Any:
    if "langchain.agents" in sys.modules and checkpoint_type.__module__.startswith("langgraph."):
        from . import _summary  # noqa: F401  (registers the agent's summary layout)
    return None


@hookimpl
def summaryguard_frameworks() -> Iterable[Mapping[str, Any]]:
    from .model import MODEL

    return [MODEL]
