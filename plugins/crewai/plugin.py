"""This room's plugin: it hands the room's analyzer model over, as data."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from summaryguard.plugins.markers import hookimpl


@hookimpl
def summaryguard_frameworks() -> Iterable[Mapping[str, Any]]:
    from .model import MODEL

    return [MODEL]
