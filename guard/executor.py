"""Thread pools that carry the resumed turn to the work they run.

The resumed turn lives in a :mod:`contextvars` context. A plain
``ThreadPoolExecutor`` runs every call in its worker thread's own context, so
a tool submitted to a pool created at agent start-up runs outside the turn
that submitted it, and ``tool_guard`` cannot refuse a re-derivation there.
:class:`ContextThreadPoolExecutor` runs each call in a copy of the
submitter's context taken at submission (what ``asyncio.to_thread`` does for
one call), so the pool can be made once and still serve every turn.

It lives in its own module, not in ``summaryguard.guard``, because
``concurrent.futures`` imports ``logging``: about half again the cost of
``import summaryguard.guard``, for code that never uses a pool.
"""

from __future__ import annotations

import contextvars
import functools
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import asyncio

__all__ = ["ContextThreadPoolExecutor", "run_in_executor"]

T = TypeVar("T")


class ContextThreadPoolExecutor(ThreadPoolExecutor):
    """A ``ThreadPoolExecutor`` whose ``submit`` and ``map`` run each call in the caller's context.

    The context is copied when the call is submitted (for ``map``, when
    ``map`` is called), so a tool submitted from inside a resumed turn runs
    inside it, and one submitted outside any turn runs outside. Usable as an
    event loop's default executor (``loop.set_default_executor(...)``), which
    makes ``loop.run_in_executor(None, fn)`` carry the turn of the task that
    calls it.
    """

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        if isinstance(fn, _InContext):  # from map(): already bound to its context
            return super().submit(fn, *args, **kwargs)
        return super().submit(contextvars.copy_context().run, fn, *args, **kwargs)

    def map(self, fn: Callable[..., T], *iterables: Iterable[Any], **options: Any) -> Iterator[T]:
        """``Executor.map`` (``timeout``, ``chunksize``...), each call in a copy of the caller's context."""
        return super().map(_InContext(contextvars.copy_context(), fn), *iterables, **options)


class _InContext:
    """``fn`` run in a fresh copy of one context per call (a context runs on one thread at a time)."""

    __slots__ = ("context", "fn")

    def __init__(self, context: contextvars.Context, fn: Callable[..., Any]) -> None:
        self.context = context
        self.fn = fn

    def __call__(self, *args: Any) -> Any:
        return self.context.copy().run(self.fn, *args)


def run_in_executor(executor: Executor | None, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> asyncio.Future[T]:
    """``loop.run_in_executor(executor, fn, *args)`` that carries the caller's context (and keyword arguments).

    For code that must use a given thread pool (or the loop's default one)
    rather than :class:`ContextThreadPoolExecutor`: the call runs in a copy of
    the calling task's context, so inside the resumed turn that awaits it.
    Thread pools only: a process pool cannot carry a context.
    """
    import asyncio  # here: importing this module must not import asyncio

    loop = asyncio.get_running_loop()
    call = functools.partial(fn, *args, **kwargs) if kwargs else fn
    if isinstance(executor, ContextThreadPoolExecutor):
        return loop.run_in_executor(executor, call, *(() if kwargs else args))
    return loop.run_in_executor(executor, contextvars.copy_context().run, call, *(() if kwargs else args))
