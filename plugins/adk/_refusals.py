"""How a refusal travels through an ADK run: raised at ADK's own tool hook, handed to the caller as itself.

ADK calls every plugin's ``before_tool_callback`` before a tool runs, and an
exception raised there stops the run; but ADK's plugin manager wraps it in a
``RuntimeError`` ("Error in plugin ... callback"), with ours as its
``__cause__``. A refusal raised *inside* a tool goes to the
``on_tool_error_callback`` of each plugin first, and one of them may turn it
into a result for the model (a retry plugin, say). So:

* :func:`enforce` is the refusal at the tool hook (the drop manifest of the
  resumed turn, and what a compaction in this run dropped);
* every refusal met inside a guarded run is remembered on it (the core's
  refusal escalation registry), so that the run stops even if a callback
  swallowed it;
* the guarded runner hands the caller the :class:`SummaryReconciliationError`
  itself (:func:`refusal_in` unwraps ADK's error).

Outside a resumed turn :func:`enforce` costs one context-variable read.
"""

from __future__ import annotations

import contextvars

from summaryguard.guard.errors import SummaryReconciliationError
from summaryguard.guard.tools import refuse_rederivation, register_refusal_escalation
from summaryguard.guard.turn import current_turn

__all__ = ["GuardedRun", "current_run", "enforce", "refusal_in"]


class GuardedRun:
    """One run admitted by the guarded runner: the refusals met inside it."""

    __slots__ = ("refused",)

    def __init__(self) -> None:
        self.refused: list[SummaryReconciliationError] = []

    def remember(self, error: SummaryReconciliationError) -> None:
        if all(known is not error for known in self.refused):
            self.refused.append(error)


_run: contextvars.ContextVar[GuardedRun | None] = contextvars.ContextVar("summaryguard_adk_run", default=None)


def current_run() -> GuardedRun | None:
    return _run.get()


def enter_run(run: GuardedRun | None) -> contextvars.Token[GuardedRun | None]:
    return _run.set(run)


def leave_run(token: contextvars.Token[GuardedRun | None]) -> None:
    try:
        _run.reset(token)
    except ValueError:  # closed from another context (a collected generator): nothing of ours is set there
        pass


def refusal_in(error: BaseException | None) -> SummaryReconciliationError | None:
    """The ``SummaryReconciliationError`` an ADK error wraps (``RuntimeError`` from a plugin callback), if any."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, SummaryReconciliationError):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None


def enforce(tool_name: str) -> None:
    """Refuse, in a resumed turn, a tool that produced a reference the compaction dropped (unless accepted)."""
    turn = current_turn()
    if turn is None:
        return
    for entry in turn.dropped_by_tool().get(tool_name, ()):
        if not turn.is_accepted(entry.ref):
            refuse_rederivation(turn, tool_name, entry, "which the session's compaction dropped; calling it again")


def remembered(error: SummaryReconciliationError) -> SummaryReconciliationError:
    """The escalation: a refusal inside a guarded ADK run is kept on the run; it travels as itself."""
    run = _run.get()
    if run is not None:
        run.remember(error)
    return error


register_refusal_escalation(remembered)
