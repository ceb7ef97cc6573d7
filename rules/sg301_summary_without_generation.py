"""SG301 summary-without-generation."""

from __future__ import annotations

from summaryguard.rules.engine.facts import Fact, SummaryRecord
from summaryguard.rules.engine.names import record_label
from summaryguard.rules.engine.base import Invalid, LintRule, Valid


class SummaryWithoutGeneration(LintRule):
    """## What it does
    Flags compaction code that builds a summary record (a dict literal,
    ``dict(...)``, a dataclass or other class instantiation, a JSON record)
    holding the text a summarizer returned (an LLM call asked to summarize,
    langmem's ``summarize_messages``, a configured compaction call, or your
    own function that returns such text) without a generation stamp.

    ## Why is this bad?
    A checkpoint can only prove which summary it holds if the summary carries
    a generation (parent + 1). Without it, a summary written by a compaction
    that overlapped a checkpoint, or one left over from an older lineage, is
    indistinguishable from the current one: recovery cannot fail closed, it
    silently resumes from whatever it finds.

    ## Example
    ```python
    def compact_history(llm, messages):
        text = llm.invoke(["Summarize the conversation so far:", *messages]).content
        return {"summary": text, "dropped": [m.id for m in messages]}
    ```

    ## Use instead
    ```python
    def compact_history(llm, messages, parent):
        text = llm.invoke(["Summarize the conversation so far:", *messages]).content
        return {
            "summary": text,
            "generation": parent["generation"] + 1,
            "dropped": [m.id for m in messages],
        }
    ```
    or let ``summaryguard.guard.Compactor`` stamp it.

    ## Known problems
    A stamp is recognized by a key, keyword or field named like a generation
    (``generation``, ``gen``, ``lineage``, ``summary_version``), set in the
    record, afterwards on the same name, or by a class of the same module that
    sets it itself; a stamp added by another function (``return
    stamp(record)``) is not seen. A record with a ``**`` splat is not judged.
    The record is the value built from summarizer output (a model call whose
    input asks for a summary in a string, a compaction call of a framework
    model, a configured one; a model is also a callable the caller injects,
    declared to answer with text, ``fn: Callable[[str], Awaitable[str]]``, as a
    parameter or on ``self``; "compact" asks only as a verb: "keep your answers
    compact" asks for nothing, nor does a skill offered "when asked", nor
    "Summary of the earlier conversation:" as a label) that the compaction returns, stores or passes on,
    reported once: a response body wrapping it, an exception message or token
    usage is not another record. A chat message holding a summary
    (``SystemMessage(content=...)``, ``ChatMessage.from_user(...)``, a dict
    or call with a ``role``, or a call of the project's own helper that returns
    one made of the argument holding the summary, its keys the message's) is
    context for a prompt, unless its role is the
    summary role or it takes the place of the conversation the summarizer
    folded: assigned over it (``self.turns = [note, *self.turns[-2:]]``, or a
    helper's result handed both), put into a conversation the function
    also cuts in bulk (``turns.clear()``, ``del turns[:k]``, ``self.turns =
    self.turns[-2:]``, before or after the write, but not on a branch that
    returns or raises first; taking one turn out with ``pop`` or ``remove``
    trims a window, and ``state.pop("error")`` cuts only that key), or
    returned with part of it (``return [note, *turns[-2:]]``, a
    comprehension over it, a slice of its copy, a state update
    ``{"messages": [note, *kept]}``, also through the conversation's own
    name rebound). That message is then the
    record, when the compaction builds no other. A summary added to a
    conversation that keeps every turn, or returned alone, is not; nor is a
    message a helper writes from a summary it receives as a parameter, nor a
    conversation whose kept part comes back from another function. A
    summarizer more
    than three calls away is not followed: configure ``compaction-calls``.
    The instruction is what the model reads as its input, followed through
    locals, constants, parameter defaults, ``self`` attributes (also a class
    body's default prompt; a field declared there, ``Field(default=...,
    description=...)``, holds its default) and ``+=``. The schema of its
    tools or of its answer (``tools=``, ``response_format=``, ...) asks for
    nothing, unless the call forces the model to use a tool
    (``tool_choice``): that tool's description is then the task; nor does
    an answer format's field (``Summary: [brief explanation]``), nor a
    summarization the prompt forbids (``Translate ... Do not summarize``). A value
    handed to ``len`` or to a function annotated to return a number (a
    token counter) is measured, not kept: it makes no record there.
    """

    code = "SG301"
    name = "summary-without-generation"

    VALID = [
        Valid(
            """
            def compact_history(llm, messages, parent):
                text = llm.invoke(["Summarize the conversation so far:", *messages]).content
                return {"summary": text, "generation": parent["generation"] + 1, "dropped": [m.id for m in messages]}
            """
        ),
        Valid(
            """
            from summaryguard.guard import Compactor

            def compact(compactor: Compactor, turns):
                summary = compactor.compact(turns)
                return {"summary": summary.content, "generation": summary.generation}
            """
        ),
    ]
    INVALID = [
        Invalid(
            """
            def compact_history(llm, messages):
                text = llm.invoke(["Summarize the conversation so far:", *messages]).content
                return {"summary": text, "dropped": [m.id for m in messages]}  # expect: SG301
            """
        ),
        Invalid(
            """
            def fold_in_place(llm, messages):
                text = llm.invoke(["Summarize the conversation so far:", *messages]).content
                dropped = [m.id for m in messages]
                messages.clear()
                messages.append({"role": "system", "content": text, "dropped": dropped})  # expect: SG301
            """
        ),
    ]

    FACT = SummaryRecord

    def accepts(self, fact: Fact) -> bool:
        return isinstance(fact, SummaryRecord) and fact.missing == "generation"

    def message(self, fact: Fact) -> str:
        return (
            f"{record_label(fact.node)} holds summarizer output but no generation stamp: a checkpoint cannot "
            "record which summary it holds, so a resume cannot tell a stale or foreign summary from the current "
            "one; stamp `generation` (parent + 1), or compact through summaryguard.guard.Compactor"
        )
