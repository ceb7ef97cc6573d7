"""A tool that resumes a sub-task from its own checkpoint: the shape the rooms' tests of
violations met inside a guarded run share (see each room's ``..._inside_a_tool_...`` test)."""

from __future__ import annotations

from typing import Any

from summaryguard.guard import AcceptDivergence, Checkpoint, Summary, resume_guard


def accept_every_violation(spy: Any) -> None:
    """Make the test's resolver plugin (``spy``) accept each violation on record."""
    spy.answers = lambda error, checkpoint: AcceptDivergence(reason="operator approved", accepted_by="oncall")


@resume_guard(deps="needs")
def _resume(checkpoint: Any, needs: Any) -> str:
    return "resumed"


def resume_sub_task() -> str:
    """Resume a sub-task whose summary lacks ``vm``, the reference its next turn needs."""
    return _resume(Checkpoint(3, Summary(2, "the VM was created"), 2), needs=["vm"])
