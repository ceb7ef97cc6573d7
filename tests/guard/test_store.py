"""CheckpointStore: atomic writes, verified loads that fail closed, writes serialized with compaction."""

from __future__ import annotations

import json
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from summaryguard.guard import (
    Checkpoint,
    CheckpointIntegrityError,
    CheckpointStore,
    CheckpointStoreError,
    CheckpointWriteError,
    CompactionLock,
    Compactor,
    DroppedRef,
    ProducedRef,
    ReconciliationKind,
    Summary,
    Turn,
    check_resume,
)
from summaryguard.guard import store as store_module

fork = multiprocessing.get_context("fork")


def sample(turn: int = 7, generation: int = 3) -> Checkpoint:
    summary = Summary(
        generation=generation,
        content="handle-A is open; résumé ✓",
        verbatim_refs={"a": "handle-A"},
        drop_manifest=(DroppedRef("b", "handle-B", tool="lookup", turn=2),),
        parent_generation=generation - 1,
        turns=(1, turn),
        provenance={"a": "open"},
    )
    return Checkpoint(turn=turn, summary=summary, summary_generation=generation, state={"n": turn}, next_turn_deps=("a",))


def files(folder: Path) -> list[str]:
    """The folder's files but the lock file and the ledger (whose name is its content)."""
    return sorted(
        p.name for p in folder.iterdir() if p.name != ".summaryguard.lock" and not p.name.startswith(".summaryguard-ledger.")
    )


# -- writing and reading --------------------------------------------------------------------


def test_save_load_round_trip(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path / "cps")
    path = store.save(sample())
    assert path == tmp_path / "cps" / "turn-000000000007.json"
    assert files(tmp_path / "cps") == ["turn-000000000007.json"]  # no temporary left behind
    loaded = store.load(7)
    assert loaded == sample() and loaded.digest == sample().digest
    document = json.loads(path.read_text("utf-8"))
    assert document["format"] == "summaryguard-checkpoint" and document["version"] == 1
    assert document["checkpoint"]["digest"] == sample().digest
    check_resume(loaded)  # what was saved may be resumed from


def test_turns_latest_and_overwrite(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path)
    assert store.turns() == [] and store.latest() is None
    for turn in (12, 3, 100, 7):
        store.save(sample(turn))
    (tmp_path / "notes.txt").write_text("not a checkpoint")
    (tmp_path / "turn-12.json").write_text("{}")  # not our name pattern
    assert store.turns() == [3, 7, 12, 100]
    assert store.latest() == sample(100)
    store.save(sample(100, generation=4))  # a later write of the same turn replaces it whole
    assert store.latest() == sample(100, generation=4)
    assert store.load(3) == sample(3)


@pytest.mark.parametrize("turn", [-1, 10**12, "3", True, 1.0])
def test_turn_numbers_are_checked(tmp_path: Path, turn: Any) -> None:
    store = CheckpointStore(tmp_path)
    with pytest.raises(ValueError, match="turn"):
        store.path_for(turn)


def test_save_takes_a_checkpoint(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="dict"):
        CheckpointStore(tmp_path).save(sample().to_dict())  # type: ignore[arg-type]


def test_load_of_a_missing_turn_fails_closed(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path)
    with pytest.raises(CheckpointIntegrityError) as info:
        store.load(5)
    assert info.value.path == str(tmp_path / "turn-000000000005.json")
    assert "no such checkpoint file" in info.value.reason


def test_a_file_holding_another_turn_fails_closed(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path)
    old = store.save(sample(3))
    os.replace(old, store.path_for(9))  # an old checkpoint renamed to look newer
    with pytest.raises(CheckpointIntegrityError) as info:
        store.latest()
    assert "holds the checkpoint of turn 3" in info.value.reason
    assert info.value.checkpoint_turn == 3


def test_the_write_is_atomic_on_failure(tmp_path: Path) -> None:
    """A write that fails midway leaves the previous file and no temporary."""
    store = CheckpointStore(tmp_path)
    store.save(sample(7))
    os.mkdir(tmp_path / "blocker")
    os.rename(tmp_path / "blocker", store.path_for(8))  # a folder where the file should go
    (store.path_for(8) / "x").write_text("keep me non-empty")
    with pytest.raises(OSError):
        store.save(sample(8))
    assert files(tmp_path) == ["turn-000000000007.json", "turn-000000000008.json"]
    assert store.load(7) == sample(7)


@pytest.mark.skipif(os.name != "posix", reason="RLIMIT_FSIZE is POSIX")
def test_a_write_that_runs_out_of_space_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    import resource
    import signal

    store = CheckpointStore(tmp_path)
    store.save(sample(7))
    limit = len(_valid_bytes()) // 2  # the new file cannot be written whole
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # write() fails with EFBIG instead
    try:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
        with pytest.raises(OSError, match="File too large"):
            store.save(sample(7, generation=4))
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)
    assert files(tmp_path) == ["turn-000000000007.json"]
    assert store.load(7) == sample(7)


# -- failing closed -------------------------------------------------------------------------


def _valid_bytes() -> bytes:
    return json.dumps(
        {"format": "summaryguard-checkpoint", "version": 1, "checkpoint": sample().to_dict()},
        sort_keys=True,
        ensure_ascii=False,
    ).encode("utf-8")


def _document(change: Callable[[dict[str, Any]], Any]) -> bytes:
    document = json.loads(_valid_bytes())
    change(document)
    return json.dumps(document, ensure_ascii=False).encode("utf-8")


BAD_FILES: list[tuple[str, bytes, str]] = [
    ("empty", b"", "empty file"),
    ("torn-half", _valid_bytes()[: len(_valid_bytes()) // 2], "not valid JSON"),
    ("truncated-last-byte", _valid_bytes()[:-1], "not valid JSON"),
    ("only-whitespace", b"   \n", "not valid JSON"),
    ("non-json", b"turn=7 summary=...", "not valid JSON"),
    ("non-utf8", b'{"format": "\xff\xfe"}', "not UTF-8 text at byte 12"),
    ("nul-bytes", b"\x00" * 64, "not valid JSON"),
    ("json-array", b"[1, 2]", "not a summaryguard checkpoint"),
    ("wrong-format", _document(lambda d: d.update(format="other-tool")), "not a summaryguard checkpoint"),
    ("no-format", _document(lambda d: d.pop("format")), "not a summaryguard checkpoint"),
    ("wrong-version", _document(lambda d: d.update(version=2)), "version 2 is not supported"),
    ("version-true", _document(lambda d: d.update(version=True)), "version True is not supported"),
    ("version-float", _document(lambda d: d.update(version=1.0)), "version 1.0 is not supported"),
    ("no-version", _document(lambda d: d.pop("version")), "version None is not supported"),
    ("no-checkpoint", _document(lambda d: d.pop("checkpoint")), "the checkpoint or its digest is missing"),
    ("checkpoint-not-object", _document(lambda d: d.update(checkpoint=[1])), "the checkpoint or its digest is missing"),
    ("missing-digest", _document(lambda d: d["checkpoint"].pop("digest")), "the checkpoint or its digest is missing"),
    # A null digest must not switch verification off, tampered content or not.
    ("null-digest", _document(lambda d: d["checkpoint"].update(digest=None)), "the checkpoint or its digest is missing"),
    (
        "null-digest-tampered",
        _document(lambda d: (d["checkpoint"].update(digest=None), d["checkpoint"]["summary"].update(content="edited"))),
        "the checkpoint or its digest is missing",
    ),
    ("number-digest", _document(lambda d: d["checkpoint"].update(digest=7)), "the checkpoint or its digest is missing"),
    ("lone-surrogate", b'{"format": "summaryguard-checkpoint", "version": 1, "checkpoint": {"turn": 7, "summary": null, '
     b'"summary_generation": null, "state": {"k": "\\ud800"}, "digest": "sha256:00"}}', "state.k: character"),
    ("huge-integer", _valid_bytes().replace(b'"state": {', b'"state": {"n": ' + b"9" * 5000 + b", "), "not valid JSON"),
    ("tampered-content", _document(lambda d: d["checkpoint"]["summary"].update(content="edited")), "does not match"),
    ("tampered-generation", _document(lambda d: d["checkpoint"].update(summary_generation=9)), "does not match"),
    ("tampered-partial", _document(lambda d: d["checkpoint"]["summary"].update(partial=True)), "does not match"),
    ("tampered-manifest", _document(lambda d: d["checkpoint"]["summary"].update(drop_manifest=[])), "does not match"),
    ("tampered-digest", _document(lambda d: d["checkpoint"].update(digest="sha256:" + "0" * 64)), "does not match"),
    ("malformed-field", _document(lambda d: d["checkpoint"]["summary"].update(generation="3")), "malformed checkpoint: summary.generation"),
    ("unknown-field", _document(lambda d: d["checkpoint"].update(extra=1)), "malformed checkpoint: unknown field(s) extra"),
    ("too-deep", b'{"a": ' + b"[" * 50_000 + b"]" * 50_000 + b"}", "nested too deeply"),
    ("deep-array", b"[" * 50_000 + b"]" * 50_000, "a JSON array"),  # refused before parsing
]


@pytest.mark.parametrize(("raw", "words"), [c[1:] for c in BAD_FILES], ids=[c[0] for c in BAD_FILES])
def test_a_bad_file_fails_closed_naming_the_path(tmp_path: Path, raw: bytes, words: str) -> None:
    store = CheckpointStore(tmp_path)
    path = store.path_for(7)
    path.write_bytes(raw)
    # the store knows which turn it read (its file's name): the controller's choice needs it;
    # a bare path says it only where the content that failed recorded one
    for load, turn in ((lambda: store.load(7), 7), (store.latest, 7), (lambda: CheckpointStore.load_path(path), ...)):
        with pytest.raises(CheckpointIntegrityError) as info:
            load()
        err = info.value
        assert err.path == str(path)
        assert words in err.reason
        assert err.kind is ReconciliationKind.DIGEST_MISMATCH
        assert str(path) in str(err)  # the message names the file for the person reading it
        assert turn is ... or err.checkpoint_turn == turn


def test_a_checkpoint_changed_after_its_digest_was_read_still_saves_and_loads_back(tmp_path: Path) -> None:
    """The digest follows the content: a stale one would make the file unloadable."""
    store = CheckpointStore(tmp_path)
    checkpoint = Checkpoint(7, Summary(1, "s", {"h": "v"}), 1, {"step": 1})
    before = checkpoint.digest
    checkpoint.state["step"] = 2  # type: ignore[index]  # reached in and changed anyway
    store.save(checkpoint)
    loaded = store.load(7)
    assert loaded.state == {"step": 2}
    assert loaded.digest == checkpoint.digest != before


def test_the_newest_bad_file_is_not_skipped_for_an_older_good_one(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path)
    store.save(sample(3))
    store.path_for(4).write_bytes(_valid_bytes()[:100])
    with pytest.raises(CheckpointIntegrityError):
        store.latest()
    assert store.load(3) == sample(3)  # the controller may choose the older one explicitly


def test_an_oversized_file_is_refused_before_it_is_parsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = CheckpointStore(tmp_path)
    store.save(sample())
    monkeypatch.setattr(store_module, "MAX_BYTES", 64)
    with pytest.raises(CheckpointIntegrityError, match="larger than 64 bytes"):
        store.load(7)


def test_an_unreadable_file_fails_closed(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path)
    os.mkdir(store.path_for(7))
    with pytest.raises(CheckpointIntegrityError, match=r"not a regular file \(a directory\)"):
        store.load(7)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_truncation_or_byte_flip_fails_closed_or_loads_the_same_checkpoint(tmp_path: Path, data: st.DataObject) -> None:
    """Nothing half-written or altered is ever loaded as a different checkpoint."""
    raw = bytearray(_valid_bytes())
    if data.draw(st.booleans(), label="truncate"):
        raw = raw[: data.draw(st.integers(0, len(raw) - 1), label="length")]
    else:
        for _ in range(data.draw(st.integers(1, 3), label="flips")):
            at = data.draw(st.integers(0, len(raw) - 1), label="at")
            raw[at] = data.draw(st.integers(0, 255).filter(lambda b, old=raw[at]: b != old), label="byte")
    path = tmp_path / "turn-000000000007.json"
    path.write_bytes(bytes(raw))
    try:
        loaded = CheckpointStore.load_path(path)
    except CheckpointIntegrityError as err:
        assert err.path == str(path)
    else:
        assert loaded == sample()
        assert loaded.digest == sample().digest


# -- temporary files of dead writers -----------------------------------------------------------


def _exit() -> None:
    os._exit(0)


def test_temporaries_of_dead_writers_are_ignored_and_removed(tmp_path: Path) -> None:
    dead = fork.Process(target=_exit)
    dead.start()
    dead.join()
    blocker, release = fork.Event(), fork.Event()
    live = fork.Process(target=lambda: (blocker.set(), release.wait(10)))
    live.start()
    try:
        assert blocker.wait(10)
        store = CheckpointStore(tmp_path)
        store.save(sample(3))
        dead_tmp = tmp_path / f".tmp-{dead.pid}-0badc0de.json"
        dead_tmp.write_bytes(_valid_bytes()[:50])  # a writer killed mid-write
        live_tmp = tmp_path / f".tmp-{live.pid}-00c0ffee.json"
        live_tmp.write_bytes(b"{")  # a writer still at work (with another lock)
        mine = tmp_path / f".tmp-{os.getpid()}-0000beef.json"
        mine.write_bytes(b"{")
        other = tmp_path / ".tmp-notes"
        other.write_bytes(b"")
        absurd = tmp_path / f".tmp-{2**80}-0000abcd.json"  # not even a pid: nobody is writing it
        absurd.write_bytes(b"{")
        assert store.turns() == [3] and store.latest() == sample(3)  # ignored by readers
        CheckpointStore(tmp_path)  # the next store to open the folder cleans up
        assert not dead_tmp.exists() and not absurd.exists()
        assert live_tmp.exists() and mine.exists() and other.exists()
    finally:
        release.set()
        live.join(10)
    CheckpointStore(tmp_path)
    assert not live_tmp.exists()  # its writer is gone now
    assert mine.exists()


# -- serialized against compaction ----------------------------------------------------------


def _turn(i: int) -> Turn:
    return Turn(i, f"turn {i}", (ProducedRef(f"h{i}", f"handle-{i}", "open"),))


def test_checkpoint_captures_the_head_under_the_lock(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path)
    compactor = Compactor(lambda prev, turns: " ".join(f"handle-{t.index}" for t in turns), lock=store.lock)
    empty = store.checkpoint(compactor, 0)
    assert (empty.summary, empty.summary_generation) == (None, None)
    head = compactor.compact([_turn(1)])
    cp = store.checkpoint(compactor, 1, state={"x": 1}, next_turn_deps=["h1"])
    assert cp.summary is head and cp.summary_generation == 1
    assert cp.state == {"x": 1} and cp.next_turn_deps == ("h1",)
    assert store.load(1) == cp
    check_resume(store.load(1))


def test_a_checkpoint_write_waits_for_a_running_compaction(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path)
    in_summarizer, finish = threading.Event(), threading.Event()

    def summarize(previous: str, turns: Sequence[Turn]) -> str:
        if turns and turns[0].index == 2:
            in_summarizer.set()
            assert finish.wait(10)
        return "kept: " + " ".join(f"handle-{t.index}" for t in turns)

    compactor = Compactor(summarize, lock=store.lock)
    compactor.compact([_turn(1)])
    written: list[Checkpoint] = []
    compaction = threading.Thread(target=compactor.compact, args=([_turn(2)],))
    compaction.start()
    assert in_summarizer.wait(10)
    writers = [
        threading.Thread(target=lambda: written.append(store.checkpoint(compactor, 2))),
        threading.Thread(target=lambda: store.save(sample(5))),
    ]
    for w in writers:
        w.start()
    time.sleep(0.1)
    assert written == [] and store.turns() == []  # both writes wait for the compaction
    finish.set()
    compaction.join(10)
    for w in writers:
        w.join(10)
    assert store.turns() == [2, 5]
    (cp,) = written
    assert cp.summary is compactor.head and cp.summary_generation == 2 and not cp.summary.partial


def test_concurrent_compaction_and_checkpoints_never_capture_a_partial(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path)
    compactor = Compactor(
        lambda prev, turns: (time.sleep(0.0005), prev + " " + " ".join(f"handle-{t.index}" for t in turns))[1],
        lock=store.lock,
    )
    stop = threading.Event()

    def compact() -> None:
        for i in range(1, 60):
            compactor.compact([_turn(i)])
        stop.set()

    captured: list[Checkpoint] = []

    def write() -> None:
        turn = 0
        while not stop.is_set():
            turn += 1
            captured.append(store.checkpoint(compactor, turn, next_turn_deps=[f"h{g}" for g in range(1, 2)]))

    threads = [threading.Thread(target=compact), threading.Thread(target=write)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert captured
    generations = []
    for turn in store.turns():
        cp = store.load(turn)
        generations.append(cp.summary_generation or 0)
        if cp.summary is None:
            continue
        assert not cp.summary.partial
        assert cp.summary.generation == cp.summary_generation
        assert cp.summary.turns == (1, cp.summary.generation)  # covers exactly what it says
        check_resume(cp)
    assert generations == sorted(generations)  # later checkpoints never hold older summaries


def test_a_custom_lock_is_used(tmp_path: Path) -> None:
    lock = CompactionLock()
    store = CheckpointStore(tmp_path, lock=lock)
    assert store.lock is lock
    assert repr(store) == f"CheckpointStore({str(tmp_path)!r})"
    with lock:
        done = threading.Event()
        t = threading.Thread(target=lambda: (store.save(sample()), done.set()))
        t.start()
        assert not done.wait(0.05)
    t.join(10)
    assert done.is_set()


def test_wrong_types_are_refused_where_they_are_given(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match=r"lock=\.\.\.\) takes a lock .* got str"):
        CheckpointStore(tmp_path, lock="x")  # type: ignore[arg-type]
    compactor = Compactor(lambda prev, turns: "text")
    with pytest.raises(TypeError, match="previous=...\\) takes a Summary, got dict"):
        compactor.compact([_turn(1)], previous={"generation": 1})  # type: ignore[arg-type]
    (tmp_path / "afile").write_text("x")
    with pytest.raises(CheckpointStoreError, match="not a folder: a file has the store's name"):
        CheckpointStore(tmp_path / "afile")  # said so, not "cannot be created: File exists"
    assert (tmp_path / "afile").read_text() == "x"
    store = CheckpointStore(tmp_path)
    store.path_for(2).mkdir()  # the turn's file name taken by a folder
    with pytest.raises(CheckpointWriteError, match="cannot put the new file in place: Is a directory"):
        store.save(sample(2))
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".tmp")) == []


def test_checkpoint_refuses_a_bare_string_of_deps_and_a_state_that_is_no_mapping(tmp_path: Path) -> None:
    # tuple("bucket") would record six one-letter dependencies, and the real one would never
    # be checked at resume (Checkpoint itself refuses the string; the store converted it first).
    store = CheckpointStore(tmp_path)
    compactor = Compactor(lambda prev, turns: "text", lock=store.lock)
    with pytest.raises(TypeError, match=r"not a single str \('bucket'\); wrap it in a list"):
        store.checkpoint(compactor, 1, next_turn_deps="bucket")
    with pytest.raises(TypeError, match="state must be a mapping, got str"):
        store.checkpoint(compactor, 1, state="ab")
    assert store.turns() == []
    assert store.checkpoint(compactor, 1, next_turn_deps=(d for d in ["bucket"])).next_turn_deps == ("bucket",)


def test_a_second_store_on_the_folder_refuses_to_wait_for_its_own_thread(tmp_path: Path) -> None:
    # A summarizer that saves through another store object on the same folder: the file
    # lock is held by this very thread through the first store's lock, and flock would
    # wait forever (one store object raised; two hung).
    store = CheckpointStore(tmp_path)

    def summarize(previous: str, turns: Any) -> str:
        CheckpointStore(tmp_path).save(sample(1))
        return "text"

    outcome: list[BaseException] = []

    def compact() -> None:
        try:
            Compactor(summarize, lock=store.lock).compact([_turn(1)])
        except BaseException as exc:  # noqa: BLE001 - reported to the test
            outcome.append(exc)

    worker = threading.Thread(target=compact, daemon=True)
    worker.start()
    worker.join(30)
    assert not worker.is_alive(), "the save waited for a lock its own thread holds"
    [error] = outcome
    assert isinstance(error, RuntimeError) and "already held by this thread through another CompactionLock" in str(error)
    assert store.turns() == []
    # Another thread's store on the folder waits its turn, as it should.
    with store.lock:
        other = threading.Thread(target=lambda: CheckpointStore(tmp_path).save(sample(2)))
        other.start()
        other.join(0.2)
        assert other.is_alive()
    other.join(30)
    assert store.turns() == [2]


def test_checkpoint_refuses_a_compactor_with_a_lock_of_its_own(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path)
    loner = Compactor(lambda previous, turns: "text")  # its own, process-local lock
    with pytest.raises(ValueError, match="lock=store.lock"):
        store.checkpoint(loner, 1)
    assert store.turns() == []
