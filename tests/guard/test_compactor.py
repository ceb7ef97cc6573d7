"""Compactor: generations, drop manifests, provenance, and what it refuses to compact."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from summaryguard.guard import (
    Checkpoint,
    CheckpointStore,
    Compactor,
    DroppedRef,
    ProducedRef,
    ReconciliationKind,
    Summary,
    SummaryReconciliationError,
    Turn,
)


class Keeping:
    """A summarizer that keeps exactly the values it is told to keep (and records its calls)."""

    def __init__(self, keep: Sequence[str] = ()) -> None:
        self.keep = set(keep)
        self.calls: list[tuple[str, tuple[Turn, ...]]] = []

    def __call__(self, previous: str, turns: Sequence[Turn]) -> str:
        self.calls.append((previous, tuple(turns)))
        return "summary: " + " ".join(sorted(self.keep))


def turn(index: int, *refs: tuple[str, str, str | None]) -> Turn:
    return Turn(index, f"turn {index}", tuple(ProducedRef(n, v, t) for n, v, t in refs))


def test_first_compaction_stamps_generation_manifest_and_span() -> None:
    summarize = Keeping(keep=["handle-A"])
    compactor = Compactor(summarize)
    turns = [turn(3, ("a", "handle-A", "open")), turn(5, ("b", "handle-B", "lookup"), ("c", "handle-C", None))]
    summary = compactor.compact(turns)
    assert summary.generation == 1
    assert summary.parent_generation is None
    assert summary.partial is False
    assert summary.turns == (3, 5)
    assert summary.content == "summary: handle-A"
    assert summary.verbatim_refs == {"a": "handle-A"}
    assert summary.provenance == {"a": "open"}
    assert summary.drop_manifest == (
        DroppedRef("b", last_known="handle-B", tool="lookup", turn=5),
        DroppedRef("c", last_known="handle-C", tool=None, turn=5),
    )
    assert compactor.head is summary
    assert summarize.calls == [("", tuple(turns))]


def test_next_generation_builds_on_the_head() -> None:
    summarize = Keeping(keep=["handle-A", "handle-B"])
    compactor = Compactor(summarize)
    first = compactor.compact([turn(1, ("a", "handle-A", "open"), ("b", "handle-B", "lookup"))])
    summarize.keep = {"handle-B", "handle-D"}
    second = compactor.compact([turn(2, ("d", "handle-D", "open"))])
    assert (second.generation, second.parent_generation) == (2, 1)
    assert summarize.calls[-1][0] == first.content  # the summarizer sees the previous text
    assert second.verbatim_refs == {"b": "handle-B", "d": "handle-D"}
    assert second.provenance == {"b": "lookup", "d": "open"}
    # "a" was kept by generation 1 and dropped now: its tool comes from the provenance.
    assert second.drop_manifest == (DroppedRef("a", last_known="handle-A", tool="open", turn=None),)
    assert second.turns == (1, 2)


def test_manifest_entries_are_carried_forward() -> None:
    summarize = Keeping()
    compactor = Compactor(summarize)
    first = compactor.compact([turn(1, ("a", "handle-A", "open"))])
    second = compactor.compact([turn(2)])
    third = compactor.compact([])
    assert first.drop_manifest == second.drop_manifest == third.drop_manifest
    assert third.drop_manifest[0] == DroppedRef("a", "handle-A", "open", 1)
    assert third.generation == 3
    assert third.turns == (1, 2)  # an empty compaction covers what its parent covered


def test_a_dropped_ref_brought_back_verbatim_counts_as_kept_with_its_provenance() -> None:
    summarize = Keeping()
    compactor = Compactor(summarize)
    compactor.compact([turn(1, ("a", "handle-A", "open"))])
    summarize.keep = {"handle-A"}  # the summarizer quotes it again
    back = compactor.compact([turn(2)])
    assert back.verbatim_refs == {"a": "handle-A"}
    assert back.dropped("a") is None
    assert back.provenance == {"a": "open"}
    summarize.keep = set()
    again = compactor.compact([turn(3)])
    # Dropped a second time, it still names the tool that must not re-derive it.
    assert again.dropped("a") == DroppedRef("a", "handle-A", tool="open", turn=None)


def test_a_ref_produced_again_replaces_the_carried_entry() -> None:
    summarize = Keeping()
    compactor = Compactor(summarize)
    compactor.compact([turn(1, ("a", "old", "open"))])
    second = compactor.compact([turn(4, ("a", "new", "reopen"))])
    assert second.drop_manifest == (DroppedRef("a", "new", "reopen", 4),)
    summarize.keep = {"new"}
    third = compactor.compact([turn(5)])
    assert third.verbatim_refs == {"a": "new"}
    assert third.drop_manifest == ()


def test_a_stale_value_of_a_dropped_ref_never_comes_back_as_kept() -> None:
    """Dropped as "old", produced again as "new": quoting "old" must not keep the superseded value."""
    summarize = Keeping()
    compactor = Compactor(summarize)
    compactor.compact([turn(1, ("a", "old", "open"))])
    summarize.keep = {"old"}
    second = compactor.compact([turn(2, ("a", "new", "open"))])
    assert second.verbatim_refs == {}
    assert second.drop_manifest == (DroppedRef("a", "new", "open", 2),)


def test_a_value_kept_in_the_text_keeps_only_its_latest_value() -> None:
    summarize = Keeping(keep=["old"])
    compactor = Compactor(summarize)
    summary = compactor.compact([turn(1, ("a", "old", "open")), turn(2, ("a", "new", "open"))])
    assert summary.verbatim_refs == {}
    assert summary.drop_manifest == (DroppedRef("a", "new", "open", 2),)


def test_an_empty_value_is_never_kept() -> None:
    summary = Compactor(Keeping(keep=["x"])).compact([turn(1, ("a", "", "open"))])
    assert summary.verbatim_refs == {}
    assert summary.dropped("a") == DroppedRef("a", "", "open", 1)


@pytest.mark.parametrize(
    ("value", "text", "kept"),
    [
        ("bkt-1", "made bkt-12 and bkt-13", False),  # a longer handle is not this one
        ("1", "at turn 10 we paused", False),  # nor a longer number
        ("abc", "the xabc token", False),
        ("bkt-1", "made bkt-1.", True),  # punctuation around a whole value is fine
        ("bkt-1", "(bkt-1)", True),
        ("bkt-1", "bkt-12 then bkt-1", True),  # a later whole occurrence counts
        ("-x-", "a-x-b", True),  # edges that are not word characters need no boundary
        ("vm-7", "vm-7", True),
    ],
)
def test_a_value_is_kept_only_where_it_stands_whole(value: str, text: str, kept: bool) -> None:
    compactor = Compactor(lambda previous, turns: text)
    summary = compactor.compact([turn(1, ("h", value, "create"))])
    assert ("h" in summary.verbatim_refs) is kept
    assert (summary.dropped("h") is None) is kept


def test_no_turns_and_no_previous() -> None:
    summary = Compactor(Keeping()).compact([])
    assert (summary.generation, summary.parent_generation, summary.turns) == (1, None, None)


# -- a property over many generations ------------------------------------------------------

names = st.sampled_from(["a", "b", "c", "d"])
tools = st.sampled_from([None, "open", "lookup"])
produced = st.tuples(names, st.integers(0, 5), tools)
rounds = st.lists(
    st.tuples(st.lists(st.lists(produced, max_size=3), max_size=3), st.sets(st.integers(0, 5))),
    min_size=1,
    max_size=6,
)


@settings(max_examples=200, deadline=None)
@given(rounds)
def test_every_reference_is_kept_or_dropped_never_lost(script: list[Any]) -> None:
    """Across generations every reference ever produced is kept verbatim or in the manifest, once."""
    keep: set[str] = set()
    compactor = Compactor(lambda previous, turns: "|".join(sorted(keep)))
    latest: dict[str, tuple[str, str | None]] = {}
    index = 0
    for gen, (turns_refs, keep_values) in enumerate(script, start=1):
        turns = []
        for refs in turns_refs:
            index += 1
            produced_refs = []
            for name, value, tool in refs:
                produced_refs.append(ProducedRef(name, f"<{name}{value}>", tool))
                latest[name] = (f"<{name}{value}>", tool)
            turns.append(Turn(index, "", tuple(produced_refs)))
        keep = {f"<{n}{v}>" for n in "abcd" for v in keep_values}
        summary = compactor.compact(turns)
        assert summary.generation == gen
        assert summary.parent_generation == (gen - 1 if gen > 1 else None)
        dropped = {e.ref: e for e in summary.drop_manifest}
        assert len(dropped) == len(summary.drop_manifest)
        assert set(dropped).isdisjoint(summary.verbatim_refs)
        assert set(dropped) | set(summary.verbatim_refs) == set(latest)
        for name, value in summary.verbatim_refs.items():
            assert value == latest[name][0]
            assert value in summary.content
            assert summary.provenance.get(name) == latest[name][1]
        for name, entry in dropped.items():
            assert entry.last_known == latest[name][0]
            assert entry.tool == latest[name][1]
        assert set(summary.provenance) <= set(summary.verbatim_refs)


# -- refusals --------------------------------------------------------------------------------


def _refused(compactor: Compactor, previous: Summary) -> SummaryReconciliationError:
    head = compactor.head
    with pytest.raises(SummaryReconciliationError) as info:
        compactor.compact([turn(9)], previous=previous)
    assert compactor.head is head  # nothing changed
    assert not compactor.lock.locked()
    return info.value


def test_refuses_a_partial_summary() -> None:
    compactor = Compactor(Keeping())
    compactor.compact([turn(1)])
    partial = Summary(generation=4, content="half", partial=True, turns=(1, 6))
    err = _refused(compactor, partial)
    assert err.kind is ReconciliationKind.PARTIAL_SUMMARY
    assert (err.summary_generation, err.checkpoint_turn) == (4, 6)


def test_refuses_a_foreign_summary() -> None:
    err = _refused(Compactor(Keeping()), Summary(generation=2, content="from elsewhere"))
    assert err.kind is ReconciliationKind.GENERATION_MISMATCH
    assert "none yet" in err.reason and "adopt" in err.reason
    assert err.checkpoint_turn is None


def test_refuses_a_stale_summary_of_its_own() -> None:
    compactor = Compactor(Keeping())
    first = compactor.compact([turn(1)])
    compactor.compact([turn(2)])
    err = _refused(compactor, first)  # re-compacting generation 1 would fork the lineage
    assert err.kind is ReconciliationKind.GENERATION_MISMATCH
    assert "generation 2" in err.reason
    assert err.summary_generation == 1


def test_accepts_its_own_head_explicitly() -> None:
    compactor = Compactor(Keeping())
    head = compactor.compact([turn(1)])
    assert compactor.compact([turn(2)], previous=head).generation == 2


def _checkpoint_of(tmp_path: Any, deps: Sequence[str] = ()) -> Checkpoint:
    """A checkpoint written by one compactor's run and loaded back from disk, as after a crash."""
    store = CheckpointStore(tmp_path)
    compactor = Compactor(Keeping(keep=["handle-A"]), lock=store.lock)
    compactor.compact([turn(1, ("a", "handle-A", "open"), ("b", "handle-B", "lookup"))])
    compactor.compact([turn(2)])
    store.checkpoint(compactor, 2, next_turn_deps=deps)
    loaded = store.latest()
    assert loaded is not None
    return loaded


def test_a_rehydrated_summary_must_be_adopted_first(tmp_path: Any) -> None:
    checkpoint = _checkpoint_of(tmp_path, deps=["a"])
    assert checkpoint.summary is not None
    restarted = Compactor(Keeping(keep=["handle-A"]))
    err = _refused(restarted, checkpoint.summary)
    assert err.kind is ReconciliationKind.GENERATION_MISMATCH
    adopted = restarted.adopt(checkpoint)
    assert adopted == checkpoint.summary and restarted.head is adopted
    third = restarted.compact([turn(3)], previous=checkpoint.summary)
    assert (third.generation, third.parent_generation) == (3, 2)
    assert third.dropped("b") == DroppedRef("b", "handle-B", "lookup", 1)  # carried across the crash


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (lambda s: Checkpoint(2, s, s.generation + 1), ReconciliationKind.GENERATION_MISMATCH),
        (lambda s: Checkpoint(2, None, None), ReconciliationKind.NO_SUMMARY),
        (
            lambda s: Checkpoint(2, Summary(s.generation, s.content, partial=True), s.generation),
            ReconciliationKind.PARTIAL_SUMMARY,
        ),
        (lambda s: Checkpoint(2, s, s.generation, next_turn_deps=["b"]), ReconciliationKind.MISSING_DEPENDENCY),
    ],
    ids=["generation-mismatch", "no-summary", "partial", "missing-dependency"],
)
def test_adopt_runs_the_resume_check(tmp_path: Any, make: Any, kind: ReconciliationKind) -> None:
    good = _checkpoint_of(tmp_path)
    assert good.summary is not None
    compactor = Compactor(Keeping())
    with pytest.raises(SummaryReconciliationError) as info:
        compactor.adopt(make(good.summary))
    assert info.value.kind is kind
    assert compactor.head is None


def test_adopt_takes_explicit_deps(tmp_path: Any) -> None:
    good = _checkpoint_of(tmp_path)
    compactor = Compactor(Keeping())
    with pytest.raises(SummaryReconciliationError) as info:
        compactor.adopt(good, deps=["b"])
    assert info.value.missing_ref == "b"
    assert compactor.adopt(good, deps=["a"]) is good.summary


def test_adopt_needs_a_native_checkpoint() -> None:
    mapping = {"turn": 1, "summary_generation": 1, "summary": {"generation": 1, "verbatim_refs": []}}
    with pytest.raises(TypeError, match="summaryguard Checkpoint"):
        Compactor(Keeping()).adopt(mapping)


# -- the summarizer ------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [None, b"bytes", 3, ["text"]], ids=["none", "bytes", "int", "list"])
def test_a_summarizer_returning_non_text_is_a_type_error(bad: Any) -> None:
    compactor = Compactor(lambda previous, turns: bad)
    with pytest.raises(TypeError, match=type(bad).__name__):
        compactor.compact([turn(1)])
    assert compactor.head is None
    assert not compactor.lock.locked()


def test_a_failing_summarizer_changes_nothing() -> None:
    fail = False

    def summarize(previous: str, turns: Sequence[Turn]) -> str:
        if fail:
            raise ValueError("model overloaded")
        return "ok"

    compactor = Compactor(summarize)
    head = compactor.compact([turn(1)])
    fail = True
    with pytest.raises(ValueError, match="overloaded"):
        compactor.compact([turn(2)])
    assert compactor.head is head
    assert not compactor.lock.locked()


def test_compaction_holds_the_lock_and_a_checkpoint_inside_it_is_refused(tmp_path: Any) -> None:
    store = CheckpointStore(tmp_path)
    seen: list[bool] = []

    def summarize(previous: str, turns: Sequence[Turn]) -> str:
        seen.append(store.lock.locked())
        store.checkpoint(compactor, 1)  # would capture mid-compaction: non-reentrant lock refuses
        return "never"

    compactor = Compactor(summarize, lock=store.lock)
    with pytest.raises(RuntimeError, match="not reentrant"):
        compactor.compact([turn(1)])
    assert seen == [True]
    assert store.turns() == []


@pytest.mark.parametrize(
    "build",
    [
        lambda: Compactor("summarize"),  # type: ignore[arg-type]
        lambda: ProducedRef("a", 7),  # type: ignore[arg-type]
        lambda: ProducedRef(None, "v"),  # type: ignore[arg-type]
        lambda: ProducedRef("a", "v", tool=1),  # type: ignore[arg-type]
        lambda: Turn("1", "text"),  # type: ignore[arg-type]
        lambda: Turn(1, "text", refs=[("a", "v")]),  # type: ignore[list-item]
    ],
    ids=["summarizer", "ref-value", "ref-name", "ref-tool", "turn-index", "turn-refs"],
)
def test_bad_inputs_are_type_errors(build: Any) -> None:
    with pytest.raises(TypeError):
        build()


@pytest.mark.parametrize(("turns", "words"), [(["a"], "item 0 is str"), ("abc", "not a string"), ([turn(1), None], "item 1 is NoneType")])
def test_compact_takes_turn_objects(turns: Any, words: str) -> None:
    summarize = Keeping()
    with pytest.raises(TypeError, match=words):
        Compactor(summarize).compact(turns)
    assert summarize.calls == []  # refused before the summarizer ran
