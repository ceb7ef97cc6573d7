"""``guard_tool``: ``tool_guard`` for LangChain tools.

LangGraph's ``ToolNode`` and agents call a tool through ``BaseTool.invoke`` /
``ainvoke``, which end in the tool's ``_run`` / ``_arun``. The guard wraps
exactly those two methods on a copy of the tool, under the tool's ``name``
(the name a ``ToolMessage`` and so a drop manifest record), so the tool keeps
its type, schema and callbacks, and ``bind_tools`` / ``ToolNode`` take it as
before. Outside a resumed turn each call costs two context-variable reads.

In a run resumed through :func:`guard_graph`, the tool also refuses to
re-derive a reference that a summarization dropped *during* that run.
"""

from __future__ import annotations

import copy
import functools
import inspect
from collections.abc import Iterable
from typing import Any

from summaryguard.guard.tools import tool_guard

__all__ = ["guard_tool", "is_langchain_tool"]


def is_langchain_tool(obj: Any) -> bool:
    """A BaseTool by shape (no langchain import): a str name and run/invoke methods."""
    return isinstance(getattr(obj, "name", None), str) and all(
        callable(getattr(obj, attr, None)) for attr in ("_run", "invoke", "ainvoke")
    )


def guard_tool(tool: Any, *, name: str | Iterable[str] | None = None) -> Any:
    """A copy of ``tool`` that refuses, in a resumed turn, to re-derive a reference the summary dropped.

    ``tool`` is a LangChain ``BaseTool`` (``@tool`` functions are
    ``StructuredTool`` objects); a plain function is handed to
    :func:`~summaryguard.guard.tool_guard`. ``name`` overrides the name(s) a
    drop manifest knows the tool by (default: ``tool.name``).
    """
    if not is_langchain_tool(tool):
        if callable(tool):
            return tool_guard(tool, name=name)
        raise TypeError(f"guard_tool() takes a LangChain tool or a function, got {type(tool).__name__}")
    if getattr(tool._run, "__summaryguard_tool__", None) is not None:
        return tool  # already guarded
    names = name if name is not None else tool.name
    guarded = tool.model_copy() if hasattr(tool, "model_copy") else copy.copy(tool)
    # Bound methods of the copy, wrapped with their signatures intact: BaseTool
    # inspects _run for ``run_manager`` and ``config`` parameters.
    object.__setattr__(guarded, "_run", _guard_method(guarded._run, names))
    object.__setattr__(guarded, "_arun", _guard_method(guarded._arun, names))
    return guarded


def _guard_method(method: Any, name: str | Iterable[str]) -> Any:
    """``tool_guard`` (drops before the resume) plus the drops made during the guarded run."""
    inner = tool_guard(method, name=name)
    names = inner.__summaryguard_tool__
    # Imported here, not above: the plugin imports this module to ask is_langchain_tool
    # of every tool object tool_guard meets, and the graph module is not needed for that.
    from ._graph import current_run as run_of

    if inspect.iscoroutinefunction(method):

        @functools.wraps(method)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            run = run_of()
            if run is not None and run.dropped:
                run.enforce(names)
            return await inner(*args, **kwargs)

        async_wrapper.__summaryguard_tool__ = names  # type: ignore[attr-defined]
        return async_wrapper

    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        run = run_of()
        if run is not None and run.dropped:
            run.enforce(names)
        return inner(*args, **kwargs)

    wrapper.__summaryguard_tool__ = names  # type: ignore[attr-defined]
    return wrapper

