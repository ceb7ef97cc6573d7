"""Run the analysis on a thread with a large stack, so deeply nested code cannot crash the process.

libcst's native parser recurses on the machine stack: a file with about a
thousand nested brackets overflows the main thread's default 8 MiB stack and
the whole interpreter dies with SIGSEGV, which no ``except`` can catch. A
worker thread with a 512 MiB stack moves that limit far beyond any real code
(the memory is only reserved, and committed as it is used). Python's own
recursion limit is unchanged, so deep Python-level recursion still ends in a
``RecursionError`` that the engine reports as an error for that file.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

__all__ = ["STACK_BYTES", "call_with_deep_stack"]

STACK_BYTES = 512 * 1024 * 1024

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

    previous = threading.stack_size()
    try:
        threading.stack_size(stack_bytes)
    except (ValueError, RuntimeError):  # pragma: no cover - a platform that refuses the size
        return function()
    try:
        worker = threading.Thread(target=work, name="summaryguard-analyze", daemon=True)
        worker.start()
    finally:
        threading.stack_size(previous)
    worker.join()
    if failure:
        raise failure[0]
    return outcome[0]
