"""``guard_tool``: ``tool_guard`` for pydantic-ai's ``Tool`` objects.

Inside an agent guarded by :class:`~summaryguard.plugins.pydantic_ai.GuardResumes`
every tool is checked already (``before_tool_execute``); a guarded ``Tool``
refuses on its own too, in any resumed turn (a ``resume_guard``-ed function
of the user's that runs an unguarded agent, say). The copy's function is the
original under :func:`~summaryguard.guard.tool_guard`, with the tool's
``name`` (the name a ``ToolReturnPart``, and so a drop manifest, records);
pydantic-ai's schema of the tool (built when the tool was) is kept.

Outside a resumed turn each call costs one context-variable read.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from pydantic_ai.tools import Tool

from summaryguard.guard.tools import tool_guard, tool_names

__all__ = ["guard_tool"]


def guard_tool(tool: Any, *, name: str | Iterable[str] | None = None) -> Any:
    """A copy of ``tool`` (a ``pydantic_ai.Tool``) that refuses, in a resumed turn, to re-derive a dropped reference.

    A plain function goes to :func:`~summaryguard.guard.tool_guard`. ``name``
    overrides the name(s) a drop manifest knows the tool by (default: ``tool.name``).
    """
    if not isinstance(tool, Tool):
        if callable(tool):
            return tool_guard(tool, name=name)
        raise TypeError(f"guard_tool() takes a pydantic_ai Tool or a function, got {type(tool).__name__}")
    if getattr(tool.function, "__summaryguard_tool__", None) is not None:
        return tool  # already guarded
    names = tool_names(tool, name if name is not None else tool.name)
    guarded = copy.copy(tool)
    function = tool_guard(tool.function, name=names)
    guarded.function = function
    guarded.function_schema = copy.copy(tool.function_schema)
    guarded.function_schema.function = function
    return guarded
