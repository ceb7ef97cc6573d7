"""The room's reading of what ADK shows the model, against ADK's own context builder (property-based).

``_events.shown_compactions`` and ``visible_raw_events`` restate ADK's rule
(a compaction no other range contains is shown; a raw event inside a shown
range is hidden) so that a check can say what the model still reads. Any
mix of raw events and overlapping, nested or repeated compaction ranges must
give ADK's answer.
"""

from __future__ import annotations

import pytest

pytest.importorskip("google.adk")

from google.adk.apps.compaction import _get_compaction_ranges
from google.adk.events._rewind_events import _apply_rewinds
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions, EventCompaction
from google.adk.flows.llm_flows.context._compaction import _process_compaction_events
from google.genai import types
from hypothesis import given, settings
from hypothesis import strategies as st
from summaryguard.plugins.adk._events import (
    live_events,
    shown_compactions,
    visible_raw_events,
)

_TIMES = st.integers(min_value=0, max_value=12).map(float)


def _raw(ts: float) -> Event:
    return Event(author="user", timestamp=ts, content=types.Content(role="user", parts=[types.Part(text=f"at {ts}")]))


def _compaction(start: float, end: float) -> Event:
    summary = types.Content(role="model", parts=[types.Part(text=f"{start}-{end}")])
    actions = EventActions(compaction=EventCompaction(start_timestamp=start, end_timestamp=end, compacted_content=summary))
    return Event(author="user", timestamp=end + 0.5, actions=actions)


_EVENTS = st.lists(
    st.one_of(_TIMES.map(_raw), st.tuples(_TIMES, _TIMES).map(lambda r: _compaction(min(r), max(r)))),
    max_size=10,
)


@settings(max_examples=60, deadline=None)
@given(_EVENTS)
def test_the_compactions_shown_are_adks(events: list[Event]) -> None:
    assert [i for i, _ in shown_compactions(events)] == [i for i, _, _ in _get_compaction_ranges(events)]


@settings(max_examples=60, deadline=None)
@given(_EVENTS)
def test_the_raw_events_the_model_reads_are_adks(events: list[Event]) -> None:
    built = _process_compaction_events(events)
    shown_raw = [e for e in built if any(e is raw for raw in events)]
    assert sorted(map(id, visible_raw_events(events))) == sorted(map(id, shown_raw))


def _in(invocation: str) -> Event:
    return Event(author="user", invocation_id=invocation, content=types.Content(role="user", parts=[types.Part(text=invocation)]))


def _rewind(invocation: str) -> Event:
    return Event(author="user", invocation_id=f"rewind-{invocation}", actions=EventActions(rewind_before_invocation_id=invocation))


_INVOCATIONS = st.sampled_from(["i1", "i2", "i3", "i4"])


@settings(max_examples=80, deadline=None)
@given(st.lists(st.one_of(_INVOCATIONS.map(_in), _INVOCATIONS.map(_rewind)), max_size=12))
def test_the_events_a_rewind_leaves_are_adks(events: list[Event]) -> None:
    assert list(map(id, live_events(events))) == list(map(id, _apply_rewinds(events)))
