"""Run the analysis on a thread with a large stack, so deeply nested code cannot crash the process.

libcst's native parser recurses on the machine stack: a file with about a
thousand nested brackets overflows the main thread's default 8 MiB stack and
the whole interpreter dies with SIGSEGV, which no ``except`` can catch. A
worker thread with a 512 MiB stack moves that limit far beyond any real code
(the memory is only reserved, and committed as it is used).

The same stack makes room for Python-level recursion: libcst's visitors and
metadata providers recurse about four frames per tree level, so with the
default limit of 1,000 frames a few hundred implicitly concatenated strings
(a long prompt template) or ``or`` operands were "too deeply nested". While
the worker runs, the recursion limit is raised to :data:`RECURSION_LIMIT`
(never lowered), far below what the stack holds; deeper recursion still ends
in a ``RecursionError`` that the engine reports as an error for that file.

The worker is started through ``threading`` when the process has imported it, so that
what hooks threads (coverage's tracer, profilers, ``threading.excepthook``) sees the
work; otherwise with ``_thread``, the primitives ``threading`` is built on: a pre-commit
run whose files the pre-filter dismisses screens them on this stack too, and importing
``threading`` would cost it about a thirtieth of flake8's whole run (SPEC §3.1.2).
"""

from __future__ import annotations

import _thread
import sys
from collections.abc import Callable
from typing import TypeVar

__all__ = ["RECURSION_LIMIT", "STACK_BYTES", "call_with_deep_stack"]

STACK_BYTES = 512 * 1024 * 1024
#: Python frames allowed while the worker runs (a frame takes well under
#: 10 KiB of machine stack even on Python 3.10, so 20,000 fit in 200 MiB).
RECURSION_LIMIT = 20_000

T = TypeVar("T")


def call_with_deep_stack(function: Callable[[], T], stack_bytes: int = STACK_BYTES) -> T:
    """``function()`` on a thread with ``stack_bytes`` of stack; its result or its exception."""
    outcome: list[T] = []
    failure: list[BaseException] = []
    done = _thread.allocate_lock()
    done.acquire()

    def work() -> None:
        try:
            outcome.append(function())
        except BaseException as exc:  # handed to the caller's thread as it is
            failure.append(exc)
        finally:
            done.release()

    limit = sys.getrecursionlimit()
    try:
        previous = _thread.stack_size(stack_bytes)
    except (ValueError, RuntimeError):  # pragma: no cover - a platform that refuses the size
        return function()
    sys.setrecursionlimit(max(limit, RECURSION_LIMIT))
    try:
        try:
            _start(work)
        finally:
            _thread.stack_size(previous)
        done.acquire()  # the worker's end (like a daemon thread's, it does not hold up exit)
    finally:
        sys.setrecursionlimit(limit)
    if failure:
        raise failure[0]
    return outcome[0]


def _start(work: Callable[[], None]) -> None:
    threading = sys.modules.get("threading")
    if threading is not None:
        threading.Thread(target=work, name="summaryguard-analyze", daemon=True).start()
    else:
        _thread.start_new_thread(work, ())
