"""summaryguard's runtime half: resume only from a summary that is safe to resume.

``import summaryguard.guard`` is cheap on purpose: it loads neither libcst nor
the analyzer, and the plugin manager (pluggy) only when a new checkpoint type
or a violation needs it.
"""

from __future__ import annotations

from .adapter import CheckpointAdapter, CheckpointFacts
from .check import check_resume
from .compactor import Compactor, ProducedRef, Turn
from .errors import (
    CheckpointFormatError,
    CheckpointIntegrityError,
    CheckpointNotDurableError,
    CheckpointRollbackError,
    CheckpointStoreError,
    CheckpointWriteError,
    ReconciliationKind,
    StaleWriterError,
    SummaryReconciliationError,
    UnsafeCheckpointPathError,
    UnsupportedCheckpointError,
)
from .handback import in_turn
from .lock import CompactionLock
from .model import Checkpoint, DroppedRef, Summary
from .reconcile import AcceptDivergence, DivergenceRecord, Replay, Resolution
from .resume import resume_guard
from .store import CheckpointStore, CheckpointWriter
from .tools import tool_guard
from .turn import ResumedTurn, accept_divergence, current_turn

__all__ = [
    "AcceptDivergence",
    "Checkpoint",
    "CheckpointAdapter",
    "CheckpointFacts",
    "CheckpointFormatError",
    "CheckpointIntegrityError",
    "CheckpointNotDurableError",
    "CheckpointRollbackError",
    "CheckpointStore",
    "CheckpointStoreError",
    "CheckpointWriteError",
    "CheckpointWriter",
    "CompactionLock",
    "Compactor",
    "DivergenceRecord",
    "DroppedRef",
    "ProducedRef",
    "ReconciliationKind",
    "Replay",
    "Resolution",
    "ResumedTurn",
    "StaleWriterError",
    "Summary",
    "SummaryReconciliationError",
    "Turn",
    "UnsafeCheckpointPathError",
    "UnsupportedCheckpointError",
    "accept_divergence",
    "check_resume",
    "current_turn",
    "in_turn",
    "resume_guard",
    "tool_guard",
]
