"""SPEC §1 in a real Google ADK app: a crash after compaction, a resume, and the lost handle.

The agent (``adk_app``) runs in a subprocess that is SIGKILLed after the
runner compacted its invocation (or inside a tool, before ADK recorded the
tool's result); its SQLite session (WAL and all) and the outside world are
left on disk. Each test resumes a private copy of them in this process, with
scripted ``BaseLlm`` models: offline, no API key.
"""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")

import adk_app as app
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from summaryguard.guard import (
    AcceptDivergence,
    ReconciliationKind,
    SummaryReconciliationError,
)
from summaryguard.plugins import hookimpl
from summaryguard.plugins.adk import guard_runner
from summaryguard.plugins.adk._events import (
    compactions,
    content_text,
    read_stamp,
    text_digest,
)

HERE = Path(__file__).parent
ATTACH = "Attach the disk now."
AGAIN = [app.call("create_vm", {"size": "small"}, "call-again"), app.text("never")]


@pytest.fixture(scope="module")
def stopped(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One stopped agent per way of stopping: killed after the compaction, killed inside a tool.

    One subprocess imports ADK and forks a child per way (each really killed by SIGKILL).
    """
    base = tmp_path_factory.mktemp("stopped")
    proc = subprocess.run(
        [sys.executable, str(HERE / "adk_app.py"), "all", str(base)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    statuses = dict(line.split()[1:] for line in proc.stdout.splitlines() if line.startswith("exit "))
    assert statuses == {"crash": "-9", "midtool": "-9"}, f"{proc.stdout}\n{proc.stderr}"
    return {mode: base / mode for mode in statuses}


def _copy(source: Path, folder: Path) -> Path:
    """A private copy: the SQLite session read through the WAL the dead process left, and the world."""
    folder.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(source / "session.db") as src, sqlite3.connect(folder / "session.db") as dst:
        src.backup(dst)
    shutil.copy(source / "world.json", folder / "world.json")
    return folder


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


def _session(folder: Path) -> Any:
    service = SqliteSessionService(str(folder / "session.db"))
    return _run(service.get_session(app_name=app.APP, user_id=app.USER, session_id=app.SESSION_ID))


def test_the_stamp_survived_the_crash_in_the_compaction_event(stopped: dict[str, Path], tmp_path: Path) -> None:
    session = _session(_copy(stopped["crash"], tmp_path))
    ((index, event),) = compactions(session.events)
    assert index == len(session.events) - 1  # appended; the raw events stay in the session
    stamp = read_stamp(event)  # read back from SqliteSessionService, in another process
    assert stamp is not None and stamp.summary.generation == 1 and not stamp.summary.partial
    assert stamp.summary_digest == text_digest(content_text(event.actions.compaction.compacted_content))
    assert [(e.ref, e.last_known, e.tool) for e in stamp.summary.drop_manifest] == [("create_vm", "vm-1", "create_vm")]


def test_without_the_guard_the_resume_rederives_the_handle(stopped: dict[str, Path], tmp_path: Path) -> None:
    folder = _copy(stopped["crash"], tmp_path)
    world = app.World(folder / "world.json")
    unguarded, _, _ = app.make_app(world, [*AGAIN[:1], app.text("Attached.")], stamped=False)
    _run(app.run(app.make_runner(unguarded, folder / "session.db"), app.user(ATTACH)))
    assert world.created == ["vm-1", "vm-2"]  # a second VM: the silent divergence


def test_a_declared_dependency_fails_the_resume_before_anything_runs(stopped: dict[str, Path], tmp_path: Path) -> None:
    folder = _copy(stopped["crash"], tmp_path)
    stamped, model, _ = app.make_app(app.World(folder / "world.json"), [app.text("never")])
    runner = guard_runner(app.make_runner(stamped, folder / "session.db"), deps=["create_vm"])
    before = len(_session(folder).events)
    with pytest.raises(SummaryReconciliationError) as caught:
        _run(app.run(runner, app.user(ATTACH)))
    error = caught.value
    assert (error.kind, error.missing_ref, error.summary_generation) == (ReconciliationKind.MISSING_DEPENDENCY, "create_vm", 1)
    assert error.details["session_id"] == app.SESSION_ID
    assert model.calls == 0 and len(_session(folder).events) == before  # refused before ADK wrote or ran anything


def test_a_resumed_invocation_is_checked_too(stopped: dict[str, Path], tmp_path: Path) -> None:
    folder = _copy(stopped["crash"], tmp_path)
    invocation = _session(folder).events[0].invocation_id
    stamped, model, _ = app.make_app(app.World(folder / "world.json"), [app.text("never")], resumable=True)
    runner = guard_runner(app.make_runner(stamped, folder / "session.db"), deps=["create_vm"])
    with pytest.raises(SummaryReconciliationError) as caught:
        _run(app.run(runner, invocation_id=invocation))
    assert (caught.value.kind, caught.value.details["invocation_id"]) == (ReconciliationKind.MISSING_DEPENDENCY, invocation)
    assert model.calls == 0


def test_the_same_resume_refuses_the_rederivation_at_the_tool_hook(stopped: dict[str, Path], tmp_path: Path) -> None:
    folder = _copy(stopped["crash"], tmp_path)
    world = app.World(folder / "world.json")
    stamped, model, _ = app.make_app(world, list(AGAIN))  # create_vm is the user's plain function: nothing wrapped it
    with pytest.raises(SummaryReconciliationError) as caught:
        _run(app.run(guard_runner(app.make_runner(stamped, folder / "session.db")), app.user(ATTACH)))
    error = caught.value
    assert type(error) is SummaryReconciliationError  # the caller's error, not ADK's RuntimeError around it
    assert (error.kind, error.missing_ref, error.summary_generation) == (ReconciliationKind.REDERIVATION, "create_vm", 1)
    assert error.details["last_known"] == "vm-1"
    assert world.created == ["vm-1"]  # the tool never ran
    assert model.calls == 1  # and the model never saw a stand-in result
    responses = [p.function_response for e in _session(folder).events if e.content for p in e.content.parts if p.function_response]
    assert [r.id for r in responses] == ["call-create"]  # no fake tool result was recorded


def test_the_sync_run_is_checked_too(stopped: dict[str, Path], tmp_path: Path) -> None:
    folder = _copy(stopped["crash"], tmp_path)
    stamped, _, _ = app.make_app(app.World(folder / "world.json"), list(AGAIN))
    runner = guard_runner(app.make_runner(stamped, folder / "session.db"))
    with pytest.raises(SummaryReconciliationError) as caught:
        list(runner.run(user_id=app.USER, session_id=app.SESSION_ID, new_message=app.user(ATTACH)))
    assert caught.value.kind is ReconciliationKind.REDERIVATION


def test_the_at_least_once_replay_reruns_the_tool_without_the_option(stopped: dict[str, Path], tmp_path: Path) -> None:
    folder = _copy(stopped["midtool"], tmp_path)
    world = app.World(folder / "world.json")
    invocation = _session(folder).events[0].invocation_id
    resumable, _, _ = app.make_app(world, [app.text("Created.")], compacting=False, resumable=True)
    _run(app.run(guard_runner(app.make_runner(resumable, folder / "session.db")), invocation_id=invocation))
    assert world.created == ["vm-1", "vm-2"]  # ADK ran create_vm again: vm-1 leaked, vm-2 took its place


def test_refuse_replay_refuses_the_unanswered_call(stopped: dict[str, Path], tmp_path: Path) -> None:
    folder = _copy(stopped["midtool"], tmp_path)
    world = app.World(folder / "world.json")
    invocation = _session(folder).events[0].invocation_id
    resumable, model, _ = app.make_app(world, [app.text("never")], compacting=False, resumable=True)
    runner = guard_runner(app.make_runner(resumable, folder / "session.db"), refuse_replay=True)
    with pytest.raises(SummaryReconciliationError) as caught:
        _run(app.run(runner, invocation_id=invocation))
    error = caught.value
    assert (error.kind, error.missing_ref) == (ReconciliationKind.REDERIVATION, "create_vm")
    assert (error.details["call_id"], error.details["invocation_id"]) == ("call-create", invocation)
    assert world.created == ["vm-1"] and model.calls == 0
    # naming other tools leaves this call to ADK
    other = guard_runner(app.make_runner(resumable, folder / "session.db"), refuse_replay=["attach_disk"])
    model.steps = [app.text("Created.")]
    _run(app.run(other, invocation_id=invocation))
    assert world.created == ["vm-1", "vm-2"]


def test_an_answered_call_is_no_replay(stopped: dict[str, Path], tmp_path: Path) -> None:
    """The controller answers the call with the result it reconciled (vm-1): nothing runs twice."""
    folder = _copy(stopped["midtool"], tmp_path)
    world = app.World(folder / "world.json")
    invocation = _session(folder).events[0].invocation_id
    resumable, _, _ = app.make_app(world, [app.text("Created vm-1.")], compacting=False, resumable=True)
    runner = guard_runner(app.make_runner(resumable, folder / "session.db"), refuse_replay=True)
    answer = app.types.Content(
        role="user",
        parts=[app.types.Part(function_response=app.types.FunctionResponse(id="call-create", name="create_vm", response={"result": "vm-1"}))],
    )
    events = _run(app.run(runner, answer, invocation_id=invocation))
    assert world.created == ["vm-1"] and any(e.content and e.content.parts[0].text == "Created vm-1." for e in events)


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
    world = app.World(folder / "world.json")
    stamped, _, _ = app.make_app(world, [*AGAIN[:1], app.text("Attached.")])
    runner = guard_runner(app.make_runner(stamped, folder / "session.db"), deps=["create_vm"])
    events = _run(app.run(runner, app.user(ATTACH)))
    assert world.created == ["vm-1", "vm-2"]  # the new fact, accepted
    assert [r.ref for r in policy.accepted] == ["create_vm"]
    assert any(e.content and e.content.parts and e.content.parts[0].text == "Attached." for e in events)


def test_run_debug_goes_through_the_check(stopped: dict[str, Path], tmp_path: Path) -> None:
    folder = _copy(stopped["crash"], tmp_path)
    stamped, model, _ = app.make_app(app.World(folder / "world.json"), [app.text("never")])
    runner = guard_runner(app.make_runner(stamped, folder / "session.db"), deps=["create_vm"])
    with pytest.raises(SummaryReconciliationError) as caught:
        _run(runner.run_debug(ATTACH, user_id=app.USER, session_id=app.SESSION_ID, quiet=True))
    assert caught.value.kind is ReconciliationKind.MISSING_DEPENDENCY and model.calls == 0
