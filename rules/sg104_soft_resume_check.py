"""SG104 soft-resume-check."""

from __future__ import annotations

import libcst as cst

from summaryguard.rules.engine.base import Invalid, LintRule, Valid


class SoftResumeCheck(LintRule):
    """## What it does
    Flags a check of the resume invariant (generation, completeness,
    next-turn dependencies) that cannot stop the resume after it: its failing
    branch only logs, warns or sets a flag and falls through to the resume, or
    it is an ``assert`` (removed by ``python -O``). Reported at the check; the
    resume it was meant to protect is then not reported again (one defect,
    one finding).

    ## Why is this bad?
    The check shows the author knew the summary might be stale, partial or
    incomplete, yet the agent resumes from it anyway. The failure stays
    silent: the warning scrolls by while the agent re-derives what the summary
    dropped.

    ## Example
    ```python
    if summary.generation != checkpoint.summary_generation:
        log.warning("stale summary")
    agent.resume(summary)
    ```

    ## Use instead
    ```python
    if summary.generation != checkpoint.summary_generation:
        raise SummaryReconciliationError(...)
    agent.resume(summary)
    ```

    ## Known problems
    A flag set in the failing branch is followed when a later ``if flag:``
    raises; flags carried through other objects or functions are not.
    """

    code = "SG104"
    name = "soft-resume-check"

    VALID = [
        Valid(
            """
            import logging

            def recover(checkpoint, agent):
                summary = checkpoint.summary
                stale = False
                if summary.generation != checkpoint.summary_generation:
                    logging.warning("stale summary")
                    stale = True
                if stale or summary.partial:
                    raise RuntimeError("cannot resume")
                if not set(checkpoint.deps) <= set(summary.verbatim_refs):
                    raise RuntimeError("missing reference")
                return agent.resume(summary)
            """
        ),
    ]
    INVALID = [
        Invalid(
            """
            import logging

            def recover(checkpoint, agent, deps):
                summary = checkpoint.summary
                if summary.generation != checkpoint.summary_generation:  # expect: SG104
                    logging.warning("stale summary")
                assert not summary.partial  # expect: SG104
                for ref in deps:
                    if ref not in summary.verbatim_refs:
                        raise RuntimeError(ref)
                return agent.resume(summary)
            """
        ),
    ]

    def visit_If(self, node: cst.If) -> None:
        self.report_model(node)

    def visit_Assert(self, node: cst.Assert) -> None:
        self.report_model(node)
