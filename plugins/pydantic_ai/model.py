"""The analyzer's model of pydantic-ai (v2), as data (see ``summaryguard.plugins.framework``).

Read by the engine through the ``summaryguard_frameworks`` hook and validated
when it loads. An ``Agent`` is built from parts: it compacts when one of its
arguments is a history-processing capability (``capabilities=[ProcessHistory(fn)]``,
pydantic-ai-harness's compaction capabilities, or summaryguard's ``StampedHistory`` /
``StampedCompaction``): what the processor returns *is* the
history from then on, so whatever it folds or trims is gone from what is
persisted (v2 has no ``Agent(history_processors=...)`` any more). An agent
built without one resumes no summary.

A history is loaded with ``ModelMessagesTypeAdapter.validate_json`` /
``validate_python`` (a whole ``Conversation`` with ``ConversationTypeAdapter``'s) and written by dumping ``all_messages()`` (``dump_json``,
``dump_python``) to storage. The resume is the run that is handed the loaded
history (``agent.run(prompt, message_history=history)``, also after an
approval with ``deferred_tool_results=``, or a ``conversation=``), never the
load (SPEC §3.1.1); a run handed a live history (the previous result's
``all_messages()``) restores nothing. Tools are the agent's decorator
methods (``@agent.tool`` / ``@agent.tool_plain`` where ``agent = Agent(...)``).

pydantic-ai guarantees none of the checks: ``ProcessHistory`` records no
generation, no drop manifest and nothing about a cut-off summary. An agent
given summaryguard's ``GuardResumes()`` capability has every run checked.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["MODEL"]

_AGENTS = ("pydantic_ai.Agent", "pydantic_ai.agent.Agent")
_ADAPTERS = ("pydantic_ai.messages.ModelMessagesTypeAdapter", "pydantic_ai.ModelMessagesTypeAdapter")
_CONVERSATIONS = ("pydantic_ai.ConversationTypeAdapter", "pydantic_ai.conversation.ConversationTypeAdapter")
_ROOM = "summaryguard.plugins.pydantic_ai"


def _methods(owners: Iterable[str], names: Iterable[str]) -> tuple[str, ...]:
    names = tuple(names)
    return tuple(f"{owner}.{name}" for owner in owners for name in names)


MODEL: Mapping[str, Any] = {
    "name": "pydantic-ai",
    "vocabulary": {
        "checkpoint-loads": _methods((*_ADAPTERS, *_CONVERSATIONS), ("validate_json", "validate_python")),
        "checkpoint-writes": _methods(_ADAPTERS, ("dump_json", "dump_python")),
        # The history-processing capability is the compaction (like a summarization middleware).
        "compaction-calls": (
            "pydantic_ai.capabilities.ProcessHistory",
            "pydantic_ai.capabilities.process_history.ProcessHistory",
            f"{_ROOM}.StampedHistory",
            f"{_ROOM}._stamp.StampedHistory",
            f"{_ROOM}.StampedCompaction",
            f"{_ROOM}._stamp.StampedCompaction",
            # pydantic-ai-harness's compaction capabilities (0.62: SummarizingCompaction,
            # SlidingWindowCompaction, TieredCompaction, RelevanceCompaction, FallbackCompaction, ...)
            "pydantic_ai_harness.compaction.*Compaction",
            "pydantic_ai_harness.compaction.ClearToolResults",
            "pydantic_ai_harness.compaction.CompactOnRequest",
        ),
        # Resolved on the receiver: `@agent.tool` where `agent = Agent(...)`.
        "tool-decorators": _methods(_AGENTS, ("tool", "tool_plain")),
        # Agent(..., capabilities=[GuardResumes()]): every run of that agent is checked first.
        "validators": (f"{_ROOM}.GuardResumes", f"{_ROOM}._guard.GuardResumes"),
    },
    "graph_factories": _AGENTS,
    "resume_methods": ("run", "run_sync", "run_stream", "run_stream_sync", "run_stream_events", "iter"),
    "resume_state_keywords": ("message_history", "conversation"),
    "words": ("message_history", "ModelMessagesTypeAdapter", "ProcessHistory", "StampedHistory", "tool_plain"),
}
