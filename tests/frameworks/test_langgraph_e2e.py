"""SPEC §1 in a real LangGraph app: a crash, a resume from SQLite, and the lost handle.

The agent (``langgraph_app``) runs in a subprocess that is SIGKILLed between
``summarize`` and ``attach``; its SQLite checkpoint (WAL and all) and the
outside world are left on disk. Each test resumes a copy of them.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph.checkpoint.sqlite")
pytest.importorskip("langmem")

import langgraph_app as app  # noqa: E402  (tests/frameworks is on sys.path: rootdir-relative import)

from summaryguard.guard import AcceptDivergence, ReconciliationKind, Replay, SummaryReconciliationError  # noqa: E402

HERE = Path(__file__).parent


def _crash(folder: Path, mode: str) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    db, world = folder / "checkpoints.db", folder / "world.json"
    proc = subprocess.run(
        [sys.executable, str(HERE / "langgraph_app.py"), str(db), str(world), mode],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == -9, f"the agent was to be killed in 'attach'; rc={proc.returncode}\n{proc.stderr}"
    return db, world


@pytest.fixture(scope="module")
def crashed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    """One crashed run per mode: the unguarded agent and the guarded one."""
    base = tmp_path_factory.mktemp("crashed")
    return {mode: _crash(base / mode, mode) for mode in ("plain", "guarded")}


class Resumed:
    """A private copy of a crashed run: the world and the SQLite checkpointer."""

    def __init__(self, source: tuple[Path, Path], folder: Path) -> None:
        db, world = source
        self.db = folder / "checkpoints.db"
        with sqlite3.connect(db) as src, sqlite3.connect(self.db) as dst:
            src.backup(dst)  # reads through the WAL the killed process left behind
        shutil.copy(world, folder / "world.json")
        self.world = app.World(folder / "world.json")
        self.saver = app.sqlite_saver(self.db)

    def graph(self, **options: Any) -> Any:
        return app.build(self.world, self.saver, **options)


@pytest.fixture
def resumed(crashed: dict[str, tuple[Path, Path]], tmp_path: Path) -> Any:
    app.SESSION.clear()  # a new process: the agent's working memory is gone

    def make(mode: str) -> Resumed:
        folder = tmp_path / mode
        folder.mkdir()
        return Resumed(crashed[mode], folder)

    yield make
    app.SESSION.clear()


def test_the_crash_left_a_summarized_checkpoint_waiting_for_attach(resumed: Any) -> None:
    run = resumed("guarded")
    snapshot = run.graph().get_state(app.THREAD)
    assert snapshot.next == ("attach",)
    assert run.world.created == ["vm-1"] and run.world.disks == []
    texts = [m.content for m in snapshot.values["messages"]]
    assert not any("vm-1" in t for t in texts), "the summary was to drop the handle"
    stamp = snapshot.values["context"]["summaryguard"]
    assert stamp["generation"] == 1
    assert stamp["drop_manifest"] == [{"ref": "create_vm", "last_known": "vm-1", "tool": "create_vm", "turn": 2}]


def test_without_the_guard_the_resume_diverges_silently(resumed: Any) -> None:
    run = resumed("plain")
    result = run.graph().invoke(None, app.THREAD)  # no error
    assert result["messages"][-1].content == "Attached the data disk to vm-2."
    # Lineage: the VM created before the crash is vm-1; the disk went to a new vm-2.
    assert run.world.created == ["vm-1", "vm-2"]
    assert run.world.disks == ["vm-2"]


def test_with_the_guard_the_rederivation_fails_closed(resumed: Any) -> None:
    run = resumed("guarded")
    graph = run.graph(guarded=True)
    crashed_at = graph.get_state(app.THREAD)
    with pytest.raises(SummaryReconciliationError) as caught:
        graph.invoke(None, app.THREAD)
    error = caught.value
    assert error.kind is ReconciliationKind.REDERIVATION
    assert error.missing_ref == "create_vm"
    assert (error.summary_generation, error.checkpoint_turn) == (1, crashed_at.metadata["step"])
    assert error.details["thread_id"] == "provision-1"
    assert error.details["checkpoint_id"] == crashed_at.config["configurable"]["checkpoint_id"]
    assert error.details["last_known"] == "vm-1"
    assert "thread_id=provision-1" in str(error)
    assert run.world.created == ["vm-1"] and run.world.disks == [], "the tool must not have run"


def test_a_declared_dependency_fails_the_resume_before_anything_runs(resumed: Any) -> None:
    run = resumed("guarded")
    graph = run.graph(guarded=True, deps=["create_vm"])
    before = graph.get_state(app.THREAD)
    with pytest.raises(SummaryReconciliationError) as caught:
        graph.invoke(None, app.THREAD)
    error = caught.value
    assert error.kind is ReconciliationKind.MISSING_DEPENDENCY
    assert error.missing_ref == "create_vm"
    assert error.details["checkpoint_id"] == before.config["configurable"]["checkpoint_id"]
    after = graph.get_state(app.THREAD)
    assert after.config == before.config, "no step may run, no checkpoint be written"


def test_the_streaming_and_async_resumes_fail_closed_too(resumed: Any) -> None:
    run = resumed("guarded")
    with pytest.raises(SummaryReconciliationError, match="rederivation"):
        list(run.graph(guarded=True).stream(None, app.THREAD))

    async def both() -> None:
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        async with AsyncSqliteSaver.from_conn_string(str(run.db)) as saver:
            saver.serde = app.sqlite_saver(run.db).serde
            graph = app.build(run.world, saver, guarded=True)
            with pytest.raises(SummaryReconciliationError) as caught:
                await graph.ainvoke(None, app.THREAD)
            assert caught.value.details["thread_id"] == "provision-1"
            assert caught.value.kind is ReconciliationKind.REDERIVATION
            with pytest.raises(SummaryReconciliationError):
                async for _ in graph.astream(None, app.THREAD):
                    pass

    asyncio.run(both())
    assert run.world.created == ["vm-1"]


def test_an_explicit_acceptance_lets_it_continue_on_record(resumed: Any, spy: Any) -> None:
    run = resumed("guarded")
    graph = run.graph(guarded=True, deps=["create_vm"])
    accepted = graph.accepting(["create_vm"], reason="the operator accepts a new VM", accepted_by="ops")
    result = accepted.invoke(None, app.THREAD)
    assert result["messages"][-1].content == "Attached the data disk to vm-2."
    assert run.world.disks == ["vm-2"]
    [record] = spy.accepted
    assert (record.ref, record.kind, record.accepted_by) == ("create_vm", ReconciliationKind.MISSING_DEPENDENCY, "ops")
    assert record.reason == "the operator accepts a new VM"


def test_a_resolver_plugin_can_accept_instead(resumed: Any, spy: Any) -> None:
    run = resumed("guarded")
    spy.answers = lambda error, checkpoint: AcceptDivergence("policy: re-provision", accepted_by="policy")
    result = run.graph(guarded=True, deps=["create_vm"]).invoke(None, app.THREAD)
    assert result["messages"][-1].content == "Attached the data disk to vm-2."
    assert [r.ref for r in spy.accepted] == ["create_vm"]


def _exact(graph: Any) -> Any:
    """The checkpoint before the VM was asked for: nothing summarized, nothing dropped."""
    return next(s for s in graph.get_state_history(app.THREAD) if s.next == ("plan",))


def test_a_replay_from_an_earlier_exact_checkpoint_continues(resumed: Any) -> None:
    run = resumed("guarded")
    graph = run.graph(guarded=True)
    result = graph.invoke(None, _exact(graph).config)
    # The replayed branch made its own VM and attached the disk to that one: one lineage.
    assert result["messages"][-1].content == "Attached the data disk to vm-2."
    assert run.world.created == ["vm-1", "vm-2"] and run.world.disks == ["vm-2"]


def test_a_resolver_plugin_can_replay_instead(resumed: Any, spy: Any) -> None:
    run = resumed("guarded")
    # What the next step needs depends on the step: only `attach` needs the VM.
    graph = run.graph(guarded=True, deps=lambda snapshot: ["create_vm"] if "attach" in snapshot.next else [])
    spy.answers = lambda error, checkpoint: Replay(_exact(graph))
    result = graph.invoke(None, app.THREAD)
    assert result["messages"][-1].content == "Attached the data disk to vm-2."
    assert [e.kind for e in spy.resolved] == [ReconciliationKind.MISSING_DEPENDENCY]


def test_the_world_file_is_what_the_agent_left(crashed: dict[str, tuple[Path, Path]]) -> None:
    for _, world in crashed.values():
        assert json.loads(world.read_text()) == {"created": ["vm-1"], "disks": []}
