"""``CompactionLock``: one lock that compaction and checkpoint writes share.

A checkpoint must hold a complete summary of generation G or the previous
complete one of G-1, never a half-written one; so a checkpoint write and a
compaction never overlap. The lock serializes them across threads, across
asyncio tasks (``async with``) and across processes (an exclusive ``flock`` on
a lock file, when a path is given).

Inside the process the lock is a first-come, first-served queue that threads
and tasks share: ``release`` hands the lock to the longest waiter, so a thread
that compacts back to back cannot starve a task (an ``async with`` that only
polled lost every race to blocking acquirers). A task waits on a future, never
blocking its event loop; a cancelled waiter leaves nothing held.

It is not reentrant, and the ways to deadlock on it raise ``RuntimeError``
instead of hanging: acquiring it again from the thread or task that holds it;
a blocking ``acquire`` on the thread whose event loop runs the task that holds
it; and acquiring it from work the holder handed off with its context and
waits for (``async with store.lock: await asyncio.to_thread(store.checkpoint,
...)``: ``checkpoint`` takes the lock itself, so call it after the block).

A child process forked while the lock is held (by any thread) starts with the
lock free in-process; it still waits for the parent's file lock like any
other process.
"""

from __future__ import annotations

import contextvars
import errno
import os
import stat
import threading
import time
import weakref
from collections import deque
from types import TracebackType
from typing import Any

try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["CompactionLock"]

#: Open the lock file for writing, creating it, never through a symbolic link
#: (``O_CREAT`` would create a file wherever the link points) and without
#: blocking on a FIFO someone put there.
_OPEN_FLAGS = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


class _Hold:
    """One acquisition: who holds the lock (a thread, or a task on a loop's thread)."""

    __slots__ = ("live", "loop_thread", "task", "thread")

    def __init__(self, thread: int | None = None, task: Any = None, loop_thread: int | None = None) -> None:
        self.thread = thread
        self.task = task
        self.loop_thread = loop_thread
        self.live = True


class _Waiter:
    """A queued acquirer. A thread blocks on ``wake`` (held until granted); a task awaits ``future``."""

    __slots__ = ("future", "granted", "hold", "loop", "wake")

    def __init__(self, hold: _Hold, loop: Any = None, future: Any = None) -> None:
        self.hold = hold
        self.loop = loop
        self.future = future
        self.granted = False
        self.wake: threading.Lock | None = None
        if loop is None:
            self.wake = threading.Lock()
            self.wake.acquire()


#: The acquisitions made in this context (and inherited by the threads and tasks
#: it hands work to with its context): a blocking acquire from work carrying its
#: holder's context would wait for a holder that waits for it.
_held: contextvars.ContextVar[tuple[_Hold, ...]] = contextvars.ContextVar("summaryguard_locks_held", default=())


class CompactionLock:
    """Mutual exclusion of compaction and checkpoint writes.

    ``path`` names a lock file shared by every process that writes the same
    checkpoints (the store uses ``<folder>/.summaryguard.lock``); without it
    the lock covers the threads and tasks of this process only. The lock file
    is never opened through a symbolic link.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = os.fspath(path) if path is not None else None
        self._reset()
        _all_locks.add(self)

    def _reset(self) -> None:
        #: Guards ``_hold`` and ``_waiters``; held for a few instructions at a time.
        self._mutex = threading.Lock()
        self._hold: _Hold | None = None
        self._waiters: deque[_Waiter] = deque()
        self._fd: int | None = None
        #: The thread that held the lock when this process was forked from its parent (see _after_fork).
        self._forked_holder: int | None = None

    # -- synchronous ---------------------------------------------------------------------

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        """Acquire; ``timeout`` (seconds, -1 for none) bounds the wait for the lock
        in this process and the file lock together. Returns False when not acquired.

        Waiters are served in arrival order, so a non-blocking try fails while
        others wait, even at a moment when nobody holds the lock.
        """
        if blocking:
            self._refuse_blocking_deadlock()
        deadline = time.monotonic() + timeout if blocking and timeout >= 0 else None
        hold = _Hold(thread=threading.get_ident())
        if not self._enter(hold, blocking, deadline):
            return False
        try:
            if self.path is not None and not self._lock_file(blocking, deadline):
                self._leave()
                return False
        except BaseException:
            self._leave()
            raise
        _mark(hold)
        return True

    def release(self) -> None:
        hold = self._hold
        if hold is None:
            if self._forked_holder == threading.get_ident():
                # Leaving, in a forked child, a section the parent's thread entered:
                # the child never held the lock (see _after_fork), so there is nothing to give back.
                self._forked_holder = None
                return
            raise RuntimeError("CompactionLock released while not held")
        fd, self._fd = self._fd, None
        try:
            if fd is not None:
                try:
                    if fcntl is not None:  # pragma: no branch - None only on Windows
                        fcntl.flock(fd, fcntl.LOCK_UN)
                finally:
                    os.close(fd)
        finally:
            _unmark(hold)
            self._leave()

    def locked(self) -> bool:
        return self._hold is not None

    def __enter__(self) -> CompactionLock:
        self.acquire()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.release()

    # -- asyncio -------------------------------------------------------------------------

    async def acquire_async(self) -> None:
        """Acquire without blocking the event loop, in turn with threads and other tasks.

        Cancelled while waiting, it leaves nothing held (and gives the lock on
        if it was handed over at that moment). A file lock another process
        holds is waited for on a helper thread.
        """
        import asyncio  # here, not at the top: importing asyncio costs ~20 ms, most users never wait

        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        self._refuse_async_deadlock(task)
        hold = _Hold(task=task, loop_thread=threading.get_ident())
        waiter = None
        with self._mutex:
            if self._hold is None and not self._waiters:
                self._hold = hold
            else:
                waiter = _Waiter(hold, loop, loop.create_future())
                self._waiters.append(waiter)
        if waiter is not None:
            try:
                await waiter.future
            except BaseException:
                if not self._withdraw(waiter):
                    self._leave()  # handed to us as we were cancelled: pass it on
                raise
        if self.path is not None:
            await self._lock_file_async(loop)  # gives up the lock in this process itself if it fails
        _mark(hold)

    async def __aenter__(self) -> CompactionLock:
        await self.acquire_async()
        return self

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self.release()

    # -- deadlocks refused ---------------------------------------------------------------

    def _refuse_blocking_deadlock(self) -> None:
        hold = self._hold  # only its holder can replace a hold that names us, so no race
        if hold is None:
            return
        me = threading.get_ident()
        if hold.thread == me:
            raise RuntimeError(
                "CompactionLock is not reentrant: this thread already holds it "
                "(a checkpoint write from inside the summarizer would deadlock)"
            )
        if hold.loop_thread == me:
            raise RuntimeError(
                "CompactionLock is held by an asyncio task running on this thread: a blocking "
                "acquire here would stop the event loop that must release it; use 'async with'"
            )
        if hold in _held.get():
            raise RuntimeError(_HANDED_OFF)

    def _refuse_async_deadlock(self, task: Any) -> None:
        hold = self._hold
        if hold is None:
            return
        me = threading.get_ident()
        if task is not None and hold.task is task:
            raise RuntimeError(
                "CompactionLock is not reentrant: this asyncio task already holds it "
                "('async with lock' inside 'async with lock' would wait for itself)"
            )
        if hold.thread == me:
            raise RuntimeError(
                "CompactionLock is held by this thread, which runs the event loop of the task now waiting "
                "for it: the thread cannot release it until the loop returns"
            )
        if hold.loop_thread not in (None, me) and hold in _held.get():
            # A task on another loop, running in the holder's context (asyncio.run inside
            # asyncio.to_thread, say); a child task on the holder's own loop may wait.
            raise RuntimeError(_HANDED_OFF)

    # -- the queue in this process --------------------------------------------------------

    def _enter(self, hold: _Hold, blocking: bool, deadline: float | None) -> bool:
        """Take the lock in this process for a thread, in arrival order."""
        with self._mutex:
            if self._hold is None and not self._waiters:
                self._hold = hold
                return True
            if not blocking:
                return False
            waiter = _Waiter(hold)
            self._waiters.append(waiter)
        assert waiter.wake is not None
        try:
            if deadline is None:
                got = waiter.wake.acquire()
            else:
                got = waiter.wake.acquire(timeout=max(0.0, deadline - time.monotonic()))
        except BaseException:  # a signal handler raised, say
            if not self._withdraw(waiter):
                self._leave()
            raise
        return got or not self._withdraw(waiter)  # granted at the last moment counts

    def _withdraw(self, waiter: _Waiter) -> bool:
        """Leave the queue; False when the lock was handed to ``waiter`` already (it must pass it on)."""
        with self._mutex:
            if waiter.granted:
                return False
            self._waiters.remove(waiter)
            return True

    def _leave(self) -> None:
        """Give up the lock in this process (the file lock is released already): to the longest waiter."""
        with self._mutex:
            if self._hold is not None:
                self._hold.live = False
            self._hold = None
            while self._waiters:
                waiter = self._waiters.popleft()
                if waiter.loop is None:
                    assert waiter.wake is not None
                    waiter.granted = True
                    self._hold = waiter.hold
                    waiter.wake.release()
                    return
                # Granted before the loop is woken: once woken, the task may run to its release at once.
                waiter.granted = True
                self._hold = waiter.hold
                try:
                    waiter.loop.call_soon_threadsafe(_grant, waiter.future)
                except RuntimeError:  # its event loop is closed: nobody is waiting there any more
                    waiter.granted = False
                    self._hold = None
                    continue
                return

    # -- the file lock -------------------------------------------------------------------

    def _open_lock_file(self) -> int:
        assert self.path is not None
        if not getattr(os, "O_NOFOLLOW", 0) and os.path.islink(self.path):  # pragma: no cover - Windows
            raise _symlink_error(self.path)
        try:
            fd = os.open(self.path, _OPEN_FLAGS, 0o644)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.EMLINK) and os.path.islink(self.path):
                raise _symlink_error(self.path) from exc
            if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
                # the same error class and errno, saying what could not be opened and why
                raise type(exc)(
                    exc.errno,
                    f"cannot open the CompactionLock file ({exc.strerror}): this process may not write it "
                    "or its folder; a lock shared with a CheckpointStore needs both writable",
                    self.path,
                ) from None
            raise
        try:
            mode = os.fstat(fd).st_mode
        except BaseException:
            os.close(fd)
            raise
        if not stat.S_ISREG(mode):
            os.close(fd)
            raise OSError(
                errno.EINVAL,
                "the CompactionLock file is not a regular file; remove it (the lock creates a fresh one)",
                self.path,
            )
        return fd

    def _lock_file(self, blocking: bool, deadline: float | None) -> bool:
        fd = self._open_lock_file()
        if fcntl is None:  # pragma: no cover - Windows: threads only
            self._fd = fd
            return True
        try:
            if not _flock_until(fd, None):  # taken: by another process, or by another lock of ours
                if blocking and deadline is None:
                    self._refuse_waiting_on_itself(fd, None)  # a wait without end
                    fcntl.flock(fd, fcntl.LOCK_EX)
                elif not _flock_until(fd, deadline):
                    os.close(fd)
                    return False
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        return True

    def _refuse_waiting_on_itself(self, fd: int, task: Any) -> None:
        """Raise when the lock file behind ``fd`` is held by another :class:`CompactionLock`
        of this thread (``task``: of this asyncio task): two locks on one file, say two
        ``CheckpointStore`` objects for one folder, one saving from inside the other's
        compaction. ``flock`` would wait forever for a lock its own caller holds.

        Asked only when the file lock is taken, so a free lock costs nothing more."""
        me = threading.get_ident()
        try:
            here = os.fstat(fd)
        except OSError:  # pragma: no cover - the descriptor was just opened
            return
        for other in list(_all_locks):
            hold, other_fd = other._hold, other._fd
            if other is self or hold is None or other_fd is None:
                continue
            mine = hold.task is task if task is not None else me in (hold.thread, hold.loop_thread)
            if not mine and hold.thread != me:
                continue
            try:
                there = os.fstat(other_fd)
            except OSError:  # closed as it was released
                continue
            if (there.st_dev, there.st_ino) == (here.st_dev, here.st_ino):
                raise RuntimeError(
                    f"the lock file {self.path} is already held by this "
                    f"{'task' if task is not None else 'thread'} through another CompactionLock "
                    "(two CheckpointStore objects for one folder?): waiting for it would wait for itself; "
                    "share one store, or its lock (CheckpointStore(folder, lock=store.lock))"
                )

    async def _lock_file_async(self, loop: Any) -> None:
        """Take the file lock: at once when free, else on a helper thread (polling would lose to blocking takers).

        On failure or cancellation the lock in this process is given up too
        (at once, or by the helper thread once its ``flock`` returns).
        """
        try:
            fd = self._open_lock_file()
        except BaseException:
            self._leave()
            raise
        if fcntl is None:  # pragma: no cover - Windows: threads only
            self._fd = fd
            return
        try:
            if _flock_until(fd, None):
                self._fd = fd
                return
            self._refuse_waiting_on_itself(fd, self._hold.task if self._hold is not None else None)
        except BaseException:
            os.close(fd)
            self._leave()
            raise
        wait = _FileWait(self, fd, loop)
        threading.Thread(target=wait.run, name="summaryguard-flock", daemon=True).start()
        try:
            await wait.future
        except BaseException:
            wait.abandon()
            raise
        self._fd = fd

    def __repr__(self) -> str:
        state = "locked" if self.locked() else "unlocked"
        return f"<CompactionLock {self.path or '(process-local)'} {state}>"

    # -- fork ----------------------------------------------------------------------------

    def _after_fork(self) -> None:
        """In a forked child: a fresh lock, free in this process.

        The threads that held or waited for it do not exist here (or, for the
        forking thread, it held it for the parent). The inherited lock file
        descriptor shares the parent's ``flock``: close it without unlocking,
        which would release the parent's lock; the child takes its own.
        """
        hold, fd = self._hold, self._fd
        self._reset()
        me = threading.get_ident()
        if hold is not None and me in (hold.thread, hold.loop_thread):
            self._forked_holder = me
        if fd is not None:
            try:
                os.close(fd)
            except OSError:  # pragma: no cover - nothing more to do with it
                pass


_HANDED_OFF = (
    "CompactionLock is held by the code that handed this work off with its context "
    "(asyncio.to_thread, copy_context().run, ContextThreadPoolExecutor) and that code is still inside "
    "the lock: if it waits for this work, neither can go on. Take the lock outside the locked block; "
    "note that CheckpointStore.checkpoint/save and Compactor.compact take it themselves"
)


def _symlink_error(path: str) -> OSError:
    return OSError(
        errno.ELOOP,
        "the CompactionLock file is a symbolic link; refusing to follow it (it could create or lock a file "
        "elsewhere): remove the link, the lock creates a fresh file",
        path,
    )


def _grant(future: Any) -> None:
    if not future.done():  # a cancelled waiter sees ``granted`` and passes the lock on
        future.set_result(None)


def _mark(hold: _Hold) -> None:
    held = _held.get()
    # Holds released from another context stay behind here; drop them as we go.
    _held.set((hold,) if not held else (*(h for h in held if h.live), hold))


def _unmark(hold: _Hold) -> None:
    held = _held.get()
    if held == (hold,):  # the common case: one lock held, released where it was taken
        _held.set(())
    elif hold in held:
        _held.set(tuple(h for h in held if h is not hold and h.live))


class _FileWait:
    """A blocking ``flock`` on a helper thread for a task; a cancelled task leaves the cleanup to it."""

    def __init__(self, lock: CompactionLock, fd: int, loop: Any) -> None:
        self.lock = lock
        self.fd = fd
        self.loop = loop
        self.future = loop.create_future()
        self._state = threading.Lock()
        self._abandoned = False
        self._outcome: BaseException | None | bool = False  # False: still waiting

    def run(self) -> None:
        assert fcntl is not None
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
            outcome: BaseException | None = None
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting task
            outcome = exc
        with self._state:
            self._outcome = outcome
            abandoned = self._abandoned
        if not abandoned:
            try:
                self.loop.call_soon_threadsafe(self._settle, outcome)
                return
            except RuntimeError:  # the loop is closed
                pass
        self._clean_up(outcome)

    def _settle(self, outcome: BaseException | None) -> None:
        if self.future.done():
            return
        if outcome is None:
            self.future.set_result(None)
        else:
            self.future.set_exception(outcome)

    def abandon(self) -> None:
        """The task stopped waiting (cancelled, or the flock failed): give everything back."""
        with self._state:
            outcome = self._outcome
            self._abandoned = outcome is False
        if outcome is not False:
            self._clean_up(outcome)
        # else: run() cleans up once flock returns

    def _clean_up(self, outcome: BaseException | None | bool) -> None:
        try:
            if outcome is None and fcntl is not None:
                fcntl.flock(self.fd, fcntl.LOCK_UN)
        finally:
            os.close(self.fd)
            self.lock._leave()


def _flock_until(fd: int, deadline: float | None) -> bool:
    """Try the exclusive file lock once (``deadline`` None) or until ``deadline``."""
    poll = 0.0005
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if deadline is None:
                return False
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            time.sleep(min(poll, remaining))
            poll = min(poll * 2, 0.02)


_all_locks: weakref.WeakSet[CompactionLock] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for lock in list(_all_locks):
        lock._after_fork()


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_after_fork_in_child)
