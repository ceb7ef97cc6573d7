"""``tool_guard``: a tool may not re-derive what the summary dropped.

Inside a resumed turn, calling a tool that produced a reference listed in the
drop manifest would fetch a *new* fact from a world that has moved on and pass
it off as the old one. The guard refuses the call whatever its arguments are
now (new arguments are still a re-derivation), unless the divergence for that
reference was accepted on record (:func:`accept_divergence`).

Outside a resumed turn the wrapper costs one context-variable read.
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable, Iterable
from typing import Any, NoReturn, TypeVar, overload

from .check import notify
from .errors import ReconciliationKind, SummaryReconciliationError
from .turn import Cell, ResumedTurn, _current, turn_of

__all__ = ["tool_guard", "tool_names"]

F = TypeVar("F", bound=Callable[..., Any])


@overload
def tool_guard(fn: F, /) -> F: ...


@overload
def tool_guard(*, name: str | Iterable[str] | None = None) -> Callable[[F], F]: ...


def tool_guard(fn: Any = None, /, *, name: str | Iterable[str] | None = None) -> Any:
    """Wrap a tool (a sync or async function, or a LangChain tool) so it cannot re-derive a dropped reference.

    A drop-manifest entry names the tool that produced it; the entry matches
    this tool when it equals ``name`` (one name or several), or, when no name
    is given, the function's ``__name__`` or ``module.qualname``.
    """
    if fn is None:
        return functools.partial(tool_guard, name=name)
    if not inspect.isroutine(fn) and _is_langchain_tool(fn):
        # A LangChain tool object (``@tool`` gives a StructuredTool): wrap its
        # run methods, so invoke/ainvoke and agents' tool nodes are guarded too.
        from .langgraph import guard_tool

        return guard_tool(fn, name=name)
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


def _is_langchain_tool(obj: Any) -> bool:
    """A BaseTool by shape (no langchain import): a str name and run/invoke methods."""
    return isinstance(getattr(obj, "name", None), str) and all(
        callable(getattr(obj, attr, None)) for attr in ("_run", "invoke", "ainvoke")
    )


def tool_names(fn: Any, name: str | Iterable[str] | None = None) -> frozenset[str]:
    """The names under which a drop manifest may record this tool."""
    if name is not None:
        names = frozenset([name] if isinstance(name, str) else name)
        if not names or not all(isinstance(n, str) and n for n in names):
            raise TypeError("tool_guard(name=...) takes a non-empty name or names")
        return names
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
    graph = sys.modules.get("summaryguard.plugins.langgraph._graph")
    raise graph.bubbling(error) if graph is not None else error
