"""SG102 resume-from-partial-summary."""

from __future__ import annotations

from summaryguard.rules.engine.conditions import PARTIAL
from summaryguard.rules.engine.facts import Fact, UncheckedResume
from summaryguard.rules.engine.base import Invalid, LintRule, Valid


class ResumeFromPartialSummary(LintRule):
    """## What it does
    Flags a resume from a checkpoint's summary that some path reaches without
    a fail-closed check that the summary is complete (``summary.partial`` is
    false, or ``summary.complete`` is true).

    ## Why is this bad?
    When compaction and checkpoint writes are not serialized, a checkpoint can
    capture a half-written summary that references turns outside its own
    scope. Resuming from it is not merely lossy but internally inconsistent.

    ## Example
    ```python
    def recover(checkpoint):
        summary = checkpoint.summary
        if summary.generation != checkpoint.summary_generation:
            raise SummaryReconciliationError(...)
        return agent.resume(summary)
    ```

    ## Use instead
    ```python
    def recover(checkpoint):
        summary = checkpoint.summary
        if summary.generation != checkpoint.summary_generation or summary.partial:
            raise SummaryReconciliationError(...)
        return agent.resume(summary)
    ```
    or call ``summaryguard.guard.check_resume(checkpoint, deps)`` first.

    ## Known problems
    Completeness is recognized by attribute names (``partial``,
    ``incomplete``, ``complete``, ``is_complete``...), the same keys of a
    mapping (``summary["partial"]``, ``summary.get("partial")``) and status strings
    (``status == "complete"``); a custom spelling needs a validator function
    whose body raises, or the ``validators`` configuration.
    """

    code = "SG102"
    name = "resume-from-partial-summary"

    VALID = [
        Valid(
            """
            from summaryguard.guard import SummaryReconciliationError

            def recover(checkpoint, agent, deps):
                summary = checkpoint.summary
                if summary is None or summary.generation != checkpoint.summary_generation:
                    raise SummaryReconciliationError(None, checkpoint.turn, "", "generation")
                if summary.partial:
                    raise SummaryReconciliationError(summary.generation, checkpoint.turn, "", "partial")
                missing = [ref for ref in deps if ref not in summary.verbatim_refs]
                if missing:
                    raise SummaryReconciliationError(summary.generation, checkpoint.turn, missing[0], "deps")
                return agent.resume(summary)
            """
        ),
        Valid(
            """
            import json
            from summaryguard.guard import SummaryReconciliationError

            def recover(f, workflow, Context, deps):
                checkpoint = json.load(f)
                summary = checkpoint["summary"]
                if summary is None or summary["generation"] != checkpoint["summary_generation"]:
                    raise SummaryReconciliationError(None, checkpoint["turn"], "", "generation")
                if summary.get("partial"):
                    raise SummaryReconciliationError(summary["generation"], checkpoint["turn"], "", "partial")
                missing = [ref for ref in deps if ref not in summary["verbatim_refs"]]
                if missing:
                    raise SummaryReconciliationError(summary["generation"], checkpoint["turn"], missing[0], "deps")
                ctx = Context.from_dict(workflow, checkpoint["context"])
                return workflow.run("next", ctx=ctx, summary=summary)
            """
        ),
    ]
    INVALID = [
        Invalid(
            """
            def recover(checkpoint, agent, deps):
                summary = checkpoint.summary
                if summary.generation != checkpoint.summary_generation:
                    raise RuntimeError("stale summary")
                for ref in deps:
                    if ref not in summary.verbatim_refs:
                        raise RuntimeError(ref)
                return agent.resume(summary)  # expect: SG102
            """
        ),
        Invalid(
            """
            import json

            def recover(f, workflow, Context, deps):
                checkpoint = json.load(f)
                summary = checkpoint["summary"]
                if summary["generation"] != checkpoint["summary_generation"]:
                    raise RuntimeError("stale summary")
                if any(ref not in summary["verbatim_refs"] for ref in deps):
                    raise RuntimeError("missing reference")
                ctx = Context.from_dict(workflow, checkpoint["context"])
                return workflow.run("next", ctx=ctx, summary=summary)  # expect: SG102
            """
        ),
    ]

    FACT = UncheckedResume

    def accepts(self, fact: Fact) -> bool:
        return isinstance(fact, UncheckedResume) and fact.kind == PARTIAL

    def message(self, fact: Fact) -> str:
        assert isinstance(fact, UncheckedResume)
        return (
            f"{fact.description} resumes from summary state, but no fail-closed check that the summary is complete (not partial / half-written) "
            "dominates it; check first (summaryguard.guard.check_resume or raise "
            "SummaryReconciliationError) so recovery fails closed into reconciliation"
        )
