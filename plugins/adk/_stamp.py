"""``StampedSummarizer``: every ADK compaction carries a generation, a drop manifest and a digest.

ADK compacts through the app's ``EventsCompactionConfig.summarizer`` (a
``BaseEventsSummarizer``; ``LlmEventSummarizer`` by default) and appends the
event it returns, whose ``actions.compaction`` holds the summary. The stamped
summarizer runs the user's summarizer unchanged and writes the stamp into
that same event's ``custom_metadata`` before ADK appends it, so the session
holds summary and stamp in one write (a crash leaves both or neither):

* ``generation`` is the previous compaction's plus one, read from the
  session (the summarizer is handed only the events to fold: the session
  comes from summaryguard's ADK plugin, which sees every run start);
* the drop manifest lists every reference of the folded events (a tool
  result, see :func:`~._events.default_refs`) that no summary the model
  will be shown keeps verbatim. ``LlmEventSummarizer`` cuts each tool
  response to 2000 characters before the model reads it: a handle past the
  cut cannot be in the summary, and lands in the manifest like any other drop;
* a summary cut short (the model stopped for ``MAX_TOKENS``, answered with an
  error or with a streamed chunk, which ``LlmEventSummarizer`` takes for the
  whole answer, or returned no text), or folded on top of a partial one, is stamped
  ``partial``: a resume from it fails closed until a controller accepts it.

It refuses to extend a compaction it cannot vouch for (one with no stamp, or
whose text no longer matches its stamp). ADK logs a summarizer's exception
and goes on with the uncompacted history, so a refusal here means the session
is not compacted, never that an unstamped summary is made.
"""

from __future__ import annotations

import bisect
import contextvars
import copy
import dataclasses
from collections.abc import AsyncGenerator, Sequence
from typing import Any

from google.adk.apps.base_events_summarizer import BaseEventsSummarizer
from google.adk.apps.llm_event_summarizer import LlmEventSummarizer
from google.adk.models.base_llm import BaseLlm
from summaryguard.guard.compactor import Compactor, Turn
from summaryguard.guard.errors import ReconciliationKind, SummaryReconciliationError
from summaryguard.guard.model import Summary
from summaryguard.guard.turn import current_turn

from ._events import (
    STAMP_KEY,
    Extractor,
    compactions,
    content_text,
    default_refs,
    event_refs,
    live_events,
    make_stamp,
    read_stamp,
    shown_compactions,
    text_digest,
)

__all__ = ["StampedSummarizer", "current_session", "enter_session", "stamp_compactions"]

#: The session of the run in progress, set by summaryguard's ADK plugin when the run starts.
_session: contextvars.ContextVar[Any] = contextvars.ContextVar("summaryguard_adk_session", default=None)


def enter_session(session: Any) -> None:
    """Called by the plugin as a run starts: the session a compaction in this run folds."""
    _session.set(session)


def current_session() -> Any:
    return _session.get()


class _Watch:
    """What the summarizer's model answered last (for a summary cut short)."""

    __slots__ = ("chunk", "error", "finish_reason")

    def __init__(self) -> None:
        self.finish_reason: Any = None
        self.error: str | None = None
        self.chunk = False

    def saw(self, response: Any) -> None:
        # Every response, a streamed chunk too: LlmEventSummarizer keeps the first one with content
        # and stops reading, so the last one seen is the one whose text became the summary.
        self.chunk = bool(getattr(response, "partial", False))
        self.finish_reason = getattr(response, "finish_reason", None)
        code = getattr(response, "error_code", None)
        self.error = f"{code}: {getattr(response, 'error_message', None) or ''}".strip(": ") if code else None

    def cut_short(self) -> str | None:
        if self.error:
            return f"the summarizer's model answered with an error ({self.error})"
        if self.chunk:
            return "the summary is a streamed chunk of the summarizer's model's answer (partial=True), not the whole of it"
        reason = self.finish_reason
        name = getattr(reason, "name", None) or (str(reason) if reason is not None else None)
        if name is not None and name not in ("STOP", "FINISH_REASON_UNSPECIFIED"):
            return f"the summarizer's model stopped before the summary was finished (finish_reason {name})"
        return None


_watch: contextvars.ContextVar[_Watch | None] = contextvars.ContextVar("summaryguard_adk_watch", default=None)


class _WatchedLlm(BaseLlm):
    """The summarizer's model, telling the stamp how its last answer ended."""

    inner: BaseLlm

    async def generate_content_async(self, llm_request: Any, stream: bool = False) -> AsyncGenerator[Any, None]:
        watch = _watch.get()
        async for response in self.inner.generate_content_async(llm_request, stream=stream):
            if watch is not None:
                watch.saw(response)
            yield response


def _watched(summarizer: BaseEventsSummarizer) -> BaseEventsSummarizer:
    """``LlmEventSummarizer`` with its model watched (a copy: the user's object is left as it is)."""
    llm = getattr(summarizer, "_llm", None)
    if not isinstance(summarizer, LlmEventSummarizer) or not isinstance(llm, BaseLlm):
        return summarizer
    watched = copy.copy(summarizer)
    watched._llm = _WatchedLlm(model=llm.model, inner=llm)
    return watched


class StampedSummarizer(BaseEventsSummarizer):
    """The user's ``BaseEventsSummarizer``, whose every compaction event carries a summaryguard stamp.

    ``refs`` extracts the references a tool response holds (``refs(tool_name,
    response)``; default: :func:`~._events.default_refs`).
    """

    def __init__(self, summarizer: BaseEventsSummarizer, *, refs: Extractor | None = None) -> None:
        if isinstance(summarizer, StampedSummarizer):
            summarizer = summarizer.inner
        if not isinstance(summarizer, BaseEventsSummarizer):
            raise TypeError(f"StampedSummarizer() wraps a BaseEventsSummarizer, got {type(summarizer).__name__}")
        if refs is not None and not callable(refs):
            raise TypeError(f"StampedSummarizer(refs=...) takes a function (tool, response) -> references, got {type(refs).__name__}")
        self.inner = summarizer
        self._run = _watched(summarizer)
        self._extract: Extractor = refs or default_refs

    async def maybe_summarize_events(self, *, events: list[Any]) -> Any:
        session = _session.get()
        if session is None:
            raise RuntimeError(
                "StampedSummarizer needs summaryguard's ADK plugin in the app (use stamp_compactions(app)): "
                "without the session it cannot say which generation it extends; the history stays uncompacted"
            )
        history = list(getattr(session, "events", None) or ())
        known = {getattr(e, "id", None) for e in history}
        if events and not any(getattr(e, "id", None) in known for e in events):
            raise RuntimeError(
                "StampedSummarizer was handed events of another session than the run's (a runner built before "
                "stamp_compactions(app) does not have summaryguard's plugin): the history stays uncompacted"
            )
        history = live_events(history)  # as ADK compacts and prompts: without what a rewind annulled
        previous = _previous(history, session)  # refuses before the summarizer's model runs
        watch = _Watch()
        token = _watch.set(watch)
        try:
            event = await self._run.maybe_summarize_events(events=events)
        finally:
            _watch.reset(token)
        compaction = getattr(getattr(event, "actions", None), "compaction", None)
        if event is None or compaction is None:
            return event  # nothing compacted
        text = content_text(compaction.compacted_content)
        summary = self._stamp(previous, history, events, event, text)
        note = watch.cut_short() or (None if text.strip() else "the summarizer returned no summary text")
        if note is None and previous is not None and previous.partial:
            note = f"it extends generation {previous.generation}, which was partial"
        if note is not None:
            summary = dataclasses.replace(summary, partial=True)
        event.custom_metadata = {**(event.custom_metadata or {}), STAMP_KEY: make_stamp(summary, text, note)}
        turn = current_turn()
        if turn is not None:
            turn.add_dropped(summary.drop_manifest)  # lost to the rest of this resumed run too
        return event

    def _stamp(self, previous: Summary | None, history: list[Any], events: Sequence[Any], event: Any, text: str) -> Summary:
        where = {getattr(e, "id", None): i for i, e in enumerate(history)}
        # What the model will no longer read raw: the events handed to the summarizer, and every raw
        # event inside the range the compaction claims (a summarizer may claim more than it was shown).
        compaction = event.actions.compaction
        start, end = compaction.start_timestamp, compaction.end_timestamp
        folded_ids = {getattr(e, "id", None) for e in events}
        claimed = [
            e for e in history
            if getattr(e, "id", None) not in folded_ids
            and getattr(getattr(e, "actions", None), "compaction", None) is None
            and isinstance(getattr(e, "timestamp", None), (int, float)) and start <= e.timestamp <= end
        ]
        stamps = sorted(t for e in history if isinstance(t := getattr(e, "timestamp", None), (int, float)))

        def index_of(folded: Any) -> int:
            # an event of the session: its position; one made for the summarizer (ADK's seed of the
            # previous summary): where its timestamp falls
            index = where.get(getattr(folded, "id", None))
            return index if index is not None else bisect.bisect_left(stamps, getattr(folded, "timestamp", 0.0) or 0.0)

        turns = sorted(
            (
                Turn(index=index_of(folded), content=content_text(getattr(folded, "content", None)),
                     refs=tuple(event_refs(folded, self._extract)))
                for folded in [*events, *claimed]
            ),
            key=lambda turn: turn.index,
        )
        # What the model will be shown of the summaries once this one is appended: its text,
        # and each earlier summary that no range contains (ADK keeps partly overlapping ones).
        shown = [
            text if e is event else content_text(e.actions.compaction.compacted_content)
            for _, e in shown_compactions([*history, event])
        ]
        return Compactor._stamp(previous, tuple(turns), "\n".join(shown))


def _previous(history: list[Any], session: Any) -> Summary | None:
    """The stamped summary this compaction extends (None for a first one); refuses one it cannot vouch for."""
    found = compactions(history)
    if not found:
        return None
    index, latest = found[-1]
    stamp = read_stamp(latest)
    text = content_text(latest.actions.compaction.compacted_content)
    if stamp is not None and stamp.summary_digest == text_digest(text):
        return stamp.summary
    problem = (
        "carries no summaryguard stamp (it was made by a summarizer other than StampedSummarizer)"
        if stamp is None
        else "no longer holds the summary its stamp describes"
    )
    raise SummaryReconciliationError(
        stamp.summary.generation if stamp is not None else None,
        len(history),
        "",
        f"session {getattr(session, 'id', '?')!r}: compaction event {index} {problem}; refusing to extend it: "
        "summarizing a summary of unknown provenance compounds the loss",
        kind=ReconciliationKind.GENERATION_MISMATCH,
        details={"session_id": getattr(session, "id", None)},
    )


def stamp_compactions(app: Any, *, refs: Extractor | None = None) -> Any:
    """Stamp every compaction of ``app`` (an ADK ``App`` with ``events_compaction_config``); returns the app.

    The app's summarizer (ADK's default ``LlmEventSummarizer`` over the root
    agent's model when none is set) is wrapped in :class:`StampedSummarizer`,
    and summaryguard's ADK plugin is put first among the app's plugins.
    """
    from ._plugin import SummaryGuardPlugin, install

    config = getattr(app, "events_compaction_config", None)
    if config is None:
        raise TypeError(
            "stamp_compactions(app): the app has no events_compaction_config, so nothing compacts; "
            "build it with App(..., events_compaction_config=EventsCompactionConfig(...))"
        )
    summarizer = config.summarizer
    if not isinstance(summarizer, StampedSummarizer):
        if summarizer is None:
            model = getattr(app.root_agent, "canonical_model", None)
            if not isinstance(model, BaseLlm):
                raise TypeError(
                    "stamp_compactions(app): no summarizer is set and the root agent has no model to summarize "
                    "with; set EventsCompactionConfig(summarizer=...)"
                )
            summarizer = LlmEventSummarizer(llm=model)  # ADK's own default
        config.summarizer = StampedSummarizer(summarizer, refs=refs)
    elif refs is not None:
        config.summarizer = StampedSummarizer(summarizer.inner, refs=refs)
    app.plugins[:] = install(list(app.plugins), SummaryGuardPlugin)
    return app
