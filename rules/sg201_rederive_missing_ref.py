"""SG201 rederive-missing-ref."""

from __future__ import annotations

from summaryguard.rules.engine.facts import Fact, Rederivation
from summaryguard.rules.engine.base import Invalid, LintRule, Valid


class RederiveMissingRef(LintRule):
    """## What it does
    Flags a tool call that obtains again a reference that was looked up in
    resumed state and found missing: ``if ref not in summary.refs: ref =
    tool()``, ``x = state.get(k) or tool()``, ``if x is None: x = tool()``,
    ``except KeyError: tool()``, ``state.get(k, tool())``,
    ``state.setdefault(k, tool())``.

    ## Why is this bad?
    Re-deriving a dropped fact is not recovery: the outside world has moved
    on, so the tool returns a *new* fact (another handle, another id) with new
    provenance, and the agent carries on as if it were the old one. The run
    "succeeds" with a corrupted lineage. A missing reference must fail closed
    into reconciliation.

    ## Example
    ```python
    from langchain_core.tools import tool

    @tool
    def create_sandbox() -> str:
        \"\"\"Create a sandbox and return its handle.\"\"\"
        return sandboxes.create()

    ctx = checkpoint.resume_context()
    handle = ctx.get("handle") or create_sandbox.invoke({})
    ```

    ## Use instead
    ```python
    ctx = checkpoint.resume_context()
    if "handle" not in ctx:
        raise SummaryReconciliationError(gen, turn, "handle", "dropped by compaction")
    handle = ctx["handle"]
    ```
    or wrap the tool with ``summaryguard.guard.tool_guard`` so a re-derivation
    during a resumed turn raises.

    ## Known problems
    A callee is a tool when it is decorated as one (``langchain_core.tools.tool``,
    ``agents.function_tool``, ``tool_guard``), configured in ``tool-calls``,
    known to a framework model, or calls such a tool itself; never by its name
    alone (``search_tool``, ``tools.x``): configure ``tool-calls`` for such a
    tool. The state is resumed by data flow (``resume_context()``, a load of a
    checkpoint that carries a summary, a summary object whose
    ``.verbatim_refs`` or ``.generation`` is read) or, as one vote, by its name
    (``resume_state``). The finding's trace shows where the state was resumed,
    the lookup that found the reference missing, and why the callee is a tool.
    The tool's result
    must take the missing reference's place (bound to the looked-up name or key,
    stored into the resumed state, returned, or the lookup's fallback): a call
    whose result goes elsewhere obtains something else. Resumed state is
    followed through assignments within one function; configure ``tool-calls``
    for tools the analyzer cannot see.
    """

    code = "SG201"
    name = "rederive-missing-ref"

    VALID = [
        Valid(
            # a tool by its name alone is no tool, even next to state resumed by data flow
            """
            from summaryguard.guard import Checkpoint

            def summarize_tool(text):
                return text[:100]

            def next_turn(blob):
                restored = Checkpoint.from_json(blob)
                return restored.handles.get("notes") or summarize_tool("latest")
            """
        ),
        Valid(
            """
            def settings(config):
                timeout = config.get("timeout") or default_timeout()
                return timeout
            """
        ),
        Valid(
            # two names (state called "resume...", a helper called "search_tool") are not evidence
            """
            def next_turn(resume_state, search_tool):
                return resume_state.get("handle") or search_tool("latest")
            """
        ),
        Valid(
            # "tool" as one word among others: a logging helper, not a tool
            """
            def close(restored, logger):
                try:
                    return restored["stream"].close()
                except KeyError as exc:
                    log_tool_action_error(logger, "no stream to close", exc)
            """
        ),
    ]
    INVALID = [
        Invalid(
            """
            from agents import function_tool

            @function_tool
            def search_tool(query: str) -> str:
                return query

            def next_turn(checkpoint):
                ctx = checkpoint.resume_context()
                handle = ctx.get("handle") or search_tool("latest")  # expect: SG201
                return handle
            """,
            # the unchecked resume is its own defect
            expected=[(8, "SG101"), (8, "SG102"), (8, "SG103"), (9, "SG201")],
        ),
        Invalid(
            """
            from agents import function_tool

            @function_tool
            def open_sandbox(name: str) -> str:
                return f"sandbox-{name}"

            def next_turn(restored_summary):
                # a real tool: state resumed by its name alone is enough next to it
                return restored_summary.get("sandbox") or open_sandbox("main")  # expect: SG201
            """
        ),
    ]

    FACT = Rederivation

    def message(self, fact: Fact) -> str:
        assert isinstance(fact, Rederivation)
        return (
            f"this tool call re-derives a reference {fact.why}: a new fact with new provenance replaces the "
            "one the summary dropped; raise SummaryReconciliationError instead (or guard the tool with "
            "summaryguard.guard.tool_guard)"
        )
