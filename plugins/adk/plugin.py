"""The Google ADK room's plugin: its hookimpls for both halves.

Runtime: the adapter for :class:`AdkCheckpoint` (what a guarded run checks);
``tool_guard`` of an ADK tool object (a ``BaseTool``) gives a guarded copy of
it; an observer adds the session id, the resumed invocation and what the
stamp says to every error about an ADK resume, and keeps a violation met inside
a guarded run on that run.

Analyzer: the room's model (``model.py``), handed over as data.

Building the plugin manager imports this module in every analyzer run and in
agents that never use ADK, so it imports neither ADK nor the room's runtime
modules: a hookimpl looks them up in ``sys.modules`` (an ``AdkCheckpoint``
exists only once its module is loaded, an ADK tool only once
``google.adk.tools.base_tool`` is).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from typing import Any

from summaryguard.plugins.markers import hookimpl

_CHECKPOINT_MODULE = f"{__package__}._checkpoint"
_REFUSALS_MODULE = f"{__package__}._refusals"


@hookimpl
def summaryguard_checkpoint_adapter(checkpoint_type: type, checkpoint: Any) -> Any:
    module = sys.modules.get(_CHECKPOINT_MODULE)
    if module is not None and issubclass(checkpoint_type, module.AdkCheckpoint):
        return module.ADAPTER
    return None


@hookimpl
def summaryguard_wrap_tool(tool: Any, name: Any) -> Any:
    tools = sys.modules.get("google.adk.tools.base_tool")
    if tools is None or not isinstance(tool, tools.BaseTool):
        return None
    from ._tools import guard_tool

    return guard_tool(tool, name=name)


@hookimpl(tryfirst=True)
def summaryguard_observe_violation(error: Any, checkpoint: Any) -> None:
    # First, so that the logging observer already sees the session id and the note.
    module = sys.modules.get(_CHECKPOINT_MODULE)
    if module is not None and isinstance(checkpoint, module.AdkCheckpoint):
        for key, value in (
            ("session_id", checkpoint.session_id),
            ("invocation_id", checkpoint.invocation_id),
            ("note", checkpoint.note),
        ):
            if value is not None:
                error.details.setdefault(key, value)
    # A violation met inside a guarded run (a resume_guard check a tool made, say) is kept on
    # the run, as the other rooms keep it: a tool that catches it cannot turn it into text for
    # the model (one a resolver then settles does not stop the run: see GuardedRun.refused).
    refusals = sys.modules.get(_REFUSALS_MODULE)
    run = refusals.current_run() if refusals is not None else None
    if run is not None:
        run.remember(error)


@hookimpl
def summaryguard_frameworks() -> Iterable[Mapping[str, Any]]:
    from .model import MODEL

    return [MODEL]
