"""The cyclic collector is off while an analysis (or a screening) runs, and exactly as it was after it."""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FunctionType

import libcst as cst
import pytest

from summaryguard.rules.engine import Analyzer, LintRule, Vocabulary, all_rules
from summaryguard.rules.engine.collector import collector_paused, defer_next_collection

FIXTURES = Path(__file__).parent / "fixtures"
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


class _ScreeningAnalyzer(Analyzer):
    """Records whether the collector was on while each file was screened or lent."""

    seen: list[bool] = []

    def screen_facts(self, path: str, text: str):  # type: ignore[no-untyped-def]
        self.seen.append(gc.isenabled())
        return super().screen_facts(path, text)

    def lent_facts(self, path: str, text: str):  # type: ignore[no-untyped-def]
        self.seen.append(gc.isenabled())
        return super().lent_facts(path, text)


def test_screening_runs_with_the_collector_paused() -> None:
    from summaryguard.rules.cli.batch import lent_texts, screen_texts

    analyzer = _ScreeningAnalyzer(Vocabulary.build(), all_rules())
    _ScreeningAnalyzer.seen = []
    verdicts = screen_texts(analyzer, [("a.py", RESUME), ("b.py", "x = 1\n"), ("c.py", "def f(:\n")])
    assert [needs for (needs, _), _ in verdicts] == [True, False, False]
    assert verdicts[2][0][1]  # the syntax error is still found
    lent_texts(analyzer, [("d.py", "class A:\n    pass\n")])
    assert _ScreeningAnalyzer.seen == [False] * 4
    assert gc.isenabled()


class _Cycle:
    """Cyclic garbage: only the collector frees it."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def deferral(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The module's deferral state, restored after the test (and nothing left frozen)."""
    from summaryguard.rules.engine import collector

    monkeypatch.setattr(collector, "_defer", False)
    monkeypatch.setattr(collector, "_deferred", False)
    yield
    gc.unfreeze()


def _garbage_made_in_a_pause() -> weakref.ref[_Cycle]:
    with collector_paused():
        made = weakref.ref(_Cycle())
    return made


def test_without_deferral_a_pause_leaves_its_garbage_to_the_collector(deferral: None) -> None:
    made = _garbage_made_in_a_pause()
    gc.collect()
    assert made() is None


def test_deferred_garbage_waits_for_the_next_pause_and_no_longer(deferral: None) -> None:
    defer_next_collection()
    made = _garbage_made_in_a_pause()
    gc.collect()
    assert made() is not None, "frozen at the end of the pause: no collection walks it"
    assert gc.get_freeze_count() > 0
    with collector_paused():
        assert made() is None, "collected when the next analysis starts"
        assert not gc.isenabled()
        later = weakref.ref(_Cycle())
    assert gc.isenabled()
    gc.collect()
    assert later() is None, "armed for one pause only: the next one's garbage is collected as usual"


def test_the_command_line_defers_its_collections(deferral: None, tmp_path: Path) -> None:
    from summaryguard.rules.cli.command import main
    from summaryguard.rules.engine import collector

    (tmp_path / "a.py").write_text(RESUME)
    assert main(["check", "--no-cache", str(tmp_path / "a.py")]) == 1
    assert collector._deferred and not collector._defer


def test_the_largest_group_is_analyzed_last_its_garbage_left_to_the_exit(
    deferral: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The groups of a chunk run smallest first, so the collection left to the process's
    exit is the largest one's; findings come back sorted as one analysis sorts them."""
    from summaryguard.rules.cli.batch import _analyze_groups
    from summaryguard.rules.engine import collector

    analyzer = Analyzer(Vocabulary.build(), all_rules())
    seen: list[tuple[str, bool]] = []
    analyze = analyzer.analyze

    def recording(sources, facts=None, context=()):  # type: ignore[no-untyped-def]
        seen.append((sources[0][0], collector._defer))
        return analyze(sources, facts, context)

    monkeypatch.setattr(analyzer, "analyze", recording)
    large = RESUME + "".join(f"\n\ndef helper_{n}(x):\n    return x\n" for n in range(30))
    groups = [([("big.py", large)], []), ([("small.py", RESUME)], []), ([("mid.py", RESUME * 3)], [])]
    findings, errors = _analyze_groups(analyzer, groups, {})
    assert seen == [("small.py", False), ("mid.py", False), ("big.py", True)]
    assert [f.sort_key for f in findings] == sorted(f.sort_key for f in findings)
    assert {f.path for f in findings} == {"big.py", "small.py", "mid.py"} and errors == []


class _KeepsWhatItSees(LintRule):
    """A rule that keeps every call and module it visits, for the tests to ask who else does."""

    code = "XT902"
    name = "keeps-what-it-sees"
    USES_MODEL = False
    calls: list[cst.Call] = []
    modules: list[cst.Module] = []

    def visit_Call(self, node: cst.Call) -> None:
        _KeepsWhatItSees.calls.append(node)

    def visit_Module(self, node: cst.Module) -> None:
        _KeepsWhatItSees.modules.append(node)


def test_an_analysis_keeps_none_of_its_trees_alive_after_it() -> None:
    """The walks an analysis remembers hold their roots: kept past its end, they
    carried every tree of a group into the analyses of the next groups, and each
    collection walked them again (issue 10). libcst's nodes take no weak reference:
    what still refers to the calls a rule saw, once collected, is the test's list alone."""
    _KeepsWhatItSees.calls.clear()
    _KeepsWhatItSees.modules.clear()
    analyzer = Analyzer(Vocabulary.build(), [*all_rules(), _KeepsWhatItSees])
    findings, errors = analyzer.analyze([("a.py", RESUME)])
    assert errors == [] and findings
    calls = _KeepsWhatItSees.calls
    assert calls
    _KeepsWhatItSees.modules.clear()  # the trees around the calls are this test's question
    gc.collect()
    holders = [r for call in calls for r in gc.get_referrers(call) if r is not calls]
    assert holders == []


def test_reference_counting_alone_frees_an_analysis() -> None:
    """Once an analysis returns, nothing it made waits for the cyclic collector: the
    project index (a function points to its module, the module to its functions) is
    broken up (`Project.release`), and no recursive closure of the compaction facts
    keeps their analysis alive. Before, every tree of a run survived its analysis
    until the next collection, which walked them all (agno: 6.7 M objects). With the
    collector off, what still refers to the trees a rule saw is the test's list alone."""
    from summaryguard.rules.sg304_unserialized_checkpoint_write import UnserializedCheckpointWrite

    _KeepsWhatItSees.calls.clear()
    _KeepsWhatItSees.modules.clear()
    analyzer = Analyzer(Vocabulary.build(), [*all_rules(), _KeepsWhatItSees])
    source = UnserializedCheckpointWrite.INVALID[0].code
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        findings, errors = analyzer.analyze([("agent.py", source), ("a.py", RESUME)])
        modules = _KeepsWhatItSees.modules
        holders = [r for module in modules for r in gc.get_referrers(module) if r is not modules]
    finally:
        if was_enabled:
            gc.enable()
    assert errors == [] and {f.code for f in findings} >= {"SG304", "SG101"}
    assert len(modules) == 2 and holders == []


def _cyclic_garbage(work: Callable[[], object]) -> list[object]:
    """What ``work`` leaves that only the cyclic collector can free (none of it freed)."""
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        work()
        gc.collect()
        return list(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


def _ours(garbage: list[object]) -> list[str]:
    """The objects of ``garbage`` the analysis made: libcst's nodes, the engine's objects and functions."""
    return sorted({
        getattr(o, "__qualname__", "") if isinstance(o, FunctionType) else type(o).__qualname__
        for o in garbage
        if isinstance(o, cst.CSTNode)
        or type(o).__module__.startswith("summaryguard")
        or isinstance(o, FunctionType) and o.__module__.startswith("summaryguard")
    })


def test_an_analysis_leaves_its_trees_to_reference_counting() -> None:
    """Nothing an analysis made waits for the collector: a recursive closure, a table of
    bound methods or a throwaway index is a reference cycle, and one that reaches the
    analysis held every tree of the run until a collection walked them all (agno:
    1.9 M objects). Covered: the compaction facts of messages that replace a
    conversation, a context module built on demand, the conversion of CPython's trees."""
    analyzer = Analyzer(Vocabulary.build(), all_rules())
    messages = (FIXTURES / "sg301_message_replaces_history.py").read_text()
    loop = (FIXTURES / "recompaction_callers" / "loop.py").read_text()
    memory = (FIXTURES / "recompaction_callers" / "memory.py").read_text()
    results: list[object] = []

    def work() -> None:
        results.append(analyzer.analyze([("messages.py", messages), ("loop.py", loop)], None, [("memory.py", memory)]))

    assert _ours(_cyclic_garbage(work)) == []
    findings, _ = results[0]  # type: ignore[misc]
    assert {f.path for f in findings} == {"messages.py", "loop.py"}, "the analysis did run"


def test_the_screening_leaves_nothing_to_the_collector() -> None:
    from summaryguard.rules.cli.batch import screen_texts

    analyzer = Analyzer(Vocabulary.build(), all_rules())
    texts = [("messages.py", (FIXTURES / "sg301_message_replaces_history.py").read_text()), ("a.py", RESUME)]
    verdicts: list[object] = []
    assert _ours(_cyclic_garbage(lambda: verdicts.extend(screen_texts(analyzer, texts)))) == []
    assert [needs for (needs, _), _ in verdicts] == [True, True]  # type: ignore[misc]
