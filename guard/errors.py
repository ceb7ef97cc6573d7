"""Errors of the runtime guard.

Every error is data first: the fields are stable and machine-readable so that a
reconciliation controller can act on them, and the message is built only when
somebody asks for it (``str(err)``), so raising stays cheap.
"""

from __future__ import annotations

import enum
from typing import Any

__all__ = [
    "CheckpointFormatError",
    "CheckpointIntegrityError",
    "CheckpointNotDurableError",
    "CheckpointRollbackError",
    "CheckpointStoreError",
    "CheckpointWriteError",
    "ReconciliationKind",
    "StaleWriterError",
    "SummaryReconciliationError",
    "UnsafeCheckpointPathError",
    "UnsupportedCheckpointError",
]


class ReconciliationKind(str, enum.Enum):
    """Why a resume was refused; the value is the stable spelling."""

    NO_SUMMARY = "no-summary"
    GENERATION_MISMATCH = "generation-mismatch"
    PARTIAL_SUMMARY = "partial-summary"
    MISSING_DEPENDENCY = "missing-dependency"
    REDERIVATION = "rederivation"
    DIGEST_MISMATCH = "digest-mismatch"

    def __str__(self) -> str:  # so f"{kind}" prints "no-summary"
        return self.value


_NEXT_STEP = {
    ReconciliationKind.NO_SUMMARY: "replay from an earlier exact checkpoint",
    ReconciliationKind.GENERATION_MISMATCH: (
        "replay from the checkpoint that recorded this generation, or accept the divergence"
    ),
    ReconciliationKind.PARTIAL_SUMMARY: "replay from the previous complete checkpoint",
    ReconciliationKind.MISSING_DEPENDENCY: (
        "replay from an exact checkpoint that still holds it, or accept the divergence explicitly"
    ),
    ReconciliationKind.REDERIVATION: (
        "use the value from an exact checkpoint, or accept the divergence for this reference"
    ),
    ReconciliationKind.DIGEST_MISMATCH: "load an earlier checkpoint; this file cannot be trusted",
}


class SummaryReconciliationError(RuntimeError):
    """A lossy summary cannot be safely resumed from.

    Raised instead of resuming (or re-deriving a dropped fact), so that an outer
    controller chooses between replaying from an exact checkpoint and accepting
    the divergence explicitly. The fields are the controller's input:

    * ``summary_generation``: generation of the summary at hand (``None`` when
      there is no summary);
    * ``checkpoint_turn``: the turn index the checkpoint recorded (for a stored
      checkpoint that cannot be read, the turn the store read it as);
    * ``missing_ref``: the reference that could not be located verbatim
      (``""`` when the failure is not about one reference);
    * ``reason``: a sentence for people;
    * ``kind``: a :class:`ReconciliationKind`, for programs.
    """

    def __init__(
        self,
        summary_generation: int | None,
        checkpoint_turn: int | None,
        missing_ref: str,
        reason: str,
        *,
        kind: ReconciliationKind | str = ReconciliationKind.MISSING_DEPENDENCY,
        details: dict[str, Any] | None = None,
    ) -> None:
        self.summary_generation = summary_generation
        self.checkpoint_turn = checkpoint_turn
        self.missing_ref = missing_ref
        self.reason = reason
        self.kind = ReconciliationKind(kind)
        #: Extra structured context (thread id, checkpoint id, file path...).
        self.details: dict[str, Any] = dict(details or {})
        #: How a resolver settled this violation (a ``Replay`` or an ``AcceptDivergence``)
        #: when one did and the resume went on; None while it stands (observers see it so).
        self.resolution: Any = None
        super().__init__(summary_generation, checkpoint_turn, missing_ref, reason)

    def __str__(self) -> str:
        where = f"summary gen={self.summary_generation} vs checkpoint turn={self.checkpoint_turn}"
        missing = f"; missing {self.missing_ref!r}" if self.missing_ref else ""
        extra = "".join(f"; {k}={v}" for k, v in self.details.items())
        return (
            f"{where}: cannot resume [{self.kind}]{missing} ({self.reason}){extra}; "
            f"next: {_NEXT_STEP[self.kind]}"
        )

    def __reduce__(self) -> Any:  # keep the fields across pickling (multiprocessing)
        return (
            _rebuild,
            (
                type(self),
                self.summary_generation,
                self.checkpoint_turn,
                self.missing_ref,
                self.reason,
                self.kind.value,
                self.details,
            ),
        )

    def as_dict(self) -> dict[str, Any]:
        """The fields as JSON-ready data (for logs and metrics)."""
        return {
            "kind": self.kind.value,
            "summary_generation": self.summary_generation,
            "checkpoint_turn": self.checkpoint_turn,
            "missing_ref": self.missing_ref,
            "reason": self.reason,
            **({"details": self.details} if self.details else {}),
        }


def _rebuild(cls: type, gen: Any, turn: Any, ref: str, reason: str, kind: str, details: Any) -> Any:
    return cls(gen, turn, ref, reason, kind=kind, details=details)


class CheckpointIntegrityError(SummaryReconciliationError):
    """A stored checkpoint is torn, truncated, tampered with or malformed.

    It fails closed like any other reconciliation error (``kind`` is
    ``digest-mismatch``); ``path`` names the file.
    """

    def __init__(self, path: str, reason: str, *, checkpoint_turn: int | None = None) -> None:
        super().__init__(
            None,
            checkpoint_turn,
            "",
            reason,
            kind=ReconciliationKind.DIGEST_MISMATCH,
            details={"path": path},
        )
        self.path = path

    def __reduce__(self) -> Any:
        return (_rebuild_integrity, (self.path, self.reason, self.checkpoint_turn))


def _rebuild_integrity(path: str, reason: str, turn: int | None) -> CheckpointIntegrityError:
    return CheckpointIntegrityError(path, reason, checkpoint_turn=turn)


class CheckpointRollbackError(CheckpointIntegrityError):
    """The newest checkpoint on disk is older than what the store has seen.

    The store's ledger records the highest turn written to the folder; a
    ``latest()`` that would return an older one (the newest file deleted, an
    older copy restored, every file gone) raises this instead. Catching
    :class:`CheckpointIntegrityError` catches it too: it fails closed.

    * ``path``: the store's folder;
    * ``high_water``: the newest turn the ledger records;
    * ``found_turn``: the newest turn on disk (None when no file is left).

    To resume from the older one on purpose: ``store.rollback_to(found_turn)``
    (recorded in the ledger) or ``store.latest(allow_rollback=True)``.
    """

    def __init__(self, path: str, reason: str, *, high_water: int | None, found_turn: int | None) -> None:
        super().__init__(path, reason, checkpoint_turn=found_turn)
        self.high_water = high_water
        self.found_turn = found_turn
        self.details.update(high_water=high_water, found_turn=found_turn)

    def __reduce__(self) -> Any:
        return (_rebuild_rollback, (self.path, self.reason, self.high_water, self.found_turn))


def _rebuild_rollback(path: str, reason: str, high_water: int | None, found: int | None) -> CheckpointRollbackError:
    return CheckpointRollbackError(path, reason, high_water=high_water, found_turn=found)


class CheckpointStoreError(OSError):
    """A checkpoint store operation failed (not a checkpoint that failed to verify).

    An ``OSError``, so code that handled a failed write as one keeps working.
    Fields: ``path`` (the file or folder), ``reason`` (for people), ``errno``
    (the system's, when one caused it) and ``next_step`` (what to do).
    """

    next_step = "check the folder and its file system"

    def __init__(self, path: str, reason: str, *, errno_: int | None = None) -> None:
        super().__init__(errno_, reason, path)
        self.path = path
        self.reason = reason

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}; next: {self.next_step}"

    def __reduce__(self) -> Any:
        return (_rebuild_store_error, (type(self), self.path, self.reason, self.errno, self._extra()))

    def _extra(self) -> dict[str, Any]:
        return {}

    def as_dict(self) -> dict[str, Any]:
        """The fields as JSON-ready data (for logs and metrics)."""
        return {"error": type(self).__name__, "path": self.path, "reason": self.reason, "errno": self.errno, **self._extra()}


def _rebuild_store_error(cls: type, path: str, reason: str, errno_: int | None, extra: dict[str, Any]) -> Any:
    return cls(path, reason, errno_=errno_, **extra)


class CheckpointWriteError(CheckpointStoreError):
    """A checkpoint could not be written; the previous checkpoints are untouched."""

    next_step = "fix the cause and write again (a read-only store can still be read)"


class CheckpointNotDurableError(CheckpointWriteError):
    """An fsync failed (EIO, ENOSPC...): the checkpoint may not survive a power loss.

    The new file may be visible until then; do not report the turn as saved.
    Do not retry the fsync: after a failed one the kernel may have dropped the
    unwritten pages, and a second fsync would succeed on data it never wrote.
    """

    next_step = "treat the checkpoint as not saved; check the disk, then write the turn again"


class StaleWriterError(CheckpointWriteError):
    """A write from a writer that lost the folder to another one: refused, nothing written.

    Every write names what it extends: the epoch of the writer that claimed
    the folder (``store.writer()``) and the turn it resumed from or last wrote.
    When either moved on (another process resumed after presuming this one
    dead, or wrote a newer turn), the write is stale.

    * ``epoch`` / ``current_epoch``: the writer's claim and the folder's;
    * ``expected_turn`` / ``current_turn``: the turn the write extends and the
      newest turn the folder's ledger records.
    """

    next_step = "stop this writer: another one owns the thread now (resume again from store.latest() to continue)"

    def __init__(
        self,
        path: str,
        reason: str,
        *,
        errno_: int | None = None,
        epoch: int | None = None,
        current_epoch: int | None = None,
        expected_turn: int | None = None,
        current_turn: int | None = None,
    ) -> None:
        super().__init__(path, reason, errno_=errno_)
        self.epoch = epoch
        self.current_epoch = current_epoch
        self.expected_turn = expected_turn
        self.current_turn = current_turn

    def _extra(self) -> dict[str, Any]:
        return {
            "epoch": self.epoch,
            "current_epoch": self.current_epoch,
            "expected_turn": self.expected_turn,
            "current_turn": self.current_turn,
        }


class UnsafeCheckpointPathError(CheckpointStoreError):
    """A path the store would open for writing is a symbolic link or not a regular file."""

    next_step = "remove it (the store creates its lock file itself) and open the store again"


class CheckpointFormatError(ValueError):
    """Data handed to :meth:`Checkpoint.from_dict` (or JSON) is not a checkpoint.

    ``where`` is the path of the offending field (``"summary.generation"``).
    """

    def __init__(self, where: str, problem: str) -> None:
        self.where = where
        self.problem = problem
        super().__init__(f"{where}: {problem}" if where else problem)

    def __reduce__(self) -> Any:  # ``args`` holds the message, not the two fields
        return (type(self), (self.where, self.problem))


class UnsupportedCheckpointError(TypeError):
    """No adapter understands this checkpoint object."""

    def __init__(self, checkpoint_type: type | None, type_name: str | None = None) -> None:
        #: The checkpoint's type; None after unpickling when the type itself
        #: could not travel (a class defined inside a function).
        self.checkpoint_type = checkpoint_type
        #: ``module.qualname`` of the type, always kept.
        self.type_name = type_name or f"{checkpoint_type.__module__}.{checkpoint_type.__qualname__}"
        super().__init__(
            f"summaryguard cannot read a checkpoint of type {self.type_name}: it has none of the "
            "attributes or keys 'summary', 'summary_generation', 'turn'. Register an "
            "adapter: implement the hook 'summaryguard_checkpoint_adapter' in a plugin "
            "(entry-point group 'summaryguard', or summaryguard.plugins.register(plugin))."
        )

    def __reduce__(self) -> Any:  # ``args`` holds the message; keep the fields
        import pickle

        checkpoint_type = self.checkpoint_type
        try:
            pickle.dumps(checkpoint_type)  # by reference: fails for local classes
        except Exception:  # noqa: BLE001 - the name alone still says what it was
            checkpoint_type = None
        return (type(self), (checkpoint_type, self.type_name))
