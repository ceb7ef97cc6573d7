"""SG202 swallowed-reconciliation-error."""

from __future__ import annotations

from summaryguard.rules.engine.conditions import checks_named
from summaryguard.rules.engine.facts import Fact, SwallowedError
from summaryguard.rules.engine.base import Invalid, LintRule, Valid


class SwallowedReconciliationError(LintRule):
    """## What it does
    Flags an ``except`` clause that catches ``SummaryReconciliationError``
    (or a broad exception around a resume or a resume check) and then
    resumes, re-derives or simply goes on, instead of re-raising or handing
    the error to a reconciliation controller. ``with
    contextlib.suppress(SummaryReconciliationError)`` is reported at the
    ``with``.

    ## Why is this bad?
    The reconciliation error is the one signal that the summary cannot be
    resumed from: it carries the generation, the checkpoint turn and the
    missing reference an outer controller needs to replay from an exact
    checkpoint or to accept the divergence on record. Swallowing it turns a
    fail-closed recovery back into a fail-open one.

    ## Example
    ```python
    import logging

    from summaryguard.guard import check_resume

    def resume_turn(agent, checkpoint, deps):
        try:
            check_resume(checkpoint, deps)
        except Exception:
            logging.exception("resume check failed")
        return agent.resume(checkpoint.summary)
    ```

    ## Use instead
    ```python
    from summaryguard.guard import SummaryReconciliationError, check_resume

    def resume_turn(agent, checkpoint, deps, controller):
        try:
            check_resume(checkpoint, deps)
        except SummaryReconciliationError as error:
            return controller.reconcile(error)
        return agent.resume(checkpoint.summary)
    ```

    A handler may store the error and raise it after the ``try``
    (``error = exc`` ... ``if error is not None: raise error``): that is
    fail-closed when every path from the handler raises it (or hands it
    off) before the resume and before the function returns; a path that
    resumes or returns first is reported at the handler.

    ## Known problems
    A hand-off is recognized as passing the caught error to a call that is
    not a logger, or returning it. A broad handler that returns without
    resuming is considered fail-closed. A stored error is followed only when
    the handler assigns it to a plain local on every path (``error = exc``
    at the top of its body) and that local only ever holds ``None`` or a
    caught error; the tests that clear it are ``if error``, ``if error is
    not None`` and their negations, combined with ``and`` / ``or``.
    """

    code = "SG202"
    name = "swallowed-reconciliation-error"

    VALID = [
        Valid(
            """
            from summaryguard.guard import SummaryReconciliationError, check_resume

            def recover(checkpoint, agent, controller, deps):
                try:
                    check_resume(checkpoint, deps)
                except SummaryReconciliationError as error:
                    return controller.reconcile(error)
                return agent.resume(checkpoint.summary)
            """
        ),
        Valid(
            """
            from summaryguard.guard import SummaryReconciliationError, check_resume

            def recover(checkpoint, deps, agent):
                error = None
                try:
                    check_resume(checkpoint, deps)
                except SummaryReconciliationError as exc:
                    error = exc
                if error is not None:
                    raise error
                return agent.resume(checkpoint.summary, checkpoint.turn)
            """
        ),
    ]
    INVALID = [
        Invalid(
            """
            import logging
            from summaryguard.guard import check_resume

            def recover(checkpoint, agent, deps):
                try:
                    check_resume(checkpoint, deps)
                except Exception:  # expect: SG202
                    logging.exception("resume check failed")
                return agent.resume(checkpoint.summary)
            """
        ),
        Invalid(
            """
            from summaryguard.guard import SummaryReconciliationError, check_resume

            def recover(checkpoint, deps, agent, strict):
                error = None
                try:
                    check_resume(checkpoint, deps)
                except SummaryReconciliationError as exc:  # expect: SG202
                    error = exc
                if error is not None and strict:
                    raise error
                return agent.resume(checkpoint.summary, checkpoint.turn)
            """
        ),
    ]

    FACT = SwallowedError

    def message(self, fact: Fact) -> str:
        assert isinstance(fact, SwallowedError)
        controller = "re-raise it or hand it to a reconciliation controller"
        if fact.shape == "catches-reconciliation":
            return (
                f"this handler catches SummaryReconciliationError and carries on; {controller} (replay from an "
                "exact checkpoint or accept the divergence on record)"
            )
        if fact.shape == "broad-except":
            return (
                f"a broad `except` around a resume {fact.detail}: a SummaryReconciliationError raised by the "
                f"resume check is swallowed; {controller}"
            )
        if fact.shape == "suppress-reconciliation":
            return (
                "`contextlib.suppress(SummaryReconciliationError)` swallows a refused resume; let it "
                "propagate to a reconciliation controller"
            )
        if fact.shape == "suppress-broad":
            return (
                "`suppress(Exception)` around a resume swallows a SummaryReconciliationError; let it "
                "propagate to a reconciliation controller"
            )
        if fact.shape == "stored":
            return (
                f"this handler stores the caught {fact.detail} in `{fact.name}`, but on some path {fact.where} "
                "before it is raised; raise it, or hand it to a reconciliation controller, on every path first"
            )
        return (
            f"this handler defeats the resume check ({checks_named(fact.kinds)}): {fact.detail}; re-raise or hand "
            "the error to a reconciliation controller"
        )
