"""CheckpointStore against hostile folders: FIFOs, devices, links, junk, read-only mounts,
deep nesting, huge files, failing fsyncs (BUGS B5, B10-B13, B15, the ``_fsync_folder`` note)."""

from __future__ import annotations

import errno
import json
import os
import stat
import subprocess
import inspect
import sys
import tempfile
import textwrap
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from summaryguard.guard import (
    Checkpoint,
    CheckpointFormatError,
    CheckpointIntegrityError,
    CheckpointNotDurableError,
    CheckpointStore,
    CheckpointWriteError,
    Compactor,
    Turn,
    UnsafeCheckpointPathError,
)
from summaryguard.guard import store as store_module
from summaryguard.guard._digest import KEY_ENV
from summaryguard.guard.model import MAX_DEPTH

posix = pytest.mark.skipif(os.name != "posix", reason="POSIX file types")


@pytest.fixture(autouse=True)
def _no_inherited_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)


def cp(turn: int = 1, **state: Any) -> Checkpoint:
    return Checkpoint(turn=turn, summary=None, summary_generation=None, state=state)


def run_python(code: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter; a hang is a test failure, not a hung suite."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=timeout, check=False
    )


# -- B5: FIFOs and devices ----------------------------------------------------------------------


@posix
def test_a_fifo_named_like_a_checkpoint_is_refused_not_waited_on(tmp_path: Path) -> None:
    result = run_python(
        f"""
        import os
        from summaryguard.guard import CheckpointStore, CheckpointIntegrityError
        store = CheckpointStore({str(tmp_path)!r})
        os.mkfifo(store.path_for(1))
        for read in (store.latest, lambda: store.load(1), lambda: CheckpointStore.load_path(store.path_for(1))):
            try:
                read()
            except CheckpointIntegrityError as err:
                assert err.path == str(store.path_for(1)), err.path
                assert "not a regular file (a FIFO)" in err.reason, err.reason
            else:
                raise AssertionError("a FIFO loaded")
        print("refused")
        """,
        timeout=30,
    )
    assert result.returncode == 0 and result.stdout.strip() == "refused", result.stderr


@posix
def test_a_device_named_like_a_checkpoint_is_refused(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path)
    try:
        os.mknod(store.path_for(1), stat.S_IFCHR | 0o600, os.makedev(1, 5))  # /dev/zero
    except PermissionError:
        pytest.skip("creating a device node needs privileges")
    with pytest.raises(CheckpointIntegrityError, match=r"a character device"):
        store.latest()


def test_a_sparse_file_past_the_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path)
    with open(store.path_for(1), "wb") as handle:
        handle.truncate(store_module.MAX_BYTES + 1)  # costs no disk; reading it would cost 256 MB
    tracemalloc.start()
    try:
        with pytest.raises(CheckpointIntegrityError, match="larger than"):
            store.latest()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


# -- B15: a damaged large file is refused before it is parsed -----------------------------------


@pytest.mark.parametrize("key", [None, b"k" * 32])
def test_a_large_damaged_file_costs_its_size_not_a_parse(tmp_path: Path, key: bytes | None) -> None:
    store = CheckpointStore(tmp_path, key=key)
    path = store.save(cp(1, v=[1] * 1_000_000))  # ~2 MB of JSON, ~30 MB once parsed
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] = ord("2")  # one digit changed: the seal no longer matches
    path.write_bytes(raw)
    tracemalloc.start()
    try:
        with pytest.raises(CheckpointIntegrityError, match="does not match|does not verify"):
            store.latest()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * len(raw), f"peak {peak} for a {len(raw)}-byte file: it was parsed"


# -- B13: symbolic links ------------------------------------------------------------------------


@posix
def test_a_symlinked_lock_file_is_refused_and_nothing_is_created_elsewhere(tmp_path: Path) -> None:
    folder, elsewhere = tmp_path / "store", tmp_path / "elsewhere"
    folder.mkdir()
    elsewhere.mkdir()
    target = elsewhere / "created-elsewhere"
    os.symlink(target, folder / ".summaryguard.lock")
    with pytest.raises(UnsafeCheckpointPathError, match="symbolic link") as info:
        CheckpointStore(folder)
    assert info.value.path == str(folder / ".summaryguard.lock")
    assert not target.exists()
    # The check runs before every write, too: a link put there after the store opened.
    os.unlink(folder / ".summaryguard.lock")
    store = CheckpointStore(folder)
    os.unlink(folder / ".summaryguard.lock")
    os.symlink(target, folder / ".summaryguard.lock")
    with pytest.raises(UnsafeCheckpointPathError):
        store.save(cp(1))
    assert not target.exists()


@posix
def test_a_symlinked_checkpoint_file_is_not_followed(tmp_path: Path) -> None:
    other = CheckpointStore(tmp_path / "other")
    real = other.save(cp(5))
    store = CheckpointStore(tmp_path / "store")
    os.symlink(real, store.path_for(5))
    with pytest.raises(CheckpointIntegrityError, match="symbolic link") as info:
        store.load(5)
    assert info.value.path == str(store.path_for(5))


# -- B12: ASCII digits only ---------------------------------------------------------------------


@pytest.mark.parametrize("digits", ["\u0663" * 12, "\uff11" + "0" * 10 + "\uff11", "000000000001\n", " 00000000001"])
def test_only_ascii_digits_name_a_turn(tmp_path: Path, digits: str) -> None:
    store = CheckpointStore(tmp_path)
    comp = Compactor(lambda p, t: "s", lock=store.lock)
    comp.compact([Turn(1, "x")])
    store.checkpoint(comp, 1)
    (tmp_path / f"turn-{digits}.json").write_text("junk")
    assert store.turns() == [1]
    assert store.latest() is not None and store.latest().turn == 1  # type: ignore[union-attr]


_NAME_CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="/\x00")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(st.text(_NAME_CHARS, min_size=1, max_size=40), max_size=6))
def test_hostile_file_names_never_add_a_turn_or_break_the_store(tmp_path: Path, names: list[str]) -> None:
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    store = CheckpointStore(folder)
    store.save(cp(3))
    for name in names:
        if name in (".", "..") or len(name.encode("utf-8", "surrogateescape")) > 200:
            continue
        path = folder / name
        if path.exists():
            continue
        if name.startswith(".summaryguard"):
            name = "x" + name  # the store's own names are covered by the ledger tests
            path = folder / name
        path.write_bytes(b"junk")
    expected = {3} | {int(n[5:17]) for n in os.listdir(folder) if len(n) == 22 and n.startswith("turn-")
                      and n.endswith(".json") and n[5:17].isascii() and n[5:17].isdigit()}
    assert set(store.turns()) == expected
    if expected == {3}:
        assert store.latest() == cp(3)
    CheckpointStore(folder).save(cp(4))  # opening and writing still work


# -- B11: read-only folders and junk ------------------------------------------------------------


def test_a_directory_named_like_a_temporary_does_not_brick_the_store(tmp_path: Path) -> None:
    CheckpointStore(tmp_path).save(cp(1))
    os.mkdir(tmp_path / ".tmp-999999-abcd1234.json")
    (tmp_path / ".tmp-999999-abcd1234.json" / "inside").write_text("kept")
    store = CheckpointStore(tmp_path)
    assert store.latest() == cp(1)
    store.save(cp(2))
    assert store.latest() == cp(2)
    assert (tmp_path / ".tmp-999999-abcd1234.json" / "inside").exists()  # never removed: not ours


@posix
def test_a_read_only_store_opens_reads_and_refuses_writes_clearly(tmp_path: Path) -> None:
    """A real read-only mount (tmpfs): EROFS even for root."""
    mount = tmp_path / "ro"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)], capture_output=True).returncode:
        pytest.skip("mounting a tmpfs needs privileges")
    try:
        store = CheckpointStore(mount)
        store.save(cp(1))
        store.save(cp(2))
        os.mkdir(mount / ".tmp-999999-abcd1234.json")  # junk too
        (mount / f".tmp-{2**40}-00000000.json").write_text("{")  # a dead writer's temporary
        subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
        reader = CheckpointStore(mount)  # opens: no lock file to create, no temporary removed
        assert reader.latest() == cp(2) and reader.load(1) == cp(1) and reader.turns() == [1, 2]
        assert CheckpointStore.load_path(reader.path_for(2)) == cp(2)
        for write in (lambda: reader.save(cp(3)), reader.writer, lambda: reader.rollback_to(1)):
            with pytest.raises(CheckpointWriteError, match="read-only") as info:
                write()
            assert info.value.errno == errno.EROFS and str(mount) in info.value.path
        assert reader.turns() == [1, 2]
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


@posix
def test_a_folder_this_user_cannot_write_opens_and_reads(tmp_path: Path) -> None:
    """A folder owned by someone else (run as an unprivileged user when the suite runs as root)."""
    import shutil

    outer = Path(tempfile.mkdtemp(prefix="sg-ro-"))  # pytest's tmp_path is root-only (0700)
    try:
        _read_as_another_user(outer)
    finally:
        shutil.rmtree(outer)


def _read_as_another_user(outer: Path) -> None:
    folder = outer / "cps"
    CheckpointStore(folder).save(cp(1))
    hidden = outer / "hidden"  # a folder this user cannot even list
    CheckpointStore(hidden).save(cp(1))
    code = f"""
        import errno, os, threading
        from summaryguard.guard import CheckpointStore, CheckpointStoreError, CheckpointWriteError, Compactor  # before: root's stdlib
        if os.getuid() == 0:
            os.setgid(65534); os.setuid(65534)
        store = CheckpointStore({str(folder)!r})
        assert store.latest().turn == 1
        try:
            store.save(store.latest())
        except CheckpointWriteError as err:
            assert err.errno in (errno.EACCES, errno.EPERM), err.errno
            assert "read-only" in err.reason, err.reason
            print("refused")
        compactor = Compactor(lambda previous, turns: "s", lock=store.lock)
        try:
            compactor.compact([])  # was the bare "Permission denied" of the lock file's path
        except PermissionError as err:
            assert err.errno in (errno.EACCES, errno.EPERM), err.errno
            assert err.strerror.startswith("cannot open the CompactionLock file (Permission denied): this process may not write"), err.strerror
            assert err.filename == {str(folder / ".summaryguard.lock")!r}, err.filename
            print("lock")
        try:
            CheckpointStore({str(hidden)!r})  # was a bare PermissionError on the lock file's path
        except CheckpointStoreError as err:
            assert err.reason == "the folder cannot be read: Permission denied", err.reason
            assert err.path == {str(hidden)!r}
            print("unreadable")
    """
    os.chmod(folder, 0o755)
    for p in folder.iterdir():
        os.chmod(p, 0o644)
    os.chmod(hidden, 0o700)
    os.chmod(outer, 0o755)
    result = run_python(code)
    if result.returncode and "PermissionError" in result.stderr and "setuid" in result.stderr:
        pytest.skip("cannot drop privileges here")
    assert result.returncode == 0 and result.stdout.split() == ["refused", "lock", "unreadable"], result.stderr


# -- B10: a fixed nesting limit, whatever the stack --------------------------------------------


def _nested(depth: int, leaf: Any = 1, kind: str = "list") -> Any:
    value = leaf
    for _ in range(depth):
        value = [value] if kind == "list" else {"k": value}
    return value


def _at_depth(frames: int, fn: Any) -> Any:
    return fn() if frames == 0 else _at_depth(frames - 1, fn)


@pytest.mark.parametrize("kind", ["list", "dict"])
def test_what_saves_loads_at_any_stack_depth(tmp_path: Path, kind: str) -> None:
    store = CheckpointStore(tmp_path)
    deepest = cp(1, v=_nested(MAX_DEPTH - 1, kind=kind))  # the state itself is one level
    store.save(deepest)
    # frames left below the recursion limit from here (pytest, and coverage in CI, sit above us)
    room = sys.getrecursionlimit() - len(inspect.stack(0))
    for frames in (0, 100, room - 200, room - 80):
        assert _at_depth(frames, store.latest) == deepest
        _at_depth(frames, lambda: store.save(deepest))


@pytest.mark.parametrize("kind", ["list", "dict"])
def test_deeper_nesting_is_refused_when_built(kind: str) -> None:
    with pytest.raises(CheckpointFormatError, match="nested too deeply") as info:
        cp(1, v=_nested(MAX_DEPTH, kind=kind))
    assert info.value.where.startswith("state.v")


def test_the_b10_repro_no_longer_saves_what_cannot_load(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path)
    with pytest.raises(CheckpointFormatError, match="nested too deeply"):
        store.save(cp(1, v=_nested(470)))


def test_a_deeper_file_is_refused_when_loaded(tmp_path: Path) -> None:
    """A file someone wrote with 101 levels (valid digest) is refused on load, not half-loaded."""
    from summaryguard.guard.model import content_digest

    body = {"turn": 1, "summary": None, "summary_generation": None, "state": {"v": _nested(MAX_DEPTH)}, "next_turn_deps": []}
    body["digest"] = content_digest(body)
    path = CheckpointStore(tmp_path).path_for(1)
    path.write_text(json.dumps({"format": "summaryguard-checkpoint", "version": 1, "checkpoint": body}))
    with pytest.raises(CheckpointIntegrityError, match="nested too deeply"):
        CheckpointStore(tmp_path).latest()


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3),
    max_leaves=30,
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    leaf=json_values,
    depth=st.integers(0, MAX_DEPTH + 20),
    kinds=st.lists(st.sampled_from(["list", "dict"]), min_size=1, max_size=4),
    frames=st.sampled_from([0, 300, 800]),
)
def test_nested_json_either_round_trips_at_any_depth_or_is_refused_when_built(
    tmp_path: Path, leaf: Any, depth: int, kinds: list[str], frames: int
) -> None:
    value = leaf
    for i in range(depth):
        value = [value] if kinds[i % len(kinds)] == "list" else {"k": value}
    levels = depth + _levels(leaf) + 1  # the state object is a level
    if levels > MAX_DEPTH:
        with pytest.raises(CheckpointFormatError, match="nested too deeply"):
            cp(1, v=value)
        return
    folder = tempfile.mkdtemp(dir=tmp_path)
    store = CheckpointStore(folder)
    store.save(cp(1, v=value))
    assert _at_depth(frames, store.latest) == cp(1, v=value)


def _levels(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((_levels(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_levels(v) for v in value.values()), default=0)
    return 0


# -- the folder fsync no longer swallows I/O errors ----------------------------------------------


def _failing_directory_fsync(monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    """Fault injection: an fsync of a directory fails with ``code``.

    A real EIO needs a failing device (dm-error), which this machine does not
    have; everything else about the write runs for real.
    """
    real = os.fsync

    def fsync(fd: int) -> None:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise OSError(code, os.strerror(code))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)


def test_an_io_error_of_the_folder_fsync_is_raised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = CheckpointStore(tmp_path)
    store.save(cp(1))
    _failing_directory_fsync(monkeypatch, errno.EIO)
    with pytest.raises(CheckpointNotDurableError, match="fsync of the folder failed") as info:
        store.save(cp(2))
    assert info.value.errno == errno.EIO and info.value.path == str(tmp_path)
    assert isinstance(info.value, OSError)
    monkeypatch.undo()
    assert store.latest(allow_rollback=True) is not None


def test_a_file_system_that_cannot_sync_a_directory_is_tolerated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = CheckpointStore(tmp_path)
    _failing_directory_fsync(monkeypatch, errno.EINVAL)
    store.save(cp(1))
    assert store.latest() == cp(1)


def test_an_io_error_of_the_file_fsync_is_raised_and_leaves_no_temporary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = CheckpointStore(tmp_path)
    store.save(cp(1))
    real = os.fsync

    def fsync(fd: int) -> None:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EIO, "Input/output error")
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(CheckpointNotDurableError, match="fsync of the new file failed"):
        store.save(cp(2))
    monkeypatch.undo()
    assert store.turns() == [1] and store.latest() == cp(1)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]
