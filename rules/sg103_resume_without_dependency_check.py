"""SG103 resume-without-dependency-check."""

from __future__ import annotations

from summaryguard.rules.engine.conditions import DEPS
from summaryguard.rules.engine.facts import Fact, UncheckedResume
from summaryguard.rules.engine.base import Invalid, LintRule, Valid


class ResumeWithoutDependencyCheck(LintRule):
    """## What it does
    Flags a resume from a checkpoint's summary that some path reaches without
    a fail-closed check that every reference the next turn depends on is
    present verbatim in the summary.

    ## Why is this bad?
    A summary is a lossy projection: compaction may have dropped a handle a
    tool returned. After the resume the agent cannot find it, calls the tool
    again, gets a *different* handle from a world that moved on, and carries
    on with corrupted provenance. Checking the dependencies before resuming
    turns that silent divergence into a reconciliation error.

    ## Example
    ```python
    def recover(checkpoint, deps):
        if checkpoint.summary.generation != checkpoint.summary_generation:
            raise SummaryReconciliationError(...)
        if checkpoint.summary.partial:
            raise SummaryReconciliationError(...)
        return checkpoint.resume_context()
    ```

    ## Use instead
    ```python
    def recover(checkpoint, deps):
        ...
        for ref in deps:
            if ref not in checkpoint.summary.verbatim_refs:
                raise SummaryReconciliationError(...)
        return checkpoint.resume_context()
    ```

    ## Known problems
    A dependency check is recognized as a membership or subset test against
    references (``verbatim_refs``, ``refs``, ``deps``...) whose failing side
    raises; comparisons hidden in other helpers count only when the helper's
    body is available to the analysis. A framework model says which checks its
    framework guarantees: in LangGraph (``graph.invoke(None, config)``) a summary
    held in graph state is written atomically with its checkpoint, so only this
    rule applies to such resumes, and only when the graph built into the resumed
    value summarizes (a summarization node or middleware): a graph whose
    construction the analysis cannot see, or one without a summarizer, is not a
    resume from a summary.
    """

    code = "SG103"
    name = "resume-without-dependency-check"

    VALID = [
        Valid(
            """
            from summaryguard.guard import resume_guard

            @resume_guard(deps="next_turn_deps")
            def recover(checkpoint, next_turn_deps):
                return checkpoint.resume_context()

            def main(checkpoint):
                return recover(checkpoint, ["doc-1"])
            """
        ),
    ]
    INVALID = [
        Invalid(
            """
            def recover(checkpoint, deps):
                summary = checkpoint.summary
                if summary.generation != checkpoint.summary_generation or summary.partial:
                    raise RuntimeError("cannot resume")
                return checkpoint.resume_context()  # expect: SG103
            """
        ),
    ]

    FACT = UncheckedResume

    def accepts(self, fact: Fact) -> bool:
        return isinstance(fact, UncheckedResume) and fact.kind == DEPS

    def message(self, fact: Fact) -> str:
        assert isinstance(fact, UncheckedResume)
        return (
            f"{fact.description} resumes from summary state, but no fail-closed check that every next-turn dependency is present verbatim in the summary "
            "dominates it; check first (summaryguard.guard.check_resume or raise "
            "SummaryReconciliationError) so recovery fails closed into reconciliation"
        )
