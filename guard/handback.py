"""Work a guarded resume hands back runs inside the resumed turn.

A resume does not always do its work before it returns: ``def resume(cp):
return agent.arun(cp)`` hands back a coroutine, and a body may equally return
a generator, an async generator, a function, or any object whose work runs
when it is called, iterated or awaited. ``resume_guard`` resets the turn when
the body returns, so that work would run later with no turn at all and a tool
could re-derive what the summary dropped. :func:`hand_back` wraps such a
result so that the turn is entered again while the work runs:

- a coroutine while it is awaited;
- a generator or async generator for each step (``next``/``send``/``throw``/
  ``close`` and their async twins), and never while the consumer holds an item;
- a function, method or partial while it is called (it stays a function: a
  closure made with ``functools.wraps``);
- any other object whose type makes it work, i.e. defines ``__call__``,
  ``__next__``, ``__await__`` or ``__anext__`` (a callable instance, a C
  callable such as a builtin bound method, ``operator.methodcaller`` or an
  ``lru_cache`` wrapper, a ``map``/``filter``/``itertools`` iterator, a custom
  iterator, an awaitable that is not a coroutine, an async iterator): a
  :class:`TurnProxy` in its place, through which *every* operation (a call, a
  step, an await, an attribute read or write, ``len``, ``with``, an
  operator...) runs inside the turn.

What comes out of that work (an awaited result, a yielded item, a call's
result, an attribute read through a proxy) is handed back the same way. When
the work runs inside another turn, both turns' drops apply (see
:mod:`summaryguard.guard.turn`).

Left as they are: values whose type does no work (numbers, strings,
containers, plain objects), classes (a class is a type: calling it builds an
instance, and a stand-in would break ``issubclass``, subclassing and
identity; return ``functools.partial(cls)`` to have the construction run in
the turn), and asyncio futures and tasks (their work runs in their own task,
in the context they were created in). Work *inside* a container (a list of
coroutines) is not looked for: the resume's result would have to be walked on
every call. Return one piece of work that holds the rest (a coroutine that
gathers them), or wrap each with :func:`in_turn` inside the body.

The proxy is the trade-off for objects: ``isinstance(proxy, Cls)`` and
``proxy.__class__`` answer as for the object (``__class__`` is forwarded),
attributes read and write through, ``==`` and ``hash`` are the object's,
``proxy.__wrapped__`` is the object itself; but ``type(proxy)`` is the proxy's
own class, so code that dispatches on the exact type (``type(x) is Cls``,
``dataclasses.asdict``, C functions that need the real object) sees the
proxy. Use ``__wrapped__`` to hand such code the object (outside the turn).

The test on the hot path is one set lookup: the result's type against
:data:`PLAIN`, types known to be no work, which grows as types are met. Which
kind a type is, and its proxy class, are decided once per type.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import types
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator, Iterator
from typing import Any, TypeVar

from .turn import Cell, _current

__all__ = ["PLAIN", "TurnProxy", "hand_back", "in_turn"]

T = TypeVar("T")

#: Result types known to carry no work: the compiled wrapper returns these
#: untouched after one set lookup. Grown by :func:`hand_back` (bounded).
PLAIN: set[type] = {
    type(None), bool, int, float, complex, str, bytes, bytearray, list, tuple, dict, set, frozenset, type(Ellipsis),
}
_PLAIN_LIMIT = 1024

_WORK_CALLABLES = (types.FunctionType, types.MethodType, functools.partial)

#: The special methods that make an object work to be done later.
_WORK_METHODS = ("__call__", "__next__", "__await__", "__anext__")


def hand_back(cell: Cell, result: Any) -> Any:
    """``result``, made to run inside the turn of ``cell`` if it is work still to be done."""
    cls = type(result)
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
    proxy = _PROXIES.get(cls)
    if proxy is None:
        if cls in PLAIN:
            return result
        proxy = _proxy_class(cls)
        if proxy is None:
            if len(PLAIN) < _PLAIN_LIMIT:
                PLAIN.add(cls)  # what kind of work (if any) belongs to the type: decided once per type
            return result
    if issubclass(cls, TurnProxy) and _get_cell(result) is cell:
        return result  # a proxy of this very turn already
    made = object.__new__(proxy)
    _set_target(made, result)
    _set_cell(made, cell)
    return made


def in_turn(work: T) -> T:
    """``work``, bound to the resumed turn the caller runs in: it will run inside it.

    For work a resume cannot hand back as its result: each item of a list or
    dict of coroutines, a callback registered somewhere, an object stored on
    the agent. Called in the body of a guarded resume (or anywhere inside its
    turn), ``in_turn(agent.arun())`` returns what :func:`hand_back` would:
    a coroutine, generator, function or :class:`TurnProxy` that enters this
    turn while it runs. Values that are no work come back as they are.
    Raises ``RuntimeError`` outside a resumed turn.
    """
    cell = _current.get()
    if cell is None:
        raise RuntimeError(
            "in_turn() binds work to the resumed turn it is called in, and there is none here: call it in the "
            "body of a resume_guard-ed resume (or in work that runs inside its turn)"
        )
    return work if work.__class__ in PLAIN else hand_back(cell, work)


def _is_future(cls: type) -> bool:
    """``asyncio.isfuture`` of an instance of ``cls``, without importing asyncio."""
    return getattr(cls, "_asyncio_future_blocking", None) is not None


# -- proxies: every operation on an object that is work runs inside the turn ----------------


class TurnProxy:
    """Stands in for an object a guarded resume handed back, so that its work runs inside the turn.

    Made by :func:`hand_back` for an object whose type defines ``__call__``,
    ``__next__``, ``__await__`` or ``__anext__`` (other than a function,
    generator or coroutine, which are wrapped without a proxy). Each proxy
    class is generated once per wrapped type and defines the special methods
    that type defines, so ``callable()``, ``len()``, ``with``, ``async for``
    and the operators work (or fail) as they do on the object. Every
    operation enters the turn, runs on the object, and hands back what comes
    out (the object itself comes back as the proxy).

    ``isinstance`` and ``__class__`` answer as for the object; ``type()`` is
    this class; ``__wrapped__`` is the object itself.
    """

    __slots__ = ("__weakref__", "_sg_cell", "_sg_target")

    def __getattribute__(self, name: str) -> Any:
        target = _get_target(self)
        if name == "__wrapped__":
            return target
        cell = _get_cell(self)
        token = _enter(cell)
        try:
            value = getattr(target, name)
        finally:
            _leave(token)
        return self if value is target else _out(cell, value)

    def __setattr__(self, name: str, value: Any) -> None:
        token = _enter(_get_cell(self))
        try:
            setattr(_get_target(self), name, value)
        finally:
            _leave(token)

    def __delattr__(self, name: str) -> None:
        token = _enter(_get_cell(self))
        try:
            delattr(_get_target(self), name)
        finally:
            _leave(token)

    def __dir__(self) -> list[str]:
        return dir(_get_target(self))


def _always(name: str, run: Callable[..., Any]) -> Callable[..., Any]:
    """A special method every proxy has (``object`` defines it): ``run(target, *args)`` inside the turn."""

    def method(self: TurnProxy, *args: Any) -> Any:
        target, cell = _get_target(self), _get_cell(self)
        token = _enter(cell)
        try:
            result = run(target, *map(_unwrapped, args))
        finally:
            _leave(token)
        return self if result is target else _out(cell, result)

    method.__name__ = method.__qualname__ = name
    return method


for _name, _run in {
    "__repr__": repr,
    "__str__": str,
    "__format__": format,
    "__bool__": bool,
    "__hash__": hash,
    "__eq__": lambda a, b: a == b,
    "__ne__": lambda a, b: a != b,
    "__lt__": lambda a, b: a < b,
    "__le__": lambda a, b: a <= b,
    "__gt__": lambda a, b: a > b,
    "__ge__": lambda a, b: a >= b,
}.items():
    setattr(TurnProxy, _name, _always(_name, _run))

_get_target = TurnProxy._sg_target.__get__  # type: ignore[attr-defined]
_set_target = TurnProxy._sg_target.__set__  # type: ignore[attr-defined]
_get_cell = TurnProxy._sg_cell.__get__  # type: ignore[attr-defined]
_set_cell = TurnProxy._sg_cell.__set__  # type: ignore[attr-defined]


def _unwrapped(value: Any) -> Any:
    """An operand that is a proxy, as its object (``proxy == obj``, ``proxy | other``)."""
    return _get_target(value) if issubclass(type(value), TurnProxy) else value


#: Special methods a proxy class gets when the wrapped type defines them (``__await__`` aside, see below).
_FORWARDED = (
    "__call__", "__next__", "__iter__", "__aiter__", "__anext__", "__aenter__", "__aexit__", "__enter__", "__exit__",
    "__len__", "__length_hint__", "__contains__", "__getitem__", "__setitem__", "__delitem__", "__reversed__",
    "__missing__", "__index__", "__int__", "__float__", "__complex__", "__bytes__", "__fspath__", "__round__",
    "__trunc__", "__floor__", "__ceil__", "__neg__", "__pos__", "__abs__", "__invert__", "__copy__", "__deepcopy__",
    "__sizeof__",
    *(
        f"__{prefix}{name}__"
        for name in ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "divmod", "pow", "lshift", "rshift", "and", "xor", "or")
        for prefix in ("", "r", "i")
        if not (prefix == "i" and name == "divmod")
    ),
)

#: Proxy class of each wrapped type (bounded like PLAIN: past the bound, a class is made per object).
_PROXIES: dict[type, type] = {}
_PROXY_LIMIT = 1024


def _defined(cls: type, name: str) -> Any:
    """``cls``'s own definition of a special method (looked up on its MRO, not its metaclass), or None."""
    for klass in cls.__mro__:
        if klass is object:
            return None
        if name in klass.__dict__:
            return klass.__dict__[name]  # None when the class blocks it (``__call__ = None``)
    return None


def _proxy_class(cls: type) -> type | None:
    """The proxy class for instances of ``cls``, or None when they are no work (decided once per type)."""
    if issubclass(cls, type) or _is_future(cls):
        return None  # classes, and asyncio futures and tasks (their work runs in their own task)
    if not any(_defined(cls, name) is not None for name in _WORK_METHODS):
        return None
    namespace: dict[str, Any] = {"__slots__": (), "__module__": __name__, "__doc__": TurnProxy.__doc__}
    for name in _FORWARDED:
        raw = _defined(cls, name)
        if raw is not None:
            namespace[name] = _forwarder(name, _binder(raw))
    if _defined(cls, "__await__") is not None:
        namespace["__await__"] = _await_forwarder(_binder(_defined(cls, "__await__")))
    proxy = type(f"TurnProxy[{cls.__qualname__}]", (TurnProxy,), namespace)
    if len(_PROXIES) < _PROXY_LIMIT:
        _PROXIES[cls] = proxy
    return proxy


def _binder(raw: Any) -> Callable[..., Any]:
    """How to call a special method found in a class ``__dict__`` on an instance (as the interpreter does)."""
    if isinstance(raw, (types.FunctionType, types.WrapperDescriptorType, types.MethodDescriptorType)):
        return raw  # raw(target, *args): the common case, no binding step
    if hasattr(type(raw), "__get__"):
        return lambda target, *args, **kwargs: raw.__get__(target, type(target))(*args, **kwargs)
    return lambda target, *args, **kwargs: raw(*args, **kwargs)  # a plain callable stored on the class


def _forwarder(name: str, impl: Callable[..., Any]) -> Callable[..., Any]:
    unwrap = name not in ("__call__",)  # a call's arguments go as the caller gave them

    def method(self: TurnProxy, *args: Any, **kwargs: Any) -> Any:
        target, cell = _get_target(self), _get_cell(self)
        token = _enter(cell)
        try:
            result = impl(target, *(map(_unwrapped, args) if unwrap else args), **kwargs)
        finally:
            _leave(token)
        return self if result is target else _out(cell, result)

    method.__name__ = method.__qualname__ = name
    return method


def _await_forwarder(impl: Callable[..., Any]) -> Callable[..., Any]:
    def __await__(self: TurnProxy) -> Generator[Any, Any, Any]:
        target, cell = _get_target(self), _get_cell(self)
        token = _enter(cell)
        try:
            steps = impl(target)
        finally:
            _leave(token)
        return _step_in_turn(cell, steps)

    return __await__


def _step_in_turn(cell: Cell, steps: Iterator[Any]) -> Generator[Any, Any, Any]:
    """Drive the iterator an ``__await__`` returned, one step at a time inside the turn (as ``yield from`` does)."""
    send = getattr(steps, "send", None)
    sent: Any = None
    thrown: BaseException | None = None
    while True:
        token = _enter(cell)
        try:
            if thrown is not None:
                throw = getattr(steps, "throw", None)
                if throw is None:
                    raise thrown
                item = throw(thrown)
            elif sent is None or send is None:
                item = next(steps)
            else:
                item = send(sent)
        except StopIteration as stop:
            return _out(cell, stop.value)
        finally:
            _leave(token)
            thrown = None
        try:
            sent = yield item  # what the event loop gets (a future, None): not work of ours
        except GeneratorExit:
            close = getattr(steps, "close", None)
            if close is not None:
                token = _enter(cell)
                try:
                    close()
                finally:
                    _leave(token)
            raise
        except BaseException as exc:  # noqa: BLE001 - thrown in by the awaiting task: passed on
            thrown, sent = exc, None


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
