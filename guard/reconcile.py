"""What a reconciliation controller may answer instead of a refused resume.

There are exactly two honest answers (design note, "Decision Boundary"):
replay from an earlier *exact* checkpoint, or accept the divergence explicitly
and record it, so the re-derived fact carries new provenance. Anything else
(re-deriving quietly, retrying until it passes) is the corruption path.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Union

from .errors import ReconciliationKind, SummaryReconciliationError

__all__ = ["AcceptDivergence", "DivergenceRecord", "Replay", "Resolution"]


@dataclass(frozen=True)
class Replay:
    """Resume from this checkpoint instead; it is checked like the first one."""

    checkpoint: Any


@dataclass(frozen=True)
class AcceptDivergence:
    """Go on despite the violation, on record.

    ``accepted_by`` names who decided (an operator, a policy); ``reason`` says
    why. The record is passed to the ``summaryguard_divergence_accepted`` hook
    and kept on the resumed turn.
    """

    reason: str
    accepted_by: str = "controller"

    def __post_init__(self) -> None:
        check_provenance("AcceptDivergence", self.reason, self.accepted_by)


Resolution = Union[Replay, AcceptDivergence]


def check_provenance(who: str, reason: object, accepted_by: object) -> None:
    """Refuse an acceptance that would go on record without saying why and by whom: the
    record is the new fact's provenance (SPEC 1, 4.6), and a blank one waives a check on
    nothing."""
    for name, value in (("reason", reason), ("accepted_by", accepted_by)):
        if not isinstance(value, str):
            raise TypeError(f"{who}() takes a {name} string, got {type(value).__name__}")
        if not value.strip():
            what = "a reason" if name == "reason" else "who accepted it (accepted_by)"
            raise ValueError(f"{who}() needs {what}: the record is the new fact's provenance")


@dataclass(frozen=True)
class DivergenceRecord:
    """The provenance of an accepted divergence: what, where, who, why, when."""

    kind: ReconciliationKind
    ref: str
    summary_generation: int | None
    checkpoint_turn: int | None
    reason: str
    accepted_by: str
    at: float = field(default_factory=time.time)

    @classmethod
    def from_error(cls, error: SummaryReconciliationError, reason: str, accepted_by: str) -> DivergenceRecord:
        return cls(
            kind=error.kind,
            ref=error.missing_ref,
            summary_generation=error.summary_generation,
            checkpoint_turn=error.checkpoint_turn,
            reason=reason,
            accepted_by=accepted_by,
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "ref": self.ref,
            "summary_generation": self.summary_generation,
            "checkpoint_turn": self.checkpoint_turn,
            "reason": self.reason,
            "accepted_by": self.accepted_by,
            "at": self.at,
        }

    def __str__(self) -> str:
        target = f" {self.ref!r}" if self.ref else ""
        return (
            f"{self.kind}{target} at checkpoint turn {self.checkpoint_turn} "
            f"(summary gen {self.summary_generation}) accepted by {self.accepted_by}: {self.reason}"
        )
