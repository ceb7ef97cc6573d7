"""SG101 resume-without-generation-check."""

from __future__ import annotations

from summaryguard.rules.engine.conditions import GENERATION
from summaryguard.rules.engine.facts import Fact, UncheckedResume
from summaryguard.rules.engine.base import Invalid, LintRule, Valid


class ResumeWithoutGenerationCheck(LintRule):
    """## What it does
    Flags a resume from a checkpoint's summary (``checkpoint.resume_context()``,
    ``agent.resume(summary, ...)``, ``graph.invoke(None, config)``, or a call of
    your own function that does one) that some path reaches without a
    fail-closed check that the summary exists and that its generation equals
    the generation the checkpoint recorded.

    ## Why is this bad?
    A checkpoint written while compaction ran can hold a summary of another
    generation than the one it recorded. Resuming from it continues the agent
    from a context that does not match the checkpoint's turn: facts it relies
    on may belong to a different lineage, and nothing raises.

    ## Example
    ```python
    def recover(checkpoint):
        return checkpoint.resume_context()
    ```

    ## Use instead
    ```python
    from summaryguard.guard import check_resume

    def recover(checkpoint, deps):
        check_resume(checkpoint, deps)  # raises SummaryReconciliationError
        return checkpoint.resume_context()
    ```
    or compare ``summary.generation != checkpoint.summary_generation`` and raise.
    The check must dominate the resume: a check on one branch of an ``if``
    does not protect a resume after it.

    A checkpoint read as a mapping counts like one read by attribute:
    ``checkpoint["summary"]`` (or ``.get("summary")``) makes it carry a
    summary, so ``agent.run(..., ctx=Context.from_dict(checkpoint["context"]))``
    is a resume from it; a mapping with no summary key (a PyTorch
    ``torch.load(...)["model"]``) is not.

    ## Known problems
    Facts are tracked per function, not per object: a check of one checkpoint
    protects a resume of another in the same function. A loop over references
    is assumed to run at least once.
    """

    code = "SG101"
    name = "resume-without-generation-check"

    VALID = [
        Valid(
            """
            from summaryguard.guard import check_resume

            def recover(checkpoint, deps):
                check_resume(checkpoint, deps)
                return checkpoint.resume_context()
            """
        ),
        Valid(
            """
            import json
            from summaryguard.guard import check_resume

            def recover(f, workflow, Context, deps):
                checkpoint = json.load(f)
                check_resume(checkpoint, deps)
                ctx = Context.from_dict(workflow, checkpoint["context"])
                return workflow.run("next", ctx=ctx, summary=checkpoint["summary"])
            """
        ),
    ]
    INVALID = [
        Invalid(
            """
            def recover(checkpoint):
                summary = checkpoint.summary
                return checkpoint.resume_context()  # expect: SG101, SG102, SG103
            """
        ),
        Invalid(
            """
            import json

            def recover(f, workflow, Context):
                checkpoint = json.load(f)
                summary = checkpoint["summary"]
                ctx = Context.from_dict(workflow, checkpoint["context"])
                return workflow.run("next", ctx=ctx, summary=summary)  # expect: SG101, SG102, SG103
            """
        ),
    ]

    FACT = UncheckedResume

    def accepts(self, fact: Fact) -> bool:
        return isinstance(fact, UncheckedResume) and fact.kind == GENERATION

    def message(self, fact: Fact) -> str:
        assert isinstance(fact, UncheckedResume)
        return (
            f"{fact.description} resumes from summary state, but no fail-closed check that the summary exists and its generation equals the checkpoint's recorded generation "
            "dominates it; check first (summaryguard.guard.check_resume or raise "
            "SummaryReconciliationError) so recovery fails closed into reconciliation"
        )
