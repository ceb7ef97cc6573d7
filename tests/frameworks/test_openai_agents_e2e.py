"""SPEC §1 in a real OpenAI Agents SDK app: a crash after compaction, a resume, and the lost handle.

The agent (``openai_agents_app``) runs in a subprocess that is SIGKILLed after
its session was compacted (or during the compaction, or that exits at a
human approval); its SQLite session (WAL and all), the compaction record and
the outside world are left on disk. Each test resumes a private copy of them
in this process, with the SDK's ``ScriptedModel``: offline, no API key.
"""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

import openai_agents_app as app
from agents import Runner
from agents.run import get_default_agent_runner, set_default_agent_runner
from agents.run_state import RunState
from agents.testing import assistant_message, function_call
from summaryguard.guard import (
    AcceptDivergence,
    ReconciliationKind,
    SummaryReconciliationError,
)
from summaryguard.plugins import hookimpl
from summaryguard.plugins.openai_agents import guard_runner

HERE = Path(__file__).parent
ATTACH = "Attach the disk now."


@pytest.fixture(scope="module")
def stopped(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One stopped agent per way of stopping: killed after the compaction, killed inside it, paused at an approval.

    One subprocess imports the SDK and forks a child per way (each really killed by SIGKILL, or exiting).
    """
    base = tmp_path_factory.mktemp("stopped")
    proc = subprocess.run(
        [sys.executable, str(HERE / "openai_agents_app.py"), "all", str(base)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    statuses = dict(line.split()[1:] for line in proc.stdout.splitlines() if line.startswith("exit "))
    assert statuses == {"crash": "-9", "torn": "-9", "approve": "0"}, f"{proc.stdout}\n{proc.stderr}"
    return {mode: base / mode for mode in statuses}


def _copy(source: Path, folder: Path) -> Path:
    """A private copy: the SQLite session read through the WAL the dead process left, its record, the world."""
    folder.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(source / "session.db") as src, sqlite3.connect(folder / "session.db") as dst:
        src.backup(dst)
    shutil.copytree(source / "session.db.summaryguard", folder / "session.db.summaryguard")
    for name in ("world.json", "state.txt"):
        if (source / name).exists():
            shutil.copy(source / name, folder / name)
    return folder


@pytest.fixture(autouse=True)
def _default_runner() -> Iterator[None]:
    """Each test installs the runner it needs; the SDK's default is put back after it."""
    before = get_default_agent_runner()
    yield
    set_default_agent_runner(before)


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_the_crash_left_a_compacted_session_and_its_record(stopped: dict[str, Path], tmp_path: Path) -> None:
    folder = _copy(stopped["crash"], tmp_path)
    session = app.make_session(folder / "session.db")
    items = _run(session.get_items())
    assert [i.get("type") for i in items] == ["compaction"]  # the handle went into the opaque item
    record = session.records.read(app.SESSION_ID)
    assert record.finished and record.generation == 1
    assert [(e.ref, e.last_known, e.tool) for e in record.completed.summary.drop_manifest] == [("create_vm", "vm-1", "create_vm")]


def test_without_the_guard_the_resume_rederives_the_handle(stopped: dict[str, Path], tmp_path: Path) -> None:
    folder = _copy(stopped["crash"], tmp_path)
    world = app.World(folder / "world.json")
    session = app.make_session(folder / "session.db")
    steps = [[function_call("create_vm", {"size": "small"}, call_id="call-again")], [assistant_message("Attached.")]]
    agent, _ = app.make_agent(world, steps)
    _run(Runner.run(agent, ATTACH, session=session))
    assert world.created == ["vm-1", "vm-2"]  # a second VM: the silent divergence


def test_a_declared_dependency_fails_the_resume_before_the_model_runs(stopped: dict[str, Path], tmp_path: Path) -> None:
    folder = _copy(stopped["crash"], tmp_path)
    guard_runner(deps=["create_vm"])
    agent, model = app.make_agent(app.World(folder / "world.json"), [[assistant_message("never")]])
    with pytest.raises(SummaryReconciliationError) as caught:
        _run(Runner.run(agent, ATTACH, session=app.make_session(folder / "session.db")))
    error = caught.value
    assert (error.kind, error.missing_ref, error.summary_generation) == (ReconciliationKind.MISSING_DEPENDENCY, "create_vm", 1)
    assert error.details["session_id"] == app.SESSION_ID
    assert model.calls == ()  # refused before anything ran


def test_the_same_resume_refuses_the_rederivation_at_the_tool(stopped: dict[str, Path], tmp_path: Path) -> None:
    folder = _copy(stopped["crash"], tmp_path)
    guard_runner()
    world = app.World(folder / "world.json")
    steps = [[function_call("create_vm", {"size": "small"}, call_id="call-again")], [assistant_message("never")]]
    agent, model = app.make_agent(world, steps)  # create_vm is the user's plain @function_tool: nothing wrapped it
    with pytest.raises(SummaryReconciliationError) as caught:
        _run(Runner.run(agent, ATTACH, session=app.make_session(folder / "session.db")))
    error = caught.value
    assert type(error) is SummaryReconciliationError  # the caller's error, not the SDK's UserError around it
    assert (error.kind, error.missing_ref, error.details["last_known"]) == (ReconciliationKind.REDERIVATION, "create_vm", "vm-1")
    assert world.created == ["vm-1"]  # the tool never ran
    assert len(model.calls) == 1  # and the model never saw "please try again"


def test_the_sync_runner_is_checked_too(stopped: dict[str, Path], tmp_path: Path) -> None:
    folder = _copy(stopped["crash"], tmp_path)
    guard_runner(deps=["create_vm"])
    agent, _ = app.make_agent(app.World(folder / "world.json"), [[assistant_message("never")]])
    with pytest.raises(SummaryReconciliationError) as caught:
        Runner.run_sync(agent, ATTACH, session=app.make_session(folder / "session.db"))
    assert caught.value.kind is ReconciliationKind.MISSING_DEPENDENCY


def test_a_compaction_killed_between_clear_and_add_is_a_partial_summary(stopped: dict[str, Path], tmp_path: Path) -> None:
    folder = _copy(stopped["torn"], tmp_path)
    guard_runner()
    session = app.make_session(folder / "session.db")
    assert _run(session.get_items()) == []  # the SDK's clear committed, its add never did
    agent, model = app.make_agent(app.World(folder / "world.json"), [[assistant_message("never")]])
    with pytest.raises(SummaryReconciliationError) as caught:
        _run(Runner.run(agent, ATTACH, session=session))
    assert caught.value.kind is ReconciliationKind.PARTIAL_SUMMARY
    assert "never recorded done" in caught.value.details["note"]
    assert model.calls == ()
    with pytest.raises(SummaryReconciliationError) as again:  # nor may it be compacted on top of
        _run(session.run_compaction({"force": True}))
    assert again.value.kind is ReconciliationKind.PARTIAL_SUMMARY


def _approved(folder: Path, world: app.World, steps: list[Any]) -> tuple[Any, Any, RunState[Any]]:
    agent, model = app.make_agent(world, steps)
    state = _run(RunState.from_string(agent, (folder / "state.txt").read_text()))
    (pending,) = state.get_interruptions()
    state.approve(pending)
    return agent, model, state


def test_a_human_approval_resumes_in_another_process_when_the_summary_is_vouched_for(
    stopped: dict[str, Path], tmp_path: Path
) -> None:
    folder = _copy(stopped["approve"], tmp_path)
    guard_runner()
    world = app.World(folder / "world.json")
    agent, _, state = _approved(folder, world, [[assistant_message("Disk attached to vm-1.")]])
    result = _run(Runner.run(agent, state, session=app.make_session(folder / "session.db")))
    assert result.final_output == "Disk attached to vm-1."
    assert world.disks == ["vm-1"] and world.created == ["vm-1"]


def test_a_human_approval_resume_refuses_the_rederivation_after_it(stopped: dict[str, Path], tmp_path: Path) -> None:
    folder = _copy(stopped["approve"], tmp_path)
    guard_runner()
    world = app.World(folder / "world.json")
    steps = [[function_call("create_vm", {"size": "small"}, call_id="call-again")], [assistant_message("never")]]
    agent, _, state = _approved(folder, world, steps)
    with pytest.raises(SummaryReconciliationError) as caught:
        _run(Runner.run(agent, state, session=app.make_session(folder / "session.db")))
    assert (caught.value.kind, caught.value.missing_ref) == (ReconciliationKind.REDERIVATION, "create_vm")
    assert world.created == ["vm-1"]


def test_a_restored_run_state_without_its_session_is_checked_by_its_compaction(
    stopped: dict[str, Path], tmp_path: Path
) -> None:
    folder = _copy(stopped["approve"], tmp_path)
    app.make_session(folder / "session.db")  # this process knows the record folder (as any process that opens the session)
    guard_runner(deps=["create_vm"])
    agent, model, state = _approved(folder, app.World(folder / "world.json"), [[assistant_message("never")]])
    with pytest.raises(SummaryReconciliationError) as caught:
        _run(Runner.run(agent, state))
    assert (caught.value.kind, caught.value.missing_ref) == (ReconciliationKind.MISSING_DEPENDENCY, "create_vm")
    assert model.calls == ()


class _Accepting:
    """A controller's policy as a plugin: accept the divergence on record (new provenance), remember it."""

    def __init__(self) -> None:
        self.accepted: list[Any] = []

    @hookimpl
    def summaryguard_resolve_violation(self, error: Any, checkpoint: Any) -> Any:
        return AcceptDivergence("policy: provision a new VM", accepted_by="policy")

    @hookimpl
    def summaryguard_divergence_accepted(self, record: Any) -> None:
        self.accepted.append(record)


def test_a_controller_may_accept_the_divergence_on_record(stopped: dict[str, Path], tmp_path: Path, use_plugin: Any) -> None:
    folder = _copy(stopped["crash"], tmp_path)
    policy = use_plugin(_Accepting())
    guard_runner(deps=["create_vm"])
    world = app.World(folder / "world.json")
    steps = [[function_call("create_vm", {"size": "small"}, call_id="call-again")], [assistant_message("Attached.")]]
    agent, _ = app.make_agent(world, steps)
    result = _run(Runner.run(agent, ATTACH, session=app.make_session(folder / "session.db")))
    assert result.final_output == "Attached." and world.created == ["vm-1", "vm-2"]  # the new fact, accepted
    assert [r.ref for r in policy.accepted] == ["create_vm"]


@pytest.mark.parametrize("streamed", [False, True])
def test_a_compacted_history_handed_over_as_the_input_list_is_checked(
    stopped: dict[str, Path], tmp_path: Path, streamed: bool
) -> None:
    """``Runner.run(agent, items + [new])`` with the items of a compacted session and no
    session: the same history, continued; it ran unchecked and re-derived the handle."""
    folder = _copy(stopped["crash"], tmp_path)
    items = _run(app.make_session(folder / "session.db").get_items())  # this process knows the record folder
    guard_runner()
    world = app.World(folder / "world.json")
    steps = [[function_call("create_vm", {"size": "small"}, call_id="call-again")], [assistant_message("never")]]
    agent, _ = app.make_agent(world, steps)
    history = [*items, {"role": "user", "content": ATTACH}]

    async def streamed_run() -> None:
        async for _ in Runner.run_streamed(agent, history).stream_events():
            pass

    with pytest.raises(SummaryReconciliationError) as caught:
        _run(streamed_run() if streamed else Runner.run(agent, history))
    assert (caught.value.kind, caught.value.missing_ref) == (ReconciliationKind.REDERIVATION, "create_vm")
    assert world.created == ["vm-1"]
    # a list without a compaction item is a fresh input, as before
    plain, _ = app.make_agent(world, [[assistant_message("hello")]])
    assert _run(Runner.run(plain, [{"role": "user", "content": "hi"}])).final_output == "hello"
