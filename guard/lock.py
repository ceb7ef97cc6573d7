"""``CompactionLock``: one lock that compaction and checkpoint writes share.

A checkpoint must hold a complete summary of generation G or the previous
complete one of G-1, never a half-written one; so a checkpoint write and a
compaction never overlap. The lock serializes them across threads (a thread
lock), across processes (an exclusive ``flock`` on a lock file, when a path is
given) and across asyncio tasks (``async with``, which polls instead of
blocking the event loop, so a cancelled waiter leaves nothing held).

It is not reentrant: acquiring it again from the thread that holds it would
deadlock, so that raises ``RuntimeError`` instead; so does a blocking
``acquire`` on the thread whose event loop runs the task that holds it.
"""

from __future__ import annotations

import os
import threading
import time
from types import TracebackType
from typing import Any

try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["CompactionLock"]


class CompactionLock:
    """Mutual exclusion of compaction and checkpoint writes.

    ``path`` names a lock file shared by every process that writes the same
    checkpoints (the store uses ``<folder>/.summaryguard.lock``); without it
    the lock covers the threads and tasks of this process only.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = os.fspath(path) if path is not None else None
        self._thread_lock = threading.Lock()
        self._owner: int | None = None
        #: The thread whose event loop runs the task holding the lock (``async with``).
        self._async_thread: int | None = None
        self._fd: int | None = None

    # -- synchronous ---------------------------------------------------------------------

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        """Acquire; ``timeout`` (seconds, -1 for none) bounds the wait for the thread
        lock and the file lock together. Returns False when not acquired."""
        if blocking:
            me = threading.get_ident()
            if self._owner == me:
                raise RuntimeError(
                    "CompactionLock is not reentrant: this thread already holds it "
                    "(a checkpoint write from inside the summarizer would deadlock)"
                )
            if self._async_thread == me:
                raise RuntimeError(
                    "CompactionLock is held by an asyncio task running on this thread: a blocking "
                    "acquire here would stop the event loop that must release it; use 'async with'"
                )
        deadline = time.monotonic() + timeout if blocking and timeout >= 0 else None
        if not self._thread_lock.acquire(blocking, timeout if blocking else -1):
            return False
        try:
            if self.path is not None and not self._lock_file(blocking, deadline):
                self._thread_lock.release()
                return False
        except BaseException:
            self._thread_lock.release()
            raise
        self._owner = threading.get_ident()
        return True

    def release(self) -> None:
        if not self._thread_lock.locked():
            raise RuntimeError("CompactionLock released while not held")
        self._owner = None
        self._async_thread = None
        fd, self._fd = self._fd, None
        try:
            if fd is not None:
                if fcntl is not None:  # pragma: no branch - None only on Windows
                    fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)
        finally:
            self._thread_lock.release()

    def locked(self) -> bool:
        return self._thread_lock.locked()

    def __enter__(self) -> CompactionLock:
        self.acquire()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.release()

    # -- asyncio -------------------------------------------------------------------------

    async def acquire_async(self, poll: float = 0.0005, max_poll: float = 0.02) -> None:
        """Acquire without blocking the event loop (polls with backoff)."""
        import asyncio  # here, not at the top: importing asyncio costs ~20 ms, most users never poll

        while not self.acquire(blocking=False):
            await asyncio.sleep(poll)
            poll = min(poll * 2, max_poll)
        # The owning thread is the loop's; tasks on it are told apart by the lock itself.
        self._owner = None
        self._async_thread = threading.get_ident()

    async def __aenter__(self) -> CompactionLock:
        await self.acquire_async()
        return self

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self.release()

    # -- the file lock -------------------------------------------------------------------

    def _lock_file(self, blocking: bool, deadline: float | None) -> bool:
        assert self.path is not None
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        if fcntl is None:  # pragma: no cover - Windows: threads only
            self._fd = fd
            return True
        try:
            if blocking and deadline is None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            elif not _flock_until(fd, deadline):
                os.close(fd)
                return False
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        return True

    def __repr__(self) -> str:
        state = "locked" if self.locked() else "unlocked"
        return f"<CompactionLock {self.path or '(process-local)'} {state}>"


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
