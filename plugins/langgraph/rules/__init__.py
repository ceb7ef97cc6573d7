"""The LangGraph room's own lint rules (registered through the room's plugin).

SG203 keeps its code from before the room existed; a new rule of this room takes
the room's own prefix.
"""

from __future__ import annotations

__all__ = ["rules"]


def rules() -> list[type]:
    """The rule classes (imported on demand: they need the analyzer, which needs libcst)."""
    from .sg203_tool_call_before_interrupt import ToolCallBeforeInterrupt

    return [ToolCallBeforeInterrupt]

