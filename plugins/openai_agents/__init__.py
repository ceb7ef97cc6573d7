"""summaryguard for the OpenAI Agents SDK: record every compaction, check every resume.

Two lines adopt it::

    session = stamp_compactions(OpenAIResponsesCompactionSession("s1", SQLiteSession("s1", "chat.db")))
    guard_runner()

``stamp_compactions`` records each compaction of the session before and after
it (intent, then done: generation, drop manifest, digest of the compaction
items), beside the session's database. ``guard_runner`` installs the SDK's
default runner (``agents.run.set_default_agent_runner``), so every
``Runner.run`` / ``run_sync`` that continues a compacted history, from a
session or a restored ``RunState``, is checked before it runs, and every tool
refuses to re-derive what the compaction dropped; a refusal reaches the caller
as ``SummaryReconciliationError``, never as text for the model.
``guard_tool(tool)`` guards one ``FunctionTool`` on its own.

The SDK is imported only when these names are used, so ``import
summaryguard.guard`` stays free of it (``pip install
'summaryguard[openai-agents]'`` brings it in). This package is the room:
``plugin`` is the module the plugin manager registers; ``model`` is the
analyzer's model; the private modules hold the runtime (``_items``: reading
SDK items; ``_records``: the compaction record; ``_stamp``: the stamped
session; ``_checkpoint``: what a resume continues from; ``_runner``: the
guarded runner; ``_tools``: guarded function tools).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover
    from ._checkpoint import AgentsCheckpoint, resume_checkpoint
    from ._records import CompactionRecord, RecordFolder
    from ._runner import GuardedRunner, guard_runner
    from ._stamp import StampedCompactionSession, stamp_compactions
    from ._tools import guard_tool

__all__ = [
    "AgentsCheckpoint",
    "CompactionRecord",
    "GuardedRunner",
    "RecordFolder",
    "StampedCompactionSession",
    "guard_runner",
    "guard_tool",
    "resume_checkpoint",
    "stamp_compactions",
]

_HOME = {
    "AgentsCheckpoint": "_checkpoint",
    "resume_checkpoint": "_checkpoint",
    "CompactionRecord": "_records",
    "RecordFolder": "_records",
    "GuardedRunner": "_runner",
    "guard_runner": "_runner",
    "StampedCompactionSession": "_stamp",
    "stamp_compactions": "_stamp",
    "guard_tool": "_tools",
}


__getattr__, __dir__ = lazy_exports(__name__, _HOME, __all__)
