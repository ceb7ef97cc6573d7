"""The analyzer's model of Google ADK, as data (see ``summaryguard.plugins.framework``).

Read by the engine through the ``summaryguard_frameworks`` hook and validated
when it loads. An ADK runner is built from parts (``Runner(app=App(...,
events_compaction_config=EventsCompactionConfig(...)))``): it compacts when
one of its parts is a compaction configuration or a summarizer
(``EventsCompactionConfig``, ``LlmEventSummarizer``), and a runner built
without one resumes no summary. The resume is the run that continues an
invocation: ``runner.run_async(..., invocation_id=inv)`` (the keyword makes
it one, whatever the id's origin; ``invocation_id=None`` starts afresh). A
run with a new message on a live session restores nothing statically (a
session reopened after a crash looks the same; ``guard_runner()`` checks it
at run time). The session services' ``get_session`` loads the checkpoint,
``append_event`` writes it, and a ``FunctionTool`` (``FunctionTool(f)``, or
its ``run_async``) calls a tool.

ADK guarantees none of the checks: the compaction event is appended in one
write, but it records no generation and no drop manifest, and
``LlmEventSummarizer`` keeps whatever its model answered first (a summary cut
short by ``MAX_TOKENS`` included) after cutting each tool response to 2000
characters.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["MODEL"]

_SESSION_SERVICES = (
    "google.adk.sessions.BaseSessionService",
    "google.adk.sessions.InMemorySessionService",
    "google.adk.sessions.DatabaseSessionService",
    "google.adk.sessions.VertexAiSessionService",
    "google.adk.sessions.base_session_service.BaseSessionService",
    "google.adk.sessions.in_memory_session_service.InMemorySessionService",
    "google.adk.sessions.database_session_service.DatabaseSessionService",
    "google.adk.sessions.sqlite_session_service.SqliteSessionService",
    "google.adk.sessions.vertex_ai_session_service.VertexAiSessionService",
)
_COMPACTION = (
    "google.adk.apps.app.EventsCompactionConfig",
    "google.adk.apps._configs.EventsCompactionConfig",
    "google.adk.apps.llm_event_summarizer.LlmEventSummarizer",
    "google.adk.apps.base_events_summarizer.BaseEventsSummarizer",
)
_TOOLS = (
    "google.adk.tools.FunctionTool",
    "google.adk.tools.LongRunningFunctionTool",
    "google.adk.tools.function_tool.FunctionTool",
    "google.adk.tools.long_running_tool.LongRunningFunctionTool",
)
_ROOM = "summaryguard.plugins.adk"


def _methods(owners: Iterable[str], names: Iterable[str]) -> tuple[str, ...]:
    names = tuple(names)
    return tuple(f"{owner}.{name}" for owner in owners for name in names)


MODEL: Mapping[str, Any] = {
    "name": "adk",
    "vocabulary": {
        "checkpoint-loads": _methods(_SESSION_SERVICES, ("get_session",)),
        "checkpoint-writes": _methods(_SESSION_SERVICES, ("append_event",)),
        # The compaction configuration turns ADK's compaction on (with LlmEventSummarizer when it
        # names no summarizer); a summarizer's maybe_summarize_events is the explicit call.
        "compaction-calls": _COMPACTION
        + _methods(_COMPACTION[2:], ("maybe_summarize_events",)),
        "tool-calls": _methods(_TOOLS, ("run_async",)),
        # summaryguard's runner checks every run that continues a compacted session.
        "validators": (
            f"{_ROOM}.guard_runner",
            f"{_ROOM}._runner.guard_runner",
            f"{_ROOM}.GuardedRunner",
            f"{_ROOM}._runner.GuardedRunner",
        ),
    },
    # A runner (and the app it is given) is built from parts; it compacts when a part does.
    "graph_factories": (
        "google.adk.Runner",
        "google.adk.runners.Runner",
        "google.adk.runners.InMemoryRunner",
        "google.adk.apps.App",
        "google.adk.apps.app.App",
        # stamping hands the same app back: it compacts as the app it is given does
        f"{_ROOM}.stamp_compactions",
        f"{_ROOM}._stamp.stamp_compactions",
    ),
    "resume_methods": ("run_async",),
    "resume_keywords": ("invocation_id",),
    "tool_factories": _TOOLS,
    # `FunctionTool(create_vm).run_async(args=..., tool_context=...)` runs the tool
    "tool_run_methods": ("run_async",),
    "words": ("Runner", "run_async", "invocation_id", "EventsCompactionConfig", "LlmEventSummarizer", "FunctionTool"),
}
