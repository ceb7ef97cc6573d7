"""CompactionLock: mutual exclusion across threads, processes and asyncio tasks."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from summaryguard.guard import CompactionLock

fork = multiprocessing.get_context("fork")

needs_flock = pytest.mark.skipif(os.name != "posix", reason="the file lock is POSIX flock")


@pytest.fixture(params=["process-local", "file"])
def lock(request: pytest.FixtureRequest, tmp_path: Path) -> CompactionLock:
    return CompactionLock(tmp_path / "lock" if request.param == "file" else None)


# -- threads ---------------------------------------------------------------------------------


def test_threads_are_mutually_excluded(lock: CompactionLock) -> None:
    inside = 0
    most = 0
    entries = 0
    guard = threading.Lock()

    def work() -> None:
        nonlocal inside, most, entries
        for _ in range(200):
            with lock:
                with guard:
                    inside += 1
                    most = max(most, inside)
                    entries += 1
                time.sleep(0)  # give the scheduler every chance to interleave
                with guard:
                    inside -= 1

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert (most, entries, inside) == (1, 800, 0)
    assert not lock.locked()


def test_not_reentrant(lock: CompactionLock) -> None:
    with lock:
        with pytest.raises(RuntimeError, match="not reentrant"):
            lock.acquire()
        with pytest.raises(RuntimeError, match="not reentrant"):
            lock.acquire(timeout=0.01)
        assert lock.acquire(blocking=False) is False
        assert lock.locked()
    assert not lock.locked()


def test_release_when_not_held_raises(lock: CompactionLock) -> None:
    with pytest.raises(RuntimeError, match="not held"):
        lock.release()
    with lock:
        pass
    with pytest.raises(RuntimeError, match="not held"):
        lock.release()


def test_non_blocking_and_timeout_from_another_thread(lock: CompactionLock) -> None:
    held = threading.Event()
    done = threading.Event()

    def holder() -> None:
        with lock:
            held.set()
            done.wait(5)

    t = threading.Thread(target=holder)
    t.start()
    try:
        assert held.wait(5)
        assert lock.acquire(blocking=False) is False
        started = time.monotonic()
        assert lock.acquire(timeout=0.05) is False
        assert 0.04 <= time.monotonic() - started < 2
    finally:
        done.set()
        t.join()
    assert lock.acquire(timeout=1) is True
    lock.release()


def test_repr(tmp_path: Path) -> None:
    local = CompactionLock()
    assert repr(local) == "<CompactionLock (process-local) unlocked>"
    with local:
        assert repr(local) == "<CompactionLock (process-local) locked>"
    assert str(tmp_path / "x") in repr(CompactionLock(tmp_path / "x"))


def test_an_unusable_lock_file_leaves_nothing_held(tmp_path: Path) -> None:
    lock = CompactionLock(tmp_path / "missing-folder" / "lock")
    with pytest.raises(FileNotFoundError):
        lock.acquire()
    assert not lock.locked()
    with pytest.raises(FileNotFoundError):
        lock.acquire(blocking=False)
    assert not lock.locked()


# -- processes -------------------------------------------------------------------------------


def _count_in_file(path: str, counter: str, times: int) -> None:
    lock = CompactionLock(path)
    for _ in range(times):
        with lock:
            value = int(Path(counter).read_text())
            time.sleep(0.0002)  # widen the read-modify-write window
            Path(counter).write_text(str(value + 1))
            with open(counter + ".log", "a") as log:
                log.write(f"{os.getpid()}\n")


@needs_flock
def test_processes_are_mutually_excluded(tmp_path: Path) -> None:
    counter = tmp_path / "counter"
    counter.write_text("0")
    procs = [fork.Process(target=_count_in_file, args=(str(tmp_path / "lock"), str(counter), 40)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(30)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    assert counter.read_text() == "160"  # no lost update


def _hold(path: str, held: Any, release: Any) -> None:
    lock = CompactionLock(path)
    with lock:
        held.set()
        release.wait(10)


@needs_flock
def test_another_process_holding_it_blocks_us(tmp_path: Path) -> None:
    path = str(tmp_path / "lock")
    held, release = fork.Event(), fork.Event()
    child = fork.Process(target=_hold, args=(path, held, release))
    child.start()
    try:
        assert held.wait(10)
        lock = CompactionLock(path)
        assert lock.acquire(blocking=False) is False
        assert not lock.locked()  # the thread lock was given back too
        started = time.monotonic()
        assert lock.acquire(timeout=0.1) is False  # the timeout bounds the file lock as well
        assert 0.09 <= time.monotonic() - started < 2
        assert not lock.locked()
        release.set()
        assert lock.acquire(timeout=10) is True
        lock.release()
    finally:
        release.set()
        child.join(10)
    assert child.exitcode == 0


@needs_flock
def test_a_killed_holder_frees_the_lock(tmp_path: Path) -> None:
    path = str(tmp_path / "lock")
    held, release = fork.Event(), fork.Event()
    child = fork.Process(target=_hold, args=(path, held, release))
    child.start()
    assert held.wait(10)
    lock = CompactionLock(path)
    assert lock.acquire(blocking=False) is False
    os.kill(child.pid, signal.SIGKILL)  # type: ignore[arg-type]
    child.join(10)
    assert child.exitcode == -signal.SIGKILL
    assert lock.acquire(timeout=5) is True
    lock.release()


@needs_flock
def test_two_locks_on_one_file_exclude_each_other_in_one_process(tmp_path: Path) -> None:
    first, second = CompactionLock(tmp_path / "lock"), CompactionLock(tmp_path / "lock")
    with first:
        assert second.acquire(blocking=False) is False
    with second:
        assert first.acquire(blocking=False) is False


@needs_flock
@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="signals need the main thread")
def test_a_blocked_acquire_interrupted_by_a_signal_leaves_nothing_held(tmp_path: Path) -> None:
    path = str(tmp_path / "lock")
    held, release = fork.Event(), fork.Event()
    child = fork.Process(target=_hold, args=(path, held, release))
    child.start()

    class Interrupted(Exception):
        pass

    def on_alarm(signum: int, frame: Any) -> None:
        raise Interrupted

    previous = signal.signal(signal.SIGALRM, on_alarm)
    try:
        assert held.wait(10)
        lock = CompactionLock(path)
        fds_before = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        with pytest.raises(Interrupted):
            lock.acquire()  # blocked in flock until the alarm
        assert not lock.locked()
        if fds_before is not None:
            assert len(os.listdir("/proc/self/fd")) == fds_before  # the lock file was closed
        release.set()
        assert lock.acquire(timeout=10)
        lock.release()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        release.set()
        child.join(10)


# -- asyncio ---------------------------------------------------------------------------------


def test_tasks_are_mutually_excluded(lock: CompactionLock) -> None:
    inside = 0
    most = 0
    entries = 0

    async def work() -> None:
        nonlocal inside, most, entries
        for _ in range(20):
            async with lock:
                inside += 1
                most = max(most, inside)
                entries += 1
                await asyncio.sleep(0)  # hand the loop to the other tasks while holding it
                inside -= 1
            await asyncio.sleep(0)

    async def main() -> None:
        await asyncio.gather(*(work() for _ in range(5)))

    asyncio.run(main())
    assert (most, entries, inside) == (1, 100, 0)
    assert not lock.locked()


def test_a_cancelled_waiter_leaves_the_lock_free(lock: CompactionLock) -> None:
    async def main() -> None:
        release = asyncio.Event()

        async def holder() -> None:
            async with lock:
                await release.wait()

        async def waiter() -> None:
            async with lock:
                raise AssertionError("the waiter must not get the lock")

        hold = asyncio.create_task(holder())
        await asyncio.sleep(0.01)
        assert lock.locked()
        wait = asyncio.create_task(waiter())
        await asyncio.sleep(0.01)  # the waiter is polling
        wait.cancel()
        with pytest.raises(asyncio.CancelledError):
            await wait
        release.set()
        await hold
        assert not lock.locked()
        await asyncio.wait_for(lock.acquire_async(), 1)  # free for the next comer
        lock.release()

    asyncio.run(main())


def test_waiting_for_a_thread_does_not_block_the_loop(lock: CompactionLock) -> None:
    held = threading.Event()
    done = threading.Event()

    def holder() -> None:
        with lock:
            held.set()
            done.wait(5)

    async def main() -> int:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while not done.is_set():
                ticks += 1
                await asyncio.sleep(0.001)

        tick = asyncio.create_task(ticker())
        asyncio.get_running_loop().call_later(0.05, done.set)
        async with lock:  # waits for the thread while the ticker keeps running
            assert done.is_set()
        await tick
        return ticks

    t = threading.Thread(target=holder)
    t.start()
    assert held.wait(5)
    ticks = asyncio.run(main())
    t.join()
    assert ticks >= 5


def test_a_blocking_acquire_on_the_loop_thread_of_the_holding_task_raises(lock: CompactionLock) -> None:
    """It would deadlock: the holder can only release once the loop runs again."""

    async def main() -> None:
        async with lock:
            with pytest.raises(RuntimeError, match="asyncio task"):
                lock.acquire()
            assert lock.acquire(blocking=False) is False
        assert lock.acquire()  # released: a plain acquire works again
        lock.release()

    asyncio.run(main())
