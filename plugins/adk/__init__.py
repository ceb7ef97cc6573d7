"""summaryguard for Google ADK: stamp every events compaction, check every resume.

Two lines adopt it::

    app = stamp_compactions(App(name="ops", root_agent=agent,
                                events_compaction_config=EventsCompactionConfig(...)))
    runner = guard_runner(Runner(app=app, session_service=SqliteSessionService("ops.db")))

``stamp_compactions`` wraps the app's summarizer (``LlmEventSummarizer`` by
default) in :class:`StampedSummarizer`, which writes a stamp (generation,
drop manifest, digest of the summary text) into the compaction event's
``custom_metadata``: ADK appends that event in one write, so the stamp is
persisted with the summary. It also puts :class:`SummaryGuardPlugin` first
among the app's plugins. ``guard_runner`` checks every run that continues a
compacted session (a new message, or ``run_async(invocation_id=...)``) before
ADK writes anything, runs it inside the resumed turn, where the plugin's
``before_tool_callback`` refuses to re-derive what the compaction dropped,
and hands every refusal to the caller as ``SummaryReconciliationError``
itself. ``guard_runner(..., refuse_replay=True)`` also refuses ADK's
at-least-once replay of an unanswered tool call. ``guard_tool(tool)`` guards
one ADK tool object on its own.

ADK is imported only when these names are used, so ``import
summaryguard.guard`` stays free of it (``pip install 'summaryguard[adk]'``
brings it in). This package is the room: ``plugin`` is the module the plugin
manager registers; ``model`` is the analyzer's model; the private modules
hold the runtime (``_events``: reading ADK events and the stamp; ``_stamp``:
the stamping summarizer; ``_checkpoint``: what a resume continues from;
``_plugin``: the ADK plugin; ``_refusals``: how a refusal travels;
``_runner``: the guarded runner; ``_tools``: guarded tool objects).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover
    from ._checkpoint import AdkCheckpoint, session_checkpoint
    from ._events import default_refs
    from ._plugin import SummaryGuardPlugin
    from ._runner import GuardedRunner, guard_runner
    from ._stamp import StampedSummarizer, stamp_compactions
    from ._tools import guard_tool

__all__ = [
    "AdkCheckpoint",
    "GuardedRunner",
    "StampedSummarizer",
    "SummaryGuardPlugin",
    "default_refs",
    "guard_runner",
    "guard_tool",
    "session_checkpoint",
    "stamp_compactions",
]

_HOME = {
    "AdkCheckpoint": "_checkpoint",
    "session_checkpoint": "_checkpoint",
    "default_refs": "_events",
    "SummaryGuardPlugin": "_plugin",
    "GuardedRunner": "_runner",
    "guard_runner": "_runner",
    "StampedSummarizer": "_stamp",
    "stamp_compactions": "_stamp",
    "guard_tool": "_tools",
}


__getattr__, __dir__ = lazy_exports(__name__, _HOME, __all__)
