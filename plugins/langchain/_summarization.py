"""``StampedSummarization``: LangChain's ``SummarizationMiddleware`` that stamps every summary it writes.

The middleware folds the oldest messages into one summary message and
records nothing of what the fold lost. This subclass runs it unchanged and
adds, *in the same state update*, the stamp (generation, drop manifest, digest
of the summary text) under the state key ``summaryguard`` that its
``state_schema`` declares, so LangGraph writes summary and stamp in one
checkpoint: a crash leaves both or neither.

The middleware's two fallback texts ("No previous conversation history.",
"Previous conversation was too long to summarize.") are no summary of the
folded turns: such a stamp is ``partial``, and a resume from it fails closed
(``partial-summary``) until a controller accepts it. A summary folded on top
of a partial one stays partial: what the fallback folded was never summarized.

It refuses to extend a summary it cannot vouch for (a summary message with no
stamp, or one that no longer matches its stamp): summarizing a summary of
unknown provenance compounds a loss nobody recorded.
"""

from __future__ import annotations

import contextvars
import dataclasses
from collections.abc import Mapping
from typing import Any

from langchain.agents.middleware import AgentState, SummarizationMiddleware
from typing_extensions import NotRequired

from summaryguard.guard.compactor import Compactor, Turn
from summaryguard.guard.model import Summary
from summaryguard.plugins.langgraph._graph import current_run
from summaryguard.plugins.langgraph._refs import Extractor, message_text, register_extractor, tool_message_refs
from summaryguard.plugins.langgraph._stamp import adopts_unstamped
from summaryguard.plugins.langgraph._state import MESSAGES_KEY, STAMP_KEY, make_stamp, read_stamp

from ._summary import LAYOUT, is_summary_message, summary_message

__all__ = ["StampedSummarization", "StampState"]


class StampState(AgentState):
    """The agent state plus the channel the stamp lives in (checkpointed with the messages)."""

    summaryguard: NotRequired[dict[str, Any]]


#: Why the summary being built is a fallback text (set while the parent middleware runs).
_fallback: contextvars.ContextVar[str | None] = contextvars.ContextVar("summaryguard_lc_fallback", default=None)


class StampedSummarization(SummarizationMiddleware):
    """``SummarizationMiddleware`` (same arguments) whose every summary carries a summaryguard stamp.

    ``refs`` extracts the references a message holds (default: a tool result
    is one reference named after its tool, as in the LangGraph room).
    """

    state_schema = StampState

    def __init__(self, *args: Any, refs: Extractor | None = None, **kwargs: Any) -> None:
        if refs is not None and not callable(refs):
            raise TypeError(f"StampedSummarization(refs=...) takes a function message -> references, got {type(refs).__name__}")
        super().__init__(*args, **kwargs)
        self._extract: Extractor = refs or tool_message_refs
        self._extractor = register_extractor(self._extract)

    # -- the parent's steps, observed -----------------------------------------------------------

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        token = _fallback.set(None)
        try:
            update = super().before_model(state, runtime)
            fallback = _fallback.get()
        finally:
            _fallback.reset(token)
        return self._stamped(state, update, fallback)

    async def abefore_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        token = _fallback.set(None)
        try:
            update = await super().abefore_model(state, runtime)
            fallback = _fallback.get()
        finally:
            _fallback.reset(token)
        return self._stamped(state, update, fallback)

    def _create_summary(self, messages_to_summarize: list[Any]) -> str:
        if not messages_to_summarize:
            _fallback.set("there was no history to summarize")
        return super()._create_summary(messages_to_summarize)

    async def _acreate_summary(self, messages_to_summarize: list[Any]) -> str:
        if not messages_to_summarize:
            _fallback.set("there was no history to summarize")
        return await super()._acreate_summary(messages_to_summarize)

    def _trim_messages_for_summary(self, messages: list[Any]) -> list[Any]:
        trimmed = super()._trim_messages_for_summary(messages)
        if not trimmed:
            _fallback.set("the history was too long to summarize")
        return trimmed

    # -- the stamp --------------------------------------------------------------------------------

    def _stamped(self, state: Any, update: Any, fallback: str | None) -> Any:
        if not isinstance(update, Mapping):
            return update
        new_messages = update.get(MESSAGES_KEY) or []
        message = next((m for m in new_messages if is_summary_message(m)), None)
        if message is None:
            return update
        values: Mapping[str, Any] = state if isinstance(state, Mapping) else {}
        messages = values.get(MESSAGES_KEY) or []
        previous = self._previous(values)
        old = summary_message(messages)
        kept = {getattr(m, "id", None) for m in new_messages if m is not message} - {None}
        turns = tuple(
            Turn(index=i, content=message_text(m), refs=tuple(self._extract(m)))
            for i, m in enumerate(messages)
            if m is not old and getattr(m, "id", None) not in kept
        )
        text = message.content if isinstance(message.content, str) else str(message.content)
        # The Compactor's stamping rules, shared so every path drops the same way.
        summary = Compactor._stamp(previous, turns, text)
        if fallback is not None or (previous is not None and previous.partial):
            summary = dataclasses.replace(summary, partial=True)
        run = current_run()
        if run is not None:
            run.add_drops(summary.drop_manifest)  # lost to the rest of this resumed run too
        return {**update, STAMP_KEY: make_stamp(summary, text, self._extractor, MESSAGES_KEY)}

    @staticmethod
    def _previous(values: Mapping[str, Any]) -> Summary | None:
        """The stamped summary this fold extends (None for a first one, or an adopted one)."""
        stamp = values.get(STAMP_KEY)
        old = summary_message(values.get(MESSAGES_KEY))
        if old is None and stamp is None:
            return None
        if adopts_unstamped(LAYOUT.unstamped_note(values), stamp):
            return None
        text = old.content if old is not None and isinstance(old.content, str) else ""
        summary, _ = read_stamp(stamp, text)
        return summary
