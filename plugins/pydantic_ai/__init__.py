"""summaryguard for pydantic-ai: stamp every compaction in the history, check every resume.

Two capabilities adopt it::

    agent = Agent(model, capabilities=[GuardResumes(), StampedHistory(summarize_old_messages)])

``StampedHistory`` is pydantic-ai's ``ProcessHistory`` (same argument: the
history processor) that stamps the summary message of every fold in its
``metadata`` (generation, drop manifest, digest of the summary text), so the
stamp travels with the history through ``ModelMessagesTypeAdapter``;
``StampedCompaction(capability)`` does the same around any compaction
capability (pydantic-ai-harness's strategies); ``GuardResumes`` checks every run that continues a stamped history
(``message_history=``, ``deferred_tool_results=``, ``conversation=``) before
it starts, and makes every tool of the agent refuse to re-derive what the
summary dropped; a refusal reaches the caller as ``SummaryReconciliationError``,
never as a tool result for the model. ``guard_tool(tool)`` guards one
``pydantic_ai.Tool`` on its own.

pydantic-ai is imported only when these names are used, so ``import
summaryguard.guard`` stays free of it (``pip install
'summaryguard[pydantic-ai]'`` brings it in). This package is the room:
``plugin`` is the module the plugin manager registers; ``model`` is the
analyzer's model; the private modules hold the runtime (``_history``: reading
messages and the stamp; ``_stamp``: the stamping capability; ``_checkpoint``:
what a resume continues from; ``_guard``: the guarding capability;
``_tools``: guarded ``Tool`` objects).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover
    from ._checkpoint import HistoryCheckpoint, history_checkpoint
    from ._guard import GuardResumes
    from ._stamp import StampedCompaction, StampedHistory
    from ._tools import guard_tool

__all__ = ["GuardResumes", "HistoryCheckpoint", "StampedCompaction", "StampedHistory", "guard_tool", "history_checkpoint"]

_HOME = {
    "HistoryCheckpoint": "_checkpoint",
    "history_checkpoint": "_checkpoint",
    "GuardResumes": "_guard",
    "StampedCompaction": "_stamp",
    "StampedHistory": "_stamp",
    "guard_tool": "_tools",
}


__getattr__, __dir__ = lazy_exports(__name__, _HOME, __all__)
