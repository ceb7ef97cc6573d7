"""``summaryguard demo``: the failure summaryguard exists for, in a few seconds.

First the analyzer reads the bundled agent (:mod:`.unguarded_agent`) and says
what is wrong with it; then the runtime replays its life: a tool hands out a
handle, compaction drops it, the process crashes, recovery resumes from the
summary. Unguarded, the agent re-asks the outside world, gets a different
handle and carries on: two lineages, no error. Guarded, the resume fails at
the first post-recovery turn with the precise reconciliation error.
"""

from __future__ import annotations

from . import unguarded_agent
from .runner import main

__all__ = ["main", "unguarded_agent"]
