"""The cyclic collector is off while an analysis runs, and exactly as it was after it."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import libcst as cst
import pytest

from summaryguard.rules.engine import Analyzer, LintRule, Vocabulary, all_rules
from summaryguard.rules.engine.collector import collector_paused

RESUME = "def recover(checkpoint):\n    summary = checkpoint.summary\n    return checkpoint.resume_context()\n"


@pytest.fixture(autouse=True)
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()


def test_off_inside_and_back_on_after() -> None:
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_nested_pauses_end_with_the_outermost() -> None:
    with collector_paused():
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_caller_who_disabled_it_keeps_it_disabled() -> None:
    gc.disable()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_an_exception_inside_still_turns_it_back_on() -> None:
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_overlapping_pauses_in_threads_end_with_the_last() -> None:
    inside, release = threading.Event(), threading.Event()

    def other() -> None:
        with collector_paused():
            inside.set()
            release.wait(10)

    thread = threading.Thread(target=other)
    with collector_paused():
        thread.start()
        assert inside.wait(10)
    assert not gc.isenabled(), "the other thread's pause is still running"
    release.set()
    thread.join(10)
    assert gc.isenabled()


class _SeesCollector(LintRule):
    """## What it does
    Records whether the collector runs while the rules do."""

    code = "XT901"
    name = "sees-collector"
    USES_MODEL = False
    seen: list[bool] = []

    def visit_Call(self, node: cst.Call) -> None:
        _SeesCollector.seen.append(gc.isenabled())


def test_an_analysis_runs_with_the_collector_paused() -> None:
    _SeesCollector.seen.clear()
    analyzer = Analyzer(Vocabulary.build(), [*all_rules(), _SeesCollector])
    findings, errors = analyzer.analyze([("a.py", RESUME)])
    assert errors == [] and {f.code for f in findings} == {"SG101", "SG102", "SG103"}
    assert _SeesCollector.seen and not any(_SeesCollector.seen)
    assert gc.isenabled()
