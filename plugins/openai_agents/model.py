"""The analyzer's model of the OpenAI Agents SDK, as data (see ``summaryguard.plugins.framework``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["MODEL"]

MODEL: Mapping[str, Any] = {
    "name": "openai-agents",
    "vocabulary": {
        # ``@function_tool`` makes a function a tool the agent calls
        "tool-decorators": ("agents.function_tool", "agents.tool.function_tool"),
    },
}
