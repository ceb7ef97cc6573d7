"""Guarded runs (summaryguard.guard.runs): what every framework room keeps a refusal on."""

from __future__ import annotations

import asyncio
import contextvars

from summaryguard.guard.errors import SummaryReconciliationError
from summaryguard.guard.runs import GuardedRun, RunScope, refusal_in


def _refusal(ref: str = "vm") -> SummaryReconciliationError:
    return SummaryReconciliationError(1, 3, ref, "dropped by compaction", kind="rederivation")


def test_a_refusal_is_kept_on_the_run_and_every_run_enclosing_it_once() -> None:
    outer = GuardedRun()
    inner = GuardedRun(outer)
    error = _refusal()
    inner.remember(error)
    inner.remember(error)
    assert inner.refused == [error] and outer.refused == [error]
    assert inner.first_refusal is error and GuardedRun().first_refusal is None


def test_the_scope_is_per_context_and_remembers_only_inside_a_run() -> None:
    scope = RunScope("test_runs_scope")
    error = _refusal()
    assert scope.remembered(error) is error and scope.current() is None  # outside any run: travels as itself
    run = GuardedRun()
    token = scope.enter(run)
    try:
        assert contextvars.copy_context().run(scope.current) is run
        assert scope.remembered(error) is error and run.refused == [error]

        async def elsewhere() -> GuardedRun | None:
            return scope.current()

        assert asyncio.run(elsewhere()) is run  # a task copies the context it starts in
    finally:
        scope.leave(token)
    assert scope.current() is None


def test_leaving_from_another_context_is_harmless() -> None:
    scope = RunScope("test_runs_leave")
    token = scope.enter(GuardedRun())
    contextvars.Context().run(scope.leave, token)  # a collected generator's finally, say
    assert scope.current() is not None
    scope.leave(token)
    assert scope.current() is None


def test_the_refusal_is_found_inside_a_framework_s_wrapper_errors() -> None:
    error = _refusal()
    try:
        try:
            raise error
        except SummaryReconciliationError as cause:
            raise RuntimeError("Error in plugin callback") from cause
    except RuntimeError as wrapper:
        assert refusal_in(wrapper) is error
    try:
        try:
            raise error
        except SummaryReconciliationError:
            raise ValueError("while handling it")  # noqa: B904 - an implicit chain, as frameworks leave them
    except ValueError as wrapper:
        assert refusal_in(wrapper) is error
    looped = RuntimeError("a")
    other = RuntimeError("b")
    looped.__cause__, other.__cause__ = other, looped
    assert refusal_in(looped) is None and refusal_in(None) is None
