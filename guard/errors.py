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
    "ReconciliationKind",
    "SummaryReconciliationError",
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
    * ``checkpoint_turn``: the turn index the checkpoint recorded;
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
