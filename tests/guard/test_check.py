"""check_resume (and resume_guard) decide exactly like the design note's resume_from_checkpoint."""

from __future__ import annotations

import asyncio
import re
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from summaryguard.guard import (
    AcceptDivergence,
    ReconciliationKind,
    SummaryReconciliationError,
    UnsupportedCheckpointError,
    check_resume,
    current_turn,
    resume_guard,
)
from summaryguard.plugins import hookimpl

# -- the reference: the seed's resume_from_checkpoint, transcribed ----------------------


class SeedError(Exception):
    def __init__(self, summary_generation: Any, checkpoint_turn: Any, missing_ref: str, reason: str) -> None:
        self.summary_generation = summary_generation
        self.checkpoint_turn = checkpoint_turn
        self.missing_ref = missing_ref
        self.reason = reason


SEED_REASON_TO_KIND = {
    "checkpoint carries no summary": "no-summary",
    "summary generation does not match checkpoint": "generation-mismatch",
    "checkpoint captured a half-written summary": "partial-summary",
    "dependency not present verbatim; re-derivation is not recovery": "missing-dependency",
}


def seed_resume_from_checkpoint(checkpoint: Any, next_turn_deps: Any) -> None:
    """The design note's function, line for line (minus the final resume_context())."""
    summary = checkpoint.summary
    if summary is None:
        raise SeedError(None, checkpoint.turn, "", "checkpoint carries no summary")
    if summary.generation != checkpoint.summary_generation:
        raise SeedError(summary.generation, checkpoint.turn, "", "summary generation does not match checkpoint")
    if summary.partial:
        raise SeedError(summary.generation, checkpoint.turn, "", "checkpoint captured a half-written summary")
    for ref in next_turn_deps:
        if ref not in summary.verbatim_refs:
            raise SeedError(
                summary.generation,
                checkpoint.turn,
                ref,
                "dependency not present verbatim; re-derivation is not recovery",
            )


def seed_decision(turn: int, recorded: Any, summary: Any, deps: list[str]) -> tuple[Any, ...] | None:
    """(kind, missing_ref, summary_generation, checkpoint_turn), or None to resume.

    One deliberate difference from the seed: a summary without a generation
    stamp never passes (the seed lets None == None through), because nothing
    then shows it is the summary the checkpoint recorded.
    """
    if summary is not None and summary[0] is None:
        return ("generation-mismatch", "", None, turn)
    seed_summary = (
        None
        if summary is None
        else SimpleNamespace(generation=summary[0], partial=summary[1], verbatim_refs=list(summary[2]))
    )
    seed_cp = SimpleNamespace(turn=turn, summary_generation=recorded, summary=seed_summary)
    try:
        seed_resume_from_checkpoint(seed_cp, deps)
    except SeedError as err:
        return (SEED_REASON_TO_KIND[err.reason], err.missing_ref, err.summary_generation, err.checkpoint_turn)
    return None


def decision_of(call: Any) -> tuple[Any, ...] | None:
    try:
        call()
    except SummaryReconciliationError as err:
        return (err.kind.value, err.missing_ref, err.summary_generation, err.checkpoint_turn)
    return None


def build(make_checkpoint: Any, shape: str, turn: int, recorded: Any, summary: Any, deps: list[str]) -> Any:
    if summary is None:
        return make_checkpoint(shape, turn=turn, recorded=recorded, has_summary=False, next_turn_deps=deps)
    generation, partial, refs = summary
    return make_checkpoint(
        shape, turn=turn, recorded=recorded, generation=generation, partial=partial, refs=refs, next_turn_deps=deps
    )


# -- the decision table ----------------------------------------------------------------

# name, recorded generation, summary (generation, partial, refs) or None, deps, expected (kind, missing_ref)
CASES = [
    ("resumable", 3, (3, False, ["h1", "h2"]), ["h1", "h2"], None),
    ("resumable-no-deps", 3, (3, False, []), [], None),
    ("no-summary", 3, None, ["h1"], ("no-summary", "")),
    ("no-summary-no-recorded-generation", None, None, [], ("no-summary", "")),
    ("generation-behind", 3, (2, False, ["h1"]), ["h1"], ("generation-mismatch", "")),
    ("generation-ahead", 3, (4, False, ["h1"]), [], ("generation-mismatch", "")),
    ("generation-unrecorded", None, (3, False, ["h1"]), [], ("generation-mismatch", "")),
    ("partial", 3, (3, True, ["h1"]), ["h1"], ("partial-summary", "")),
    ("missing-one", 3, (3, False, ["h1"]), ["h1", "h2"], ("missing-dependency", "h2")),
    ("missing-first-reported", 3, (3, False, ["h2"]), ["h1", "h3", "h2"], ("missing-dependency", "h1")),
    ("missing-empty-name", 3, (3, False, ["h1"]), [""], ("missing-dependency", "")),
    # several conditions fail: the first in the seed's order is the one reported
    ("mismatch-before-partial", 3, (2, True, []), ["h9"], ("generation-mismatch", "")),
    ("partial-before-missing", 3, (3, True, []), ["h9"], ("partial-summary", "")),
]


@pytest.mark.parametrize(("name", "recorded", "summary", "deps", "expected"), CASES, ids=[c[0] for c in CASES])
def test_check_resume_decides_like_the_seed(make_checkpoint, shape, name, recorded, summary, deps, expected) -> None:
    cp = build(make_checkpoint, shape, 7, recorded, summary, deps)
    got = decision_of(lambda: check_resume(cp, deps))
    want = seed_decision(7, recorded, summary, deps)
    assert got == want
    assert (got[:2] if got else None) == expected  # the table agrees with the seed too


@pytest.mark.parametrize(("name", "recorded", "summary", "deps", "expected"), CASES, ids=[c[0] for c in CASES])
def test_resume_guard_decides_like_check_resume(make_checkpoint, shape, name, recorded, summary, deps, expected) -> None:
    cp = build(make_checkpoint, shape, 7, recorded, summary, deps)
    ran = []

    @resume_guard(deps="deps")
    def with_deps(checkpoint: Any, deps: list[str]) -> str:
        ran.append("deps")
        return "resumed"

    @resume_guard
    def bare(checkpoint: Any) -> str:  # deps read from the checkpoint's next_turn_deps
        ran.append("bare")
        return "resumed"

    want = seed_decision(7, recorded, summary, deps)
    assert decision_of(lambda: with_deps(cp, deps)) == want
    assert decision_of(lambda: bare(cp)) == want
    assert ran == ([] if want else ["deps", "bare"])


def test_error_fields_and_reason(make_checkpoint, shape) -> None:
    cp = make_checkpoint(shape, turn=41, recorded=5, generation=5, refs=["kept"])
    with pytest.raises(SummaryReconciliationError) as info:
        check_resume(cp, ["kept", "bucket-handle"])
    err = info.value
    assert (err.summary_generation, err.checkpoint_turn, err.missing_ref) == (5, 41, "bucket-handle")
    assert err.kind is ReconciliationKind.MISSING_DEPENDENCY
    assert "re-deriving it would be a new fact" in err.reason

    cp = make_checkpoint(shape, turn=41, recorded=5, generation=4)
    with pytest.raises(SummaryReconciliationError) as info:
        check_resume(cp, [])
    assert "summary generation 4 does not match the generation 5" in info.value.reason


# -- the property: any checkpoint, any deps -----------------------------------------------

REFS = st.sampled_from(["h1", "h2", "h3", "bucket", ""])
GENERATIONS = st.one_of(st.none(), st.integers(0, 3))
SUMMARIES = st.one_of(st.none(), st.tuples(GENERATIONS, st.booleans(), st.lists(REFS, max_size=4)))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    shape=st.sampled_from(["native", "attributes", "mapping"]),
    turn=st.integers(0, 10_000),
    recorded=GENERATIONS,
    summary=SUMMARIES,
    deps=st.lists(REFS, max_size=5),
)
def test_property_guard_equals_seed(make_checkpoint, shape, turn, recorded, summary, deps) -> None:
    # our own Summary refuses to exist without an integer generation
    assume(not (shape == "native" and summary is not None and summary[0] is None))
    cp = build(make_checkpoint, shape, turn, recorded, summary, deps)
    want = seed_decision(turn, recorded, summary, deps)

    @resume_guard(deps="deps")
    def resume(checkpoint: Any, deps: Any) -> str:
        return "resumed"

    @resume_guard
    async def resume_async(checkpoint: Any) -> str:
        return "resumed"

    assert decision_of(lambda: check_resume(cp, deps)) == want
    assert decision_of(lambda: check_resume(cp)) == want  # deps from the checkpoint itself
    assert decision_of(lambda: check_resume(cp, iter(deps))) == want  # a one-shot iterator is enough
    assert decision_of(lambda: resume(cp, deps)) == want
    # a set has no order: the same kind, and the reported ref is one that is missing
    unordered = decision_of(lambda: resume(cp, frozenset(deps)))
    if want is None or want[0] != "missing-dependency":
        assert unordered == want
    else:
        assert unordered[0] == "missing-dependency" and unordered[2:] == want[2:]
        assert unordered[1] in deps and unordered[1] not in summary[2]
    assert decision_of(lambda: asyncio.run(resume_async(cp))) == want


# -- deps handling ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("deps", "message"),
    [("h1", "not a single str"), (b"h1", "not a single bytes"), (42, "got int"), (object(), "got object")],
)
def test_bad_deps_are_refused(make_checkpoint, deps, message) -> None:
    with pytest.raises(TypeError, match=message):
        check_resume(make_checkpoint("native"), deps)


def test_none_deps_read_the_checkpoint(make_checkpoint, shape) -> None:
    cp = make_checkpoint(shape, refs=["h1"], next_turn_deps=["h1", "gone"])
    with pytest.raises(SummaryReconciliationError) as info:
        check_resume(cp)
    assert info.value.missing_ref == "gone"
    check_resume(cp, [])  # explicit empty deps: nothing to find


def test_missing_ref_mapping_keys_count_as_present(make_checkpoint) -> None:
    # A mapping's verbatim_refs may be an object (ref -> value): keys are the refs.
    cp = make_checkpoint("mapping", refs=[])
    cp["summary"]["verbatim_refs"] = {"h1": "arn:bucket/1"}
    check_resume(cp, ["h1"])
    with pytest.raises(SummaryReconciliationError):
        check_resume(cp, ["arn:bucket/1"])


# -- plugins on the check ----------------------------------------------------------------


def test_observers_see_violations_but_check_resume_never_resolves(make_checkpoint, spy) -> None:
    spy.answers = lambda error, checkpoint: AcceptDivergence("would accept")
    cp = make_checkpoint("native", refs=[])
    check_resume(cp, [])
    assert spy.observed == []
    with pytest.raises(SummaryReconciliationError) as info:
        check_resume(cp, ["h1"])
    assert spy.observed == [(info.value, cp)]
    assert spy.resolved == []  # resolution belongs to resume_guard, which owns the resume


class Broken:
    """An adapter whose every method raises."""

    name = "broken"

    def __init__(self, fail: str) -> None:
        self.fail = fail

    def extract(self, checkpoint: Any) -> tuple[Any, ...]:
        if self.fail == "extract":
            raise KeyError("summary")
        return (9, 1, True, 1, False, ())

    def next_turn_deps(self, checkpoint: Any) -> Any:
        if self.fail == "next_turn_deps":
            raise ValueError("deps are corrupt")
        return ["x"]

    def drop_manifest(self, checkpoint: Any) -> Any:
        raise OSError("manifest unreadable")


class Odd:
    turn = 9


def adapter_plugin(adapter: Any, for_type: type) -> Any:
    class Plugin:
        @hookimpl
        def summaryguard_checkpoint_adapter(self, checkpoint_type: type, checkpoint: Any) -> Any:
            return adapter if checkpoint_type is for_type else None

    return Plugin()


@pytest.mark.parametrize(("fail", "cause"), [("extract", KeyError), ("next_turn_deps", ValueError)])
def test_an_adapter_that_raises_fails_closed(use_plugin, fail, cause) -> None:
    use_plugin(adapter_plugin(Broken(fail), Odd))

    @resume_guard
    def resume(checkpoint: Any) -> None:
        raise AssertionError("the body must not run")

    for call in (lambda: check_resume(Odd()), lambda: resume(Odd())):
        with pytest.raises(SummaryReconciliationError) as info:
            call()
        err = info.value
        assert err.kind is ReconciliationKind.NO_SUMMARY
        assert err.checkpoint_turn == 9
        assert "adapter 'broken'" in err.reason and cause.__name__ in err.reason
        assert isinstance(err.__cause__, cause)


def test_unreadable_checkpoint_without_turn_attribute(use_plugin) -> None:
    class NoTurn:
        pass

    use_plugin(adapter_plugin(Broken("extract"), NoTurn))
    with pytest.raises(SummaryReconciliationError) as info:
        check_resume(NoTurn(), [])
    assert info.value.checkpoint_turn is None


def test_unsupported_checkpoint() -> None:
    class Opaque:
        pass

    with pytest.raises(UnsupportedCheckpointError, match="Opaque"):
        check_resume(Opaque(), [])


def test_an_observer_that_raises_does_not_replace_the_error(make_checkpoint, use_plugin) -> None:
    class Exploding:
        @hookimpl
        def summaryguard_observe_violation(self, error: Any, checkpoint: Any) -> None:
            raise ZeroDivisionError("metrics backend down")

    use_plugin(Exploding())
    with pytest.warns(RuntimeWarning, match="ZeroDivisionError: metrics backend down"):
        with pytest.raises(SummaryReconciliationError) as info:
            check_resume(make_checkpoint("native", has_summary=False), [])
    assert info.value.kind is ReconciliationKind.NO_SUMMARY


class CountingAdapterHook:
    """Answers nothing (tryfirst), counts how often the adapter hook is called."""

    def __init__(self) -> None:
        self.calls: list[type] = []

    @hookimpl(tryfirst=True)
    def summaryguard_checkpoint_adapter(self, checkpoint_type: type, checkpoint: Any) -> None:
        self.calls.append(checkpoint_type)


def test_adapter_resolved_once_per_type_then_no_hook_call(make_checkpoint, use_plugin, shape) -> None:
    counter = use_plugin(CountingAdapterHook())
    cp = make_checkpoint(shape)

    @resume_guard(deps="deps")
    def resume(checkpoint: Any, deps: Any) -> str:
        return "ok"

    for _ in range(5):
        check_resume(cp, ["h1"])
        assert resume(cp, ["h1"]) == "ok"
    assert counter.calls == [type(cp)]


class Answering:
    """An adapter returning fixed facts and deps, right or wrong."""

    name = "answering"

    def __init__(self, facts: Any, deps: Any = ()) -> None:
        self.facts, self.deps = facts, deps

    def extract(self, checkpoint: Any) -> Any:
        return self.facts

    def next_turn_deps(self, checkpoint: Any) -> Any:
        return self.deps

    def drop_manifest(self, checkpoint: Any) -> Any:
        return ()


NONSENSE = [
    ("five-facts", (9, 1, True, 1, False), "ValueError"),
    ("refs-not-a-container", (9, 1, True, 1, False, 42), "verbatim_refs must be a collection of reference names, got int"),
    ("not-a-tuple", None, "TypeError"),
]


@pytest.mark.parametrize(("name", "facts", "reason"), NONSENSE, ids=[n[0] for n in NONSENSE])
def test_an_adapter_answering_nonsense_fails_closed(use_plugin, name, facts, reason) -> None:
    use_plugin(adapter_plugin(Answering(facts), Odd))

    @resume_guard(deps="deps")
    def resume(checkpoint: Any, deps: Any) -> None:
        raise AssertionError("the body must not run")

    @resume_guard(deps="deps")
    async def resume_async(checkpoint: Any, deps: Any) -> None:
        raise AssertionError("the body must not run")

    for call in (
        lambda: check_resume(Odd(), ["h1"]),
        lambda: resume(Odd(), ["h1"]),
        lambda: asyncio.run(resume_async(Odd(), ["h1"])),
    ):
        with pytest.raises(SummaryReconciliationError) as info:
            call()
        assert info.value.kind is ReconciliationKind.NO_SUMMARY
        assert "adapter 'answering'" in info.value.reason and reason in info.value.reason


@pytest.mark.parametrize("deps", [["h1"], []])
def test_none_refs_hold_nothing_and_none_deps_need_nothing(use_plugin, deps) -> None:
    use_plugin(adapter_plugin(Answering((9, 1, True, 1, False, None), deps=None), Odd))

    @resume_guard(deps="deps")
    def resume(checkpoint: Any, deps: Any) -> str:
        return "resumed"

    @resume_guard
    def bare(checkpoint: Any) -> str:
        return "resumed"

    assert bare(Odd()) == "resumed"  # the adapter names no deps
    check_resume(Odd())
    if deps:
        for call in (lambda: check_resume(Odd(), deps), lambda: resume(Odd(), deps)):
            with pytest.raises(SummaryReconciliationError) as info:
                call()
            assert (info.value.kind, info.value.missing_ref) == (ReconciliationKind.MISSING_DEPENDENCY, "h1")
    else:
        assert resume(Odd(), deps) == "resumed"


def test_accepting_on_an_adapter_without_refs(use_plugin) -> None:
    # refs None reaches the slow path unnormalized when an earlier condition failed first
    use_plugin(adapter_plugin(Answering((9, 1, True, 1, True, None)), Odd))

    class AcceptAll:
        @hookimpl
        def summaryguard_resolve_violation(self, error: Any, checkpoint: Any) -> Any:
            return AcceptDivergence("accept")

    use_plugin(AcceptAll())

    @resume_guard(deps="deps")
    def resume(checkpoint: Any, deps: Any) -> Any:
        return [(r.kind.value, r.ref) for r in current_turn().divergences]

    assert resume(Odd(), ["h1"]) == [("partial-summary", ""), ("missing-dependency", "h1")]


def test_deps_given_once_to_an_integration_are_names_checked_when_given() -> None:
    from summaryguard.guard.check import declared_deps

    def by_state(checkpoint: object) -> list[str]:
        return ["vm"]

    assert declared_deps("guard_runner", None) is None
    assert declared_deps("guard_runner", by_state) is by_state
    assert declared_deps("guard_runner", ["vm", "disk"]) == ("vm", "disk")
    assert declared_deps("guard_runner", (n for n in ["vm"])) == ("vm",)  # a generator, read once
    for bad, words in [
        ("vm", "not the string 'vm'"),
        (b"vm", "not the string b'vm'"),
        (5, "got int"),
        ([5], "item 0 is 5"),
        (["vm", ""], "item 1 is ''"),
    ]:
        with pytest.raises(TypeError, match=re.escape(f"guard_runner(deps=...) takes")) as caught:
            declared_deps("guard_runner", bad)
        assert words in str(caught.value)
