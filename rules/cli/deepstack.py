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
"""

from __future__ import annotations

import sys
import threading
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

    def work() -> None:
        try:
            outcome.append(function())
        except BaseException as exc:  # handed to the caller's thread as it is
            failure.append(exc)

    limit = sys.getrecursionlimit()
    previous = threading.stack_size()
    try:
        threading.stack_size(stack_bytes)
    except (ValueError, RuntimeError):  # pragma: no cover - a platform that refuses the size
        return function()
    sys.setrecursionlimit(max(limit, RECURSION_LIMIT))
    try:
        try:
            worker = threading.Thread(target=work, name="summaryguard-analyze", daemon=True)
            worker.start()
        finally:
            threading.stack_size(previous)
        worker.join()
    finally:
        sys.setrecursionlimit(limit)
    if failure:
        raise failure[0]
    return outcome[0]
