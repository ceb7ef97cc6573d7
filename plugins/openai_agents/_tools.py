"""``guard_tool``: ``tool_guard`` for the Agents SDK's ``FunctionTool`` (``@function_tool``).

The SDK calls a tool through ``FunctionTool.on_invoke_tool``, and turns an
exception raised inside it into text for the model through the tool's
``failure_error_function`` (by default "An error occurred while running the
tool. Please try again."). The guarded copy refuses *before* the invoker runs,
under the tool's ``name`` (the name a ``function_call`` item, and so a drop
manifest, records), and its failure function raises a refusal met inside the
tool instead of formatting it: a refusal never becomes model text. The SDK
then wraps it in a ``UserError``; the guarded runner (``guard_runner``) hands
the caller the ``SummaryReconciliationError`` itself.

Outside a resumed turn each call costs one context-variable read.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Iterable
from typing import Any

from summaryguard.guard.tools import tool_guard, tool_names

from ._runner import enforce, refusal_in

__all__ = ["guard_tool", "is_function_tool"]


def is_function_tool(obj: Any) -> bool:
    """A ``FunctionTool`` by shape: a str name and an ``on_invoke_tool``."""
    return isinstance(getattr(obj, "name", None), str) and callable(getattr(obj, "on_invoke_tool", None)) and hasattr(
        obj, "params_json_schema"
    )


class _GuardedInvoker:
    """``on_invoke_tool`` that refuses first; everything else is the SDK's invoker (its markers and binding)."""

    def __init__(self, inner: Any, names: frozenset[str]) -> None:
        self._inner = inner
        self.__summaryguard_tool__ = names

    async def __call__(self, ctx: Any, input: str) -> Any:
        for name in self.__summaryguard_tool__:
            enforce(name)
        return await self._inner(ctx, input)

    def __agents_bind_function_tool__(self, function_tool: Any) -> _GuardedInvoker:
        bind = getattr(self._inner, "__agents_bind_function_tool__", None)
        return _GuardedInvoker(bind(function_tool) if callable(bind) else self._inner, self.__summaryguard_tool__)

    def __getattr__(self, name: str) -> Any:
        if name == "_inner":  # not set yet (a copy under construction): no recursion
            raise AttributeError(name)
        return getattr(self._inner, name)


def guard_tool(tool: Any, *, name: str | Iterable[str] | None = None) -> Any:
    """A copy of ``tool`` that refuses, in a resumed turn, to re-derive a reference a compaction dropped.

    ``tool`` is a ``FunctionTool`` (what ``@function_tool`` returns); a plain
    function goes to :func:`~summaryguard.guard.tool_guard`. ``name``
    overrides the name(s) a drop manifest knows the tool by (default: ``tool.name``).
    """
    if not is_function_tool(tool):
        if callable(tool):
            return tool_guard(tool, name=name)
        raise TypeError(f"guard_tool() takes a FunctionTool or a function, got {type(tool).__name__}")
    if isinstance(tool.on_invoke_tool, _GuardedInvoker):
        return tool  # already guarded
    from agents.tool import (
        resolve_function_tool_failure_error_function,
        set_function_tool_failure_error_function,
    )

    names = tool_names(tool, name if name is not None else tool.name)
    guarded = copy.copy(tool)  # the SDK's copy rebinds the invoker's failure policy to the copy
    policy = resolve_function_tool_failure_error_function(guarded)

    async def failure(ctx: Any, error: Exception) -> Any:
        refusal = refusal_in(error)
        if refusal is not None:
            raise refusal
        if policy is None:
            raise error
        result = policy(ctx, error)
        return await result if inspect.isawaitable(result) else result

    set_function_tool_failure_error_function(guarded, failure)
    guarded.on_invoke_tool = _GuardedInvoker(guarded.on_invoke_tool, names)
    return guarded
