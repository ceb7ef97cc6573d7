"""SPEC §1 in a real pydantic-ai app: a crash after compaction, a resume, and the lost handle.

The agent (``pydantic_ai_app``) runs in a subprocess that is SIGKILLed after
its history was compacted and persisted as JSON (or whose summary was cut
off, or that is killed inside the summarizer, or that exits at a human
approval); the history file and the outside world are left on disk. Each test
resumes a private copy of them in this process, with pydantic-ai's
``FunctionModel``: offline, no API key.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pydantic_ai")

import pydantic_ai_app as app
from pydantic_ai import DeferredToolResults
from pydantic_ai.messages import ModelMessagesTypeAdapter

from summaryguard.guard import AcceptDivergence, ReconciliationKind, SummaryReconciliationError
from summaryguard.plugins import hookimpl
from summaryguard.plugins.manager import register, unregister
from summaryguard.plugins.pydantic_ai import GuardResumes

HERE = Path(__file__).parent
AGAIN = [[app.call("create_vm", {"size": "small"}, "call-again")], [app.text("never")]]


@pytest.fixture(scope="module")
def stopped(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One stopped agent per way of stopping; one subprocess imports pydantic-ai and forks a child per way."""
    base = tmp_path_factory.mktemp("stopped")
    proc = subprocess.run(
        [sys.executable, str(HERE / "pydantic_ai_app.py"), "all", str(base)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    statuses = dict(line.split()[1:] for line in proc.stdout.splitlines() if line.startswith("exit "))
    assert statuses == {"crash": "-9", "truncated": "-9", "torn": "-9", "approve": "0"}, f"{proc.stdout}\n{proc.stderr}"
    return {mode: base / mode for mode in statuses}


def _copy(source: Path, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("history.json", "world.json"):
        shutil.copy(source / name, folder / name)
    return folder


def _parts(history: list[object]) -> str:
    """What the model reads of a history (its parts, not the messages' metadata)."""
    return "".join(str(part) for message in history for part in message.parts)  # type: ignore[attr-defined]


def test_the_crash_left_a_stamped_summary_in_the_history_json(stopped: dict[str, Path], tmp_path: Path) -> None:
    folder = _copy(stopped["crash"], tmp_path)
    raw = (folder / "history.json").read_bytes()
    history = ModelMessagesTypeAdapter.validate_json(raw)
    assert "vm-1" not in _parts(history)  # the handle was folded away (it is only in the stamp)
    (stamped,) = [m for m in history if m.metadata]
    stamp = stamped.metadata["summaryguard"]
    assert (stamp["generation"], stamp["parent_generation"], stamp["partial"]) == (1, None, False)
    assert [(e["ref"], e["last_known"], e["tool"]) for e in stamp["drop_manifest"]] == [("create_vm", "vm-1", "create_vm")]
    assert ModelMessagesTypeAdapter.dump_json(history) == raw  # the stamp round-trips through the history's JSON


def test_without_the_guard_the_resume_rederives_the_handle(stopped: dict[str, Path], tmp_path: Path) -> None:
    folder = _copy(stopped["crash"], tmp_path)
    world = app.World(folder / "world.json")
    agent, _ = app.make_agent(world, [*AGAIN[:1], [app.text("Attached.")]])
    agent.run_sync(app.ATTACH, message_history=app.load(folder / "history.json"))
    assert world.created == ["vm-1", "vm-2"]  # a second VM: the silent divergence


def test_a_declared_dependency_fails_the_resume_before_the_model_runs(stopped: dict[str, Path], tmp_path: Path) -> None:
    folder = _copy(stopped["crash"], tmp_path)
    agent, script = app.make_agent(app.World(folder / "world.json"), [[app.text("never")]], guard=GuardResumes(deps=["create_vm"]))
    with pytest.raises(SummaryReconciliationError) as caught:
        agent.run_sync(app.ATTACH, message_history=app.load(folder / "history.json"))
    error = caught.value
    assert (error.kind, error.missing_ref, error.summary_generation) == (ReconciliationKind.MISSING_DEPENDENCY, "create_vm", 1)
    assert error.checkpoint_turn == 4  # the history's length
    assert script.calls == 0  # refused before anything ran


def test_the_same_resume_refuses_the_rederivation_at_the_tool(stopped: dict[str, Path], tmp_path: Path) -> None:
    folder = _copy(stopped["crash"], tmp_path)
    world = app.World(folder / "world.json")
    agent, script = app.make_agent(world, AGAIN, guard=GuardResumes())  # create_vm is the user's plain @agent.tool_plain
    with pytest.raises(SummaryReconciliationError) as caught:
        agent.run_sync(app.ATTACH, message_history=app.load(folder / "history.json"))
    error = caught.value
    assert type(error) is SummaryReconciliationError  # itself, no framework error around it
    assert (error.kind, error.missing_ref, error.summary_generation) == (ReconciliationKind.REDERIVATION, "create_vm", 1)
    assert error.details["last_known"] == "vm-1"
    assert world.created == ["vm-1"]  # the tool never ran
    assert script.calls == 1  # and the model never saw a tool result


def test_a_resolver_that_accepts_the_divergence_lets_the_tool_rederive_on_record(stopped: dict[str, Path], tmp_path: Path) -> None:
    folder = _copy(stopped["crash"], tmp_path)
    world = app.World(folder / "world.json")

    class Accept:
        @hookimpl
        def summaryguard_resolve_violation(self, error: SummaryReconciliationError, checkpoint: object) -> object:
            return AcceptDivergence(reason="the operator re-provisions", accepted_by="test")

    plugin = Accept()
    register(plugin)
    try:
        agent, _ = app.make_agent(world, [[app.text("Go on.")]], guard=GuardResumes(deps=["create_vm"]))
        result = agent.run_sync(app.ATTACH, message_history=app.load(folder / "history.json"))
    finally:
        unregister(plugin)
    assert result.output == "Go on."


def test_a_cut_off_summary_is_a_partial_summary(stopped: dict[str, Path], tmp_path: Path) -> None:
    folder = _copy(stopped["truncated"], tmp_path)
    history = app.load(folder / "history.json")
    (stamped,) = [m for m in history if m.metadata]
    assert stamped.metadata["summaryguard"]["partial"] is True
    agent, script = app.make_agent(app.World(folder / "world.json"), [[app.text("never")]], guard=GuardResumes())
    with pytest.raises(SummaryReconciliationError) as caught:
        agent.run_sync(app.ATTACH, message_history=history)
    assert (caught.value.kind, caught.value.summary_generation) == (ReconciliationKind.PARTIAL_SUMMARY, 1)
    assert "finish_reason='length'" in caught.value.details["note"]
    assert script.calls == 0


def test_a_crash_inside_the_summarizer_leaves_the_history_before_it(stopped: dict[str, Path], tmp_path: Path) -> None:
    folder = _copy(stopped["torn"], tmp_path)
    history = app.load(folder / "history.json")
    assert not any(m.metadata for m in history)  # nothing half-written: the fold never reached the history
    assert "vm-1" in _parts(history)  # the handle is still there verbatim
    world = app.World(folder / "world.json")
    agent, _ = app.make_agent(world, [[app.text("Attached to vm-1.")]], guard=GuardResumes(deps=["create_vm"]))
    assert agent.run_sync(app.ATTACH, message_history=history).output == "Attached to vm-1."


def test_a_human_approval_resumes_when_the_summary_is_vouched_for(stopped: dict[str, Path], tmp_path: Path) -> None:
    folder = _copy(stopped["approve"], tmp_path)
    world = app.World(folder / "world.json")
    agent, _ = app.make_agent(world, [[app.text("Disk attached to vm-1.")]], guard=GuardResumes())
    result = agent.run_sync(
        message_history=app.load(folder / "history.json"),
        deferred_tool_results=DeferredToolResults(approvals={"call-attach": True}),
    )
    assert result.output == "Disk attached to vm-1."
    assert world.disks == ["vm-1"] and world.created == ["vm-1"]


def test_a_human_approval_resume_refuses_the_rederivation_after_it(stopped: dict[str, Path], tmp_path: Path) -> None:
    folder = _copy(stopped["approve"], tmp_path)
    world = app.World(folder / "world.json")
    agent, _ = app.make_agent(world, AGAIN, guard=GuardResumes())
    with pytest.raises(SummaryReconciliationError) as caught:
        agent.run_sync(
            message_history=app.load(folder / "history.json"),
            deferred_tool_results=DeferredToolResults(approvals={"call-attach": True}),
        )
    assert (caught.value.kind, caught.value.missing_ref) == (ReconciliationKind.REDERIVATION, "create_vm")
    assert world.disks == ["vm-1"] and world.created == ["vm-1"]


def test_a_human_approval_resume_checks_its_dependencies_first(stopped: dict[str, Path], tmp_path: Path) -> None:
    folder = _copy(stopped["approve"], tmp_path)
    world = app.World(folder / "world.json")
    agent, script = app.make_agent(world, [[app.text("never")]], guard=GuardResumes(deps=["create_vm"]))
    with pytest.raises(SummaryReconciliationError) as caught:
        agent.run_sync(
            message_history=app.load(folder / "history.json"),
            deferred_tool_results=DeferredToolResults(approvals={"call-attach": True}),
        )
    assert (caught.value.kind, caught.value.missing_ref) == (ReconciliationKind.MISSING_DEPENDENCY, "create_vm")
    assert world.disks == [] and script.calls == 0  # the approved tool never ran either
