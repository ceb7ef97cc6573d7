"""The analysis runs on a deep-stack thread: results and exceptions come back unchanged."""

from __future__ import annotations

import sys
import threading

import pytest

from summaryguard.rules.cli.deepstack import RECURSION_LIMIT, call_with_deep_stack


def test_result_and_thread() -> None:
    seen: list[tuple[int, int]] = []
    limit = sys.getrecursionlimit()

    def work() -> int:
        seen.append((threading.get_ident(), sys.getrecursionlimit()))
        return 42

    assert call_with_deep_stack(work) == 42
    assert seen == [(seen[0][0], max(limit, RECURSION_LIMIT))] and seen[0][0] != threading.get_ident()
    assert threading.stack_size() == 0  # the process default is restored
    assert sys.getrecursionlimit() == limit


def test_started_through_threading_when_it_is_loaded() -> None:
    """So coverage and profilers, which hook threading, see the work."""
    names: list[str] = []
    assert call_with_deep_stack(lambda: names.append(threading.current_thread().name)) is None
    assert names == ["summaryguard-analyze"]


def test_started_with_the_primitives_when_threading_is_not_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    import _thread

    monkeypatch.setitem(sys.modules, "threading", None)  # as in a process that never imported it
    seen: list[int] = []
    assert call_with_deep_stack(lambda: seen.append(_thread.get_ident()) or 7) == 7
    assert seen and seen[0] != _thread.get_ident()
    monkeypatch.undo()
    assert threading.stack_size() == 0


def test_exception_is_raised_in_the_caller() -> None:
    def work() -> None:
        raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        call_with_deep_stack(work)


def test_native_parser_survives_deep_nesting() -> None:
    """Beyond the main thread's stack for libcst (which dies with SIGSEGV there), not beyond this one."""
    import libcst

    source = "x = " + "(" * 1500 + "1" + ")" * 1500 + "\n"
    module = call_with_deep_stack(lambda: libcst.parse_module(source))
    assert module.code == source


def test_recursion_limit_is_raised_while_the_worker_runs_and_restored() -> None:
    import sys

    from summaryguard.rules.cli.deepstack import RECURSION_LIMIT

    before = sys.getrecursionlimit()
    seen = call_with_deep_stack(sys.getrecursionlimit)
    assert seen == max(before, RECURSION_LIMIT)
    assert sys.getrecursionlimit() == before


def test_deep_python_recursion_fits_and_runaway_recursion_still_ends() -> None:
    import sys

    def depth(n: int) -> int:
        return 0 if n == 0 else 1 + depth(n - 1)

    assert call_with_deep_stack(lambda: depth(10_000)) == 10_000

    def runaway(n: int) -> int:
        return runaway(n + 1)

    with pytest.raises(RecursionError):
        call_with_deep_stack(lambda: runaway(0))
    assert sys.getrecursionlimit() < 10_000  # restored after a failure too
