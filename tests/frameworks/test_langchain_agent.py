"""SPEC §1 and §5 in a real LangChain v1 agent: ``create_agent`` with summarization, offline.

The agent (``langchain_agent_app``) is a real ``create_agent`` graph with a
scripted chat model and ``SummarizationMiddleware(summarizer=...)`` (no model):
the summary folds the ``create_vm`` result and does not quote the handle. A
subprocess is SIGKILLed on the first model call after the summary (SQLite
checkpoints left on disk); another stops at human-approval requests. Each
test resumes a private copy of what they left.
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

pytest.importorskip("langchain.agents")
pytest.importorskip("langgraph.checkpoint.sqlite")

import langchain_agent_app as app  # noqa: E402  (tests/frameworks is on sys.path: rootdir-relative import)
from langchain_core.messages import HumanMessage, ToolMessage  # noqa: E402
from langchain_core.tools import StructuredTool  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402
from langgraph.types import Command  # noqa: E402

from summaryguard.guard import ReconciliationKind, SummaryReconciliationError, check_resume, tool_guard  # noqa: E402
from summaryguard.plugins.langchain import guard_agent  # noqa: E402
from summaryguard.plugins.langgraph import guard_tool  # noqa: E402

HERE = Path(__file__).parent
THREAD = app.THREAD


def _start(mode: str, *paths: Path) -> subprocess.Popen[str]:
    command = [sys.executable, str(HERE / "langchain_agent_app.py"), mode, *map(str, paths)]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.fixture(scope="module")
def stopped(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    """What the stopped processes left: a crash after compaction, and two pending approvals."""
    base = tmp_path_factory.mktemp("stopped")
    runs = {name: (base / name / "checkpoints.db", base / name / "world.json") for name in ("crash", "dropped", "kept")}
    (base / "crash").mkdir()
    crash, approve = _start("crash", *runs["crash"]), _start("approve", base)  # side by side
    _, err = crash.communicate(timeout=120)
    assert crash.returncode == -9, f"the agent was to be killed after its summary; rc={crash.returncode}\n{err}"
    _, err = approve.communicate(timeout=120)
    assert approve.returncode == 0, err
    return runs


class Copy:
    """A private copy of a stopped run: the world and the SQLite checkpointer."""

    def __init__(self, source: tuple[Path, Path], folder: Path) -> None:
        db, world = source
        folder.mkdir()
        self.db = folder / "checkpoints.db"
        with sqlite3.connect(db) as src, sqlite3.connect(self.db) as dst:
            src.backup(dst)  # reads through the WAL the killed process left behind
        shutil.copy(world, folder / "world.json")
        self.world = app.World(folder / "world.json")
        self.saver = SqliteSaver(sqlite3.connect(self.db, check_same_thread=False))

    def agent(self, **options: Any) -> Any:
        return app.build(self.saver, self.world, **options)


@pytest.fixture
def copy(stopped: dict[str, tuple[Path, Path]], tmp_path: Path) -> Any:
    return lambda name: Copy(stopped[name], tmp_path / name)


def _refused(error: SummaryReconciliationError) -> None:
    assert type(error) is SummaryReconciliationError  # plain: not LangGraph's bubbling carrier
    assert error.kind is ReconciliationKind.REDERIVATION
    assert (error.summary_generation, error.missing_ref) == (1, "create_vm")
    assert error.details["tool"] == "create_vm" and error.details["last_known"] == "vm-1"
    assert error.details["thread_id"] == "provision-1"


# -- a crash after compaction -------------------------------------------------------------------


def test_the_crash_left_a_stamped_summary_in_the_same_checkpoint(copy: Any) -> None:
    run = copy("crash")
    snapshot = run.agent().get_state(THREAD)
    assert snapshot.next == ("model",)
    summary = snapshot.values["messages"][0]
    assert summary.additional_kwargs["lc_source"] == "summarization" and "vm-1" not in summary.content
    stamp = snapshot.values["summaryguard"]
    assert stamp["generation"] == 1 and stamp["partial"] is False
    assert stamp["drop_manifest"] == [{"ref": "create_vm", "last_known": "vm-1", "tool": "create_vm", "turn": 2}]
    assert run.world.created == ["vm-1"]


def test_a_resume_needing_the_dropped_handle_fails_closed_before_anything_runs(copy: Any) -> None:
    run = copy("crash")
    agent = run.agent(deps=["create_vm"])
    step = agent.get_state(THREAD).metadata["step"]
    with pytest.raises(SummaryReconciliationError) as caught:
        agent.invoke(None, THREAD)
    error = caught.value
    assert error.kind is ReconciliationKind.MISSING_DEPENDENCY
    assert (error.summary_generation, error.checkpoint_turn, error.missing_ref) == (1, step, "create_vm")
    assert error.details["thread_id"] == "provision-1" and "checkpoint_id" in error.details
    assert run.world.created == ["vm-1"]


def test_the_resumed_agent_may_not_re_derive_the_handle_with_a_tool_nobody_wrapped(copy: Any) -> None:
    run = copy("crash")
    with pytest.raises(SummaryReconciliationError) as caught:
        run.agent().invoke(None, THREAD)  # the model, not seeing vm-1, calls create_vm again
    _refused(caught.value)
    assert run.world.created == ["vm-1"] and run.world.disks == []


def test_without_the_guard_the_same_resume_silently_diverges(copy: Any) -> None:
    """The control: LangChain's own middleware and no guard make a second VM and attach the disk to it."""
    run = copy("crash")
    result = run.agent(guarded=False).invoke(None, THREAD)
    assert run.world.created == ["vm-1", "vm-2"] and run.world.disks == ["vm-2"]
    assert "vm-2" in result["messages"][-1].content


def test_an_async_run_stamps_and_its_async_resume_is_refused_the_same_way(tmp_path: Path) -> None:
    """``abefore_model`` stamps and ``awrap_tool_call`` refuses: the whole run through ``ainvoke``."""
    world = app.World(tmp_path / "world.json")
    model = app.PolicyModel(raise_after_summary=True)
    agent = app.build(InMemorySaver(), world, model=model)

    async def run() -> None:
        with pytest.raises(RuntimeError, match="went away"):
            await agent.ainvoke({"messages": [HumanMessage(app.REQUEST)]}, THREAD)
        model.raise_after_summary = False
        assert (await agent.aget_state(THREAD)).values["summaryguard"]["generation"] == 1
        await agent.ainvoke(None, THREAD)

    with pytest.raises(SummaryReconciliationError) as caught:
        asyncio.run(run())
    _refused(caught.value)
    assert world.created == ["vm-1"]


def test_a_refusal_inside_a_tool_reaches_the_caller_not_the_model(copy: Any) -> None:
    """No middleware: the tool itself refuses (guard_tool), and the refusal is never a ToolMessage for the model."""
    run = copy("crash")
    create_vm, disk_types, attach_disk = app.tools(run.world)
    provisioning = tool_guard(run.world.create_vm, name="create_vm")

    create_vm_tool = StructuredTool.from_function(
        lambda: provisioning(), name="create_vm", description="Create a virtual machine and return its handle."
    )
    agent = run.agent(tool_list=[create_vm_tool, disk_types, attach_disk], refuse=False)
    with pytest.raises(SummaryReconciliationError) as caught:
        agent.invoke(None, THREAD)
    _refused(caught.value)
    messages = agent.get_state(THREAD).values["messages"]
    assert not [m for m in messages if isinstance(m, ToolMessage) and "rederivation" in str(m.content)]
    assert run.world.created == ["vm-1"]

    wrapped = run.agent(tool_list=[guard_tool(create_vm), disk_types, attach_disk], refuse=False)
    with pytest.raises(SummaryReconciliationError) as caught:
        wrapped.invoke(None, THREAD)
    _refused(caught.value)
    assert run.world.created == ["vm-1"]


def test_check_resume_reads_the_agent_checkpoint_directly(copy: Any) -> None:
    run = copy("crash")
    snapshot = run.agent().get_state(THREAD)
    with pytest.raises(SummaryReconciliationError, match="missing-dependency"):
        check_resume(snapshot, ["create_vm"])
    check_resume(snapshot, ["disk_types"])  # kept verbatim: its message was not folded


# -- human approval across processes -----------------------------------------------------------------


def test_an_approval_resume_across_processes_may_not_re_create_the_vm(copy: Any) -> None:
    run = copy("dropped")
    agent = run.agent(approve=True)
    assert agent.get_state(THREAD).next == ("HumanInTheLoopMiddleware.after_model",)
    with pytest.raises(SummaryReconciliationError) as caught:
        agent.invoke(Command(resume=app.APPROVE), THREAD)
    _refused(caught.value)
    assert run.world.created == ["vm-1"]


def test_an_approval_resume_whose_summary_kept_the_handle_goes_on(copy: Any) -> None:
    run = copy("kept")
    agent = run.agent(approve=True, keep_handle=True, deps=["create_vm"])
    result = agent.invoke(Command(resume=app.APPROVE), THREAD)
    assert run.world.created == ["vm-1"] and run.world.disks == ["vm-1"]
    assert result["messages"][-1].content == "Done: disk-1 attached to vm-1."
    stamp = agent.get_state(THREAD).values["summaryguard"]
    assert (stamp["generation"], stamp["parent_generation"]) == (2, 1)  # summarized again during the run
    assert stamp["verbatim_refs"]["create_vm"] == "vm-1"


# -- summaries the guard cannot vouch for ------------------------------------------------------------


def _summarized(**options: Any) -> tuple[Any, Any]:
    """An agent stopped by a failing model call right after its summary (in memory)."""
    saver = InMemorySaver()
    world = app.World(options.pop("world"))
    model = app.PolicyModel(raise_after_summary=True)
    agent = app.build(saver, world, model=model, **options)
    with pytest.raises(RuntimeError, match="went away"):
        agent.invoke({"messages": [HumanMessage(app.REQUEST)]}, THREAD)
    model.raise_after_summary = False
    return agent, world


def test_a_fallback_summary_is_partial_and_its_resume_fails_closed(tmp_path: Path) -> None:
    # trim_tokens_to_summarize=1: nothing fits, the middleware writes "too long to summarize"
    agent, world = _summarized(world=tmp_path / "world.json", trim_tokens_to_summarize=1)
    values = agent.get_state(THREAD).values
    assert "too long to summarize" in values["messages"][0].content
    assert values["summaryguard"]["partial"] is True
    with pytest.raises(SummaryReconciliationError) as caught:
        agent.invoke(None, THREAD)
    assert caught.value.kind is ReconciliationKind.PARTIAL_SUMMARY
    assert caught.value.summary_generation == 1
    assert world.created == ["vm-1"]


def test_a_summary_of_langchains_plain_middleware_is_no_summary_we_can_vouch_for(tmp_path: Path) -> None:
    plain, world = _summarized(world=tmp_path / "world.json", guarded=False)
    with pytest.raises(SummaryReconciliationError) as caught:
        guard_agent(plain).invoke(None, THREAD)
    assert caught.value.kind is ReconciliationKind.NO_SUMMARY
    assert "StampedSummarization" in caught.value.details["note"]
    assert world.created == ["vm-1"]


def test_an_agent_that_never_summarized_resumes_unchecked(tmp_path: Path) -> None:
    saver = InMemorySaver()
    world = app.World(tmp_path / "world.json")
    agent = app.build(saver, world, approve=True, trigger=("messages", 50))
    agent.invoke({"messages": [HumanMessage(app.REQUEST)]}, THREAD)
    result = agent.invoke(Command(resume=app.APPROVE), THREAD)  # create_vm approved
    result = agent.invoke(Command(resume=app.APPROVE), THREAD)  # attach_disk approved
    assert world.created == ["vm-1"] and world.disks == ["vm-1"]
    assert "summaryguard" not in agent.get_state(THREAD).values
    assert json.dumps(result["messages"][-1].content) == json.dumps("Done: disk-1 attached to vm-1.")


def test_a_controller_may_accept_a_fallback_summary_on_record(tmp_path: Path) -> None:
    agent, world = _summarized(world=tmp_path / "world.json", trim_tokens_to_summarize=1)
    accepted = agent.accepting(kinds=["partial-summary"], reason="operator read the transcript", accepted_by="ops")
    with pytest.raises(SummaryReconciliationError) as caught:
        accepted.invoke(None, THREAD)  # admitted; the fallback dropped vm-1, so create_vm is still refused
    assert caught.value.kind is ReconciliationKind.REDERIVATION
    assert world.created == ["vm-1"]


def test_a_summary_message_replaced_behind_its_stamp_fails_as_a_generation_mismatch(tmp_path: Path) -> None:
    agent, world = _summarized(world=tmp_path / "world.json")
    summary = agent.get_state(THREAD).values["messages"][0]
    forged = HumanMessage(
        "Here is a summary of the conversation to date:\n\nThe VM is vm-7.",
        id=summary.id,
        additional_kwargs={"lc_source": "summarization"},
    )
    agent.update_state(THREAD, {"messages": [forged]})  # the add_messages reducer replaces it by id
    with pytest.raises(SummaryReconciliationError) as caught:
        agent.invoke(None, THREAD)
    assert caught.value.kind is ReconciliationKind.GENERATION_MISMATCH
    assert "not the one its summaryguard stamp describes" in caught.value.details["note"]
    assert world.created == ["vm-1"]


def test_the_readme_snippet_runs_as_written_and_resumes_before_the_vm_exists(tmp_path: Path) -> None:
    """The README's three lines, with a model, tools and a saver of this file's app. A resume
    before ``create_vm`` ran (an approval of it, or a crash before it) must go on: the
    snippet's ``deps=["create_vm"]`` failed it as missing-dependency, as no VM existed yet."""
    from langchain.agents import create_agent

    from fake_world import World

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    block = readme.split("\n## LangChain\n", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    world = World(tmp_path / "world.json")
    namespace: dict[str, Any] = {
        "create_agent": create_agent, "model": app.PolicyModel(), "tools": app.tools(world), "saver": InMemorySaver()
    }
    exec(compile(block, "README.md", "exec", dont_inherit=True), namespace)  # noqa: S102  (as a script runs it)
    agent = namespace["agent"]
    agent.invoke({"messages": [HumanMessage(app.REQUEST)]}, app.THREAD, interrupt_before=["tools"])
    assert agent.get_state(app.THREAD).next == ("tools",) and world.created == []  # stopped before create_vm
    assert agent.invoke(None, app.THREAD)["messages"][-1].content.startswith("Done")  # the resume goes on
    assert world.created == ["vm-1"]
