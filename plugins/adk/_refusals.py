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

from summaryguard.guard.errors import SummaryReconciliationError
from summaryguard.guard.runs import GuardedRun, RunScope, refusal_in
from summaryguard.guard.tools import refuse_rederivation, register_refusal_escalation
from summaryguard.guard.turn import current_turn

__all__ = ["GuardedRun", "current_run", "enforce", "refusal_in"]


#: The guarded run of the current context, for this room (see :mod:`summaryguard.guard.runs`).
RUNS = RunScope("summaryguard_adk_run")
current_run = RUNS.current
enter_run = RUNS.enter
leave_run = RUNS.leave


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
    return RUNS.remembered(error)


register_refusal_escalation(remembered)
