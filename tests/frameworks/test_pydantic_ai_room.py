"""The pydantic-ai room against the real package, in process: stamps, refusals, and what is not a resume.

Every run uses pydantic-ai's ``FunctionModel`` (scripted by ``pydantic_ai_app.Script``): offline, no API key.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import subprocess
import sys
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

import pydantic_ai_app as app
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_ai import Agent, Conversation, ConversationTypeAdapter, ModelRetry, Tool
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import (
    CompactionPart,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import FunctionModel

from summaryguard.guard import Checkpoint, DroppedRef, ReconciliationKind, Summary, SummaryReconciliationError, resume_guard, tool_guard
from summaryguard.plugins.framework import FrameworkModel
from summaryguard.plugins.pydantic_ai import GuardResumes, StampedCompaction, StampedHistory, guard_tool, history_checkpoint
from summaryguard.plugins.pydantic_ai._history import stamped_summaries
from summaryguard.plugins.pydantic_ai._stamp import stamp_fold

AGAIN = [[app.call("create_vm", {"size": "small"}, "call-again")], [app.text("never")]]


def _compacted(world: app.World) -> list[Any]:
    """A history whose summary (generation 1) dropped create_vm's handle, made in this process."""
    agent, _ = app.make_agent(world, [*app.CREATE, [app.text("Noted.")]])
    first = agent.run_sync(app.REQUEST)
    return agent.run_sync("Thanks.", message_history=first.all_messages()).all_messages()


def _stamp(history: list[Any]) -> dict[str, Any]:
    (message,) = [m for m in history if m.metadata and "summaryguard" in m.metadata]
    return message.metadata["summaryguard"]


@pytest.fixture
def world(tmp_path: Any) -> app.World:
    return app.World(tmp_path / "world.json")


def test_a_second_compaction_extends_the_first_one(world: app.World) -> None:
    history = _compacted(world)
    steps = [[app.call("create_vm", {"size": "big"}, "call-big")], [app.text("Made another.")], [app.text("ok")]]
    agent, _ = app.make_agent(world, steps, processor=app.summarizer())
    second = agent.run_sync("Make a big one too.", message_history=history).all_messages()
    third = agent.run_sync("Thanks again.", message_history=second).all_messages()
    stamp = _stamp(third)  # every request past the threshold folds again: each fold extends the one before
    assert stamp["generation"] >= 2 and stamp["parent_generation"] == stamp["generation"] - 1
    assert [(e["ref"], e["last_known"]) for e in stamp["drop_manifest"]] == [("create_vm", "vm-2")]  # the latest value
    checkpoint = history_checkpoint(ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(third)))
    assert checkpoint is not None and checkpoint.facts[1] == checkpoint.facts[3] == stamp["generation"]


def test_an_edited_summary_no_longer_matches_its_stamp(world: app.World) -> None:
    history = _compacted(world)
    index = next(i for i, m in enumerate(history) if m.metadata)
    history[index] = dataclasses.replace(history[index], parts=[TextPart("The VM is vm-7.")])
    agent, script = app.make_agent(world, [[app.text("never")]], guard=GuardResumes())
    with pytest.raises(SummaryReconciliationError) as caught:
        agent.run_sync(app.ATTACH, message_history=history)
    assert caught.value.kind is ReconciliationKind.GENERATION_MISMATCH
    assert "edited or replaced" in caught.value.details["note"]
    assert script.calls == 0
    with pytest.raises(SummaryReconciliationError) as again:  # nor is it folded into a new summary
        stamp_fold(history, [ModelRequest(parts=[UserPromptPart("new summary")])])
    assert again.value.kind is ReconciliationKind.GENERATION_MISMATCH


def test_a_summary_request_keeps_its_stamp_when_pydantic_ai_merges_it_with_the_next_request(world: app.World) -> None:
    """Continuing a history merges adjacent requests and drops their ``metadata``: the stamp rides in the prompt."""

    def fold(messages: list[Any]) -> list[Any]:
        if len(messages) < app.FOLD_AT:
            return messages
        return [ModelRequest(parts=[UserPromptPart("Summary: a VM was created.")]), messages[-1]]

    agent, _ = app.make_agent(world, [*app.CREATE, [app.text("Noted.")], [app.text("Still here.")]], processor=fold)
    first = agent.run_sync(app.REQUEST)
    compacted = agent.run_sync("Thanks.", message_history=first.all_messages()).all_messages()
    assert [type(m).__name__ for m in compacted[:2]] == ["ModelRequest", "ModelRequest"]  # summary, then the prompt
    continued = agent.run_sync("And now?", message_history=compacted).all_messages()
    assert len(continued) < len(compacted) + 2  # pydantic-ai merged the two requests
    (stamp,) = stamped_summaries(ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(continued)))
    assert stamp.matches and stamp.summary is not None and stamp.summary.generation == 1
    guarded, script = app.make_agent(world, [[app.text("never")]], processor=fold, guard=GuardResumes(deps=["create_vm"]))
    with pytest.raises(SummaryReconciliationError) as caught:
        guarded.run_sync(app.ATTACH, message_history=continued)
    assert caught.value.kind is ReconciliationKind.MISSING_DEPENDENCY and script.calls == 0


class FoldToCompactionPart(AbstractCapability[Any]):
    """A compaction capability shaped like pydantic-ai-harness's: it rewrites ``ctx.messages`` and writes the
    summary as a ``CompactionPart`` (marked in its own ``metadata``) in a request of its own."""

    async def before_model_request(self, ctx: Any, request_context: Any) -> Any:
        messages = list(ctx.messages)
        if len(messages) < app.FOLD_AT:
            return request_context
        summary = ModelRequest(parts=[CompactionPart(app.SUMMARY_TEXT, metadata={"harness_summary": True})])
        compacted = [summary, messages[-1]]
        ctx.messages[:] = compacted
        return dataclasses.replace(request_context, messages=compacted)


def test_a_compaction_capability_is_stamped_on_its_compaction_part(world: app.World) -> None:
    agent, _ = app.make_agent(world, [*app.CREATE, [app.text("Noted.")], [app.text("Still here.")]])
    agent = Agent(agent.model, capabilities=[StampedCompaction(FoldToCompactionPart())], tools=[Tool(_vm(world), name="create_vm")])
    first = agent.run_sync(app.REQUEST)
    compacted = agent.run_sync("Thanks.", message_history=first.all_messages()).all_messages()
    part = compacted[0].parts[0]
    assert isinstance(part, CompactionPart) and part.metadata["harness_summary"] is True  # the strategy's own marker stays
    assert [e["ref"] for e in part.metadata["summaryguard"]["drop_manifest"]] == ["create_vm"]
    continued = agent.run_sync("And now?", message_history=compacted).all_messages()  # pydantic-ai merges the requests
    (stamp,) = stamped_summaries(ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(continued)))
    assert stamp.matches and stamp.summary is not None and stamp.summary.generation == 1
    guarded, script = app.make_agent(world, [[app.text("never")]], guard=GuardResumes(deps=["create_vm"]))
    with pytest.raises(SummaryReconciliationError) as caught:
        guarded.run_sync(app.ATTACH, message_history=continued)
    assert caught.value.kind is ReconciliationKind.MISSING_DEPENDENCY and script.calls == 0


def _vm(world: app.World) -> Any:
    def create_vm(size: str) -> str:
        return world.create_vm()

    return create_vm


def test_pydantic_ai_harness_sliding_window_is_stamped(world: app.World) -> None:
    """pydantic-ai-harness pins an older pydantic-ai-slim (0.62.0 pins 2.62.0): run where it is installed."""
    harness = pytest.importorskip("pydantic_ai_harness.compaction")
    script = app.Script([*app.CREATE, [app.text("Noted.")], [app.text("And more.")], [app.text("ok")]])
    window = StampedCompaction(harness.SlidingWindowCompaction(max_messages=4, keep_messages=2))
    agent = Agent(FunctionModel(script), capabilities=[window], tools=[Tool(_vm(world), name="create_vm")])
    history = agent.run_sync(app.REQUEST).all_messages()
    for prompt in ("Thanks.", "More.", "Again."):
        history = agent.run_sync(prompt, message_history=history).all_messages()
    (stamp,) = stamped_summaries(history)[-1:]
    assert stamp.summary is not None and "create_vm" in {e.ref for e in stamp.summary.drop_manifest}


class Swallow(AbstractCapability[Any]):
    """A capability that turns every tool error into a tool result for the model ("please try again")."""

    async def on_tool_execute_error(self, ctx: Any, *, call: Any, tool_def: Any, args: Any, error: Exception) -> Any:
        return "An error occurred. Please try again."


@pytest.mark.parametrize("where", ["after the guard", "before the guard"])
def test_a_capability_that_recovers_tool_errors_does_not_hide_a_refusal(world: app.World, where: str) -> None:
    history = _compacted(world)
    script = app.Script(AGAIN)
    capabilities = [GuardResumes(), Swallow()] if where == "after the guard" else [Swallow(), GuardResumes()]
    agent = Agent(FunctionModel(script), capabilities=capabilities)

    @agent.tool_plain
    def create_vm(size: str) -> str:
        return world.create_vm()

    with pytest.raises(SummaryReconciliationError) as caught:
        agent.run_sync(app.ATTACH, message_history=history)
    assert caught.value.kind is ReconciliationKind.REDERIVATION
    assert world.created == ["vm-1"] and script.calls == 1  # the model never saw "please try again"


def test_a_tool_that_catches_a_refusal_inside_it_does_not_hide_it(world: app.World) -> None:
    history = _compacted(world)
    script = app.Script([[app.call("provision", {}, "call-p")], [app.text("never")]])
    agent = Agent(FunctionModel(script), capabilities=[GuardResumes()])
    create = tool_guard(world.create_vm, name="create_vm")

    @agent.tool_plain
    def provision() -> str:
        try:
            return create()
        except Exception:  # noqa: BLE001 - the user's tool hides every error from the model
            return "could not provision, please try again"

    with pytest.raises(SummaryReconciliationError) as caught:
        agent.run_sync(app.ATTACH, message_history=history)
    assert (caught.value.kind, caught.value.missing_ref) == (ReconciliationKind.REDERIVATION, "create_vm")
    assert world.created == ["vm-1"] and script.calls == 1


def test_a_tool_that_answers_a_refusal_with_model_retry_does_not_show_it_to_the_model(world: app.World) -> None:
    # ModelRetry becomes a prompt for the model and skips after_tool_execute: the model must not be asked again.
    history = _compacted(world)
    script = app.Script([[app.call("provision", {}, "call-p")], [app.text("never")]])
    agent = Agent(FunctionModel(script), capabilities=[GuardResumes()])
    create = tool_guard(world.create_vm, name="create_vm")

    @agent.tool_plain
    def provision() -> str:
        try:
            return create()
        except SummaryReconciliationError:
            raise ModelRetry("could not provision, please try again") from None

    with pytest.raises(SummaryReconciliationError) as caught:
        agent.run_sync(app.ATTACH, message_history=history)
    assert (caught.value.kind, caught.value.missing_ref) == (ReconciliationKind.REDERIVATION, "create_vm")
    assert world.created == ["vm-1"] and script.calls == 1


def test_async_and_streamed_runs_are_checked_too(world: app.World) -> None:
    history = _compacted(world)
    agent, _ = app.make_agent(world, [[app.text("never")]], guard=GuardResumes(deps=["create_vm"]))
    with pytest.raises(SummaryReconciliationError):
        asyncio.run(agent.run(app.ATTACH, message_history=history))

    async def stream() -> None:
        async with agent.run_stream(app.ATTACH, message_history=history) as result:
            await result.get_output()

    with pytest.raises(SummaryReconciliationError):
        asyncio.run(stream())


def test_iter_and_a_whole_conversation_are_checked_too(world: app.World) -> None:
    history = _compacted(world)
    agent, script = app.make_agent(world, [[app.text("never")]], guard=GuardResumes(deps=["create_vm"]))

    async def iterate() -> None:
        async with agent.iter(app.ATTACH, message_history=history) as run:
            async for _ in run:
                pass

    with pytest.raises(SummaryReconciliationError):
        asyncio.run(iterate())
    conversation = ConversationTypeAdapter.validate_json(ConversationTypeAdapter.dump_json(Conversation(messages=history)))
    with pytest.raises(SummaryReconciliationError) as caught:
        agent.run_sync(app.ATTACH, conversation=conversation)
    assert caught.value.kind is ReconciliationKind.MISSING_DEPENDENCY and script.calls == 0


def test_a_history_without_a_stamp_is_not_summary_state(world: app.World) -> None:
    agent, _ = app.make_agent(world, [*app.CREATE, [app.text("Attached.")]], guard=GuardResumes(deps=["create_vm"]))
    first = agent.run_sync(app.REQUEST)
    assert history_checkpoint(first.all_messages()) is None
    assert agent.run_sync(app.ATTACH, message_history=first.all_messages()).output == "Attached."


def test_a_tool_object_is_guarded_through_tool_guard(world: app.World) -> None:
    history = _compacted(world)
    checkpoint = history_checkpoint(history)
    assert checkpoint is not None
    def create_vm(size: str) -> str:
        return world.create_vm()

    tool = tool_guard(Tool(create_vm))  # the plugin's summaryguard_wrap_tool
    assert isinstance(tool, Tool) and guard_tool(tool) is tool
    script = app.Script(AGAIN)
    agent = Agent(FunctionModel(script), tools=[tool])  # no GuardResumes: the tool refuses on its own

    @resume_guard
    def resume(checkpoint: Any) -> Any:
        return agent.run_sync(app.ATTACH, message_history=history)

    with pytest.raises(SummaryReconciliationError) as caught:
        resume(checkpoint)
    assert caught.value.kind is ReconciliationKind.REDERIVATION
    assert world.created == ["vm-1"]


def test_a_resume_of_another_checkpoint_refuses_through_the_agents_tools(world: app.World) -> None:
    """The user's own resume_guard-ed resume (a summaryguard Checkpoint) covers the agent's run inside it."""
    dropped = DroppedRef("create_vm", "vm-1", "create_vm")
    checkpoint = Checkpoint(3, Summary(1, "a VM was made", drop_manifest=(dropped,)), 1)
    agent, _ = app.make_agent(world, AGAIN, guard=GuardResumes())

    @resume_guard
    def resume(checkpoint: Checkpoint) -> Any:
        return agent.run_sync(app.ATTACH)

    with pytest.raises(SummaryReconciliationError) as caught:
        resume(checkpoint)
    assert caught.value.kind is ReconciliationKind.REDERIVATION and world.created == []


def test_an_empty_summary_is_partial_and_a_trim_is_stamped_where_it_cuts() -> None:
    before = [
        ModelRequest(parts=[UserPromptPart("make a vm")]),
        ModelResponse(parts=[ToolCallPart("create_vm", {}, tool_call_id="c")]),
        ModelRequest(parts=[ToolReturnPart("create_vm", "vm-1", tool_call_id="c")]),
        ModelRequest(parts=[UserPromptPart("next")]),
    ]
    empty = stamp_fold(before, [ModelResponse(parts=[TextPart("  ")]), before[-1]])
    assert empty is not None and empty[0].metadata["summaryguard"]["partial"] is True
    trimmed = stamp_fold(before, before[-1:])
    assert trimmed is not None and len(trimmed) == 1
    (found,) = stamped_summaries(trimmed)
    stamp = found.stamp
    assert [e["ref"] for e in stamp["drop_manifest"]] == ["create_vm"] and stamp["partial"] is False
    assert stamp_fold(before, list(before)) is None and stamp_fold(before, [*before, before[0]]) is None


@settings(max_examples=40, deadline=None)
@given(
    handles=st.lists(st.from_regex(r"h-[0-9]{1,3}", fullmatch=True), min_size=1, max_size=5, unique=True),
    keep=st.lists(st.booleans(), min_size=5, max_size=5),
    cut=st.integers(min_value=1, max_value=5),
    orphan=st.booleans(),
)
def test_the_drop_manifest_is_what_the_fold_lost(handles: list[str], keep: list[bool], cut: int, orphan: bool) -> None:
    """Folded tool results the summary does not keep verbatim are dropped, and so is a kept result
    whose call was folded (pydantic-ai drops the orphan); what the summary keeps is a verbatim ref."""
    before: list[Any] = []
    for i, handle in enumerate(handles):
        before.append(ModelResponse(parts=[ToolCallPart(f"tool{i}", {}, tool_call_id=f"c{i}")]))
        before.append(ModelRequest(parts=[ToolReturnPart(f"tool{i}", handle, tool_call_id=f"c{i}")]))
    cut = min(cut, len(handles))
    folded = 2 * cut - (1 if orphan else 0)  # with an orphan: the last folded pair's result is kept
    text = " ".join(h for i, h in enumerate(handles[:cut]) if keep[i]) or "nothing kept"
    after = stamp_fold(before, [ModelResponse(parts=[TextPart(text)]), *before[folded:]])
    assert after is not None
    stamp = after[0].metadata["summaryguard"]
    summary = Summary.from_dict({k: v for k, v in stamp.items() if k != "summary_sha256"})
    assert {e.ref for e in summary.drop_manifest} == {f"tool{i}" for i in range(cut) if not keep[i]}
    assert set(summary.verbatim_refs) == {f"tool{i}" for i in range(cut) if keep[i]}
    assert json.loads(ModelMessagesTypeAdapter.dump_json(after))[0]["metadata"]["summaryguard"] == stamp


def test_the_model_is_valid_data_and_names_the_keyword_resume() -> None:
    from summaryguard.plugins.pydantic_ai.model import MODEL

    model = FrameworkModel.from_mapping(MODEL)
    assert model.resume_state_keywords == ("message_history", "conversation")
    assert "pydantic_ai.Agent.tool_plain" in model.vocabulary["tool-decorators"]


def test_the_plugin_manager_does_not_import_pydantic_ai() -> None:
    code = (
        "import sys; from summaryguard.plugins.manager import get_plugin_manager; get_plugin_manager(); "
        "import summaryguard.plugins.pydantic_ai; assert 'pydantic_ai' not in sys.modules, 'imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_the_readme_snippet_runs_as_written(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    block = readme.split("\n## pydantic-ai\n", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {}
    exec(compile(block, "README.md", "exec", dont_inherit=True), namespace)  # noqa: S102  (as a script runs it)
    assert (tmp_path / "history.json").exists() and namespace["result"].output


def test_a_tool_output_the_processor_cut_short_brings_no_dropped_handle_back(world: app.World) -> None:
    # A common processor cuts long tool outputs in place: the result keeps the tool's name, not the handle.
    def cut_tool_outputs(messages: list[Any]) -> list[Any]:
        return [
            dataclasses.replace(m, parts=[dataclasses.replace(p, content=str(p.content)[:20]) if isinstance(p, ToolReturnPart) else p for p in m.parts])
            if isinstance(m, ModelRequest) and any(isinstance(p, ToolReturnPart) and len(str(p.content)) > 20 for p in m.parts)
            else m
            for m in messages
        ]

    def agent_with(steps: list[list[Any]], guard: GuardResumes) -> tuple[Agent[None, str], app.Script]:
        script = app.Script(steps)
        agent = Agent(FunctionModel(script), capabilities=[guard, StampedHistory(cut_tool_outputs)])

        @agent.tool_plain
        def create_vm(size: str) -> str:
            return "provisioning log " + "." * 40 + " handle " + world.create_vm()

        return agent, script

    agent, _ = agent_with([*app.CREATE, [app.text("Noted.")]], GuardResumes())
    first = agent.run_sync(app.REQUEST)
    history = ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(first.all_messages()))
    checkpoint = history_checkpoint(history)
    assert checkpoint is not None and [e.ref for e in checkpoint.dropped] == ["create_vm"]
    needing, script = agent_with([[app.text("never")]], GuardResumes(deps=["create_vm"]))
    with pytest.raises(SummaryReconciliationError) as caught:
        needing.run_sync(app.ATTACH, message_history=history)
    assert (caught.value.kind, caught.value.missing_ref) == (ReconciliationKind.MISSING_DEPENDENCY, "create_vm") and script.calls == 0
    again, _ = agent_with(AGAIN, GuardResumes())
    with pytest.raises(SummaryReconciliationError) as caught:
        again.run_sync(app.ATTACH, message_history=history)
    assert caught.value.kind is ReconciliationKind.REDERIVATION and world.created == ["vm-1"]


def test_a_divergence_a_resolver_accepted_inside_a_tool_does_not_stop_the_run(spy: Any) -> None:
    """The room remembers every violation when it is observed (a tool may swallow it); one a
    resolver then accepted on record let its resume go on, and the run must not raise it."""
    from sub_task import accept_every_violation, resume_sub_task

    accept_every_violation(spy)
    steps = [[ToolCallPart("step", {}, tool_call_id="c1")], [TextPart("ok")]]
    agent = Agent(FunctionModel(lambda messages, info: ModelResponse(parts=steps.pop(0))), capabilities=[GuardResumes()])

    agent.tool_plain(name="step")(resume_sub_task)

    assert agent.run_sync("go").output == "ok"
    assert [record.ref for record in spy.accepted] == ["vm"]
    spy.answers = None  # not accepted: the same run is stopped by it
    steps[:] = [[ToolCallPart("step", {}, tool_call_id="c2")], [TextPart("never")]]
    with pytest.raises(SummaryReconciliationError) as caught:
        agent.run_sync("go")
    assert caught.value.kind is ReconciliationKind.MISSING_DEPENDENCY
