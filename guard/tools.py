"""``tool_guard``: a tool may not re-derive what the summary dropped.

Inside a resumed turn, calling a tool that produced a reference listed in the
drop manifest would fetch a *new* fact from a world that has moved on and pass
it off as the old one. The guard refuses the call whatever its arguments are
now (new arguments are still a re-derivation), unless the divergence for that
reference was accepted on record (:func:`accept_divergence`).

Outside a resumed turn the wrapper costs one context-variable read.

This module names no framework. A framework's tool object (not a function) is
guarded by the plugin that knows it (hook ``summaryguard_wrap_tool``), and a
framework whose runs turn a tool's exception into a message for the model
registers how a refusal must travel through them
(:func:`register_refusal_escalation`). Framework rooms import this module,
never the other way round.
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable, Iterable
from typing import Any, NoReturn, TypeVar, overload

from .check import notify
from .errors import ReconciliationKind, SummaryReconciliationError
from .turn import Cell, ResumedTurn, _current, turn_of

__all__ = ["register_refusal_escalation", "tool_guard", "tool_names"]

F = TypeVar("F", bound=Callable[..., Any])


@overload
def tool_guard(fn: F, /) -> F: ...


@overload
def tool_guard(*, name: str | Iterable[str] | None = None) -> Callable[[F], F]: ...


def tool_guard(fn: Any = None, /, *, name: str | Iterable[str] | None = None) -> Any:
    """Wrap a tool (a sync or async function, or a framework's tool object) so it cannot re-derive a dropped reference.

    A drop-manifest entry names the tool that produced it; the entry matches
    this tool when it equals ``name`` (one name or several), or, when no name
    is given, the function's ``__name__`` or ``module.qualname``. A tool object
    that is not a function goes to the plugins first (``summaryguard_wrap_tool``:
    the framework's plugin guards its run methods, so the framework's own way
    of calling it is guarded too).
    """
    if fn is None:
        return functools.partial(tool_guard, name=name)
    if isinstance(fn, (staticmethod, classmethod)):
        # Placed above @staticmethod / @classmethod: guard the function, keep the binding.
        return type(fn)(tool_guard(fn.__func__, name=name))
    if not inspect.isroutine(fn):
        guarded = _wrap_tool_object(fn, name)
        if guarded is not None:
            return guarded
    if not callable(fn):
        raise TypeError(f"tool_guard wraps a callable, got {type(fn).__name__}")
    names = tool_names(fn, name)
    current = _current

    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            cell = current.get()
            if cell is not None:
                _enforce(cell, names)
            return await fn(*args, **kwargs)

        async_wrapper.__summaryguard_tool__ = names  # type: ignore[attr-defined]
        return async_wrapper

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        cell = current.get()
        if cell is not None:
            _enforce(cell, names)
        return fn(*args, **kwargs)

    wrapper.__summaryguard_tool__ = names  # type: ignore[attr-defined]
    return wrapper


def _wrap_tool_object(tool: Any, name: str | Iterable[str] | None) -> Any:
    """A plugin's guarded version of a tool object, or None (at decoration only: the plugin manager loads lazily)."""
    from summaryguard.plugins.manager import get_plugin_manager

    return get_plugin_manager().hook.summaryguard_wrap_tool(tool=tool, name=name)


def tool_names(fn: Any, name: str | Iterable[str] | None = None) -> frozenset[str]:
    """The names under which a drop manifest may record this tool."""
    if name is not None:
        names = frozenset([name] if isinstance(name, str) else name)
        if not names or not all(isinstance(n, str) and n for n in names):
            raise TypeError("tool_guard(name=...) takes a non-empty name or names")
        return names
    while isinstance(fn, functools.partial):  # a tool with arguments bound is still that tool
        fn = fn.func
    short = getattr(fn, "__name__", None) or type(fn).__name__
    qual = getattr(fn, "__qualname__", short)
    module = getattr(fn, "__module__", None)
    return frozenset(n for n in (short, f"{module}.{qual}" if module else None) if n)


def _enforce(cell: Cell, names: frozenset[str]) -> None:
    turn = turn_of(cell)
    by_tool = turn.dropped_by_tool()
    if not by_tool:
        return
    for tool in names:
        for entry in by_tool.get(tool, ()):
            ref = entry.ref
            if turn.is_accepted(ref):
                continue
            refuse_rederivation(turn, tool, entry, "which the summary dropped; calling it again after a resume")


def refuse_rederivation(turn: ResumedTurn, tool: str, entry: Any, where: str) -> NoReturn:
    """Tell the observers, then raise the ``rederivation`` error for ``entry``.

    ``where`` completes "tool T produced R, ..." with what dropped it.
    """
    error = SummaryReconciliationError(
        turn.summary_generation,
        turn.checkpoint_turn,
        entry.ref,
        f"tool {tool!r} produced {entry.ref!r}, {where} re-derives a new fact instead of recovering the old one",
        kind=ReconciliationKind.REDERIVATION,
        details={"tool": tool, "last_known": entry.last_known},
    )
    notify(error, turn.checkpoint)
    raise _escalated(error)


RefusalEscalation = Callable[[SummaryReconciliationError], SummaryReconciliationError]

_escalations_lock = threading.Lock()
#: Replaced as a whole on registration, so a refusal reads it without the lock.
_escalations: tuple[RefusalEscalation, ...] = ()


def register_refusal_escalation(escalate: RefusalEscalation) -> None:
    """Let a framework decide how a refusal travels through its runs.

    Some frameworks turn a tool's exception into a message for the model and
    go on (a tool node told to handle tool errors, say), which would hide a
    refusal from the code that resumed. ``escalate(error)``
    returns the exception to raise instead, one the framework lets through (a
    subclass of :class:`SummaryReconciliationError`, so callers still catch
    it), or ``error`` itself when the refusal happens outside the framework's
    runs. The escalations are asked in registration order and the first that
    answers with another exception wins.

    A framework room registers when the module that starts its runs is
    imported; registering a function with the same module and qualified name
    again replaces the earlier one (a reloaded module).
    """
    global _escalations
    if not callable(escalate):
        raise TypeError(f"register_refusal_escalation() takes a function error -> error, got {type(escalate).__name__}")
    key = _escalation_key(escalate)
    with _escalations_lock:
        _escalations = (*(e for e in _escalations if _escalation_key(e) != key), escalate)


def _escalation_key(escalate: RefusalEscalation) -> tuple[str | None, str]:
    return getattr(escalate, "__module__", None), getattr(escalate, "__qualname__", None) or repr(escalate)


def _escalated(error: SummaryReconciliationError) -> SummaryReconciliationError:
    for escalate in _escalations:
        raised = escalate(error)
        if raised is not error:
            return raised
    return error
