"""``guard_runner``: every ADK run that continues a compacted session is checked before it starts.

``Runner.run_async`` reloads the session (``get_session``) and continues it:
a run with a new message on a session whose history was compacted, or
``run_async(invocation_id=...)`` resuming an invocation that stopped midway.
The guarded runner reads the session first (see :mod:`._checkpoint`) and,
when it holds a compaction, admits the run only through
:func:`~summaryguard.guard.resume_guard` (observers, then resolution), before
ADK writes anything to the session; the run's events are then produced inside
the resumed turn, so every tool call meets summaryguard's ADK plugin, which
refuses to re-derive what the compaction dropped.

``refuse_replay``: ADK resumes an invocation at-least-once; a tool call whose
result the session never recorded is run again (the process may have stopped
after the tool acted and before its result was written). With
``refuse_replay=True`` (every tool: each tool result is a reference) or a
collection of tool names, resuming an invocation that holds such a call of
one of these tools is refused (``rederivation``) before anything runs: answer
the call with the result you reconciled (a ``function_response`` in
``new_message``), or resume without the option, on record.

Every refusal reaches the caller as :class:`SummaryReconciliationError`
itself, unwrapped from ADK's ``RuntimeError``; a refusal a callback swallowed
stops the run at the next event.
"""

from __future__ import annotations

import asyncio
import contextvars
import queue
import threading
from collections.abc import AsyncGenerator, Callable, Collection, Generator, Iterable
from contextlib import aclosing
from typing import Any

from summaryguard.guard.check import declared_deps, notify
from summaryguard.guard.errors import ReconciliationKind, SummaryReconciliationError
from summaryguard.guard.resume import resume_guard

from ._checkpoint import AdkCheckpoint, session_checkpoint
from ._events import Extractor, resumed_invocation, unanswered_calls
from ._plugin import install
from ._refusals import GuardedRun, current_run, enter_run, leave_run, refusal_in
from ._stamp import StampedSummarizer

__all__ = ["GuardedRunner", "guard_runner"]

Deps = Iterable[str] | Callable[[AdkCheckpoint], Iterable[str] | None] | None


async def _guarded_steps(events: AsyncGenerator[Any, None], run: GuardedRun) -> AsyncGenerator[Any, None]:
    """ADK's events, each step marked as this guarded run's; a refusal anywhere in it reaches the caller as itself."""
    try:
        while True:
            token = enter_run(run)
            try:
                event = await events.__anext__()
            except StopAsyncIteration:
                break
            except BaseException as error:
                refusal = refusal_in(error) or (run.refused[0] if run.refused else None)
                if refusal is not None:
                    raise refusal from None
                raise
            finally:
                leave_run(token)
            if run.refused:
                raise run.refused[0]  # a callback turned a refusal into a result: the run stops here
            yield event
        if run.refused:
            raise run.refused[0]
    finally:
        token = enter_run(run)
        try:
            await events.aclose()
        finally:
            leave_run(token)


@resume_guard(deps="deps")
def _admitted(checkpoint: AdkCheckpoint, deps: Any, work: Callable[[], AsyncGenerator[Any, None]]) -> Any:
    """The run's events, produced inside the resumed turn ``resume_guard`` admitted (each step of them)."""
    return work()


class GuardedRunner:
    """An ADK ``Runner`` (any subclass) whose ``run_async``, ``run`` and ``run_debug`` check each resume first.

    ``run_live`` (bidirectional streaming) is left to the runner: summaryguard's plugin
    still refuses, at its start, to run on a session it cannot vouch for.

    Everything else is the runner's own (attributes are read through). Build
    it with :func:`guard_runner`.
    """

    def __init__(self, runner: Any, *, deps: Deps = None, refuse_replay: bool | Iterable[str] = False) -> None:
        if not callable(getattr(runner, "run_async", None)) or getattr(runner, "plugin_manager", None) is None:
            raise TypeError(f"guard_runner() takes an ADK Runner, got {type(runner).__name__}")
        deps = declared_deps("guard_runner", deps)
        if isinstance(refuse_replay, (str, bytes)):
            raise TypeError(f"guard_runner(refuse_replay=...) takes True or a collection of tool names, not {refuse_replay!r}")
        self.runner = runner
        self._deps = deps
        self._replay: bool | Collection[str] = refuse_replay if isinstance(refuse_replay, bool) else frozenset(refuse_replay)
        runner.plugin_manager.plugins[:] = install(runner.plugin_manager.plugins)

    def __getattr__(self, name: str) -> Any:
        if name == "runner":  # not set yet: no recursion
            raise AttributeError(name)
        return getattr(self.runner, name)

    def _extractor(self) -> Extractor | None:
        config = getattr(getattr(self.runner, "app", None), "events_compaction_config", None)
        summarizer = getattr(config, "summarizer", None)
        return summarizer._extract if isinstance(summarizer, StampedSummarizer) else None

    async def run_async(self, *, user_id: str, session_id: str, **kwargs: Any) -> AsyncGenerator[Any, None]:
        """``Runner.run_async``, checked first when the session holds a compaction or an invocation is resumed."""
        runner = self.runner
        # The whole session, whatever window the run reads (RunConfig.get_session_config): a
        # compaction older than the window still says what the history dropped, and a check
        # that read only the window found none and let the run re-derive it.
        session = await runner.session_service.get_session(
            app_name=runner.app_name, user_id=user_id, session_id=session_id
        )
        invocation = None
        checkpoint = None
        if session is not None:
            events = list(session.events)
            invocation = resumed_invocation(events, kwargs.get("invocation_id"), kwargs.get("new_message"))
            checkpoint = session_checkpoint(session, invocation_id=invocation, refs=self._extractor())
            if invocation is not None and self._replay:
                self._refuse_replay(session, events, invocation, kwargs.get("new_message"), checkpoint)
        run = GuardedRun(current_run())  # a run inside a guarded run hands its refusals up to it

        def work() -> AsyncGenerator[Any, None]:
            return _guarded_steps(runner.run_async(user_id=user_id, session_id=session_id, **kwargs), run)

        if checkpoint is None:
            # Not a resume of summary state; still guarded: a run inside the caller's own resumed
            # turn refuses re-derivations at every tool, and a refusal reaches the caller as itself.
            steps = work()
        else:
            deps = self._deps(checkpoint) if callable(self._deps) else self._deps
            steps = _admitted(checkpoint, deps, work)
        async with aclosing(steps):
            async for event in steps:
                yield event

    def _refuse_replay(self, session: Any, events: list[Any], invocation: str, new_message: Any, checkpoint: Any) -> None:
        for call_id, tool, args in unanswered_calls(events, invocation, new_message):
            if self._replay is True or tool in self._replay:  # type: ignore[operator]
                facts = checkpoint.facts if checkpoint is not None and checkpoint.error is None else None
                error = SummaryReconciliationError(
                    facts[3] if facts else None,
                    len(events),
                    tool,
                    f"invocation {invocation!r} holds call {call_id!r} of tool {tool!r} whose result the session never "
                    "recorded; resuming it would run the tool again (ADK resumes at-least-once), and a second run "
                    "re-derives a new fact instead of recovering the one the first run may have made",
                    kind=ReconciliationKind.REDERIVATION,
                    details={
                        "session_id": getattr(session, "id", None),
                        "invocation_id": invocation,
                        "call_id": call_id,
                        "tool": tool,
                        "args": dict(args) if isinstance(args, dict) else args,
                    },
                )
                notify(error, checkpoint if checkpoint is not None else session)
                raise error

    async def run_debug(self, *args: Any, **kwargs: Any) -> Any:
        """``Runner.run_debug``, its runs going through the checked :meth:`run_async`."""
        return await type(self.runner).run_debug(self, *args, **kwargs)  # type: ignore[arg-type]

    def run(self, *, user_id: str, session_id: str, **kwargs: Any) -> Generator[Any, None, None]:
        """``Runner.run`` (sync, for local use): the guarded ``run_async`` in a thread of its own, events as they come."""
        items: queue.Queue[tuple[str, Any]] = queue.Queue()
        context = contextvars.copy_context()  # a run inside the caller's own resumed turn is guarded too

        async def drive() -> None:
            async with aclosing(self.run_async(user_id=user_id, session_id=session_id, **kwargs)) as events:
                async for event in events:
                    items.put(("event", event))

        def main() -> None:
            try:
                context.run(asyncio.run, drive())
            except BaseException as error:  # noqa: BLE001 - handed to the caller's thread as it is
                items.put(("error", error))
            finally:
                items.put(("done", None))

        thread = threading.Thread(target=main, name="summaryguard-adk-run", daemon=True)
        thread.start()
        try:
            while True:
                kind, value = items.get()
                if kind == "event":
                    yield value
                elif kind == "error":
                    raise value
                else:
                    break
        finally:
            thread.join()


def guard_runner(runner: Any, *, deps: Deps = None, refuse_replay: bool | Iterable[str] = False) -> GuardedRunner:
    """``runner`` (an ADK ``Runner``) with every resume checked before it runs, and summaryguard's plugin first.

    ``deps`` are the references the resumed run needs verbatim: names, or a
    function of the :class:`AdkCheckpoint` returning them. ``refuse_replay``
    refuses to resume an invocation whose unanswered call of a tool would be
    run again (True: any tool; or the names of the tools). Guarding a guarded
    runner again replaces its options, never stacks one guard on another.
    """
    if isinstance(runner, GuardedRunner):
        runner = runner.runner
    return GuardedRunner(runner, deps=deps, refuse_replay=refuse_replay)
