"""Fencing with real processes: a stalled writer resumed after another took over never lands.

Two writer processes per pair, driven over pipes. In each trial the first
(A) claims a fresh folder, writes a few turns, then writes as fast as it can;
the harness stops it with SIGSTOP at a random moment (taking the store's lock
first, so A is stopped outside its critical section: stopped inside it, A
would hold the lock and a takeover would rightly wait), and the second (B)
claims the folder (``store.writer()``), as a supervisor's resumer does after
presuming A dead. A is continued either at once (racing B's writes) or once B
is done. A's first write after that must be refused as stale, and nothing A
wrote after B's claim may ever be ``latest()``.

Many trials run per pair (each process loops), so the test stays short; the
folders live on /dev/shm when the machine has it (the fencing is what is
tested here, not the disk). The RNG is seeded; set SUMMARYGUARD_FENCING_SEED
to replay a run.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from summaryguard.guard import CheckpointStore
from summaryguard.guard._digest import KEY_ENV

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

pytestmark = pytest.mark.skipif(os.name != "posix" or fcntl is None, reason="needs SIGSTOP and flock")

SEED = int(os.environ.get("SUMMARYGUARD_FENCING_SEED") or random.SystemRandom().randrange(2**32))
PAIRS = 2
TRIALS_PER_PAIR = 110
WORKER = Path(__file__).with_name("fencing_worker.py")
KEYS = [None, "fencing-test-key-0123456789abcdef"]


class Worker:
    def __init__(self, role: str, key: str | None) -> None:
        env = {k: v for k, v in os.environ.items() if k != KEY_ENV}
        if key is not None:
            env[KEY_ENV] = key
        self.proc = subprocess.Popen(
            [sys.executable, str(WORKER), role], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def answer(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, f"worker {self.proc.args} ended: {self.proc.poll()}"
        return json.loads(line)

    def close(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGCONT)
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:  # pragma: no cover - a stuck worker
                self.proc.kill()


def _stopped(pid: int) -> bool:
    with open(f"/proc/{pid}/stat") as handle:
        return handle.read().rsplit(")", 1)[1].split()[0] in ("T", "t")


def _stop_outside_the_lock(pid: int, folder: str) -> None:
    fd = os.open(os.path.join(folder, ".summaryguard.lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # A is not inside a write while we hold it
        os.kill(pid, signal.SIGSTOP)
        if os.path.exists(f"/proc/{pid}/stat"):
            while not _stopped(pid):  # the stop takes effect before A could take the lock
                time.sleep(0.0001)
        else:  # pragma: no cover - no procfs: give the signal time to land
            time.sleep(0.01)
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _pair(base: str, pair: int, seed: int, results: list[Any]) -> None:
    rng = random.Random(seed)
    key = KEYS[pair % len(KEYS)]
    a, b = Worker("A", key), Worker("B", key)
    outcomes: dict[str, int] = {"trials": 0, "concurrent": 0, "a_landed_before_claim": 0}
    try:
        for trial in range(TRIALS_PER_PAIR):
            note = f"seed={seed} pair={pair} trial={trial} keyed={key is not None}"
            folder = tempfile.mkdtemp(dir=base, prefix=f"p{pair}-t{trial}-")
            a.send(f"open {folder} {trial} {rng.randint(1, 3)}")
            opened = a.answer()
            a.send("run")
            time.sleep(rng.uniform(0, 0.004))
            _stop_outside_the_lock(a.proc.pid, folder)
            b.send(f"takeover {folder} {trial} {rng.randint(1, 4)}")
            claimed = b.answer()
            assert claimed["event"] == "claimed" and claimed["epoch"] == opened["epoch"] + 1, note
            concurrent = rng.random() < 0.5
            if concurrent:
                os.kill(a.proc.pid, signal.SIGCONT)  # A races B's writes
            done = b.answer()
            if not concurrent:
                os.kill(a.proc.pid, signal.SIGCONT)
            stale = a.answer()
            assert stale["event"] == "stale" and stale["current_epoch"] == claimed["epoch"], note
            # What A wrote landed before B's claim: B resumed from A's last landed turn.
            landed = stale["landed"]
            expected_resumed = landed[-1] if landed else opened["turn"]
            assert claimed["resumed"] == expected_resumed, f"{note}: {claimed} {stale}"
            latest = CheckpointStore(folder, key=key).latest()
            assert latest is not None, note
            assert latest.state == {"by": "B", "trial": str(trial), "epoch": claimed["epoch"]}, f"{note}: {latest.state}"
            assert latest.turn == done["turn"], note
            # No file A wrote carries a turn B's lineage did not grow from.
            for turn in CheckpointStore(folder, key=key).turns():
                cp = CheckpointStore(folder, key=key).load(turn)
                if cp.state["by"] == "A":
                    assert turn <= claimed["resumed"], f"{note}: A's turn {turn} after the claim"
            outcomes["trials"] += 1
            outcomes["concurrent"] += concurrent
            outcomes["a_landed_before_claim"] += bool(landed)
        # The negative control: an unfenced writer (a fresh store, which learns the epoch) does land,
        # so the assertions above can tell a fenced writer from one that is not.
        a.send(f"rogue {folder} control")
        rogue = a.answer()
        latest = CheckpointStore(folder, key=key).latest()
        assert latest is not None and latest.state["by"] == "A" and latest.turn == rogue["turn"]
        outcomes["control_landed"] = 1
        results.append(outcomes)
    except BaseException as exc:  # noqa: BLE001 - reported by the test thread
        results.append(exc)
    finally:
        a.close()
        b.close()


def test_a_stalled_writer_resumed_after_a_takeover_never_becomes_latest(tmp_path: Path) -> None:
    print(f"fencing test seed: SUMMARYGUARD_FENCING_SEED={SEED}")
    base = tempfile.mkdtemp(dir="/dev/shm" if os.path.isdir("/dev/shm") else tmp_path, prefix="sg-fencing-")
    results: list[Any] = []
    try:
        threads = [threading.Thread(target=_pair, args=(base, p, SEED + p, results)) for p in range(PAIRS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
    finally:
        import shutil

        shutil.rmtree(base, ignore_errors=True)
    failures = [r for r in results if isinstance(r, BaseException)]
    if failures:
        raise failures[0]
    print(f"fencing: {results}")
    assert len(results) == PAIRS
    assert sum(r["trials"] for r in results) == PAIRS * TRIALS_PER_PAIR >= 200
    assert all(r["control_landed"] for r in results)
    # Both orders happened: A continued while B was writing, and after it.
    assert 0 < sum(r["concurrent"] for r in results) < PAIRS * TRIALS_PER_PAIR
