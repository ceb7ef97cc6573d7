"""``guard_tool``: ``tool_guard`` for an ADK tool object (``FunctionTool`` and every ``BaseTool``).

ADK calls a tool through ``await tool.run_async(args=..., tool_context=...)``.
The guarded copy refuses *before* that runs, under the tool's ``name`` (the
name its ``function_response`` parts, and so a drop manifest, record),
whatever runner drives it and whether or not summaryguard's plugin is in the
app. The refusal is raised, never returned as the tool's result; in a run of
the guarded runner it reaches the caller as ``SummaryReconciliationError``.

A plain function goes to :func:`~summaryguard.guard.tool_guard` (ADK wraps it
in a ``FunctionTool`` and reads its signature through ``functools.wraps``).
Outside a resumed turn each call costs one context-variable read.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from google.adk.tools.base_tool import BaseTool
from summaryguard.guard.tools import tool_guard, tool_names

from ._refusals import enforce

__all__ = ["guard_tool"]


def guard_tool(tool: Any, *, name: str | Iterable[str] | None = None) -> Any:
    """A copy of ``tool`` that refuses, in a resumed turn, to re-derive a reference a compaction dropped.

    ``name`` overrides the name(s) a drop manifest knows the tool by (default: ``tool.name``).
    """
    if not isinstance(tool, BaseTool):
        if callable(tool):
            return tool_guard(tool, name=name)
        raise TypeError(f"guard_tool() takes an ADK BaseTool or a function, got {type(tool).__name__}")
    if getattr(tool, "__summaryguard_tool__", None):
        return tool  # already guarded
    names = tool_names(tool, name if name is not None else tool.name)
    guarded = copy.copy(tool)
    run = type(tool).run_async.__get__(guarded)

    async def run_async(*, args: dict[str, Any], tool_context: Any) -> Any:
        for known in names:
            enforce(known)
        return await run(args=args, tool_context=tool_context)

    guarded.run_async = run_async
    guarded.__summaryguard_tool__ = names
    return guarded
