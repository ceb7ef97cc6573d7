"""The write path's ledger bookkeeping when several stores share one folder.

``CheckpointStore.save`` renames the ledger name it last saw without an
``lstat`` first; when another store renamed it in between, the rename fails
and the store looks at the folder again. Whatever the interleaving, the
folder keeps exactly one ledger, naming the newest turn written, and
``latest()`` is that turn's checkpoint for every store.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from summaryguard.guard import (
    Checkpoint,
    CheckpointStore,
    Summary,
    UnsafeCheckpointPathError,
)
from summaryguard.guard._ledger import PREFIX

KEY = b"store-writes-key-0123456789abcdef"


def cp(turn: int) -> Checkpoint:
    return Checkpoint(turn, Summary(1, f"turn {turn}", {"h1": "v"}), 1, {"turn": turn})


def ledgers(folder: Path) -> list[str]:
    return [name for name in os.listdir(folder) if name.startswith(PREFIX)]


@settings(max_examples=40, deadline=None)
@given(order=st.lists(st.integers(0, 2), min_size=1, max_size=12), keyed=st.booleans())
def test_interleaved_stores_keep_one_ledger_naming_the_newest_turn(order: list[int], keyed: bool) -> None:
    with tempfile.TemporaryDirectory() as root:
        folder = Path(root)
        key = KEY if keyed else None
        stores = [CheckpointStore(folder, key=key) for _ in range(3)]
        for turn, who in enumerate(order, start=1):
            stores[who].save(cp(turn))
            assert len(ledgers(folder)) == 1
            assert all(store.high_water == turn for store in stores)
        newest = len(order)
        for store in (*stores, CheckpointStore(folder, key=key)):
            latest = store.latest()
            assert latest is not None and latest.turn == newest and latest.state == {"turn": newest}


def test_a_ledger_removed_between_writes_is_made_again(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path)
    store.save(cp(1))
    (name,) = ledgers(tmp_path)
    os.unlink(tmp_path / name)  # an unkeyed folder written before ledgers existed looks like this
    store.save(cp(2))
    assert len(ledgers(tmp_path)) == 1 and store.high_water == 2


@pytest.mark.skipif(os.name != "posix", reason="symbolic links and FIFOs")
@pytest.mark.parametrize("kind", ["symlink", "directory", "fifo"])
def test_an_unsafe_lock_path_is_named_when_the_write_fails(tmp_path: Path, kind: str) -> None:
    """The lock path is checked when taking the lock fails, not before every write: the error is the same."""
    store = CheckpointStore(tmp_path / "store")
    lock = tmp_path / "store" / ".summaryguard.lock"
    os.unlink(lock)
    if kind == "symlink":
        os.symlink(tmp_path / "elsewhere", lock)
    elif kind == "directory":
        lock.mkdir()
    else:
        os.mkfifo(lock)
    with pytest.raises(UnsafeCheckpointPathError) as info:
        store.save(cp(1))
    assert isinstance(info.value, UnsafeCheckpointPathError) and info.value.path == str(lock)
    assert not (tmp_path / "elsewhere").exists()
    assert store.turns() == []
