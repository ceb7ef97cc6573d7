"""CompactionLock: mutual exclusion across threads, processes and asyncio tasks."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import dataclasses
import errno
import multiprocessing
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from summaryguard.guard import CheckpointStore, CompactionLock, Compactor, Turn

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
def test_a_task_never_waits_on_a_lock_file_it_holds_through_another_lock(tmp_path: Path) -> None:
    path = tmp_path / "lock"

    async def nested() -> None:
        async with CompactionLock(path):
            await CompactionLock(path).acquire_async()  # the same task: it would wait for itself

    outcome: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(nested())
        except BaseException as exc:  # noqa: BLE001 - reported to the test
            outcome.append(exc)

    worker = threading.Thread(target=run, daemon=True)  # a thread, so a regression fails instead of hanging
    worker.start()
    worker.join(30)
    assert not worker.is_alive(), "the task waited for a lock file it holds"
    [error] = outcome
    assert isinstance(error, RuntimeError) and "already held by this task through another CompactionLock" in str(error)
    assert CompactionLock(path).acquire(blocking=False)  # nothing left held


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


# -- fairness: threads and tasks are served in arrival order (B6) ----------------------------

THREADS = 3


def test_a_task_gets_its_turn_while_threads_compact_back_to_back(tmp_path: Path) -> None:
    """The B6 shape: compacting threads (5 ms sections, no pause) must not starve ``async with``.

    Waiters are served in arrival order, so while the task waits at most the
    section in progress and one queued section per other thread complete. The
    old lock only polled, and lost every race: thousands of sections went by
    before its first turn.
    """
    store = CheckpointStore(tmp_path)
    sections = 0

    def summarize(previous: str, turns: Any) -> str:
        nonlocal sections
        sections += 1  # inside the lock
        time.sleep(0.005)
        return "s"

    compactor = Compactor(summarize, lock=store.lock)
    done = threading.Event()

    def compact_loop() -> None:
        safety = time.monotonic() + 30  # only so that a starving lock ends the test instead of hanging it
        while not done.is_set() and time.monotonic() < safety:
            compactor.compact([Turn(1, "x")])

    async def main() -> list[int]:
        while sections < THREADS:  # every thread is compacting before the task first asks
            await asyncio.sleep(0.001)
        gaps = []
        for _ in range(20):
            before = sections
            async with store.lock:
                gaps.append(sections - before)
        return gaps

    threads = [threading.Thread(target=compact_loop) for _ in range(THREADS)]
    for t in threads:
        t.start()
    try:
        gaps = asyncio.run(main())
    finally:
        done.set()
        for t in threads:
            t.join()
    assert len(gaps) == 20
    assert max(gaps) <= THREADS, gaps
    assert not store.lock.locked()


def test_a_thread_gets_its_turn_while_tasks_take_it_back_to_back(lock: CompactionLock) -> None:
    sections = 0
    done = threading.Event()
    gaps: list[int] = []
    tasks_running = threading.Event()

    def thread() -> None:
        assert tasks_running.wait(10)
        for _ in range(20):
            before = sections
            with lock:
                gaps.append(sections - before)
        done.set()

    async def churn() -> None:
        nonlocal sections
        while not done.is_set():
            async with lock:
                sections += 1
                tasks_running.set()
                await asyncio.sleep(0.0005)

    async def main() -> None:
        await asyncio.gather(*(churn() for _ in range(THREADS)))

    t = threading.Thread(target=thread)
    t.start()
    asyncio.run(main())
    t.join()
    assert len(gaps) == 20 and max(gaps) <= THREADS, gaps


@dataclasses.dataclass
class _Plan:
    kind: str  # "thread", "task", "cancelled-task" or "timed-out-thread"


def _wait_until(predicate: Any, what: str) -> None:
    deadline = time.monotonic() + 10
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.0005)


class _LoopThread:
    """An event loop on a thread of its own, so that tasks and threads can queue side by side."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever)
        self.thread.start()

    def submit(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plans=st.lists(st.sampled_from(["thread", "task", "cancelled-task", "timed-out-thread"]), max_size=7))
def test_waiters_are_served_in_arrival_order_and_give_up_cleanly(plans: list[str], tmp_path: Path) -> None:
    """Any mix of thread and task waiters, some cancelled or timing out while queued: the others
    get the lock in the order they asked, one at a time, and it is free at the end."""
    lock = CompactionLock(tmp_path / "lock")
    runner = _LoopThread()
    order: list[int] = []
    expected: list[int] = []
    pending: list[Any] = []
    try:
        lock.acquire()
        for i, kind in enumerate(plans):

            def thread_wait(i: int = i, timeout: float = -1) -> None:
                if lock.acquire(timeout=timeout):
                    order.append(i)
                    lock.release()

            async def task_wait(i: int = i) -> None:
                async with lock:
                    order.append(i)

            queued = len(lock._waiters)
            if kind in ("thread", "timed-out-thread"):
                t = threading.Thread(target=thread_wait, kwargs={"timeout": 0.01 if kind != "thread" else -1})
                t.start()
                if kind == "timed-out-thread":
                    t.join(10)  # it gave up while we hold the lock
                    assert len(lock._waiters) == queued
                    continue
                pending.append(t)
            else:
                future = runner.submit(task_wait())
                pending.append(future)
                _wait_until(lambda: len(lock._waiters) == queued + 1, f"waiter {i} is queued")
                if kind == "cancelled-task":
                    future.cancel()
                    _wait_until(lambda: len(lock._waiters) == queued, f"waiter {i} left the queue")
                    continue
            _wait_until(lambda: len(lock._waiters) == queued + 1, f"waiter {i} is queued")
            expected.append(i)
        lock.release()
        for p in pending:
            if isinstance(p, threading.Thread):
                p.join(10)
            elif not p.cancelled():
                p.result(10)
    finally:
        runner.close()
    assert order == expected
    assert not lock.locked() and not lock._waiters


def test_a_task_cancelled_as_the_lock_is_handed_to_it_passes_it_on(lock: CompactionLock) -> None:
    """The lock is handed over and the task cancelled before it runs again: the next waiter gets it."""
    runner = _LoopThread()
    try:
        lock.acquire()

        async def task_wait() -> None:
            async with lock:
                raise AssertionError("a cancelled waiter must not run its locked block")

        task_future = runner.submit(task_wait())
        _wait_until(lambda: len(lock._waiters) == 1, "the task is queued")
        got: list[bool] = []
        thread = threading.Thread(target=lambda: got.append(lock.acquire(timeout=10)))
        thread.start()
        _wait_until(lambda: len(lock._waiters) == 2, "the thread is queued behind the task")
        go, busy = threading.Event(), threading.Event()
        runner.loop.call_soon_threadsafe(lambda: (busy.set(), go.wait(10)))  # hold the loop still
        assert busy.wait(10)
        lock.release()  # handed to the task, which cannot run yet
        assert lock.locked() and len(lock._waiters) == 1
        runner.loop.call_soon_threadsafe(task_future.cancel)
        go.set()
        thread.join(10)
        assert got == [True]
        with pytest.raises(concurrent.futures.CancelledError):
            task_future.result(10)
        lock.release()
    finally:
        runner.close()
    assert not lock.locked()


# -- deadlocks that raise instead of hanging (B14) ------------------------------------------


def _with_watchdog(coro: Any, seconds: float = 10) -> Any:
    """Run ``coro`` as the main task, cancelled after ``seconds`` (so that a hang fails the test)."""

    async def main() -> Any:
        task = asyncio.current_task()
        assert task is not None
        handle = asyncio.get_running_loop().call_later(seconds, task.cancel)
        try:
            return await coro
        finally:
            handle.cancel()

    return asyncio.run(main())


def test_async_reentry_from_the_holding_task_raises(lock: CompactionLock) -> None:
    async def main() -> None:
        async with lock:
            with pytest.raises(RuntimeError, match="not reentrant: this asyncio task"):
                async with lock:
                    pass
            assert lock.locked()
        assert not lock.locked()

    _with_watchdog(main())


def test_a_checkpoint_from_a_thread_the_holding_task_waits_for_raises(tmp_path: Path) -> None:
    """``async with store.lock: await asyncio.to_thread(store.checkpoint, ...)`` waited forever."""
    store = CheckpointStore(tmp_path)
    compactor = Compactor(lambda previous, turns: "s", lock=store.lock)

    async def main() -> None:
        async with store.lock:
            with pytest.raises(RuntimeError, match="handed this work off") as caught:
                await asyncio.to_thread(store.checkpoint, compactor, 1)
            assert "CheckpointStore.checkpoint" in str(caught.value)
        await asyncio.to_thread(store.checkpoint, compactor, 1)  # outside the block it works

    _with_watchdog(main())
    assert store.latest() is not None and store.latest().turn == 1


def test_work_handed_off_with_the_holders_context_from_a_thread_raises(lock: CompactionLock) -> None:
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        with lock:
            future = pool.submit(contextvars.copy_context().run, lock.acquire)
            with pytest.raises(RuntimeError, match="handed this work off"):
                future.result(10)
            assert pool.submit(contextvars.copy_context().run, lock.acquire, False).result(10) is False
        assert pool.submit(contextvars.copy_context().run, lock.acquire, True, 5).result(10) is True
    lock.release()


def test_a_thread_that_holds_it_and_runs_a_loop_whose_task_waits_raises(lock: CompactionLock) -> None:
    async def main() -> None:
        async with lock:
            pass

    with lock:
        with pytest.raises(RuntimeError, match="runs the event loop"):
            _with_watchdog(main())
    assert not lock.locked()


def test_a_child_task_may_wait_for_the_parent_that_holds_it(lock: CompactionLock) -> None:
    """Not a deadlock: a task created in the locked block inherits the context, and simply waits."""
    entered: list[str] = []

    async def child() -> None:
        async with lock:
            entered.append("child")

    async def main() -> None:
        async with lock:
            task = asyncio.create_task(child())
            await asyncio.sleep(0.01)
            entered.append("parent")
        await task

    _with_watchdog(main())
    assert entered == ["parent", "child"]


# -- fork (B14) ---------------------------------------------------------------------------------

needs_fork = pytest.mark.skipif(not hasattr(os, "register_at_fork"), reason="needs os.fork")


def _child_acquires_after(lock: CompactionLock, released: Any, result: Any) -> None:
    # The in-process lock is free here; the file lock, while the parent holds it, is not.
    early = lock.acquire(blocking=False)
    if early:
        lock.release()
    result.put(("early", early, lock.locked()))
    assert released.wait(10)
    late = lock.acquire(timeout=10)
    result.put(("late", late))
    if late:
        lock.release()


@needs_fork
def test_a_child_forked_while_another_thread_holds_it_can_take_it_once_released(lock: CompactionLock) -> None:
    held, let_go = threading.Event(), threading.Event()

    def holder() -> None:
        with lock:
            held.set()
            let_go.wait(10)

    t = threading.Thread(target=holder)
    t.start()
    assert held.wait(10)
    released, result = fork.Event(), fork.Queue()
    child = fork.Process(target=_child_acquires_after, args=(lock, released, result))
    child.start()
    try:
        early = result.get(timeout=10)
        if lock.path is not None:
            assert early == ("early", False, False)  # the parent's file lock still excludes the child
            assert CompactionLock(lock.path).acquire(blocking=False) is False  # ... and the child left it held
        else:
            assert early[0] == "early" and early[2] is False
        let_go.set()
        t.join(10)
        released.set()
        assert result.get(timeout=20) == ("late", True)
    finally:
        let_go.set()
        released.set()
        child.join(20)
    assert child.exitcode == 0


def _child_leaves_the_section(lock: CompactionLock, released: Any, result: Any) -> None:
    lock.release()  # leaving the block the parent's thread entered: nothing to give back here
    try:
        lock.release()
    except RuntimeError:
        result.put("second release refused")
    assert released.wait(10)
    result.put(lock.acquire(timeout=10))
    lock.release()


@needs_fork
def test_a_child_forked_inside_the_locked_block_leaves_it_without_error(lock: CompactionLock) -> None:
    released, result = fork.Event(), fork.Queue()
    with lock:
        child = fork.Process(target=_child_leaves_the_section, args=(lock, released, result))
        child.start()
        assert result.get(timeout=10) == "second release refused"
    released.set()
    try:
        assert result.get(timeout=20) is True
    finally:
        child.join(20)
    assert child.exitcode == 0


# -- the lock file is never opened through a link (B13) --------------------------------------


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
@pytest.mark.parametrize("target_exists", [False, True], ids=["dangling", "to-a-file"])
def test_a_symlinked_lock_file_is_refused_and_creates_nothing(tmp_path: Path, target_exists: bool) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target = elsewhere / "target"
    if target_exists:
        target.write_text("keep")
    folder = tmp_path / "store"
    folder.mkdir()
    link = folder / ".summaryguard.lock"
    link.symlink_to(target)
    with pytest.raises(OSError, match="symbolic link"):
        CheckpointStore(folder)
    assert target.exists() is target_exists
    lock = CompactionLock(link)
    with pytest.raises(OSError, match="symbolic link") as caught:
        lock.acquire()
    assert caught.value.errno == errno.ELOOP and caught.value.filename == str(link)
    assert not lock.locked()
    with pytest.raises(OSError, match="symbolic link"):
        lock.acquire(blocking=False)
    assert not lock.locked()

    async def main() -> None:
        with pytest.raises(OSError, match="symbolic link"):
            async with lock:
                pass

    asyncio.run(main())
    assert not lock.locked()
    assert sorted(p.name for p in elsewhere.iterdir()) == (["target"] if target_exists else [])


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_as_lock_file_is_refused_without_hanging(tmp_path: Path) -> None:
    path = tmp_path / "lock"
    os.mkfifo(path)
    lock = CompactionLock(path)
    with pytest.raises(OSError, match="not a regular file"):
        lock.acquire(timeout=1)
    assert not lock.locked()
