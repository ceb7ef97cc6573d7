"""The Google ADK room against the real package, in this process: stamps, checks, tools, the analyzer model.

The crash itself is in ``test_adk_e2e``; these cover what a stamp says about
the summarizer's own failures (a tool response cut before the model read it,
a summary cut short, a compaction made without the stamp), and the ways a
refusal could get lost on its way to the caller.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")

from google.adk import Agent
from google.adk.apps.app import App
from google.adk.apps.llm_event_summarizer import LlmEventSummarizer
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions, EventCompaction
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools import AgentTool, FunctionTool
from google.genai import types
from summaryguard.guard import (
    ReconciliationKind,
    SummaryReconciliationError,
    check_resume,
    resume_guard,
    tool_guard,
)
from summaryguard.guard.model import DroppedRef
from summaryguard.plugins.adk import (
    AdkCheckpoint,
    GuardedRunner,
    StampedSummarizer,
    SummaryGuardPlugin,
    guard_runner,
    guard_tool,
    session_checkpoint,
    stamp_compactions,
)
from summaryguard.plugins.adk._events import compactions, default_refs, read_stamp
from summaryguard.plugins.adk._stamp import enter_session
from summaryguard.plugins.framework import FrameworkModel

import adk_app as app


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


def _session(runner: Any) -> Any:
    return _run(runner.session_service.get_session(app_name=app.APP, user_id=app.USER, session_id=app.SESSION_ID))


def _stamps(runner: Any) -> list[Any]:
    return [read_stamp(e) for _, e in compactions(_session(runner).events)]


def _created(tmp_path: Path, *, summary: list[Any] | None = None, log: int = 0, stamped: bool = True) -> tuple[Any, app.World]:
    """A runner whose first invocation created vm-1 and was compacted."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    world = app.World(tmp_path / "world.json")
    made, _, _ = app.make_app(world, app.CREATE, summary=summary, log=log, stamped=stamped)
    runner = app.make_runner(made, tmp_path / "session.db")
    _run(app.run(runner, app.user(app.REQUEST)))
    return runner, world


def _resume(runner: Any, steps: list[Any], **options: Any) -> list[Any]:
    runner.agent.model.steps = list(steps)
    return _run(app.run(guard_runner(runner, **options), app.user("Attach the disk now.")))


def test_a_handle_past_the_summarizers_cut_of_a_long_tool_response_is_a_drop(tmp_path: Path) -> None:
    # LlmEventSummarizer shows its model each tool response cut to 2000 characters: even a model
    # that repeats everything it was shown (echo) cannot keep a handle that came after the cut.
    runner, _ = _created(tmp_path / "long", summary=[app.echo], log=2500)
    (stamp,) = _stamps(runner)
    dropped = {e.ref: e for e in stamp.summary.drop_manifest}
    assert (dropped["create_vm.vm"].last_known, dropped["create_vm.vm"].tool) == ("vm-1", "create_vm")
    with pytest.raises(SummaryReconciliationError) as caught:
        _resume(runner, [app.text("never")], deps=["create_vm.vm"])
    assert (caught.value.kind, caught.value.missing_ref) == (ReconciliationKind.MISSING_DEPENDENCY, "create_vm.vm")
    # the same handle in a short response reaches the summary, verbatim: kept, and the resume goes on
    short, _ = _created(tmp_path / "short", summary=[app.echo], log=10)
    (kept,) = _stamps(short)
    assert kept.summary.verbatim_refs["create_vm.vm"] == "vm-1"
    assert "create_vm.vm" not in {e.ref for e in kept.summary.drop_manifest}
    _resume(short, [app.text("Attached.")], deps=["create_vm.vm"])


def test_a_summary_cut_short_by_the_model_is_stamped_partial(tmp_path: Path) -> None:
    cut = LlmResponse(content=app.text("The user asked for a VM; the VM"), finish_reason=types.FinishReason.MAX_TOKENS)
    runner, _ = _created(tmp_path, summary=[cut])
    (stamp,) = _stamps(runner)
    assert stamp.summary.partial and "MAX_TOKENS" in (stamp.note or "")
    with pytest.raises(SummaryReconciliationError) as caught:
        _resume(runner, [app.text("never")])
    assert (caught.value.kind, caught.value.summary_generation) == (ReconciliationKind.PARTIAL_SUMMARY, 1)
    assert "MAX_TOKENS" in caught.value.details["note"]


def test_a_summary_that_is_a_streamed_chunk_is_stamped_partial(tmp_path: Path) -> None:
    # LlmEventSummarizer keeps the first response with content and stops reading: a model that
    # streams hands it the first chunk, and that chunk is the whole summary ADK appends.
    chunk = LlmResponse(content=app.text("The user asked for a VM; the VM"), partial=True)
    runner, _ = _created(tmp_path, summary=[chunk])
    (stamp,) = _stamps(runner)
    assert stamp.summary.partial and "streamed chunk" in (stamp.note or "")
    with pytest.raises(SummaryReconciliationError) as caught:
        _resume(runner, [app.text("never")])
    assert (caught.value.kind, caught.value.summary_generation) == (ReconciliationKind.PARTIAL_SUMMARY, 1)


def test_a_compaction_made_without_the_stamp_is_refused(tmp_path: Path) -> None:
    runner, _ = _created(tmp_path, stamped=False)
    assert _stamps(runner) == [None]
    with pytest.raises(SummaryReconciliationError) as caught:
        _resume(runner, [app.text("never")])
    assert caught.value.kind is ReconciliationKind.GENERATION_MISMATCH
    assert "carries no summaryguard stamp" in caught.value.details["note"]


def test_the_plugin_alone_fails_closed_on_an_unguarded_runner(tmp_path: Path) -> None:
    runner, _ = _created(tmp_path, stamped=False)
    runner.plugin_manager.register_plugin(SummaryGuardPlugin())
    runner.agent.model.steps = [app.text("never")]
    with pytest.raises(RuntimeError) as caught:  # ADK's wrapper: guard_runner hands the caller ours itself
        _run(app.run(runner, app.user("Attach the disk now.")))
    assert isinstance(caught.value.__cause__, SummaryReconciliationError)
    assert caught.value.__cause__.kind is ReconciliationKind.GENERATION_MISMATCH
    assert runner.agent.model.calls == 2  # the first invocation's two model calls: the resume never ran


def test_the_stamped_summarizer_refuses_to_extend_an_unstamped_compaction(tmp_path: Path) -> None:
    runner, _ = _created(tmp_path, stamped=False)
    stamp_compactions(runner.app)  # adopted later: the session already holds an unstamped summary
    summarizer = runner.app.events_compaction_config.summarizer
    session = _session(runner)
    enter_session(session)  # what summaryguard's plugin does as a run starts
    with pytest.raises(SummaryReconciliationError) as caught:  # ADK logs it and keeps the history uncompacted
        _run(summarizer.maybe_summarize_events(events=session.events[:4]))
    assert caught.value.kind is ReconciliationKind.GENERATION_MISMATCH
    assert "carries no summaryguard stamp" in caught.value.reason
    assert summarizer.inner._llm.calls == 1  # only the first, unstamped compaction asked the model


def test_a_second_compaction_extends_the_first(tmp_path: Path) -> None:
    runner, _ = _created(tmp_path)
    runner.app.events_compaction_config.summarizer.inner._llm.steps = [app.text("Still waiting for the disk.")]
    # (ADK compacts a range only when it is larger than the last summary)
    _resume(runner, [app.text("Which size should the disk be? " + "The options are listed below. " * 10)])
    _, second = _stamps(runner)
    assert (second.summary.generation, second.summary.parent_generation) == (2, 1)
    assert "create_vm" in {e.ref for e in second.summary.drop_manifest}  # still dropped, still refused


def test_a_summary_replaced_behind_its_stamp_has_no_generation(tmp_path: Path) -> None:
    runner, _ = _created(tmp_path)
    session = _session(runner)
    _, event = compactions(session.events)[-1]
    event.actions.compaction.compacted_content = app.text("A different summary, holding vm-7.")
    checkpoint = session_checkpoint(session)
    assert isinstance(checkpoint, AdkCheckpoint)
    with pytest.raises(SummaryReconciliationError) as caught:
        check_resume(checkpoint)
    assert caught.value.kind is ReconciliationKind.GENERATION_MISMATCH
    assert "no longer holds the summary" in checkpoint.note


def test_a_session_without_compaction_is_no_summary_state(tmp_path: Path) -> None:
    world = app.World(tmp_path / "world.json")
    made, _, _ = app.make_app(world, app.CREATE, compacting=False)
    runner = app.make_runner(made, tmp_path / "session.db")
    _run(app.run(guard_runner(runner, deps=["create_vm"]), app.user(app.REQUEST)))
    assert session_checkpoint(_session(runner)) is None and world.created == ["vm-1"]


class _Answering(BasePlugin):
    """A user's plugin that answers tool calls itself (a cache) and turns tool errors into text (a retry plugin)."""

    async def before_tool_callback(self, *, tool: Any, tool_args: Any, tool_context: Any) -> Any:
        return {"result": "vm-cached"} if tool_context.function_call_id == "call-again" else None

    async def on_tool_error_callback(self, *, tool: Any, tool_args: Any, tool_context: Any, error: Exception) -> Any:
        return {"error": "Something went wrong, please try again."}


def test_summaryguards_plugin_runs_before_the_users_tool_plugins(tmp_path: Path) -> None:
    runner, world = _created(tmp_path)
    runner.plugin_manager.plugins[:] = [_Answering(name="answering")]  # ours removed, theirs first
    with pytest.raises(SummaryReconciliationError) as caught:  # guard_runner puts summaryguard's plugin first again
        _resume(runner, [app.call("create_vm", {"size": "small"}, "call-again"), app.text("never")])
    assert caught.value.kind is ReconciliationKind.REDERIVATION and world.created == ["vm-1"]
    assert [type(p).__name__ for p in runner.plugin_manager.plugins] == ["SummaryGuardPlugin", "_Answering"]


def test_a_refusal_raised_inside_a_tool_is_raised_again_not_answered() -> None:
    refusal = SummaryReconciliationError(1, 3, "create_vm", "refused", kind=ReconciliationKind.REDERIVATION)
    wrapped = RuntimeError("Error in plugin 'x' during 'before_tool_callback' callback")
    wrapped.__cause__ = refusal
    plugin = SummaryGuardPlugin()
    with pytest.raises(SummaryReconciliationError) as caught:
        _run(plugin.on_tool_error_callback(tool=None, tool_args={}, tool_context=None, error=wrapped))
    assert caught.value is refusal
    assert _run(plugin.on_tool_error_callback(tool=None, tool_args={}, tool_context=None, error=ValueError("x"))) is None


def test_guard_tool_guards_an_adk_tool_object_on_its_own() -> None:
    def create_vm(size: str) -> str:
        """Create a virtual machine."""
        return "vm-2"

    plain = FunctionTool(create_vm)
    guarded = tool_guard(plain)  # the room's summaryguard_wrap_tool hook
    assert guarded is not plain and guarded.name == "create_vm" and guard_tool(guarded) is guarded
    checkpoint = AdkCheckpoint("s1", (3, 1, True, 1, False, ()), (DroppedRef("create_vm", "vm-1", "create_vm"),))

    @resume_guard
    async def resume(checkpoint: AdkCheckpoint) -> Any:
        return await guarded.run_async(args={"size": "small"}, tool_context=None)

    with pytest.raises(SummaryReconciliationError) as caught:
        _run(resume(checkpoint))
    assert (caught.value.kind, caught.value.missing_ref) == (ReconciliationKind.REDERIVATION, "create_vm")
    assert _run(plain.run_async(args={"size": "small"}, tool_context=None)) == "vm-2"  # the user's tool is untouched


def test_default_refs_follow_the_rooms_convention() -> None:
    assert [(r.name, r.value, r.tool) for r in default_refs("create_vm", {"result": "vm-1"})] == [("create_vm", "vm-1", "create_vm")]
    got = [(r.name, r.value) for r in default_refs("create_vm", {"vm": "vm-1", "ok": True, "port": 22})]
    assert got == [("create_vm.vm", "vm-1"), ("create_vm.port", "22")]


def test_stamp_compactions_needs_a_compacting_app() -> None:
    agent = app.make_app(app.World.__new__(app.World), [], compacting=False)[0].root_agent
    with pytest.raises(TypeError, match="events_compaction_config"):
        stamp_compactions(App(name="ops", root_agent=agent))
    with pytest.raises(TypeError, match="collection of reference names"):
        guard_runner(app.make_runner(App(name="ops", root_agent=agent), ":memory:"), deps="create_vm")


def test_the_model_is_valid_and_registered() -> None:
    from summaryguard.plugins.adk.model import MODEL
    from summaryguard.plugins.manager import get_plugin_manager

    model = FrameworkModel.from_mapping(MODEL)
    assert model.resume_keywords == ("invocation_id",) and model.guarantees == ()
    names = [m["name"] for ms in get_plugin_manager().hook.summaryguard_frameworks() for m in ms]
    assert "adk" in names


def test_a_refusal_a_tool_swallowed_still_stops_the_run(tmp_path: Path) -> None:
    runner, world = _created(tmp_path)
    create = tool_guard(world.create_vm, name="create_vm")

    def provision(size: str) -> str:
        """Provision a VM (the user's own wrapper, which hides every error from the model)."""
        try:
            return create()
        except Exception:  # noqa: BLE001 - the swallowing under test
            return "provisioning failed, please try again"

    runner.agent.tools.append(provision)
    with pytest.raises(SummaryReconciliationError) as caught:
        _resume(runner, [app.call("provision", {"size": "small"}, "call-provision"), app.text("never")])
    assert (caught.value.kind, caught.value.missing_ref) == (ReconciliationKind.REDERIVATION, "create_vm")
    assert world.created == ["vm-1"] and runner.agent.model.calls == 3  # the model never read the swallowed text
    recorded = [p.function_response.name for e in _session(runner).events if e.content for p in e.content.parts or () if p.function_response]
    assert recorded == ["create_vm"]  # nor will it on the next resume: the swallowed text was never recorded as a result


def test_the_room_costs_nothing_until_used() -> None:
    code = (
        "import sys; from summaryguard.plugins.manager import get_plugin_manager; get_plugin_manager(); "
        "import summaryguard.plugins.adk; assert 'google.adk' not in sys.modules, 'imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_the_readme_snippet_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    block = readme.split("\n## Google ADK\n", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {}
    exec(compile(block, "README.md", "exec", dont_inherit=True), namespace)  # noqa: S102  (as a script runs it)
    runner = namespace["runner"]
    assert isinstance(runner, GuardedRunner) and isinstance(runner.plugin_manager.plugins[0], SummaryGuardPlugin)
    assert isinstance(namespace["app"].events_compaction_config.summarizer, StampedSummarizer)


def test_the_stamped_summarizer_never_stamps_from_another_sessions_history(tmp_path: Path) -> None:
    runner, _ = _created(tmp_path / "a")
    other, _ = _created(tmp_path / "b")
    summarizer = runner.app.events_compaction_config.summarizer
    enter_session(_session(other))  # a run of another runner, earlier in this task
    with pytest.raises(RuntimeError, match="another session"):
        _run(summarizer.maybe_summarize_events(events=_session(runner).events[:4]))
    enter_session(None)
    with pytest.raises(RuntimeError, match="needs summaryguard's ADK plugin"):
        _run(summarizer.maybe_summarize_events(events=_session(runner).events[:4]))


def test_a_refusal_inside_an_agent_used_as_a_tool_reaches_the_caller(tmp_path: Path) -> None:
    runner, world = _created(tmp_path)
    helper_model = app.ScriptedLlm(steps=[app.call("create_vm", {"size": "small"}, "call-inner"), app.text("never")])
    helper = Agent(name="helper", model=helper_model, description="Provisions VMs.", tools=app.tools(world))
    runner.agent.tools.append(AgentTool(helper))  # ADK runs it with the parent's plugins
    with pytest.raises(SummaryReconciliationError) as caught:
        _resume(runner, [app.call("helper", {"request": "a VM"}, "call-helper"), app.text("never")])
    assert type(caught.value) is SummaryReconciliationError
    assert (caught.value.kind, caught.value.missing_ref) == (ReconciliationKind.REDERIVATION, "create_vm")
    assert world.created == ["vm-1"] and helper_model.calls == 1


def test_a_summarizer_that_claims_more_than_it_was_shown_drops_what_it_hides(tmp_path: Path) -> None:
    world = app.World(tmp_path / "world.json")
    made, _, _ = app.make_app(world, app.CREATE, compacting=False)
    history = _session_of(app.make_runner(made, tmp_path / "session.db"), app.user(app.REQUEST))
    shown_only = [history[-1]]  # the summarizer was shown the final answer alone ...
    claimed = Event(  # ... and claims the whole range: ADK hides every raw event inside it
        author="user",
        invocation_id="compaction-1",
        actions=EventActions(compaction=EventCompaction(
            start_timestamp=history[0].timestamp, end_timestamp=history[-1].timestamp,
            compacted_content=app.text("Created the VM."),
        )),
    )
    summarizer = StampedSummarizer(LlmEventSummarizer(llm=app.ScriptedLlm()))
    summary = summarizer._stamp(None, history, shown_only, claimed, "Created the VM.")
    assert [(e.ref, e.last_known) for e in summary.drop_manifest] == [("create_vm", "vm-1")]


def _session_of(runner: Any, message: Any) -> list[Any]:
    _run(app.run(runner, message))
    return list(_session(runner).events)


def test_a_tool_result_a_rewind_annulled_keeps_no_dependency_present(tmp_path: Path) -> None:
    # ADK's prompt leaves out what runner.rewind_async annulled: a handle only a rewound invocation
    # holds is not in front of the model, so it cannot satisfy a dependency nor undo a drop.
    world = app.World(tmp_path / "world.json")
    made, model, _ = app.make_app(world, app.CREATE, summary=[app.text(app.SUMMARY_TEXT)])
    made.events_compaction_config.compaction_interval = 2
    runner = app.make_runner(made, tmp_path / "session.db")
    _run(app.run(runner, app.user(app.REQUEST)))  # vm-1
    model.steps = [app.text("Nothing to do.")]
    _run(app.run(runner, app.user("Anything else?")))  # compacted: the summary dropped vm-1
    model.steps = [app.call("create_vm", {"size": "small"}, "call-more"), app.text("Created.")]
    _run(app.run(runner, app.user("One more.")))  # vm-2, raw, after the compaction ...
    rewound = _session(runner).events[-1].invocation_id
    _run(runner.rewind_async(user_id=app.USER, session_id=app.SESSION_ID, rewind_before_invocation_id=rewound))  # ... undone
    checkpoint = session_checkpoint(_session(runner))
    assert checkpoint is not None and "create_vm" not in checkpoint.facts[5]
    assert [e.ref for e in checkpoint.dropped] == ["create_vm"]
    with pytest.raises(SummaryReconciliationError) as caught:
        _resume(runner, [app.text("never")], deps=["create_vm"])
    assert (caught.value.kind, caught.value.missing_ref) == (ReconciliationKind.MISSING_DEPENDENCY, "create_vm")


def test_a_guarded_runner_driven_by_a_tool_of_a_guarded_run_hands_its_refusal_up(tmp_path: Path) -> None:
    """A tool that drives another guarded runner (a sub-agent of its own) and hides its errors
    from the model: the inner run's refusal reached only that tool, and the outer model read
    "please try again"."""
    runner, world = _created(tmp_path / "outer")
    sub, _ = _created(tmp_path / "sub")
    sub = guard_runner(sub)
    sub.agent.model.steps = [app.call("create_vm", {"size": "small"}, "call-sub"), app.text("never")]

    async def provision(size: str) -> str:
        """Provision a VM through the helper agent (hides every error from the model)."""
        try:
            await app.run(sub, app.user("make a VM"))
        except Exception:  # noqa: BLE001 - the swallowing under test
            return "provisioning failed, please try again"
        return "provisioned"

    runner.agent.tools.append(provision)
    with pytest.raises(SummaryReconciliationError) as caught:
        _resume(runner, [app.call("provision", {"size": "small"}, "call-provision"), app.text("never")])
    assert (caught.value.kind, caught.value.missing_ref) == (ReconciliationKind.REDERIVATION, "create_vm")
    assert world.created == ["vm-1"] and runner.agent.model.calls == 3  # the model never read the swallowed text


def _windowed(tmp_path: Path, *, stamped: bool = True) -> tuple[Any, app.World, Any]:
    """A session whose compaction lies outside the last three events, and that window."""
    from google.adk.agents.run_config import RunConfig
    from google.adk.sessions.base_session_service import GetSessionConfig

    runner, world = _created(tmp_path, stamped=stamped)
    for chat in ("hello", "and again"):
        runner.agent.model.steps = [app.text(f"ok: {chat}")]
        runner.app.events_compaction_config = None  # no more compactions
        _run(app.run(runner, app.user(chat)))
    events = _session(runner).events
    assert max(i for i, e in enumerate(events) if e.actions and e.actions.compaction) < len(events) - 3
    return runner, world, RunConfig(get_session_config=GetSessionConfig(num_recent_events=3))


def test_a_run_that_reads_a_window_of_the_session_is_checked_against_all_of_it(tmp_path: Path) -> None:
    """``RunConfig(get_session_config=GetSessionConfig(num_recent_events=N))``, as ADK suggests
    beside compaction: the check read the same window, saw no compaction, and let the run
    re-derive what it dropped."""
    runner, world, window = _windowed(tmp_path)
    runner.agent.model.steps = [app.call("create_vm", {"size": "small"}, "call-again"), app.text("never")]
    with pytest.raises(SummaryReconciliationError) as caught:
        _run(app.run(guard_runner(runner), app.user("Attach the disk now."), run_config=window))
    assert (caught.value.kind, caught.value.missing_ref) == (ReconciliationKind.REDERIVATION, "create_vm")
    assert world.created == ["vm-1"]


def test_the_plugin_alone_reads_the_whole_session_too(tmp_path: Path) -> None:
    runner, _, window = _windowed(tmp_path, stamped=False)
    runner.plugin_manager.register_plugin(SummaryGuardPlugin())
    runner.agent.model.steps = [app.text("never")]
    with pytest.raises(RuntimeError) as caught:  # ADK's wrapper, as without a window
        _run(app.run(runner, app.user("Attach the disk now."), run_config=window))
    assert isinstance(caught.value.__cause__, SummaryReconciliationError)
    assert caught.value.__cause__.kind is ReconciliationKind.GENERATION_MISMATCH


@pytest.mark.parametrize("accepted", [False, True])
def test_a_check_a_tool_caught_stops_the_run_unless_a_resolver_settled_it(tmp_path: Path, spy: Any, accepted: bool) -> None:
    """A tool that runs ``check_resume`` on a sub-task's checkpoint and hides its failure from
    the model: the other rooms stop the run; ADK let the model read the tool's text."""
    from summaryguard.guard import AcceptDivergence, Checkpoint, Summary

    if accepted:
        spy.answers = lambda error, checkpoint: AcceptDivergence(reason="approved", accepted_by="oncall")

    @resume_guard
    def resume_sub_task(checkpoint: Any) -> str:
        return "resumed"

    def sub_task(name: str) -> str:
        """Resume a sub-task from its checkpoint (hides every error from the model)."""
        try:
            return resume_sub_task(Checkpoint(3, Summary(2, "half a summary", partial=True), 2))
        except Exception:  # noqa: BLE001 - the swallowing under test
            return "could not resume; please try again"

    runner, _ = _created(tmp_path)
    runner.agent.tools.append(sub_task)
    steps = [app.call("sub_task", {"name": "disk"}, "call-sub"), app.text("went on")]
    if accepted:
        _resume(runner, steps)
        recorded = [p.function_response.response for e in _session(runner).events if e.content for p in e.content.parts or () if p.function_response]
        assert recorded[-1] == {"result": "resumed"}
        return
    with pytest.raises(SummaryReconciliationError) as caught:
        _resume(runner, steps)
    assert caught.value.kind is ReconciliationKind.PARTIAL_SUMMARY
    assert runner.agent.model.calls == 3  # the model never read the tool's text


@pytest.mark.parametrize("runner", [None, "a runner", object()])
def test_guard_runner_takes_an_adk_runner(runner: Any) -> None:
    with pytest.raises(TypeError, match="guard_runner\\(\\) takes an ADK Runner, got"):
        guard_runner(runner)
