"""The analyzer's model of smolagents, as data (see ``summaryguard.plugins.framework``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["MODEL"]

MODEL: Mapping[str, Any] = {
    "name": "smolagents",
    "vocabulary": {"tool-decorators": ("smolagents.tool",)},
}
