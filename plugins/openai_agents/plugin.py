"""The OpenAI Agents SDK room's plugin: its hookimpls for both halves.

Runtime: the adapter for :class:`AgentsCheckpoint` (what a guarded run checks);
``tool_guard`` of a ``FunctionTool`` gives a guarded copy of it; an observer
adds the session id and what the compaction record says to every error about
a resume, and remembers a refusal met inside a guarded run, so that it stops
the run before the model sees the tool's output.

Analyzer: the room's model (``model.py``), handed over as data.

Building the plugin manager imports this module in every analyzer run and in
agents that never use the SDK, so it imports neither the SDK nor the room's
runtime modules: a hookimpl looks them up in ``sys.modules`` (an
``AgentsCheckpoint`` exists only once its module is loaded, a ``FunctionTool``
only once ``agents.tool`` is).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from typing import Any

from summaryguard.plugins.markers import hookimpl

_CHECKPOINT_MODULE = f"{__package__}._checkpoint"
_RUNNER_MODULE = f"{__package__}._runner"


@hookimpl
def summaryguard_checkpoint_adapter(checkpoint_type: type, checkpoint: Any) -> Any:
    module = sys.modules.get(_CHECKPOINT_MODULE)
    if module is not None and issubclass(checkpoint_type, module.AgentsCheckpoint):
        return module.ADAPTER
    return None


@hookimpl
def summaryguard_wrap_tool(tool: Any, name: Any) -> Any:
    tools = sys.modules.get("agents.tool")
    if tools is None or not isinstance(tool, tools.FunctionTool):
        return None
    from ._tools import guard_tool

    return guard_tool(tool, name=name)


@hookimpl(tryfirst=True)
def summaryguard_observe_violation(error: Any, checkpoint: Any) -> None:
    # First, so that the logging observer already sees the session id and the note.
    module = sys.modules.get(_CHECKPOINT_MODULE)
    if module is not None and isinstance(checkpoint, module.AgentsCheckpoint):
        for key, value in (("session_id", checkpoint.session_id), ("note", checkpoint.note), ("records", checkpoint.records)):
            if value is not None:
                error.details.setdefault(key, value)
    runner = sys.modules.get(_RUNNER_MODULE)
    run = runner.current_run() if runner is not None else None
    if run is not None:
        run.remember(error)


@hookimpl
def summaryguard_frameworks() -> Iterable[Mapping[str, Any]]:
    from .model import MODEL

    return [MODEL]
