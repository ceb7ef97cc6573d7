"""Work a guarded resume hands back runs inside the resumed turn.

A resume does not always do its work before it returns: ``def resume(cp):
return agent.arun(cp)`` hands back a coroutine, and a body may equally return
a generator, an async generator, or a function (a closure, a lambda, a bound
method, a partial) that does the work when called. ``resume_guard`` resets the
turn when the body returns, so that work would run later with no turn at all
and a tool could re-derive what the summary dropped. :func:`hand_back` wraps
such a result so that the turn is entered again while the work runs:

- a coroutine (or any awaitable but an asyncio future, whose work runs in its
  own task) while it is awaited;
- a generator or async generator for each step (``next``/``send``/``throw``/
  ``close`` and their async twins), and never while the consumer holds an item;
- a function, method or partial while it is called.

What comes out of that work (an awaited result, a yielded item, a call's
result) is handed back the same way. Other objects, callable instances and
classes included, are returned as they are. When the work runs inside another
turn, both turns' drops apply (see :mod:`summaryguard.guard.turn`).

The test on the hot path is one set lookup: the result's type against
:data:`PLAIN`, types known to be no work, which grows as types are met.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import types
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator
from typing import Any

from .turn import Cell, _current

__all__ = ["PLAIN", "hand_back"]

#: Result types known to carry no work: the compiled wrapper returns these
#: untouched after one set lookup. Grown by :func:`hand_back` (bounded).
PLAIN: set[type] = {
    type(None), bool, int, float, complex, str, bytes, bytearray, list, tuple, dict, set, frozenset, type(Ellipsis),
}
_PLAIN_LIMIT = 1024

_WORK_CALLABLES = (types.FunctionType, types.MethodType, functools.partial)


def hand_back(cell: Cell, result: Any) -> Any:
    """``result``, made to run inside the turn of ``cell`` if it is work still to be done."""
    cls = result.__class__
    if cls is types.CoroutineType:
        return _await_in_turn(cell, result)
    if cls is types.GeneratorType:
        if result.gi_code.co_flags & inspect.CO_ITERABLE_COROUTINE:
            return _await_in_turn(cell, result)  # a @types.coroutine generator: awaited, not iterated
        return _iterate_in_turn(cell, result)
    if cls is types.AsyncGeneratorType:
        return _aiterate_in_turn(cell, result)
    if isinstance(result, _WORK_CALLABLES):
        return _call_in_turn(cell, result)
    if inspect.isawaitable(result):
        if _is_future(result):
            PLAIN.add(cls)
            return result  # an asyncio Future or Task: its work runs in its own task and context
        return _await_in_turn(cell, result)
    if len(PLAIN) < _PLAIN_LIMIT:
        PLAIN.add(cls)  # awaitability and the kinds above belong to the type: decided once per type
    return result


def _is_future(obj: Any) -> bool:
    """``asyncio.isfuture`` without importing asyncio."""
    return hasattr(obj.__class__, "_asyncio_future_blocking") and obj._asyncio_future_blocking is not None


def _enter(cell: Cell) -> contextvars.Token[Cell | None] | None:
    """Enter ``cell``'s turn for one step of its work; inside another turn, join both."""
    current = _current.get()
    if current is cell:
        return None
    if current is not None and not _within(cell, current):
        # Work of one turn run inside another: refuse both turns' drops.
        cell = [cell[0], cell[1], None, (), current, cell]
    return _current.set(cell)


def _within(cell: Cell, outer: Cell) -> bool:
    """``cell`` was entered inside ``outer`` (so it already refuses what ``outer`` does)."""
    stack = list(cell[4:])
    while stack:
        enclosing = stack.pop()
        if enclosing is outer:
            return True
        if enclosing is not None:
            stack.extend(enclosing[4:])
    return False


def _leave(token: contextvars.Token[Cell | None] | None) -> None:
    if token is not None:
        try:
            _current.reset(token)
        except ValueError:  # closed from another context (a collected coroutine): nothing of ours is set there
            pass


def _out(cell: Cell, value: Any) -> Any:
    return value if value.__class__ in PLAIN else hand_back(cell, value)


async def _await_in_turn(cell: Cell, awaitable: Awaitable[Any]) -> Any:
    token = _enter(cell)
    try:
        result = await awaitable
    finally:
        _leave(token)
    return _out(cell, result)


def _iterate_in_turn(cell: Cell, gen: Generator[Any, Any, Any]) -> Generator[Any, Any, Any]:
    """Drive ``gen`` one step at a time inside the turn; between steps the consumer is outside it."""
    sent: Any = None
    thrown: BaseException | None = None
    while True:
        token = _enter(cell)
        try:
            item = gen.send(sent) if thrown is None else gen.throw(thrown)
        except StopIteration as stop:
            return _out(cell, stop.value)
        finally:
            _leave(token)
            thrown = None
        try:
            sent = yield _out(cell, item)
        except GeneratorExit:
            token = _enter(cell)
            try:
                gen.close()
            finally:
                _leave(token)
            raise
        except BaseException as exc:  # noqa: BLE001 - thrown in by the consumer: passed on to the generator
            thrown, sent = exc, None


async def _aiterate_in_turn(cell: Cell, agen: AsyncGenerator[Any, Any]) -> AsyncGenerator[Any, Any]:
    """The async twin of :func:`_iterate_in_turn`."""
    sent: Any = None
    thrown: BaseException | None = None
    while True:
        token = _enter(cell)
        try:
            item = await (agen.asend(sent) if thrown is None else agen.athrow(thrown))
        except StopAsyncIteration:
            return
        finally:
            _leave(token)
            thrown = None
        try:
            sent = yield _out(cell, item)
        except GeneratorExit:
            token = _enter(cell)
            try:
                await agen.aclose()
            finally:
                _leave(token)
            raise
        except BaseException as exc:  # noqa: BLE001 - thrown in by the consumer: passed on to the generator
            thrown, sent = exc, None


def _call_in_turn(cell: Cell, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, entering the turn while it runs (an ``async`` function stays one)."""
    if inspect.iscoroutinefunction(fn):

        async def in_turn_async(*args: Any, **kwargs: Any) -> Any:
            token = _enter(cell)
            try:
                result = await fn(*args, **kwargs)
            finally:
                _leave(token)
            return _out(cell, result)

        return functools.wraps(fn)(in_turn_async)

    def in_turn(*args: Any, **kwargs: Any) -> Any:
        token = _enter(cell)
        try:
            result = fn(*args, **kwargs)
        finally:
            _leave(token)
        return _out(cell, result)

    return functools.wraps(fn)(in_turn)
