"""SG104 soft-resume-check."""

from __future__ import annotations

from summaryguard.rules.engine.conditions import checks_named
from summaryguard.rules.engine.facts import Fact, SoftCheck
from summaryguard.rules.engine.base import Invalid, LintRule, Valid


class SoftResumeCheck(LintRule):
    """## What it does
    Flags a check of the resume invariant (generation, completeness,
    next-turn dependencies) that cannot stop the resume after it: its failing
    branch only logs, warns or sets a flag and falls through to the resume, or
    it is an ``assert`` (removed by ``python -O``). Reported at the check; the
    resume it was meant to protect is then not reported again (one defect,
    one finding). When the check sits in a function of another module that the
    resuming code calls, it is reported at that call, with the check in the
    trace: a file's findings depend only on what it imports, and the module
    that holds the soft validator has no resume that relies on it.

    A check whose failing branch sets a flag (``ok = False``, ``stale =
    True``) or records the problem (``problems.append(...)``) is fail-closed
    when, on every path, a later ``if not ok:`` / ``if problems:`` raises or
    returns before the resume; it is soft when the flag is never acted on
    before the resume, or is reset, or is acted on only on some paths.

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
    Flags are followed as plain local names (bound only by ``x = ...``, filled
    with ``append``/``add``/``x[k] = v``); a flag kept in an attribute, or
    passed to another function that changes it, is not followed.
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
        Valid(
            """
            from summaryguard.guard import SummaryReconciliationError

            def recover(checkpoint, agent, deps):
                summary = checkpoint.summary
                problems = []
                if summary is None or summary.generation != checkpoint.summary_generation:
                    problems.append("generation")
                if summary.partial:
                    problems.append("partial")
                for ref in deps:
                    if ref not in summary.verbatim_refs:
                        problems.append(f"missing {ref}")
                if problems:
                    raise SummaryReconciliationError(", ".join(problems))
                return agent.resume(summary, checkpoint.turn)
            """
        ),
        Valid(
            """
            from summaryguard.guard import SummaryReconciliationError

            def recover(checkpoint, agent, deps):
                summary = checkpoint.summary
                ok = True
                if summary.generation != checkpoint.summary_generation:
                    ok = False
                if summary.partial:
                    ok = False
                if any(ref not in summary.verbatim_refs for ref in deps):
                    ok = False
                if not ok:
                    raise SummaryReconciliationError("cannot resume")
                return agent.resume(summary, checkpoint.turn)
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
        Invalid(
            """
            from summaryguard.guard import SummaryReconciliationError

            def recover(checkpoint, agent, deps):
                summary = checkpoint.summary
                problems = []
                if summary.generation != checkpoint.summary_generation:  # expect: SG104
                    problems.append("generation")
                if summary.partial:
                    raise SummaryReconciliationError("partial")
                for ref in deps:
                    ok = True
                    if ref not in summary.verbatim_refs:  # expect: SG104
                        ok = False
                if not ok:  # only the last reference's check reaches here
                    raise SummaryReconciliationError("missing reference")
                return agent.resume(summary, degraded=bool(problems))
            """
        ),
    ]

    FACT = SoftCheck

    def message(self, fact: Fact) -> str:
        assert isinstance(fact, SoftCheck)
        return f"this resume check ({checks_named(fact.kinds)}) cannot stop the resume: {fact.detail}; raise SummaryReconciliationError"
