"""SG303 recompact-unreconciled-summary."""

from __future__ import annotations

from summaryguard.rules.engine.facts import Fact, Recompaction
from summaryguard.rules.engine.names import call_label
from summaryguard.rules.engine.base import Invalid, LintRule, Valid


class RecompactUnreconciledSummary(LintRule):
    """## What it does
    Flags a compaction call (an LLM call asked to summarize, langmem's
    ``summarize_messages(..., running_summary=...)``, a configured
    compaction call, or your own summarizer) whose input contains an earlier
    summary (``state["summary"]``, ``checkpoint.summary``, a parameter its
    callers fill with one, a prompt built from one) when no check that this
    summary is generation-consistent dominates the call.

    ## Why is this bad?
    Compaction is not idempotent: re-summarizing a summary compounds what the
    first pass lost. If the earlier summary is not the one the checkpoint
    recorded (a stale generation, a half-written one rehydrated after a
    crash), the new summary inherits and hides the damage, with a fresh
    generation that makes it look sound.

    ## Example
    ```python
    def compact(llm, state):
        prompt = f"Extend this summary: {state['summary']}\\n\\nNew messages: {state['messages']}"
        return llm.invoke(prompt).content
    ```

    ## Use instead
    ```python
    from summaryguard.guard import SummaryReconciliationError

    def compact(llm, state, checkpoint):
        if state["summary_generation"] != checkpoint.summary_generation:
            raise SummaryReconciliationError(
                state["summary_generation"], checkpoint.turn, "", "stale summary"
            )
        prompt = f"Extend this summary: {state['summary']}\\n\\nNew messages: {state['messages']}"
        return llm.invoke(prompt).content
    ```
    or ``check_resume(checkpoint, deps)`` / ``compactor.adopt(checkpoint)``
    first; ``summaryguard.guard.Compactor.compact`` refuses an unvouched
    summary by itself. When the summary comes in as a parameter, the check
    may also sit before every call of the function.

    ## Known problems
    An earlier summary is recognized by value: a state key holding a summary
    (``state["summary"]``), the summary protocol (``checkpoint.summary``, a
    value whose ``.generation``, ``.partial`` or ``.verbatim_refs`` is read), a
    framework's running summary, or a state channel or attribute the code wrote
    its summary into and folds again (also a conversation attribute of the
    instance the summary message was written back into: ``self.turns =
    [note, *kept]``, then ``summarize(self.turns)`` in a method of the same
    class; not through an alias, a nested attribute or a subclass's method);
    a name only corroborates. It is followed
    through assignments in the same function; when it arrives as a parameter,
    the callers that pass an earlier summary by value are reported instead.
    A conversation that is a parameter (``turns.append(note)``) is not
    followed back through the callers, nor one the summary reaches through
    another object's method (``memory.add(note)``, then ``memory.get()``).
    """

    code = "SG303"
    name = "recompact-unreconciled-summary"

    VALID = [
        Valid(
            """
            from summaryguard.guard import check_resume

            def compact(llm, state, checkpoint, deps):
                check_resume(checkpoint, deps)
                prompt = f"Extend this summary: {state['summary']}\\n\\nNew messages: {state['messages']}"
                return llm.invoke(prompt).content
            """
        ),
        Valid(
            """
            from langchain_core.messages import HumanMessage
            from langchain_core.prompts import ChatPromptTemplate

            def wrap(summary):
                # wrapping a summary in a message compacts nothing
                return [HumanMessage(content=f"Here is a summary of the conversation so far: {summary}")]

            def render(final_prompt: ChatPromptTemplate, state):
                # rendering a template around the summary runs no model
                return final_prompt.invoke({"summary": state["summary"], "messages": state["messages"]})
            """
        ),
    ]
    INVALID = [
        Invalid(
            """
            def compact(llm, state):
                prompt = f"Extend this summary: {state['summary']}\\n\\nNew messages: {state['messages']}"
                return llm.invoke(prompt).content  # expect: SG303
            """
        ),
    ]

    FACT = Recompaction

    def message(self, fact: Fact) -> str:
        assert isinstance(fact, Recompaction)
        via = f" (it compacts a summary passed to `{fact.through}()`)" if fact.through else ""
        return (
            f"{call_label(fact.node)} compacts an earlier summary{via} with no dominating check that it is "
            "generation-consistent with its checkpoint: re-summarizing an unreconciled summary compounds what it "
            "lost; check first (summaryguard.guard.check_resume, compactor.adopt(checkpoint), or compare "
            "generations and raise)"
        )
