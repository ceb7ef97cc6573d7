"""``SummaryGuardPlugin``: summaryguard inside ADK's own plugin hooks.

ADK runs an app's plugins around every run and every tool call, whichever
runner drives them. This one:

* ``before_run_callback``: hands the run's session to the stamped summarizer
  (a compaction in this run knows which generation it extends); in a run no
  guarded runner admitted, it checks a session that holds compactions itself
  and refuses to run on one it cannot vouch for (fail closed; ADK then hands
  the caller its ``RuntimeError`` with ours as ``__cause__``: use
  :func:`~._runner.guard_runner` to get the error itself);
* ``before_tool_callback``: in a resumed turn, refuses a tool that would
  re-derive a reference the compaction dropped. It raises: returning a dict
  would silently stand in for the tool's result, and the model would carry on;
* ``after_tool_callback``: a refusal a tool caught and answered with text of
  its own stops the run before ADK records that text as the tool's result;
* ``on_tool_error_callback``: a refusal raised inside a tool stops the run
  (a later plugin could otherwise turn it into text for the model).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from google.adk.plugins.base_plugin import BasePlugin
from summaryguard.guard.check import check_resume

from ._checkpoint import session_checkpoint
from ._refusals import current_run, enforce, refusal_in
from ._stamp import StampedSummarizer, enter_session

__all__ = ["SummaryGuardPlugin", "install"]


class SummaryGuardPlugin(BasePlugin):
    """summaryguard's ADK plugin (``App(plugins=[SummaryGuardPlugin(), ...])``; put first by the room's helpers)."""

    def __init__(self, name: str = "summaryguard") -> None:
        super().__init__(name)

    async def before_run_callback(self, *, invocation_context: Any) -> None:
        session = invocation_context.session
        enter_session(session)
        if current_run() is None:  # not admitted by a guarded runner: check here, before the agent runs
            session = await _whole(invocation_context, session)
            summarizer = getattr(getattr(invocation_context, "events_compaction_config", None), "summarizer", None)
            checkpoint = session_checkpoint(
                session,
                invocation_id=getattr(invocation_context, "invocation_id", None),
                refs=summarizer._extract if isinstance(summarizer, StampedSummarizer) else None,
            )
            if checkpoint is not None:
                check_resume(checkpoint)

    async def before_tool_callback(self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any) -> None:
        enforce(getattr(tool, "name", ""))  # raises, or lets the tool run: never a result in its place

    async def after_tool_callback(self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any, result: Any) -> None:
        # A tool that caught a refusal returned text in its place: raise before ADK records that text
        # as the tool's result in the session (where the model would read it on the next resume).
        run = current_run()
        if run is not None and run.refused:
            raise run.refused[0]

    async def on_tool_error_callback(self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any, error: Exception) -> None:
        refusal = refusal_in(error)
        if refusal is not None:
            raise refusal


async def _whole(invocation_context: Any, session: Any) -> Any:
    """The invocation's session with all its events: the run may read only a window of them
    (``RunConfig.get_session_config``), and a compaction older than the window still says
    what the history dropped."""
    window = getattr(getattr(invocation_context, "run_config", None), "get_session_config", None)
    service = getattr(invocation_context, "session_service", None)
    if window is None or service is None or session is None:
        return session
    whole = await service.get_session(app_name=session.app_name, user_id=session.user_id, session_id=session.id)
    return whole if whole is not None else session


def install(plugins: Sequence[Any], cls: type[SummaryGuardPlugin] = SummaryGuardPlugin) -> list[Any]:
    """``plugins`` with summaryguard's plugin first (moved there if present, added otherwise)."""
    ours = [p for p in plugins if isinstance(p, cls)]
    return [ours[0] if ours else cls(), *(p for p in plugins if not isinstance(p, cls))]
