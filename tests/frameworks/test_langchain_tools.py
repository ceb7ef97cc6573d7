"""tool_guard accepts a LangChain tool object, not only a function."""

from __future__ import annotations

import pytest

pytest.importorskip("langchain_core")

from langchain_core.tools import tool  # noqa: E402

from summaryguard.guard import (  # noqa: E402
    Checkpoint,
    DroppedRef,
    ReconciliationKind,
    Summary,
    SummaryReconciliationError,
    resume_guard,
    tool_guard,
)


def test_tool_guard_on_a_langchain_tool_refuses_rederivation_in_a_resumed_turn() -> None:
    made: list[str] = []

    @tool("create_vm", description="Make a VM.")
    def create_vm() -> str:
        made.append(f"vm-{len(made) + 1}")
        return made[-1]

    guarded = tool_guard(create_vm)
    assert guarded.name == "create_vm" and guarded is not create_vm
    assert guarded.invoke({}) == "vm-1"  # outside a resumed turn: untouched

    summary = Summary(3, "the VM is ready", drop_manifest=(DroppedRef("vm", "vm-1", tool="create_vm"),))
    checkpoint = Checkpoint(turn=9, summary=summary, summary_generation=3)

    @resume_guard
    def resume(checkpoint: Checkpoint) -> str:
        return guarded.invoke({})

    with pytest.raises(SummaryReconciliationError) as caught:
        resume(checkpoint)
    assert caught.value.kind is ReconciliationKind.REDERIVATION
    assert caught.value.missing_ref == "vm" and caught.value.details["tool"] == "create_vm"
    assert made == ["vm-1"]  # the outside world was not asked again
