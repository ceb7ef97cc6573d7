"""The analyzer's model of the OpenHands SDK, as data (see ``summaryguard.plugins.framework``).

A condenser folds a ``View`` of the conversation's events into a ``Condensation``
(``forgotten_event_ids``, ``summary``, ``summary_offset``). The SDK never keeps the
summary apart: ``View.from_events`` replays the event log, and each
``Condensation`` it meets drops the forgotten events and inserts a
``CondensationSummaryEvent`` holding its ``summary`` at ``summary_offset``. So any
``View`` after the first condensation holds the previous summary among its events,
and a condenser that folds a range of it (``view[start:end]``, ``view.events[n:]``)
re-summarizes that summary: the fact ``summary_views`` states.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["MODEL"]

_VIEWS = ("openhands.sdk.context.view.View", "openhands.sdk.context.view.view.View")

MODEL: Mapping[str, Any] = {
    "name": "openhands",
    # the class under both import paths, and its factory from an event log
    "summary_views": (*_VIEWS, *(f"{view}.from_events" for view in _VIEWS)),
    "words": ("openhands",),
}
