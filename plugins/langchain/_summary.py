"""Where a LangChain agent keeps its summary and summaryguard's stamp, read for the LangGraph guard.

``SummarizationMiddleware`` replaces the folded messages with one
``HumanMessage`` marked ``additional_kwargs["lc_source"] == "summarization"``;
:class:`StampedSummarization` writes the stamp under the state key
``summaryguard`` in the same update, so LangGraph checkpoints the two together.
The stamp is the LangGraph room's (:func:`~summaryguard.plugins.langgraph._state.make_stamp`):
a :class:`~summaryguard.guard.Summary` without its text, plus the SHA-256 of the
summary message's text, so a summary message replaced behind the stamp's back
no longer matches it.

This module is a *layout* of the LangGraph room (``register_layout``): the
graph guard, its adapters and its observer read an agent's state through it,
so nothing of the guard is copied here. Messages are read by duck typing;
nothing here imports LangChain.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from summaryguard.plugins.langgraph._refs import DEFAULT_EXTRACTOR, lookup_extractor
from summaryguard.plugins.langgraph._state import (
    MESSAGES_KEY,
    STAMP_KEY,
    VisibleRefs,
    read_stamp,
    register_layout,
    text_digest,
)

__all__ = ["AgentSummaryLayout", "SUMMARY_SOURCE", "is_summary_message", "summary_message"]

#: The marker LangChain puts on the message its summarization writes.
SUMMARY_SOURCE = "summarization"


def is_summary_message(message: Any) -> bool:
    kwargs = getattr(message, "additional_kwargs", None)
    return isinstance(kwargs, Mapping) and kwargs.get("lc_source") == SUMMARY_SOURCE


def summary_message(messages: Any) -> Any:
    """The summary message among ``messages`` (the latest), or None."""
    if not isinstance(messages, list):
        return None
    for message in reversed(messages):
        if is_summary_message(message):
            return message
    return None


def _text(message: Any) -> str:
    content = getattr(message, "content", "")
    return content if isinstance(content, str) else str(content)


def _messages_key(stamp: Any) -> str:
    key = stamp.get("messages_key") if isinstance(stamp, Mapping) else None
    return key if isinstance(key, str) and key else MESSAGES_KEY


class AgentSummaryLayout:
    """Reads a ``create_agent`` state: the summary message in ``messages``, the stamp under ``summaryguard``.

    It claims a state that holds a summary message, or a stamp whose summary
    is no running summary of langmem's (that layout stays the LangGraph room's).
    """

    def claims(self, values: Mapping[str, Any]) -> bool:
        stamp = values.get(STAMP_KEY)
        messages = values.get(_messages_key(stamp))
        if summary_message(messages) is not None:
            return True
        if stamp is None or isinstance(values.get("context"), Mapping):
            return False
        return not any(hasattr(v, "summarized_message_ids") for v in values.values())

    def facts(self, values: Mapping[str, Any], step: Any) -> tuple[Any, ...]:
        """The six checkpoint facts: an unstamped summary is none we can vouch for; a stale stamp, no generation."""
        turn = step if isinstance(step, int) and not isinstance(step, bool) else None
        stamp = values.get(STAMP_KEY)
        key = _messages_key(stamp)
        messages = values.get(key)
        message = summary_message(messages)
        if stamp is None:
            return (turn, None, False, None, False, ())
        text = _text(message) if message is not None else None
        summary, own = read_stamp(stamp, text)
        matches = text is not None and text_digest(text) == own["summary_sha256"]
        extract = lookup_extractor(own["refs"] or DEFAULT_EXTRACTOR)
        folded = (getattr(message, "id", None),) if message is not None else ()
        return (
            turn,
            summary.generation,
            True,
            summary.generation if matches else None,
            summary.partial,
            VisibleRefs(summary.verbatim_refs, messages, folded, extract),
        )

    def drop_manifest(self, values: Mapping[str, Any]) -> tuple[Any, ...]:
        stamp = values.get(STAMP_KEY)
        if stamp is None:
            return ()
        message = summary_message(values.get(_messages_key(stamp)))
        summary, _ = read_stamp(stamp, _text(message) if message is not None else None)
        return summary.drop_manifest

    def unstamped_note(self, values: Mapping[str, Any]) -> str | None:
        stamp = values.get(STAMP_KEY)
        message = summary_message(values.get(_messages_key(stamp)))
        if message is not None and stamp is None:
            return (
                "the agent's summary message carries no summaryguard stamp: its SummarizationMiddleware is "
                "not summaryguard's StampedSummarization, so what the summary dropped is unknown"
            )
        stamp_digest = stamp.get("summary_sha256") if isinstance(stamp, Mapping) else None
        if stamp is not None and (message is None or text_digest(_text(message)) != stamp_digest):
            return (
                "the agent's summary message is not the one its summaryguard stamp describes "
                "(replaced by update_state or by an unstamped summarization)"
            )
        return None


LAYOUT = AgentSummaryLayout()
register_layout(LAYOUT)
