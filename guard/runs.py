"""Guarded runs: where a refusal met inside a framework's run is kept until the run ends.

A framework may turn a tool's exception into text for the model, or wrap it in an
error of its own, and go on. A room that guards the framework's runs therefore
admits each run as a :class:`GuardedRun` (in its own :class:`RunScope`, so that
frameworks never see each other's runs), remembers on it every refusal met
inside (through :func:`~.tools.register_refusal_escalation`), and when the run
ends hands the caller the refusal itself: :func:`refusal_in` finds it inside the
framework's wrapper. A run started inside another (an agent used as a tool)
hands its refusals to the runs that enclose it, so the outermost caller meets
them too.

The core names no framework; the rooms of ``summaryguard.plugins`` use this.
"""

from __future__ import annotations

import contextvars

from .errors import SummaryReconciliationError

__all__ = ["GuardedRun", "RunScope", "refusal_in"]


class GuardedRun:
    """One run a guard admitted: the refusals met inside it, first first."""

    __slots__ = ("parent", "_met")

    def __init__(self, parent: GuardedRun | None = None) -> None:
        self.parent = parent
        self._met: list[SummaryReconciliationError] = []

    def remember(self, error: SummaryReconciliationError) -> None:
        """Keep ``error`` on this run and on every run that encloses it (once each)."""
        run: GuardedRun | None = self
        while run is not None:
            if all(known is not error for known in run._met):
                run._met.append(error)
            run = run.parent

    @property
    def refused(self) -> list[SummaryReconciliationError]:
        """The errors met inside the run that still stand, first first: one a resolver
        settled (an accepted divergence, a replay) let its resume go on, and is not one
        (rooms remember violations when they are observed, before they are resolved)."""
        return [error for error in self._met if error.resolution is None]

    @property
    def first_refusal(self) -> SummaryReconciliationError | None:
        refused = self.refused
        return refused[0] if refused else None


class RunScope:
    """The guarded run of the current context (thread or asyncio task) for one framework."""

    __slots__ = ("_current",)

    def __init__(self, name: str) -> None:
        self._current: contextvars.ContextVar[GuardedRun | None] = contextvars.ContextVar(name, default=None)

    def current(self) -> GuardedRun | None:
        return self._current.get()

    def enter(self, run: GuardedRun | None) -> contextvars.Token[GuardedRun | None]:
        return self._current.set(run)

    def leave(self, token: contextvars.Token[GuardedRun | None]) -> None:
        try:
            self._current.reset(token)
        except ValueError:  # closed from another context (a collected generator): nothing of ours is set there
            pass

    def remembered(self, error: SummaryReconciliationError) -> SummaryReconciliationError:
        """A refusal escalation (:func:`~.tools.register_refusal_escalation`): the refusal is
        kept on the current run, if any, and travels as itself."""
        run = self._current.get()
        if run is not None:
            run.remember(error)
        return error


def refusal_in(error: BaseException | None) -> SummaryReconciliationError | None:
    """The ``SummaryReconciliationError`` an error is or wraps (through ``__cause__`` and
    ``__context__``, as frameworks chain their wrapper errors), if any."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, SummaryReconciliationError):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None
