"""SG302 summary-without-drop-manifest."""

from __future__ import annotations

from summaryguard.rules.engine.facts import Fact, SummaryRecord
from summaryguard.rules.engine.names import record_label
from summaryguard.rules.engine.base import Invalid, LintRule, Valid


class SummaryWithoutDropManifest(LintRule):
    """## What it does
    Flags compaction code that builds a summary record holding a summarizer's
    output (as SG301 recognizes it) without recording what the compaction
    dropped: no ``dropped`` / ``drop_manifest`` / ``evicted`` / ``omitted``
    entry in the record.

    ## Why is this bad?
    A summary is a lossy projection. After a crash and a resume, the agent
    needs to know which references the summary no longer holds (a resource
    handle a tool returned, say) so that it fails closed into reconciliation
    instead of calling the tool again and carrying on with a *different*
    handle. Without a drop manifest, a dropped fact and a fact that never
    existed look the same, and re-derivation goes unnoticed.

    ## Example
    ```python
    from dataclasses import dataclass

    @dataclass
    class SummaryRecord:
        text: str
        generation: int

    def summarize_turns(client, turns, generation):
        reply = client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": "Summarize:\\n" + "\\n".join(turns)}],
        )
        return SummaryRecord(text=reply.choices[0].message.content, generation=generation + 1)
    ```

    ## Use instead
    Record each dropped reference (with its last-known value and the tool that
    produced it, where the agent has them):
    ```python
    from dataclasses import dataclass, field

    @dataclass
    class SummaryRecord:
        text: str
        generation: int
        dropped: list = field(default_factory=list)

    def summarize_turns(client, turns, generation, kept_refs):
        reply = client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": "Summarize:\\n" + "\\n".join(turns)}],
        )
        dropped = [ref for turn in turns for ref in turn.refs if ref not in kept_refs]
        return SummaryRecord(text=reply.choices[0].message.content, generation=generation + 1, dropped=dropped)
    ```
    or compact through ``summaryguard.guard.Compactor``, which computes the
    drop manifest.

    ## Known problems
    A drop record is recognized by a key, keyword or field whose name says so
    (``drop``, ``manifest``, ``evict``, ``omit``, ``prune``, ``discard``,
    ``removed``); whether it lists the right references is not checked.
    LangGraph's ``RemoveMessage`` list deletes messages, it does not record
    them: it is not a drop manifest.
    """

    code = "SG302"
    name = "summary-without-drop-manifest"

    VALID = [
        Valid(
            """
            import json

            def summarize_turns(llm, turns, generation, path):
                text = llm.invoke("Summarize these turns: " + "\\n".join(turns))
                record = {"summary": text, "generation": generation + 1}
                record["dropped"] = [t for t in turns if t not in text]
                with open(path, "w") as fh:
                    json.dump(record, fh)
            """
        ),
    ]
    INVALID = [
        Invalid(
            """
            from dataclasses import dataclass

            @dataclass
            class SummaryRecord:
                text: str
                generation: int

            def summarize_turns(client, turns, generation):
                reply = client.chat.completions.create(
                    model="gpt-4o-mini",
                    messages=[{"role": "user", "content": "Summarize:\\n" + "\\n".join(turns)}],
                )
                return SummaryRecord(  # expect: SG302
                    text=reply.choices[0].message.content,
                    generation=generation + 1,
                )
            """
        ),
    ]

    FACT = SummaryRecord

    def accepts(self, fact: Fact) -> bool:
        return isinstance(fact, SummaryRecord) and fact.missing == "drops"

    def message(self, fact: Fact) -> str:
        return (
            f"{record_label(fact.node)} holds summarizer output but records nothing about what compaction "
            "dropped: after a resume the agent cannot tell a dropped reference from one that never existed and "
            "re-derives it; record a drop manifest (each dropped reference with its last-known value and "
            "producing tool), or compact through summaryguard.guard.Compactor"
        )
