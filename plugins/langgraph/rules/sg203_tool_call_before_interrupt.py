"""SG203 tool-call-before-interrupt."""

from __future__ import annotations

from summaryguard.rules.engine.facts import Fact, RerunBeforePause
from summaryguard.rules.engine.base import Invalid, LintRule, Valid


class ToolCallBeforeInterrupt(LintRule):
    """## What it does
    Flags a tool call that runs, on some path, before LangGraph's
    ``interrupt()`` (``langgraph.types.interrupt``) in the same graph node:
    in the node's function itself, or before a call of a project function
    that interrupts.

    ## Why is this bad?
    ``interrupt()`` pauses the graph; ``graph.invoke(Command(resume=...),
    config)`` does not continue *after* the ``interrupt()`` but re-executes
    the whole node from its start. Every tool call before the
    ``interrupt()`` runs again, against an outside world that has moved on:
    a second VM, a second ticket, a second payment, and a handle that is not
    the one the first run returned. That is a re-derivation (a new fact with
    new provenance passed off as the old one), and nothing raises.

    ## Example
    ```python
    from langchain_core.tools import tool
    from langgraph.types import interrupt

    @tool
    def create_vm(size: str) -> str:
        \"\"\"Create a virtual machine.\"\"\"
        return cloud.create_vm(size)

    def provision(state):
        vm = create_vm.invoke({"size": "small"})
        if not interrupt(f"attach a disk to {vm}?"):
            return {}
        return {"vm": vm}
    ```

    ## Use instead
    Ask first, then act:
    ```python
    from langchain_core.tools import tool
    from langgraph.types import interrupt

    @tool
    def create_vm(size: str) -> str:
        \"\"\"Create a virtual machine.\"\"\"
        return cloud.create_vm(size)

    def provision(state):
        if not interrupt("create a small VM and attach a disk?"):
            return {}
        vm = create_vm.invoke({"size": "small"})
        return {"vm": vm}
    ```
    or give the tool call its own node (its result is checkpointed with the
    node's output and never re-run), or cache the result where the
    re-execution finds it (``if (vm := store.get(ns, "vm")) is None: vm =
    create_vm.invoke({}); store.put(ns, "vm", vm)``).

    ## Known problems
    The node's function must call ``interrupt`` imported from LangGraph (or a
    project function that does); a node that is paused by
    ``interrupt_before``/``interrupt_after`` is not a re-run hazard and is
    not reported. A tool is what the analyzer knows as one (``@tool``,
    ``BaseTool.invoke``, ``ToolNode``, configured ``tool-calls``, a function
    calling one); other side effects before an ``interrupt()`` (a model call,
    an HTTP request) are not reported. A cached result is trusted when the
    branch that calls the tool stores it in a container other than the
    node's input state; a tool call guarded by a lookup in summarized graph
    state is reported as SG201 instead.
    """

    code = "SG203"
    name = "tool-call-before-interrupt"

    VALID = [
        Valid(
            """
            from langchain_core.tools import tool
            from langgraph.types import interrupt

            @tool
            def create_vm(size: str) -> str:
                \"\"\"Create a virtual machine.\"\"\"
                return "vm-1"

            def provision(state):
                if not interrupt("create a small VM?"):
                    return {}
                return {"vm": create_vm.invoke({"size": "small"})}
            """
        ),
    ]
    INVALID = [
        Invalid(
            """
            from langchain_core.tools import tool
            from langgraph.types import interrupt

            @tool
            def create_vm(size: str) -> str:
                \"\"\"Create a virtual machine.\"\"\"
                return "vm-1"

            def provision(state):
                vm = create_vm.invoke({"size": "small"})  # expect: SG203
                if not interrupt(f"attach a disk to {vm}?"):
                    return {}
                return {"vm": vm}
            """
        ),
    ]

    FACT = RerunBeforePause

    def message(self, fact: Fact) -> str:
        assert isinstance(fact, RerunBeforePause)
        return (
            f"this tool call runs before `{fact.pause}()` in the same graph node: when the graph resumes "
            "(Command(resume=...)) the node re-executes from its start and the tool runs again, re-deriving its "
            "fact; move the call after the interrupt, into its own node, or cache its result where the "
            "re-execution finds it"
        )
