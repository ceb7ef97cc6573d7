"""Function behaviour summaries: what calling a function means for the resume invariant.

(Named ``FunctionSummary``, never ``Summary``: that word is the agent's lossy summary.)

A call site is judged by its callee's summary, so a validator written by the
user (``def verify(checkpoint, deps): ... raise``) protects a resume in
another module exactly like ``summaryguard.guard.check_resume`` does, and a
user function that resumes is itself a resume for its callers. Summaries are
computed by :mod:`.solver` to a fixed point over all modules of a run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from .facts import Step

if TYPE_CHECKING:
    from .project import FunctionInfo

__all__ = ["BOTTOM", "SOFT_CHECK", "SWALLOW", "FunctionSummary", "Site", "Soft"]

#: A check that cannot stop a resume (it logs, warns, sets a flag, or asserts).
SOFT_CHECK = "soft-check"
#: A handler that swallows the failure of a resume check.
SWALLOW = "swallow"

_NONE: frozenset[str] = frozenset()


@dataclass(frozen=True, eq=False)
class Soft:
    """A check that cannot stop a resume (SG104), or a handler that swallows the
    failure of one (SG202): it covers ``kind`` for "one defect, one finding"
    and is reported at ``node`` when a resume relies on it."""

    kind: str
    #: :data:`SOFT_CHECK` or :data:`SWALLOW`.
    role: str
    node: cst.CSTNode
    path: str
    detail: str
    #: Where the soft check itself is, when ``node`` is the call of another module's
    #: function that holds it (reported at the call: the caller's file owns the finding).
    origin: tuple[Step, ...] = ()

    def __hash__(self) -> int:
        return hash((self.kind, self.role, id(self.node)))

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Soft) and other.kind == self.kind and other.role == self.role and other.node is self.node
        )


@dataclass(frozen=True)
class FunctionSummary:
    """What a call of the function guarantees, needs and does."""

    #: Kinds guaranteed after the call returns normally (a validator: all three).
    establishes: frozenset[str] = _NONE
    #: Soft checks that reach the caller (an ``assert`` in a validator).
    soft: frozenset[Soft] = frozenset()
    #: The call never returns normally (a function that always raises).
    always_raises: bool = False
    #: Kinds guaranteed when the function's result is truthy (``is_consistent``).
    predicate: frozenset[str] = _NONE
    #: The function resumes an agent from summary state.
    resumes: bool = False
    #: Kinds its resumes leave unchecked: a call of it is a resume needing them.
    needs: frozenset[str] = _NONE
    #: Resumes of a parameter's value that nothing inside shows to be summary state
    #: (``def go(agent, x): agent.resume(x)``): (parameter, kinds left unchecked). A call
    #: that passes summary state to that parameter is a resume needing those kinds.
    resumes_through: frozenset[tuple[str, frozenset[str]]] = frozenset()
    #: Its result is resumed state (looked-up references come from it).
    returns_resumed: bool = False
    #: Calling it calls a tool (directly or through other functions).
    calls_tool: bool = False
    #: It makes no calls at all (a plain accessor is never a tool).
    pure: bool = True
    #: Calling it may pause a graph node (a framework's ``interrupt-calls``), directly or through others.
    pauses: bool = False

    def tells_callers(self) -> bool:
        """Whether a call of the function means more than a call of one never analyzed:
        any fact but :attr:`pure` (which no analysis of a caller reads). A caller of
        functions that tell nothing, whose own words are no evidence, has nothing to
        analyze (see :func:`.solver.solve`)."""
        return bool(
            self.establishes or self.soft or self.always_raises or self.predicate or self.resumes
            or self.needs or self.resumes_through or self.returns_resumed or self.calls_tool or self.pauses
        )


BOTTOM = FunctionSummary()


@dataclass(eq=False)
class Site:
    """One resume call inside a function and what it lacks."""

    call: cst.Call
    required: frozenset[str]
    description: str
    #: The evidence that it resumes from a summary (see :class:`~.evidence.Requirement`).
    trace: tuple[Step, ...] = ()
    missing: set[str] = field(default_factory=set)
    #: The project function it calls, when that function resumes inside it.
    callee: FunctionInfo | None = None
    #: The parameter whose value it resumes, when only a caller can show that value
    #: is summary state: the site is the function's :attr:`FunctionSummary.resumes_through`,
    #: never a finding of its own.
    through: str | None = None
