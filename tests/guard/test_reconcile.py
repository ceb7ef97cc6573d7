"""Reconciliation: observers, then a resolver that replays or accepts the divergence on record."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from typing import Any

import pytest

from summaryguard.guard import (
    AcceptDivergence,
    DivergenceRecord,
    ReconciliationKind,
    Replay,
    SummaryReconciliationError,
    UnsupportedCheckpointError,
    current_turn,
    resume_guard,
    tool_guard,
)
from summaryguard.guard.resume import MAX_RESOLUTIONS
from summaryguard.plugins import hookimpl

# -- the value types ---------------------------------------------------------------------


def test_divergence_record_from_error() -> None:
    err = SummaryReconciliationError(4, 12, "bucket", "dropped", kind="missing-dependency")
    before = time.time()
    record = DivergenceRecord.from_error(err, "operator approved re-fetch", "ops@example")
    assert (record.kind, record.ref, record.summary_generation, record.checkpoint_turn) == (
        ReconciliationKind.MISSING_DEPENDENCY,
        "bucket",
        4,
        12,
    )
    assert (record.reason, record.accepted_by) == ("operator approved re-fetch", "ops@example")
    assert before <= record.at <= time.time()
    assert record.as_dict() == {
        "kind": "missing-dependency",
        "ref": "bucket",
        "summary_generation": 4,
        "checkpoint_turn": 12,
        "reason": "operator approved re-fetch",
        "accepted_by": "ops@example",
        "at": record.at,
    }
    assert str(record) == (
        "missing-dependency 'bucket' at checkpoint turn 12 (summary gen 4) accepted by ops@example: "
        "operator approved re-fetch"
    )


def test_divergence_record_without_ref() -> None:
    err = SummaryReconciliationError(2, 5, "", "mismatch", kind="generation-mismatch")
    record = DivergenceRecord.from_error(err, "policy", "controller")
    assert str(record) == "generation-mismatch at checkpoint turn 5 (summary gen 2) accepted by controller: policy"


@pytest.mark.parametrize(
    ("value", "field"),
    [(Replay(checkpoint=1), "checkpoint"), (AcceptDivergence("r"), "reason")],
)
def test_resolutions_are_frozen(value, field) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(value, field, 2)
    assert AcceptDivergence("r").accepted_by == "controller"


@pytest.mark.parametrize(
    ("reason", "accepted_by", "error"),
    [("", "ops", ValueError), ("  ", "ops", ValueError), (None, "ops", TypeError), (5, "ops", TypeError),
     ("why", "", ValueError)],
)
def test_an_acceptance_says_why_and_by_whom(reason, accepted_by, error) -> None:
    # A resolver's blank acceptance was recorded as it was and waived the check on nothing.
    with pytest.raises(error):
        AcceptDivergence(reason, accepted_by=accepted_by)


# -- resolution through plugins ------------------------------------------------------


def guarded(record: list[Any]):
    @resume_guard(deps="deps")
    def resume(checkpoint: Any, deps: Any) -> Any:
        record.append((checkpoint, current_turn()))
        return checkpoint

    return resume


def test_no_resolver_the_error_propagates_after_observers(make_checkpoint, spy) -> None:
    cp = make_checkpoint("native", refs=[])
    ran: list[Any] = []
    with pytest.raises(SummaryReconciliationError) as info:
        guarded(ran)(cp, ["h1"])
    assert spy.observed == [(info.value, cp)]
    assert spy.resolved == [info.value]
    assert ran == []


def test_no_hook_runs_on_success(make_checkpoint, spy) -> None:
    ran: list[Any] = []
    guarded(ran)(make_checkpoint("native"), ["h1"])
    assert (spy.observed, spy.resolved, spy.accepted) == ([], [], [])
    assert len(ran) == 1


@pytest.mark.parametrize("by_keyword", [False, True])
def test_replay_resumes_from_the_replacement(make_checkpoint, spy, shape, by_keyword) -> None:
    bad = make_checkpoint("native", turn=9, refs=[])
    exact = make_checkpoint(shape, turn=8, refs=["h1"])
    spy.answers = lambda error, checkpoint: Replay(exact)
    ran: list[Any] = []
    resume = guarded(ran)
    result = resume(checkpoint=bad, deps=["h1"]) if by_keyword else resume(bad, ["h1"])
    assert result is exact
    assert ran[0][1].checkpoint is exact and ran[0][1].checkpoint_turn == 8
    assert ran[0][1].divergences == []
    assert [cp for _, cp in spy.observed] == [bad]


def test_replay_of_a_defaulted_checkpoint(make_checkpoint, spy) -> None:
    exact = make_checkpoint("native")
    spy.answers = lambda error, checkpoint: Replay(exact)

    @resume_guard
    def resume(agent: str = "a", checkpoint: Any = make_checkpoint("native", has_summary=False)) -> Any:
        return checkpoint

    assert resume() is exact


def test_replay_reads_deps_from_the_replacement(make_checkpoint, spy) -> None:
    bad = make_checkpoint("native", turn=9, has_summary=False)
    also_bad = make_checkpoint("mapping", turn=8, refs=["h1"], next_turn_deps=["h1", "h7"])
    good = make_checkpoint("attributes", turn=7, refs=["h1", "h7"], next_turn_deps=["h1", "h7"])
    replacements = iter([also_bad, good])
    spy.answers = lambda error, checkpoint: Replay(next(replacements))

    @resume_guard
    def resume(checkpoint: Any) -> Any:
        return checkpoint

    assert resume(bad) is good
    assert [(e.kind.value, e.missing_ref) for e, _ in spy.observed] == [("no-summary", ""), ("missing-dependency", "h7")]


def test_a_bad_replacement_raises_its_own_error(make_checkpoint, spy) -> None:
    bad = make_checkpoint("native", turn=9, refs=[])
    partial = make_checkpoint("native", turn=8, partial=True)
    spy.answers = lambda error, checkpoint: Replay(partial) if checkpoint is bad else None
    ran: list[Any] = []
    with pytest.raises(SummaryReconciliationError) as info:
        guarded(ran)(bad, ["h1"])
    assert (info.value.kind, info.value.checkpoint_turn) == (ReconciliationKind.PARTIAL_SUMMARY, 8)
    assert ran == []


def test_a_replacement_nobody_can_read(make_checkpoint, spy) -> None:
    spy.answers = lambda error, checkpoint: Replay(object())
    with pytest.raises(UnsupportedCheckpointError):
        guarded([])(make_checkpoint("native", refs=[]), ["h1"])


def test_replay_forever_stops_after_max_resolutions(make_checkpoint, spy) -> None:
    bad = make_checkpoint("native", has_summary=False)
    spy.answers = lambda error, checkpoint: Replay(bad)
    with pytest.raises(SummaryReconciliationError) as info:
        guarded([])(bad, [])
    assert f"still unresolved after {MAX_RESOLUTIONS} replays" in info.value.reason
    assert info.value.kind is ReconciliationKind.NO_SUMMARY
    assert len(spy.resolved) == MAX_RESOLUTIONS + 1


def test_accept_divergence_goes_on_with_a_record(make_checkpoint, spy, shape) -> None:
    cp = make_checkpoint(shape, turn=12, recorded=4, generation=4, refs=["h1"])
    spy.answers = lambda error, checkpoint: AcceptDivergence("operator re-derives it", accepted_by="ops")
    ran: list[Any] = []
    assert guarded(ran)(cp, ["h1", "bucket"]) is cp
    turn = ran[0][1]
    [record] = spy.accepted
    assert turn.divergences == [record]
    assert (record.kind, record.ref, record.summary_generation, record.checkpoint_turn) == (
        ReconciliationKind.MISSING_DEPENDENCY,
        "bucket",
        4,
        12,
    )
    assert (record.reason, record.accepted_by) == ("operator re-derives it", "ops")
    assert turn.is_accepted("bucket") and not turn.is_accepted("h1")


def test_every_condition_accepted_in_order(make_checkpoint, spy) -> None:
    deps = [f"r{i}" for i in range(MAX_RESOLUTIONS + 4)] + [""]
    cp = make_checkpoint("native", recorded=5, generation=4, partial=True, refs=[])
    spy.answers = lambda error, checkpoint: AcceptDivergence("accept all")
    ran: list[Any] = []
    guarded(ran)(cp, deps)
    kinds = [(r.kind.value, r.ref) for r in ran[0][1].divergences]
    assert kinds == [("generation-mismatch", ""), ("partial-summary", "")] + [("missing-dependency", d) for d in deps]
    assert spy.accepted == ran[0][1].divergences


def test_accepting_no_summary_resumes_without_one(make_checkpoint, spy) -> None:
    spy.answers = lambda error, checkpoint: AcceptDivergence("start from scratch")
    ran: list[Any] = []
    guarded(ran)(make_checkpoint("mapping", has_summary=False), ["h1"])
    assert [r.kind for r in ran[0][1].divergences] == [ReconciliationKind.NO_SUMMARY]
    assert ran[0][1].summary_generation is None


def test_an_accepted_missing_dependency_lets_its_tool_rederive_it(make_checkpoint, spy) -> None:
    calls: list[str] = []

    @tool_guard
    def create_bucket(name: str) -> str:
        calls.append(name)
        return "bkt-new"

    cp = make_checkpoint("native", refs=[], manifest=[("bucket", "bkt-old", "create_bucket")])
    spy.answers = lambda error, checkpoint: AcceptDivergence("re-create it")

    @resume_guard(deps="deps")
    def resume(checkpoint: Any, deps: Any) -> str:
        return create_bucket("x")

    assert resume(cp, ["bucket"]) == "bkt-new"
    assert calls == ["x"]


def test_replay_after_acceptance_drops_the_earlier_records(make_checkpoint, spy) -> None:
    first = make_checkpoint("native", turn=9, refs=[])
    exact = make_checkpoint("native", turn=8, refs=["h1", "h2"])
    answers = iter([AcceptDivergence("first try"), Replay(exact)])
    spy.answers = lambda error, checkpoint: next(answers)
    ran: list[Any] = []
    guarded(ran)(first, ["h1", "h2"])
    # h1 accepted on the first checkpoint, then h2 replayed: the turn runs on the exact one, no record
    assert ran[0][1].checkpoint is exact
    assert ran[0][1].divergences == []


@pytest.mark.parametrize("answer", ["accept", 42, AcceptDivergence, ("replay",)])
def test_a_bogus_resolution_is_a_type_error(make_checkpoint, spy, answer) -> None:
    spy.answers = lambda error, checkpoint: answer
    ran: list[Any] = []
    with pytest.raises(TypeError, match="expected Replay, AcceptDivergence or None"):
        guarded(ran)(make_checkpoint("native", refs=[]), ["h1"])
    assert ran == []


def test_first_resolver_wins(make_checkpoint, use_plugin) -> None:
    class Replayer:
        @hookimpl(tryfirst=True)
        def summaryguard_resolve_violation(self, error: Any, checkpoint: Any) -> Any:
            return None  # no opinion: the next resolver decides

    class Acceptor:
        @hookimpl
        def summaryguard_resolve_violation(self, error: Any, checkpoint: Any) -> Any:
            return AcceptDivergence("fallback")

    use_plugin(Replayer())
    use_plugin(Acceptor())
    ran: list[Any] = []
    guarded(ran)(make_checkpoint("native", refs=[]), ["h1"])
    assert [r.reason for r in ran[0][1].divergences] == ["fallback"]


def test_async_resolution(make_checkpoint, spy) -> None:
    exact = make_checkpoint("native", turn=3)
    spy.answers = lambda error, checkpoint: Replay(exact)

    @resume_guard
    async def resume(checkpoint: Any) -> Any:
        return current_turn().checkpoint

    assert asyncio.run(resume(make_checkpoint("native", has_summary=False))) is exact
    spy.answers = lambda error, checkpoint: None
    with pytest.raises(SummaryReconciliationError):
        asyncio.run(resume(make_checkpoint("native", has_summary=False)))


def test_an_error_records_how_a_resolver_settled_it(make_checkpoint, spy) -> None:
    """Observers see a violation before any resolver answers; a run that remembered it then
    (a framework room's GuardedRun) must know it no longer stands."""
    from summaryguard.guard.runs import GuardedRun

    exact = make_checkpoint("native", turn=8, refs=["h1"])
    answers = iter([Replay(exact), AcceptDivergence(reason="approved", accepted_by="oncall"), None])
    spy.answers = lambda error, checkpoint: next(answers)
    run = GuardedRun()
    for _ in range(2):
        guarded([])(make_checkpoint("native", refs=[]), ["h1"])
    with pytest.raises(SummaryReconciliationError) as info:
        guarded([])(make_checkpoint("native", refs=[]), ["h1"])
    replayed, accepted, standing = (error for error, _ in spy.observed)
    assert isinstance(replayed.resolution, Replay) and isinstance(accepted.resolution, AcceptDivergence)
    assert standing is info.value and standing.resolution is None
    for error in (replayed, accepted, standing):
        run.remember(error)
    assert run.refused == [standing] and run.first_refusal is standing


def test_an_error_still_unresolved_after_the_replay_limit_is_not_settled(make_checkpoint, spy) -> None:
    """The limit raises the error the resolver kept answering with replays: it stands, and a run
    that remembered it must stop on it."""
    spy.answers = lambda error, checkpoint: Replay(make_checkpoint("native", refs=[]))
    with pytest.raises(SummaryReconciliationError) as info:
        guarded([])(make_checkpoint("native", refs=[]), ["h1"])
    assert "still unresolved after" in info.value.reason and info.value.resolution is None
