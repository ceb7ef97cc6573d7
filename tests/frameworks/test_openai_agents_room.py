"""The OpenAI Agents SDK room against the real SDK, in process: refusals, stamps, and what is not a resume.

Every run uses the SDK's ``ScriptedModel``: offline, no API key.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

import openai_agents_app as app
from agents import Agent, Runner, function_tool
from agents.exceptions import UserError
from agents.memory import SQLiteSession
from agents.run import get_default_agent_runner, set_default_agent_runner
from agents.run_state import RunState
from agents.testing import ScriptedModel, assistant_message, function_call
from summaryguard.guard import (
    Checkpoint,
    DroppedRef,
    ReconciliationKind,
    Summary,
    SummaryReconciliationError,
    check_resume,
    resume_guard,
    tool_guard,
)
from summaryguard.plugins.openai_agents import (
    GuardedRunner,
    guard_runner,
    guard_tool,
    stamp_compactions,
)

SDK_TEXT = "An error occurred while running the tool. Please try again."


@pytest.fixture(autouse=True)
def _default_runner() -> Iterator[None]:
    before = get_default_agent_runner()
    yield
    set_default_agent_runner(before)


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


def _half_written() -> Checkpoint:
    return Checkpoint(3, Summary(2, "folded", partial=True), 2)


def _agent(tool: Any, *, steps: int = 2) -> tuple[Agent[Any], ScriptedModel]:
    script = [[function_call(tool.name, {}, call_id="call-1")], [assistant_message("the model went on")]][:steps]
    model = ScriptedModel(script)
    return Agent(name="a", model=model, tools=[tool]), model


def _tool_outputs(result: Any) -> list[Any]:
    return [getattr(item, "output", None) for item in result.new_items if getattr(item, "type", "") == "tool_call_output_item"]


# -- a refusal from inside a tool ------------------------------------------------------------


def _checking_tool(**options: Any) -> Any:
    @function_tool(**options)
    def resume_step() -> str:
        """A tool whose body checks a checkpoint before it acts."""
        check_resume(_half_written())
        return "acted"

    return resume_step


def test_without_the_runner_the_sdk_turns_a_refusal_into_model_text() -> None:
    """The premise: the SDK's default failure function hands the model "please try again"."""
    agent, model = _agent(_checking_tool())
    result = _run(Runner.run(agent, "go"))
    assert _tool_outputs(result) == [SDK_TEXT] and len(model.calls) == 2


@pytest.mark.parametrize(
    "options",
    [{}, {"failure_error_function": None}, {"failure_error_function": lambda ctx, error: f"tool failed: {error}"}],
    ids=["default-failure-text", "failure-function-none", "own-failure-text"],
)
def test_a_refusal_inside_a_tool_reaches_the_caller_never_the_model(options: dict[str, Any]) -> None:
    guard_runner()
    agent, model = _agent(_checking_tool(**options))
    with pytest.raises(SummaryReconciliationError) as caught:
        _run(Runner.run(agent, "go"))
    assert type(caught.value) is SummaryReconciliationError and not isinstance(caught.value, UserError)
    assert caught.value.kind is ReconciliationKind.PARTIAL_SUMMARY
    assert len(model.calls) == 1  # the model was never asked again with the tool's error text


@pytest.mark.parametrize("streamed", [False, True], ids=["as_tool", "as_tool-streamed"])
@pytest.mark.parametrize("where", ["inner-tool-checks", "inner-tool-rederives"])
def test_a_refusal_inside_an_agent_used_as_a_tool_reaches_the_caller(where: str, streamed: bool) -> None:
    """``Agent.as_tool`` runs a nested run whose error the SDK turns into text for the
    outer model: the outer run must raise the refusal instead. With ``on_stream`` the
    nested run is a streamed one (``run_streamed``): it hands its refusals up the same way."""
    created: list[str] = []
    inner_tool = _checking_tool() if where == "inner-tool-checks" else _create_vm_tool(created)
    inner, inner_model = _agent(inner_tool)
    outer_model = ScriptedModel(
        [[function_call("delegate", {"input": "go"}, call_id="outer-1")], [assistant_message("the outer model went on")]]
    )

    async def on_stream(event: Any) -> None:
        pass

    streaming = {"on_stream": on_stream} if streamed else {}
    outer = Agent(name="outer", model=outer_model, tools=[inner.as_tool(tool_name="delegate", tool_description="d", **streaming)])
    guard_runner()

    @resume_guard
    async def resume(checkpoint: Checkpoint) -> Any:
        return await Runner.run(outer, "continue")

    rederives = where == "inner-tool-rederives"
    with pytest.raises(SummaryReconciliationError) as caught:
        _run(resume(_dropped()) if rederives else Runner.run(outer, "continue"))
    assert type(caught.value) is SummaryReconciliationError
    assert caught.value.kind is (ReconciliationKind.REDERIVATION if rederives else ReconciliationKind.PARTIAL_SUMMARY)
    assert created == [] and len(outer_model.calls) == 1  # the outer model never saw the error text


# -- tools inside the caller's own resumed turn ----------------------------------------------


def _dropped() -> Checkpoint:
    return Checkpoint(2, Summary(1, "a VM exists", drop_manifest=(DroppedRef("vm", "vm-1", "create_vm"),)), 1)


def _create_vm_tool(created: list[str]) -> Any:
    @function_tool
    def create_vm() -> str:
        """Create a VM."""
        created.append("vm-2")
        return "vm-2"

    return create_vm


@pytest.mark.parametrize("wrap", ["runner-hook", "guard_tool", "tool_guard"])
def test_in_a_resumed_turn_every_tool_refuses_the_rederivation(wrap: str) -> None:
    created: list[str] = []
    tool = _create_vm_tool(created)
    if wrap == "guard_tool":
        tool = guard_tool(tool)
    elif wrap == "tool_guard":
        tool = tool_guard(tool)  # a FunctionTool goes to this room's plugin
    guard_runner()
    agent, model = _agent(tool)

    @resume_guard
    async def resume(checkpoint: Checkpoint) -> Any:
        return await Runner.run(agent, "attach the disk")

    with pytest.raises(SummaryReconciliationError) as caught:
        _run(resume(_dropped()))
    assert (caught.value.kind, caught.value.missing_ref) == (ReconciliationKind.REDERIVATION, "vm")
    assert created == [] and len(model.calls) == 1


def test_guard_tool_alone_never_lets_the_refusal_become_model_text() -> None:
    """Without the guarded runner the SDK wraps it (UserError), but the model never sees it."""
    created: list[str] = []
    agent, model = _agent(guard_tool(_create_vm_tool(created)))

    @resume_guard
    async def resume(checkpoint: Checkpoint) -> Any:
        return await Runner.run(agent, "attach the disk")

    with pytest.raises(UserError) as caught:
        _run(resume(_dropped()))
    assert isinstance(caught.value.__cause__, SummaryReconciliationError)
    assert created == [] and len(model.calls) == 1


def test_guard_tool_keeps_the_tool_and_is_idempotent() -> None:
    tool = _create_vm_tool([])
    guarded = guard_tool(tool)
    assert guarded is not tool and guarded.name == tool.name and guarded.params_json_schema == tool.params_json_schema
    assert guard_tool(guarded) is guarded
    agent, _ = _agent(guarded)
    assert _tool_outputs(_run(Runner.run(agent, "go"))) == ["vm-2"]  # outside a resumed turn it just runs


# -- what is not a resume of summary state ---------------------------------------------------


def test_a_session_that_never_compacted_runs_as_before(tmp_path: Path) -> None:
    guard_runner(deps=["create_vm"])
    world = app.World(tmp_path / "world.json")
    session = SQLiteSession("plain", str(tmp_path / "plain.db"))
    agent, _ = app.make_agent(world, list(app.CREATE))
    assert _run(Runner.run(agent, app.REQUEST, session=session)).final_output == "Created the VM."
    agent, _ = app.make_agent(world, [[assistant_message("again")]])
    assert _run(Runner.run(agent, "and now?", session=session)).final_output == "again"


def test_a_human_approval_resume_without_compaction_runs_as_before(tmp_path: Path) -> None:
    guard_runner(deps=["create_vm"])
    world = app.World(tmp_path / "world.json")
    agent, _ = app.make_agent(world, [[function_call("attach_disk", {"vm": "vm-7", "gb": 100}, call_id="c1")]])
    paused = _run(Runner.run(agent, "attach"))
    text = paused.to_state().to_string()
    agent, _ = app.make_agent(world, [[assistant_message("attached")]])
    state = _run(RunState.from_string(agent, text))
    state.approve(state.get_interruptions()[0])
    assert _run(Runner.run(agent, state)).final_output == "attached"
    assert world.disks == ["vm-7"]


# -- stamps ----------------------------------------------------------------------------------


def test_a_compaction_made_without_the_stamp_cannot_be_resumed(tmp_path: Path) -> None:
    world = app.World(tmp_path / "world.json")
    _run(app.create_and_compact(str(tmp_path / "s.db"), world, stamped=False))
    guard_runner()
    session = app.make_session(tmp_path / "s.db")  # stamped now: but nothing recorded that compaction
    agent, model = app.make_agent(world, [[assistant_message("never")]])
    with pytest.raises(SummaryReconciliationError) as caught:
        _run(Runner.run(agent, "go on", session=session))
    assert caught.value.kind is ReconciliationKind.GENERATION_MISMATCH
    assert "no summaryguard record" in caught.value.details["note"]
    assert model.calls == ()
    with pytest.raises(SummaryReconciliationError):  # and it is not folded again either
        _run(session.run_compaction({"force": True}))


def test_generations_chain_and_drops_carry_over(tmp_path: Path) -> None:
    world = app.World(tmp_path / "world.json")
    session = _run(app.create_and_compact(str(tmp_path / "s.db"), world))
    agent, _ = app.make_agent(world, [[assistant_message("noted, vm-1 it is")]])
    _run(Runner.run(agent, "remember the handle", session=session))
    _run(session.run_compaction({"force": True}))
    record = session.records.read(app.SESSION_ID)
    summary = record.completed.summary
    assert (record.generation, summary.parent_generation) == (2, 1)
    assert [e.ref for e in summary.drop_manifest] == ["create_vm"]  # still dropped: the text is encrypted


def test_a_declined_compaction_leaves_the_record_as_it_was(tmp_path: Path) -> None:
    world = app.World(tmp_path / "world.json")
    session = _run(app.create_and_compact(str(tmp_path / "s.db"), world))
    before = session.records.read(app.SESSION_ID)
    _run(session.run_compaction())  # the trigger says no
    assert session.records.read(app.SESSION_ID) == before


def test_clearing_the_session_starts_a_new_conversation(tmp_path: Path) -> None:
    world = app.World(tmp_path / "world.json")
    session = _run(app.create_and_compact(str(tmp_path / "s.db"), world))
    _run(session.clear_session())
    assert session.records.read(app.SESSION_ID) is None
    guard_runner(deps=["create_vm"])
    agent, _ = app.make_agent(world, [[assistant_message("fresh")]])
    assert _run(Runner.run(agent, "hello", session=session)).final_output == "fresh"


def test_a_tampered_record_fails_closed(tmp_path: Path) -> None:
    world = app.World(tmp_path / "world.json")
    session = _run(app.create_and_compact(str(tmp_path / "s.db"), world))
    Path(session.records.path(app.SESSION_ID)).write_text("{not json")
    guard_runner()
    agent, _ = app.make_agent(world, [[assistant_message("never")]])
    with pytest.raises(SummaryReconciliationError) as caught:
        _run(Runner.run(agent, "go on", session=session))
    assert caught.value.kind is ReconciliationKind.NO_SUMMARY


def test_a_streamed_resume_is_checked_before_it_starts(tmp_path: Path) -> None:
    world = app.World(tmp_path / "world.json")
    _run(app.create_and_compact(str(tmp_path / "s.db"), world))
    guard_runner(deps=["create_vm"])
    agent, model = app.make_agent(world, [[assistant_message("never")]])
    with pytest.raises(SummaryReconciliationError) as caught:
        Runner.run_streamed(agent, "go on", session=app.make_session(tmp_path / "s.db"))
    assert caught.value.kind is ReconciliationKind.MISSING_DEPENDENCY and model.calls == ()


def test_a_streamed_resume_refuses_the_rederivation_to_the_caller(tmp_path: Path) -> None:
    world = app.World(tmp_path / "world.json")
    _run(app.create_and_compact(str(tmp_path / "s.db"), world))
    guard_runner()
    steps = [[function_call("create_vm", {"size": "small"}, call_id="again")], [assistant_message("never")]]
    agent, model = app.make_agent(world, steps)

    async def go() -> None:
        result = Runner.run_streamed(agent, "go on", session=app.make_session(tmp_path / "s.db"))
        async for _ in result.stream_events():
            pass

    with pytest.raises(SummaryReconciliationError) as caught:
        _run(go())
    assert type(caught.value) is SummaryReconciliationError and caught.value.kind is ReconciliationKind.REDERIVATION
    assert world.created == ["vm-1"] and len(model.calls) == 1


def test_a_fresh_streamed_run_streams_as_before(tmp_path: Path) -> None:
    guard_runner()
    agent, _ = app.make_agent(app.World(tmp_path / "world.json"), list(app.CREATE))

    async def go() -> Any:
        result = Runner.run_streamed(agent, app.REQUEST)
        async for _ in result.stream_events():
            pass
        return result.final_output

    assert _run(go()) == "Created the VM."


def test_stamp_compactions_takes_only_a_compaction_session(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="OpenAIResponsesCompactionSession"):
        stamp_compactions(SQLiteSession("x", str(tmp_path / "x.db")))


def test_the_runtime_core_imports_no_framework() -> None:
    """``import summaryguard.guard`` (and a check through the plugin manager) loads neither the SDK nor the room's runtime."""
    code = (
        "import summaryguard.guard as g, json, sys\n"
        "g.check_resume(g.Checkpoint(1, g.Summary(1), 1))\n"
        "print(json.dumps(sorted(m for m in sys.modules if m == 'agents' or m.startswith(('agents.', 'openai'))"
        " or m.startswith('summaryguard.plugins.openai_agents._'))))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(proc.stdout.splitlines()[-1]) == []


def test_a_turn_whose_compaction_is_declined_writes_no_record(tmp_path: Path) -> None:
    """The runner asks for a compaction after every turn; only one that reaches responses.compact is recorded."""
    world = app.World(tmp_path / "world.json")
    session = app.make_session(tmp_path / "s.db")
    agent, _ = app.make_agent(world, list(app.CREATE))
    _run(Runner.run(agent, app.REQUEST, session=session))
    assert not Path(session.records.path(app.SESSION_ID)).exists()
    assert session._client.client.calls == 0  # the SDK never called responses.compact


def test_an_automatic_compaction_after_a_run_is_stamped_too(tmp_path: Path) -> None:
    """The runner's own compaction (the trigger says yes) goes through the same record: intent, then done."""
    from agents.memory import OpenAIResponsesCompactionSession

    client = app.CompactClient()
    session = stamp_compactions(
        OpenAIResponsesCompactionSession(
            "auto", SQLiteSession("auto", str(tmp_path / "a.db")), client=client, should_trigger_compaction=lambda c: True
        )
    )
    agent, _ = app.make_agent(app.World(tmp_path / "world.json"), list(app.CREATE))
    _run(Runner.run(agent, app.REQUEST, session=session))
    assert client.calls == 1
    record = session.records.read("auto")
    assert record.finished and record.generation == 1
    assert [(e.ref, e.last_known) for e in record.completed.summary.drop_manifest] == [("create_vm", "vm-1")]


def test_the_users_own_run_hooks_still_run_under_the_guarded_runner(tmp_path: Path) -> None:
    from agents import RunHooks

    seen: list[str] = []

    class Hooks(RunHooks):
        async def on_agent_start(self, context: Any, agent: Any) -> None:
            seen.append("agent_start")

        async def on_tool_start(self, context: Any, agent: Any, tool: Any) -> None:
            seen.append(f"tool_start:{tool.name}")

        async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: Any) -> None:
            seen.append(f"tool_end:{result}")

    guard_runner()
    agent, _ = app.make_agent(app.World(tmp_path / "world.json"), list(app.CREATE))
    _run(Runner.run(agent, app.REQUEST, hooks=Hooks()))
    assert seen[:3] == ["agent_start", "tool_start:create_vm", "tool_end:vm-1"]


def test_a_divergence_a_resolver_accepted_inside_a_tool_does_not_stop_the_run(spy: Any) -> None:
    """The room remembers every violation when it is observed (a tool may swallow it); one a
    resolver then accepted on record let its resume go on, and the run must not raise it."""
    from sub_task import accept_every_violation, resume_sub_task

    accept_every_violation(spy)
    step = function_tool(resume_sub_task, name_override="step")

    guard_runner()
    model = ScriptedModel([[function_call("step", {}, call_id="c1")], [assistant_message("ok")]])
    assert _run(Runner.run(Agent(name="a", model=model, tools=[step]), "go")).final_output == "ok"
    assert [record.ref for record in spy.accepted] == ["vm"]
    spy.answers = None  # not accepted: the same run is stopped by it
    model = ScriptedModel([[function_call("step", {}, call_id="c2")], [assistant_message("never")]])
    with pytest.raises(SummaryReconciliationError) as caught:
        _run(Runner.run(Agent(name="a", model=model, tools=[step]), "go"))
    assert caught.value.kind is ReconciliationKind.MISSING_DEPENDENCY


def test_the_readme_snippet_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    block = readme.split("\n## OpenAI Agents SDK\n", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # nothing in it needs a key or a network
    namespace: dict[str, Any] = {}
    exec(compile(block, "README.md", "exec", dont_inherit=True), namespace)  # noqa: S102  (as a script runs it)
    assert isinstance(get_default_agent_runner(), GuardedRunner)
    assert Path(namespace["session"].records.folder) == tmp_path / "chat.db.summaryguard"
