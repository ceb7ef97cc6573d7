"""The analyzer's model of the OpenAI Agents SDK, as data (see ``summaryguard.plugins.framework``).

Read by the engine through the ``summaryguard_frameworks`` hook and validated
when it loads. It says which calls load a checkpoint (``RunState.from_string``,
a session's items), which compact (``OpenAIResponsesCompactionSession``: the
session *is* the summarizer; ``run_compaction``), which write the history,
which run a tool (``@function_tool``), and which call continues a run
(``Runner.run``: the resume is the run, never the load, SPEC §3.1.1). A run is
a resume from summary state when it is handed restored state (a loaded
``RunState``) and one of its arguments was built to compact: the session
holds what the compaction left of the history. A run that continues a live
session restores nothing (a session reopened from its file after a crash
looks the same statically; ``guard_runner()`` checks it at run time). A human-approval resume
(``Runner.run(agent, RunState.from_string(...))``) of an agent whose session
does not compact resumes no summary.

The SDK guarantees none of the checks: the compaction output is opaque, no
generation or drop manifest is recorded, and ``SQLiteSession``'s replacement
is a clear then an add in two transactions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["MODEL"]

_COMPACTION_SESSIONS = (
    "agents.OpenAIResponsesCompactionSession",
    "agents.memory.OpenAIResponsesCompactionSession",
    "agents.memory.openai_responses_compaction_session.OpenAIResponsesCompactionSession",
)
_SESSIONS = (
    *_COMPACTION_SESSIONS,
    "agents.SQLiteSession",
    "agents.memory.SQLiteSession",
    "agents.memory.sqlite_session.SQLiteSession",
    "agents.extensions.memory.SQLAlchemySession",
    "agents.extensions.memory.sqlalchemy_session.SQLAlchemySession",
    "agents.extensions.memory.AsyncSQLiteSession",
    "agents.extensions.memory.async_sqlite_session.AsyncSQLiteSession",
)
_RUN_STATES = ("agents.RunState", "agents.run_state.RunState")
_RUNNERS = ("agents.Runner", "agents.run.Runner")
_TOOLS = ("agents.FunctionTool", "agents.tool.FunctionTool")
_ROOM = "summaryguard.plugins.openai_agents"


def _methods(owners: Iterable[str], names: Iterable[str]) -> tuple[str, ...]:
    names = tuple(names)
    return tuple(f"{owner}.{name}" for owner in owners for name in names)


MODEL: Mapping[str, Any] = {
    "name": "openai-agents",
    "vocabulary": {
        # A restored run state (a human-approval resume) and a session's history are loads;
        # the resume is the run that continues them (run_calls below).
        "checkpoint-loads": _methods(_RUN_STATES, ("from_string", "from_json"))
        + _methods(_SESSIONS, ("get_items",)),
        "checkpoint-writes": _methods(_SESSIONS, ("add_items",)),
        # The compacting session is the summarizer (like a summarization node), and
        # run_compaction is its explicit call.
        "compaction-calls": _COMPACTION_SESSIONS + _methods(_COMPACTION_SESSIONS, ("run_compaction",)),
        "tool-decorators": ("agents.function_tool", "agents.tool.function_tool"),
        "tool-calls": _methods(_TOOLS, ("on_invoke_tool",)),
        # summaryguard's own runner checks every run that continues a compacted history.
        "validators": (
            f"{_ROOM}.guard_runner",
            f"{_ROOM}._runner.guard_runner",
            f"{_ROOM}.GuardedRunner",
            f"{_ROOM}._runner.GuardedRunner",
        ),
    },
    "run_calls": _methods(_RUNNERS, ("run", "run_sync", "run_streamed")),
    # guard_runner() installs the checked runner for the process: at a module's top level it
    # covers every run in that module (in a function, it is a validator that dominates what follows).
    "run_guards": (f"{_ROOM}.guard_runner", f"{_ROOM}._runner.guard_runner"),
    "words": ("Runner", "RunState", "OpenAIResponsesCompactionSession", "run_compaction", "function_tool"),
}
