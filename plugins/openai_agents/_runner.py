"""``guard_runner``: every ``Runner.run`` that continues earlier work is checked first.

The SDK offers one place that sees every run: the default agent runner
(``agents.run.set_default_agent_runner``); ``Runner.run``, ``run_sync`` and
``run_streamed`` all go through it (a streamed run is checked before the SDK
starts its background task, which then runs inside the turn). The guarded runner looks at what a run
continues (a session's history, a restored ``RunState``: see
:mod:`._checkpoint`) and, when that holds a compaction, admits the run only
through :func:`~summaryguard.guard.resume_guard` (observers, then resolution),
then runs it inside the resumed turn.

Inside the turn, every tool the agents call, wrapped or not, refuses to
re-derive a reference the compaction dropped: the runner adds run hooks whose
``on_tool_start`` refuses before the tool runs (the user's own hooks still
run, after ours). A refusal must reach the caller, never the model: the SDK
turns a tool's exception into "An error occurred while running the tool.
Please try again." by default, and an exception from a hook into a
``UserError``. So a refusal met inside a tool is remembered (through the
observer hook and the run's ``tool_error_formatter``), ``on_tool_end`` raises
it before the model sees the tool's output, and the runner hands the caller
the ``SummaryReconciliationError`` itself, unwrapped from the SDK's error.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

from agents.lifecycle import RunHooks, RunHooksBase
from agents.run import AgentRunner, get_default_agent_runner, set_default_agent_runner
from agents.run_config import RunConfig
from summaryguard.guard.check import declared_deps
from summaryguard.guard.resume import resume_guard
from summaryguard.guard.runs import GuardedRun, RunScope, refusal_in
from summaryguard.guard.tools import refuse_rederivation
from summaryguard.guard.turn import current_turn

from ._checkpoint import AgentsCheckpoint, resume_checkpoint
from ._items import holds_compaction

__all__ = ["GuardedRunner", "current_run", "guard_runner", "refusal_in"]

Deps = Iterable[str] | Callable[[AgentsCheckpoint], Iterable[str] | None] | None


#: The guarded run of the current context, for this room (see :mod:`summaryguard.guard.runs`).
RUNS = RunScope("summaryguard_agents_run")


def current_run() -> GuardedRun | None:
    return RUNS.current()


def enforce(tool_name: str) -> None:
    """Refuse, in a resumed turn, a tool that produced a reference the compaction dropped (unless accepted)."""
    turn = current_turn()
    if turn is None:
        return
    for entry in turn.dropped_by_tool().get(tool_name, ()):
        if not turn.is_accepted(entry.ref):
            refuse_rederivation(turn, tool_name, entry, "which the session's compaction dropped; calling it again")


class _Hooks(RunHooks):
    """The user's run hooks, with the refusal before each tool and the surfacing after it."""

    def __init__(self, user: Any, run: GuardedRun) -> None:
        self._user = user
        self._run = run

    async def on_tool_start(self, context: Any, agent: Any, tool: Any) -> None:
        enforce(getattr(tool, "name", ""))
        if self._user is not None:
            await self._user.on_tool_start(context, agent, tool)

    async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: Any) -> None:
        if self._run.refused:
            raise self._run.refused[0]  # the tool's output (the SDK's error text) never reaches the model
        if self._user is not None:
            await self._user.on_tool_end(context, agent, tool, result)


def _hooks(user: Any, run: GuardedRun) -> Any:
    """Our hooks around the user's; what the SDK would refuse (agent-scoped hooks) is left for it to refuse."""
    if user is not None and not isinstance(user, RunHooksBase):
        return user
    return _Hooks(user, run)


def _delegate(name: str) -> Any:
    async def hook(self: _Hooks, *args: Any, **kwargs: Any) -> Any:
        if self._user is not None:
            return await getattr(self._user, name)(*args, **kwargs)
        return None

    hook.__name__ = name
    return hook


for _name in dir(RunHooksBase):
    if _name.startswith("on_") and _name not in _Hooks.__dict__:
        setattr(_Hooks, _name, _delegate(_name))


def _with_formatter(run_config: Any, run: GuardedRun) -> Any:
    """The run configuration whose tool error formatter remembers a refusal a tool raised."""
    if run_config is None:
        run_config = RunConfig()
    user = run_config.get("tool_error_formatter") if isinstance(run_config, dict) else run_config.tool_error_formatter

    def formatter(args: Any) -> Any:
        error = refusal_in(getattr(args, "error", None))
        if error is not None:
            run.remember(error)
            return None
        return user(args) if user is not None else None

    if isinstance(run_config, dict):
        return {**run_config, "tool_error_formatter": formatter}
    return dataclasses.replace(run_config, tool_error_formatter=formatter)


async def _run_guarded(inner: Any, agent: Any, input: Any, kwargs: dict[str, Any]) -> Any:
    """One run with the refusal hooks in place; a refusal met anywhere in it reaches the caller as itself."""
    run = GuardedRun(RUNS.current())
    token = RUNS.enter(run)
    kwargs = {**kwargs, "hooks": _hooks(kwargs.get("hooks"), run), "run_config": _with_formatter(kwargs.get("run_config"), run)}
    try:
        result = await inner.run(agent, input, **kwargs)
    except BaseException as error:
        refusal = refusal_in(error) or run.first_refusal
        if refusal is not None:
            raise refusal from None
        raise
    finally:
        RUNS.leave(token)
    if run.refused:
        raise run.refused[0]
    return result


@resume_guard(deps="deps")
async def _admitted(checkpoint: AgentsCheckpoint, deps: Any, inner: Any, agent: Any, input: Any, kwargs: dict[str, Any]) -> Any:
    """The run, inside the resumed turn ``resume_guard`` admitted it into."""
    return await _run_guarded(inner, agent, input, kwargs)


class GuardedRunner(AgentRunner):
    """The SDK's runner, checking every run that continues a compacted history (install with :func:`guard_runner`)."""

    def __init__(self, *, deps: Deps = None, inner: AgentRunner | None = None) -> None:
        self._deps = declared_deps("guard_runner", deps)
        self._inner = inner if inner is not None else AgentRunner()

    def _deps_of(self, checkpoint: AgentsCheckpoint) -> Any:
        deps = self._deps
        return deps(checkpoint) if callable(deps) else deps

    async def run(self, starting_agent: Any, input: Any, **kwargs: Any) -> Any:
        checkpoint = await resume_checkpoint(input, kwargs.get("session"))
        if checkpoint is None:
            # Not a resume of summary state; still guarded: a run inside the caller's own resumed
            # turn refuses re-derivations at every tool, and no refusal becomes text for the model.
            return await _run_guarded(self._inner, starting_agent, input, kwargs)
        return await _admitted(checkpoint, self._deps_of(checkpoint), self._inner, starting_agent, input, kwargs)

    def run_streamed(self, starting_agent: Any, input: Any, **kwargs: Any) -> Any:
        """``Runner.run_streamed``: checked before the stream starts; its background run is inside the turn."""
        session = kwargs.get("session")
        continues = session is not None or not isinstance(input, (str, list)) or holds_compaction(input)
        checkpoint = _read_now(input, session) if continues else None
        if checkpoint is None:
            context = contextvars.copy_context()  # a run in the caller's own resumed turn is guarded too
        else:
            context = _admitted_now(checkpoint, self._deps_of(checkpoint))
        run = GuardedRun(RUNS.current())  # a run inside a guarded run hands its refusals up to it
        context.run(RUNS.enter, run)
        kwargs = {**kwargs, "hooks": _hooks(kwargs.get("hooks"), run), "run_config": _with_formatter(kwargs.get("run_config"), run)}
        # The SDK starts the run as a task of the context it is called in: this one, inside the turn.
        result = context.run(self._inner.run_streamed, starting_agent, input, **kwargs)
        events = result.stream_events

        async def stream_events() -> Any:
            try:
                async for event in events():
                    yield event
            except BaseException as error:
                refusal = refusal_in(error) or run.first_refusal
                if refusal is not None:
                    raise refusal from None
                raise
            if run.refused:
                raise run.refused[0]

        result.stream_events = stream_events  # the caller meets a refusal as itself, not the SDK's UserError
        return result


@resume_guard(deps="deps")
def _admitted_now(checkpoint: AgentsCheckpoint, deps: Any) -> contextvars.Context:
    """The context inside the resumed turn ``resume_guard`` admits (for a run the SDK starts as a task)."""
    return contextvars.copy_context()


def _read_now(input: Any, session: Any) -> AgentsCheckpoint | None:
    """:func:`resume_checkpoint` from synchronous code (``run_streamed`` may be called inside a running loop)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, resume_checkpoint(input, session)).result()


def guard_runner(*, deps: Deps = None) -> GuardedRunner:
    """Install the guarded runner as the SDK's default: every ``Runner.run`` resume is checked from now on.

    ``deps`` are the references the resumed run needs verbatim: names, or a
    function of the :class:`AgentsCheckpoint` returning them. Calling it
    again replaces the guarded runner (with the new ``deps``), never stacks one on another.
    """
    current = get_default_agent_runner()
    inner = current._inner if isinstance(current, GuardedRunner) else current
    runner = GuardedRunner(deps=deps, inner=inner)
    set_default_agent_runner(runner)
    return runner
