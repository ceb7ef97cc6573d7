"""No pluggy hook runs on the success path of a guarded call once the adapter is resolved."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from summaryguard.guard import SummaryReconciliationError, check_resume, resume_guard, tool_guard
from summaryguard.plugins import manager as plugin_manager

CALLS = 200


@pytest.fixture
def hook_calls() -> Iterator[list[str]]:
    """A fresh plugin manager (so the adapter cache is empty) whose hook calls are recorded."""
    plugin_manager.reset_plugin_manager()
    calls: list[str] = []
    undo = plugin_manager.get_plugin_manager().add_hookcall_monitoring(
        lambda name, impls, kwargs: calls.append(name), lambda outcome, name, impls, kwargs: None
    )
    yield calls
    undo()
    plugin_manager.reset_plugin_manager()


@tool_guard
def list_files(path: str) -> str:
    return f"files of {path}"


@resume_guard
def resume(checkpoint: Any) -> str:
    return list_files("/tmp")  # a tool the summary dropped nothing from


@resume_guard(deps="deps")
async def resume_async(checkpoint: Any, deps: list[str]) -> str:
    await asyncio.sleep(0)
    return list_files("/tmp")


def test_sync_success_path_calls_no_hook_after_the_first_call(
    hook_calls: list[str], shape: str, make_checkpoint: Callable[..., Any]
) -> None:
    checkpoint = make_checkpoint(shape, refs=("h1",), next_turn_deps=("h1",), manifest=[("h9", "v9", "open")])
    assert resume(checkpoint) == "files of /tmp"
    assert hook_calls == ["summaryguard_checkpoint_adapter"]  # resolved once, then cached
    hook_calls.clear()
    for _ in range(CALLS):
        resume(checkpoint)
        check_resume(checkpoint, ["h1"])
        list_files("/elsewhere")  # outside a resumed turn
    assert hook_calls == []


def test_async_success_path_calls_no_hook_after_the_first_call(
    hook_calls: list[str], shape: str, make_checkpoint: Callable[..., Any]
) -> None:
    checkpoint = make_checkpoint(shape, refs=("h1", "h2"))

    async def main() -> None:
        await resume_async(checkpoint, ["h1"])
        assert hook_calls == ["summaryguard_checkpoint_adapter"]
        hook_calls.clear()
        for _ in range(CALLS):
            await resume_async(checkpoint, ["h1", "h2"])

    asyncio.run(main())
    assert hook_calls == []


def test_the_monitor_sees_the_slow_path(hook_calls: list[str], make_checkpoint: Callable[..., Any]) -> None:
    """Not vacuous: a violation does go through the observer and resolver hooks."""
    checkpoint = make_checkpoint("native", refs=())
    resume(make_checkpoint("native"))
    hook_calls.clear()
    with pytest.raises(SummaryReconciliationError):
        asyncio.run(resume_async(checkpoint, ["h1"]))
    assert hook_calls == ["summaryguard_observe_violation", "summaryguard_resolve_violation"]
