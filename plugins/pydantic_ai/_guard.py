"""``GuardResumes``: every pydantic-ai run that continues a stamped history is checked first.

A capability sees every run of the agent it is given to (``Agent(capabilities=[...])``
or ``agent.run(..., capabilities=[...])``): ``wrap_run`` runs before the
first model request with ``RunContext.messages`` already holding what the run
continues (``message_history=``, with or without ``deferred_tool_results=``
after an approval, or a ``conversation=``). When that holds a stamped
summary (see :mod:`._checkpoint`), the run is admitted only through
:func:`~summaryguard.guard.resume_guard` (observers, then resolution) and
runs inside the resumed turn; otherwise it runs as it is, still guarded.

Inside the turn, every tool the agent calls (``@agent.tool``,
``@agent.tool_plain``, ``Tool`` objects, toolsets) refuses to re-derive a
reference the summary dropped: ``before_tool_execute`` raises before the tool
runs, and pydantic-ai lets that exception through to the caller as itself.
A capability's ``on_tool_execute_error`` may still turn an exception into a
tool result for the model, and a tool may catch one; so a refusal met
anywhere in the run (the observer hook remembers it) is raised again by
``after_tool_execute`` (which runs after any recovery) before the model sees the tool's result,
by ``before_model_request`` (a tool that answered a refusal with ``ModelRetry``
skips ``after_tool_execute``), and by ``wrap_run``: the caller always meets the
``SummaryReconciliationError`` itself, never a fake tool result.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from pydantic_ai.capabilities import AbstractCapability

from summaryguard.guard.check import declared_deps
from summaryguard.guard.resume import resume_guard
from summaryguard.guard.runs import GuardedRun, RunScope, refusal_in
from summaryguard.guard.tools import _enforce
from summaryguard.guard.turn import _current

from ._checkpoint import HistoryCheckpoint, history_checkpoint

__all__ = ["GuardResumes", "current_run", "refusal_in"]

Deps = Iterable[str] | Callable[[Sequence[Any]], Iterable[str] | None] | None


#: The guarded run of the current context, for this room (see :mod:`summaryguard.guard.runs`).
RUNS = RunScope("summaryguard_pydantic_ai_run")


def current_run() -> GuardedRun | None:
    return RUNS.current()


async def _run_guarded(handler: Any) -> Any:
    """The run; a refusal met anywhere in it (raised, wrapped or swallowed) reaches the caller as itself."""
    run = GuardedRun(RUNS.current())
    token = RUNS.enter(run)
    try:
        result = await handler()
    except BaseException as error:
        refusal = refusal_in(error) or run.first_refusal
        if refusal is not None and refusal is not error:
            raise refusal from None
        raise
    finally:
        RUNS.leave(token)
    if run.refused:
        raise run.refused[0]  # swallowed somewhere inside the run: it still reaches the caller
    return result


@resume_guard(deps="deps")
async def _admitted(checkpoint: HistoryCheckpoint, deps: Any, handler: Any) -> Any:
    """The run, inside the resumed turn ``resume_guard`` admitted it into."""
    return await _run_guarded(handler)


@dataclasses.dataclass
class GuardResumes(AbstractCapability[Any]):
    """Check every run that continues a stamped history; refuse every re-derivation of a dropped reference.

    ``deps`` are the references the resumed run needs verbatim: tool names
    (a reference is named after the tool that produced it), or a function of
    the history returning them.
    """

    deps: Deps = None

    def __post_init__(self) -> None:
        self.deps = declared_deps("GuardResumes", self.deps)

    async def wrap_run(self, ctx: Any, *, handler: Any) -> Any:
        checkpoint = history_checkpoint(ctx.messages)
        if checkpoint is None:
            # Not a resume of summary state; still guarded: a run inside the caller's own resumed
            # turn refuses re-derivations at every tool, and no refusal becomes a tool result.
            return await _run_guarded(handler)
        deps = self.deps(list(ctx.messages)) if callable(self.deps) else self.deps
        return await _admitted(checkpoint, deps, handler)

    async def before_tool_execute(self, ctx: Any, *, call: Any, tool_def: Any, args: Any) -> Any:
        cell = _current.get()
        if cell is not None:
            _enforce(cell, frozenset((call.tool_name,)))
        return args

    async def after_tool_execute(self, ctx: Any, *, call: Any, tool_def: Any, args: Any, result: Any) -> Any:
        # After any capability's on_tool_execute_error recovered: a result made of a refusal never reaches the model.
        run = RUNS.current()
        if run is not None and run.refused:
            raise run.refused[0]
        return result

    async def before_model_request(self, ctx: Any, request_context: Any) -> Any:
        # The last gate before the model reads anything: a refusal a tool turned into ModelRetry (a retry
        # prompt, which skips after_tool_execute) or any other stand-in stops the run here, unseen.
        run = RUNS.current()
        if run is not None and run.refused:
            raise run.refused[0]
        return request_context

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None
