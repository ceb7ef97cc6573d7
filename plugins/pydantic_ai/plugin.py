"""The pydantic-ai room's plugin: its hookimpls for both halves.

Runtime: the adapter for :class:`HistoryCheckpoint` (what a guarded run
checks); ``tool_guard`` of a ``pydantic_ai.Tool`` gives a guarded copy of it;
an observer adds what the history's stamp says to every error about a resume
and remembers a refusal met inside a guarded run, so that the run raises it
before the model sees the tool's result.

Analyzer: the room's model (``model.py``), handed over as data.

Building the plugin manager imports this module in every analyzer run and in
agents that never use pydantic-ai, so it imports neither pydantic-ai nor the
room's runtime modules: a hookimpl looks them up in ``sys.modules``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from typing import Any

from summaryguard.plugins.markers import hookimpl

_CHECKPOINT_MODULE = f"{__package__}._checkpoint"
_GUARD_MODULE = f"{__package__}._guard"


@hookimpl
def summaryguard_checkpoint_adapter(checkpoint_type: type, checkpoint: Any) -> Any:
    module = sys.modules.get(_CHECKPOINT_MODULE)
    if module is not None and issubclass(checkpoint_type, module.HistoryCheckpoint):
        return module.ADAPTER
    return None


@hookimpl
def summaryguard_wrap_tool(tool: Any, name: Any) -> Any:
    tools = sys.modules.get("pydantic_ai.tools")
    if tools is None or not isinstance(tool, tools.Tool):
        return None
    from ._tools import guard_tool

    return guard_tool(tool, name=name)


@hookimpl(tryfirst=True)
def summaryguard_observe_violation(error: Any, checkpoint: Any) -> None:
    # First, so that the logging observer already sees the note.
    module = sys.modules.get(_CHECKPOINT_MODULE)
    if module is not None and isinstance(checkpoint, module.HistoryCheckpoint):
        for key, value in (("note", checkpoint.note), ("summary_index", checkpoint.summary_index)):
            if value is not None:
                error.details.setdefault(key, value)
    guard = sys.modules.get(_GUARD_MODULE)
    run = guard.current_run() if guard is not None else None
    if run is not None:
        run.remember(error)


@hookimpl
def summaryguard_frameworks() -> Iterable[Mapping[str, Any]]:
    from .model import MODEL

    return [MODEL]
