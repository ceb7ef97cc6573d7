"""The LangGraph plugin piece by piece: adapter, stamping, guarded graph, tools, vocabulary.

Real LangGraph, langmem and LangChain objects throughout (an in-memory
checkpointer and fake chat models keep it fast and offline).
"""

from __future__ import annotations

import asyncio
import dataclasses
import subprocess
import sys
from collections.abc import Callable
from typing import Annotated, Any

import pytest

from summaryguard.plugins.framework import FrameworkModel
from summaryguard.plugins.langgraph.model import MODEL

pytest.importorskip("langgraph")
pytest.importorskip("langmem")

from langchain_core.language_models.fake_chat_models import FakeListChatModel  # noqa: E402
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage  # noqa: E402
from langchain_core.tools import BaseTool, tool  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.graph import END, START, MessagesState, StateGraph  # noqa: E402
from langgraph.graph.message import add_messages  # noqa: E402
from langgraph.prebuilt import ToolNode  # noqa: E402
from langgraph.types import Command, interrupt  # noqa: E402
from langmem.short_term import RunningSummary, SummarizationNode  # noqa: E402

from summaryguard.guard import (  # noqa: E402
    CheckpointFormatError,
    ProducedRef,
    ReconciliationKind,
    SummaryReconciliationError,
    check_resume,
    resume_guard,
)
from summaryguard.plugins.langgraph import (  # noqa: E402
    GuardedGraph,
    guard_graph,
    guard_tool,
    is_langgraph_checkpoint,
    register_extractor,
    stamp_summaries,
    tool_message_refs,
)
from summaryguard.plugins.langgraph import _adapters, _refs, _state  # noqa: E402
from summaryguard.plugins import hookspecs  # noqa: E402
from summaryguard.plugins.langgraph import plugin  # noqa: E402
from summaryguard.plugins.manager import BUILTIN_PLUGINS, get_plugin_manager  # noqa: E402

THREAD = {"configurable": {"thread_id": "t"}}


class State(MessagesState):
    context: dict[str, Any]


def _conversation(handle: str = "vm-1") -> list[Any]:
    return [
        HumanMessage("Create a virtual machine and attach a 100 GB data disk to it. Keep the machine small.", id="h1"),
        AIMessage("", id="a1", tool_calls=[{"name": "create_vm", "args": {}, "id": "c1"}]),
        ToolMessage(handle, name="create_vm", tool_call_id="c1", id="t1"),
        AIMessage("Working on the disk now, one moment please while I look at the storage options.", id="a2"),
    ]


def _summarizer(*texts: str) -> Any:
    return SummarizationNode(
        model=FakeListChatModel(responses=list(texts)),
        max_tokens=400,
        max_tokens_before_summary=40,
        max_summary_tokens=100,
        output_messages_key="messages",
    )


class Calls:
    """A fake outside world for tools: counts and hands out fresh handles."""

    def __init__(self) -> None:
        self.made: list[str] = []

    def make(self) -> str:
        self.made.append(f"vm-{len(self.made) + 1}")
        return self.made[-1]


def _graph(
    summary: str = "A VM was created.",
    *,
    stamped: bool = True,
    then: Any = None,
    saver: Any = None,
) -> Any:
    """summarize -> stop (interrupt_before) -> then."""
    node = _summarizer(summary, summary + " Again.")
    builder = StateGraph(State)
    builder.add_node("summarize", stamp_summaries(node) if stamped else node)
    builder.add_node("then", then or (lambda state: {"messages": [AIMessage("done", id="done")]}))
    builder.add_edge(START, "summarize")
    builder.add_edge("summarize", "then")
    builder.add_edge("then", END)
    return builder.compile(checkpointer=saver or InMemorySaver(), interrupt_before=["then"])


def _paused(graph: Any, messages: list[Any] | None = None) -> Any:
    graph.invoke({"messages": messages or _conversation(), "context": {}}, THREAD)
    snapshot = graph.get_state(THREAD)
    assert snapshot.next == ("then",)
    return snapshot


# -- the adapter -----------------------------------------------------------------------------


def test_the_plugin_is_built_in_and_the_runtime_import_stays_free_of_langgraph() -> None:
    assert "summaryguard.plugins.langgraph.plugin" in BUILTIN_PLUGINS
    code = (
        "import sys, summaryguard.guard, summaryguard.guard.langgraph, summaryguard.plugins.langgraph; "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('langgraph', 'langmem', 'langchain_core', 'libcst')]; "
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_stamped_snapshot_is_read_and_checked_directly() -> None:
    snapshot = _paused(_graph())
    adapter = get_plugin_manager().hook.summaryguard_checkpoint_adapter(
        checkpoint_type=type(snapshot), checkpoint=snapshot
    )
    assert adapter is _adapters.STATE_SNAPSHOT_ADAPTER
    turn, recorded, has_summary, generation, partial, refs = adapter.extract(snapshot)
    assert (turn, recorded, has_summary, generation, partial) == (1, 1, True, 1, False)
    assert "create_vm" not in refs and list(refs) == [] and len(refs) == 0
    assert [(d.ref, d.last_known, d.tool) for d in adapter.drop_manifest(snapshot)] == [("create_vm", "vm-1", "create_vm")]
    check_resume(snapshot, [])
    with pytest.raises(SummaryReconciliationError) as caught:
        check_resume(snapshot, ["create_vm"])
    assert caught.value.kind is ReconciliationKind.MISSING_DEPENDENCY
    assert caught.value.details["thread_id"] == "t"
    assert caught.value.details["checkpoint_id"] == snapshot.config["configurable"]["checkpoint_id"]


def test_a_checkpoint_tuple_reads_the_same() -> None:
    saver = InMemorySaver()
    snapshot = _paused(_graph(saver=saver))
    checkpoint_tuple = saver.get_tuple(THREAD)
    assert is_langgraph_checkpoint(checkpoint_tuple) and is_langgraph_checkpoint(snapshot)
    assert not is_langgraph_checkpoint({"summary": None})
    facts = _adapters.CHECKPOINT_TUPLE_ADAPTER.extract(checkpoint_tuple)
    assert facts[:5] == _adapters.STATE_SNAPSHOT_ADAPTER.extract(snapshot)[:5]
    assert _adapters.CHECKPOINT_TUPLE_ADAPTER.next_turn_deps(checkpoint_tuple) == ()
    assert [d.ref for d in _adapters.CHECKPOINT_TUPLE_ADAPTER.drop_manifest(checkpoint_tuple)] == ["create_vm"]
    with pytest.raises(SummaryReconciliationError) as caught:
        check_resume(checkpoint_tuple, ["create_vm"])
    assert caught.value.details["thread_id"] == "t"


def test_a_thread_without_summarization_is_an_exact_transcript() -> None:
    graph = _graph()
    graph.invoke({"messages": _conversation()[:1], "context": {}}, THREAD)  # too short to summarize
    snapshot = graph.get_state(THREAD)
    assert _state.locate(snapshot.values)[:2] == (None, None)
    facts = _adapters.STATE_SNAPSHOT_ADAPTER.extract(snapshot)
    assert facts[1:5] == (0, True, 0, False)
    check_resume(snapshot, [])
    assert _adapters.STATE_SNAPSHOT_ADAPTER.drop_manifest(snapshot) == ()


def test_references_in_unfolded_messages_count_as_present() -> None:
    refs = _state.VisibleRefs({"kept": "x"}, [ToolMessage("vm-9", name="create_vm", tool_call_id="c", id="m")], set(), tool_message_refs)
    assert "kept" in refs and "create_vm" in refs and "other" not in refs
    assert sorted(refs) == ["create_vm", "kept"] and "VisibleRefs" in repr(refs)
    folded = _state.VisibleRefs({}, [ToolMessage("vm-9", name="create_vm", tool_call_id="c", id="m")], {"m"}, tool_message_refs)
    assert "create_vm" not in folded


def test_an_unstamped_summary_fails_closed_with_a_note() -> None:
    snapshot = _paused(_graph(stamped=False))
    with pytest.raises(SummaryReconciliationError) as caught:
        check_resume(snapshot, [])
    assert caught.value.kind is ReconciliationKind.NO_SUMMARY
    assert "no summaryguard stamp" in caught.value.details["note"]


def test_a_summary_replaced_behind_its_stamp_is_a_generation_mismatch() -> None:
    graph = _graph()
    snapshot = _paused(graph)
    context = dict(snapshot.values["context"])
    context["running_summary"] = RunningSummary("rewritten", {"h1"}, "h1")
    graph.update_state(THREAD, {"context": context})
    with pytest.raises(SummaryReconciliationError) as caught:
        check_resume(graph.get_state(THREAD), [])
    error = caught.value
    assert error.kind is ReconciliationKind.GENERATION_MISMATCH
    assert (error.summary_generation, "not the one its summaryguard stamp describes" in error.details["note"]) == (None, True)


@pytest.mark.parametrize(
    ("stamp_change", "problem"),
    [
        ({"v": 99}, "unknown stamp version"),
        ({"generation": "one"}, "summaryguard.generation"),
        ({"refs": "nowhere.extractor"}, "not registered in this process"),
    ],
)
def test_a_bad_stamp_fails_closed(stamp_change: dict[str, Any], problem: str) -> None:
    graph = _graph()
    snapshot = _paused(graph)
    context = dict(snapshot.values["context"])
    context["summaryguard"] = {**context["summaryguard"], **stamp_change}
    graph.update_state(THREAD, {"context": context})
    with pytest.raises(SummaryReconciliationError, match=problem) as caught:
        check_resume(graph.get_state(THREAD), [])
    assert caught.value.kind is ReconciliationKind.NO_SUMMARY


def test_read_stamp_refuses_a_non_object() -> None:
    with pytest.raises(CheckpointFormatError, match="expected an object"):
        _state.read_stamp(["not", "a", "stamp"], "text")
    assert _state.facts("not a mapping", None)[2] is True  # no values: an empty exact transcript
    assert _state.next_turn_deps(None) == ()


def test_a_state_can_declare_its_next_turn_deps() -> None:
    assert _state.next_turn_deps({"next_turn_deps": ["a"]}) == ("a",)
    assert _state.next_turn_deps({"context": {"next_turn_deps": ["b"]}}) == ("b",)

    @resume_guard
    def resume(checkpoint: Any) -> str:
        return "resumed"

    graph = _graph()
    snapshot = _paused(graph)
    assert resume(snapshot) == "resumed"
    graph.update_state(THREAD, {"context": {**snapshot.values["context"], "next_turn_deps": ["create_vm"]}})
    with pytest.raises(SummaryReconciliationError, match="create_vm"):
        resume(graph.get_state(THREAD))


# -- stamping ----------------------------------------------------------------------------------


def test_a_summary_that_quotes_the_handle_keeps_it() -> None:
    snapshot = _paused(_graph("A VM vm-1 was created."))
    stamp = snapshot.values["context"]["summaryguard"]
    assert stamp["verbatim_refs"] == {"create_vm": "vm-1"} and stamp["drop_manifest"] == []
    assert stamp["provenance"] == {"create_vm": "create_vm"}
    check_resume(snapshot, ["create_vm"])


def test_a_second_summarization_builds_on_the_first_and_carries_its_drops() -> None:
    graph = _graph()
    _paused(graph)
    graph.invoke(None, THREAD)  # finish
    more = [HumanMessage("Now make the disk 200 GB instead, and tell me when it is done please." * 2, id="h2")]
    graph.invoke({"messages": more}, THREAD)
    stamp = graph.get_state(THREAD).values["context"]["summaryguard"]
    assert (stamp["generation"], stamp["parent_generation"]) == (2, 1)
    assert [d["ref"] for d in stamp["drop_manifest"]] == ["create_vm"]


def test_a_step_that_folds_nothing_new_keeps_the_stamp() -> None:
    stamper = _stamper()
    running = RunningSummary("s", {"h1"}, "h1")
    stamp = {"v": 1, "generation": 1}
    state = {"messages": [], "context": {"running_summary": running, "summaryguard": stamp}}
    update = {"context": {"running_summary": running}}
    assert stamper.stamp(state, update)["context"]["summaryguard"] is stamp
    unstamped = {"messages": [], "context": {"running_summary": running}}
    assert stamper.stamp(unstamped, update) is update
    assert stamper.stamp(state, None) is None
    assert stamper.stamp(state, {"messages": []}) == {"messages": []}


def _stamper(**options: Any) -> Any:
    from summaryguard.plugins.langgraph._stamp import Stamper

    return Stamper(**options)


def test_extending_an_unstamped_summary_is_refused() -> None:
    old = RunningSummary("old text", {"h1"}, "h1")
    new = RunningSummary("new text", {"h1", "a1"}, "a1")
    state = {"messages": _conversation(), "context": {"running_summary": old}}
    with pytest.raises(SummaryReconciliationError, match="refusing to extend it") as caught:
        _stamper().stamp(state, {"context": {"running_summary": new}})
    assert caught.value.kind is ReconciliationKind.GENERATION_MISMATCH


def test_a_top_level_summary_and_a_custom_extractor() -> None:
    def vm_handles(message: Any) -> list[ProducedRef]:
        text = _refs.message_text(message)
        return [ProducedRef("vm", text, "create_vm")] if text.startswith("vm-") else []

    class Typed:  # a non-mapping state, read through its attributes
        def __init__(self) -> None:
            self.messages = _conversation()

    update = {"summary": RunningSummary("made a VM", {"h1", "a1", "t1"}, "t1")}
    stamped = _stamper(extract=vm_handles).stamp(Typed(), update)
    assert stamped["summaryguard"]["drop_manifest"][0]["ref"] == "vm"
    assert stamped["summaryguard"]["refs"].endswith("vm_handles")
    assert _refs.lookup_extractor(stamped["summaryguard"]["refs"]) is vm_handles
    # A state no stamp describes is read with every registered extractor, whatever was built last.
    names = {ref.name for ref in _refs.every_extractor(ToolMessage("vm-1", name="create_vm", tool_call_id="c", id="t"))}
    assert names == {"vm", "create_vm"}
    with pytest.raises(TypeError):
        register_extractor("nope")  # type: ignore[arg-type]


def test_message_text_reads_content_blocks() -> None:
    assert _refs.message_text(AIMessage([{"type": "text", "text": "a"}, "b", {"type": "image"}])) == "a\nb"
    assert _refs.message_text(type("M", (), {"content": None})()) == ""
    assert _refs.message_text(type("M", (), {"content": 7})()) == "7"
    assert tool_message_refs(HumanMessage("vm-1")) == ()
    assert tool_message_refs(ToolMessage("", name="create_vm", tool_call_id="c")) == ()


def test_stamp_summaries_takes_functions_and_runs_async() -> None:
    def summarize(state: dict[str, Any]) -> dict[str, Any]:
        ids = {m.id for m in state["messages"]}
        return {"context": {"running_summary": RunningSummary("short", ids, "t1")}}

    node = stamp_summaries(summarize)
    update = asyncio.run(node.ainvoke({"messages": _conversation(), "context": {}}))
    assert update["context"]["summaryguard"]["generation"] == 1
    with pytest.raises(TypeError, match="refs"):
        stamp_summaries(summarize, refs="nope")  # type: ignore[arg-type]


# -- the guarded graph ---------------------------------------------------------------------------


def test_fresh_input_and_finished_threads_are_not_resumes() -> None:
    graph = guard_graph(_graph(stamped=False))
    assert isinstance(graph, GuardedGraph) and "guard_graph(" in repr(graph)
    graph.invoke({"messages": _conversation(), "context": {}}, THREAD)  # not a resume: unchecked
    with pytest.raises(SummaryReconciliationError):
        graph.invoke(None, THREAD)  # a resume of an unstamped summary
    graph.graph.invoke(None, THREAD)  # finish it unguarded
    assert graph.invoke(None, THREAD)["messages"][-1].content == "done"  # nothing pending: passes through
    assert list(graph.stream(None, THREAD)) == []
    assert graph.get_state(THREAD).next == ()  # attribute access falls through


def test_a_resume_with_command_is_checked() -> None:
    calls = Calls()
    make_vm = guard_tool(tool(calls.make, description="Make a VM."), name="create_vm")

    def ask_then_make(state: State) -> dict[str, Any]:
        make_vm.invoke({})  # runs again when the node re-runs after interrupt(): the SG2xx hazard
        answer = interrupt("go on?")
        return {"messages": [AIMessage(f"ok {answer}", id="ok")]}

    builder = StateGraph(State)
    builder.add_node("summarize", stamp_summaries(_summarizer("A VM was created.")))
    builder.add_node("ask", ask_then_make)
    builder.add_edge(START, "summarize")
    builder.add_edge("summarize", "ask")
    builder.add_edge("ask", END)
    graph = guard_graph(builder.compile(checkpointer=InMemorySaver()))
    graph.invoke({"messages": _conversation(), "context": {}}, THREAD)  # first run: not resumed, makes vm-1
    assert graph.get_state(THREAD).interrupts
    with pytest.raises(SummaryReconciliationError) as caught:
        graph.invoke(Command(resume="yes"), THREAD)
    assert caught.value.kind is ReconciliationKind.REDERIVATION
    assert calls.made == ["vm-1"]
    result = graph.accepting("create_vm", reason="a second VM is fine").invoke(Command(resume="yes"), THREAD)
    assert result["messages"][-1].content == "ok yes" and calls.made == ["vm-1", "vm-2"]


@pytest.mark.parametrize("how", ["invoke", "stream", "ainvoke", "astream", "astream_events"])
def test_a_refusal_under_a_tool_node_that_handles_errors_stops_the_run_at_that_step(how: str) -> None:
    """ToolNode(handle_tool_errors=True) would turn the refusal into a message and go on: it must not."""
    calls = Calls()
    make_vm = guard_tool(tool("create_vm", description="Make a VM.")(calls.make))
    after_ran: list[str] = []

    def ask_again(state: State) -> dict[str, Any]:
        return {"messages": [AIMessage("", id="a9", tool_calls=[{"name": "create_vm", "args": {}, "id": "c9"}])]}

    def after(state: State) -> dict[str, Any]:
        after_ran.append("after")  # a side effect of the step after the refused one
        return {}

    graph = _graph(then=ask_again)
    builder_graph = graph.builder
    builder_graph.add_node("tools", ToolNode([make_vm], handle_tool_errors=True))
    builder_graph.add_node("after", after)
    builder_graph.edges.discard(("then", END))
    builder_graph.add_edge("then", "tools")
    builder_graph.add_edge("tools", "after")
    builder_graph.add_edge("after", END)
    guarded = guard_graph(builder_graph.compile(checkpointer=InMemorySaver(), interrupt_before=["then"]))
    guarded.invoke({"messages": _conversation(), "context": {}}, THREAD)

    async def drain(chunks: Any) -> None:
        async for _ in chunks:
            pass

    runs = {
        "invoke": lambda: guarded.invoke(None, THREAD),
        "stream": lambda: list(guarded.stream(None, THREAD)),
        "ainvoke": lambda: asyncio.run(guarded.ainvoke(None, THREAD)),
        "astream": lambda: asyncio.run(drain(guarded.astream(None, THREAD))),
        "astream_events": lambda: asyncio.run(drain(guarded.astream_events(None, THREAD, version="v2"))),
    }
    with pytest.raises(SummaryReconciliationError) as caught:
        runs[how]()
    assert type(caught.value) is SummaryReconciliationError  # the plain error, whatever carried it through LangGraph
    assert caught.value.kind is ReconciliationKind.REDERIVATION and calls.made == []
    assert caught.value.details["thread_id"] == THREAD["configurable"]["thread_id"]
    assert after_ran == []
    state = guarded.get_state(THREAD)
    assert state.next == ("tools",)  # stopped at the refusing step, which wrote nothing
    assert state.values["messages"][-1].id == "a9"


def test_a_summarization_during_the_resumed_run_extends_what_tools_refuse() -> None:
    calls = Calls()
    make_vm = guard_tool(tool("create_vm", description="Make a VM.")(calls.make))
    graph = _remake_graph(make_vm, use_async=False)
    with pytest.raises(SummaryReconciliationError, match="during this resumed run") as caught:
        graph.invoke(None, THREAD)  # resumed: make (vm-1), summarize drops it, remake re-derives
    assert caught.value.details["thread_id"] == "t" and calls.made == ["vm-1"]


def test_the_async_stream_and_batch_paths() -> None:
    graph = guard_graph(_graph())
    fresh = {"messages": _conversation(), "context": {}}

    async def run() -> list[Any]:
        chunks = [c async for c in graph.astream(fresh, THREAD)]
        resumed = [c async for c in graph.astream(None, THREAD)]
        return chunks + resumed

    assert asyncio.run(run())
    other = {"configurable": {"thread_id": "other"}}
    assert asyncio.run(graph.ainvoke(fresh, other))["messages"]
    assert asyncio.run(graph.ainvoke(None, other))["messages"][-1].content == "done"
    with pytest.raises(TypeError, match="batch"):
        graph.batch([None], THREAD)
    with pytest.raises(TypeError, match="batch"):
        asyncio.run(graph.abatch([Command(resume=1)], THREAD))
    (out,) = graph.batch([fresh], {"configurable": {"thread_id": "b"}})
    assert out["messages"] and out["context"]["summaryguard"]["generation"] == 1  # fresh input runs, stamped
    (aout,) = asyncio.run(graph.abatch([fresh], {"configurable": {"thread_id": "c"}}))
    assert aout["messages"] and aout["context"]["summaryguard"]["generation"] == 1


@pytest.mark.parametrize(
    "command",
    [Command(update={"messages": [HumanMessage("go on", id="u1")]}), Command(goto="then")],
    ids=["update", "goto"],
)
def test_every_command_continuing_a_thread_is_checked(command: Any) -> None:
    calls = Calls()
    make_vm = guard_tool(tool("create_vm", description="Make a VM.")(calls.make))
    graph = guard_graph(_graph(then=lambda state: {"messages": [AIMessage(make_vm.invoke({}), id="r")]}))
    _paused(graph)
    with pytest.raises(SummaryReconciliationError) as caught:
        graph.invoke(command, THREAD)
    assert caught.value.kind is ReconciliationKind.REDERIVATION and calls.made == []


def test_methods_that_would_run_the_graph_unchecked_are_refused_and_with_config_stays_guarded() -> None:
    calls = Calls()
    make_vm = guard_tool(tool("create_vm", description="Make a VM.")(calls.make))
    graph = guard_graph(_graph(then=lambda state: {"messages": [AIMessage(make_vm.invoke({}), id="r")]}))
    _paused(graph)
    for name in ("with_retry", "with_fallbacks", "with_listeners", "transform", "atransform", "pipe", "bind", "copy"):
        with pytest.raises(AttributeError, match=f"does not pass {name}\\(\\) through"):
            getattr(graph, name)
    assert not hasattr(graph, "astream_log")
    assert graph.get_graph() is not None and graph.name == graph.graph.name  # reading passes through
    bound = graph.with_config({"recursion_limit": 50}, tags=["resume"])
    assert isinstance(bound, GuardedGraph)
    with pytest.raises(SummaryReconciliationError):
        bound.invoke(None, THREAD)
    for run in (lambda: list(graph.batch_as_completed([None], THREAD)),
                lambda: asyncio.run(_drain(graph.abatch_as_completed([None], THREAD)))):
        with pytest.raises(TypeError, match="in a batch"):
            run()
    assert calls.made == []
    accepted = bound.accepting("create_vm", reason="a new VM is fine")
    assert accepted._bound == bound._bound  # acceptance keeps the bound configuration
    assert accepted.invoke(None, THREAD)["messages"][-1].content == "vm-1"


async def _drain(chunks: Any) -> list[Any]:
    return [chunk async for chunk in chunks]


def test_with_config_merges_under_each_call() -> None:
    from summaryguard.plugins.langgraph._graph import _merge, _merge_each

    bound = {"configurable": {"thread_id": "a", "user": "u"}, "tags": ["x"]}
    assert _merge(None, THREAD) is THREAD and _merge(bound, None) == bound
    assert _merge(bound, {"configurable": {"thread_id": "b"}}) == {"configurable": {"thread_id": "b", "user": "u"}, "tags": ["x"]}
    assert _merge_each(bound, [None, {"tags": []}]) == [bound, {**bound, "tags": []}]


def test_accepting_rederivation_as_a_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="accepted per reference"):
        guard_graph(_graph()).accepting(kinds=["rederivation"], reason="all of them")


@dataclasses.dataclass(slots=True)
class Slotted:
    """A state with no __dict__ (LangGraph resolves its annotations, so it lives at module level)."""

    messages: Annotated[list[AnyMessage], add_messages] = dataclasses.field(default_factory=list)
    context: dict[str, Any] = dataclasses.field(default_factory=dict)


def test_a_slots_dataclass_state_is_stamped_with_its_drops() -> None:
    from langchain_core.messages import RemoveMessage, SystemMessage
    from langgraph.graph.message import REMOVE_ALL_MESSAGES

    def summarize(state: Slotted) -> dict[str, Any]:
        folded = {m.id for m in state.messages[:3]}
        return {
            "context": {"running_summary": RunningSummary("A VM was created.", folded, "t1")},
            "messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), SystemMessage("A VM was created.", id="s"), *state.messages[3:]],
        }

    builder = StateGraph(Slotted)
    builder.add_node("summarize", stamp_summaries(summarize))
    builder.add_node("then", lambda state: {})
    builder.add_edge(START, "summarize")
    builder.add_edge("summarize", "then")
    builder.add_edge("then", END)
    graph = guard_graph(builder.compile(checkpointer=InMemorySaver(), interrupt_before=["then"]))
    graph.invoke({"messages": _conversation(), "context": {}}, THREAD)
    [dropped] = graph.get_state(THREAD).values["context"]["summaryguard"]["drop_manifest"]
    assert (dropped["ref"], dropped["last_known"]) == ("create_vm", "vm-1")


def test_the_note_for_a_top_level_summary_names_the_missing_state_key() -> None:
    running = RunningSummary("made a VM", {"h1"}, "h1")
    assert "no 'summaryguard' key" in (_state.unstamped_note({"messages": [], "summary": running}) or "")
    note = _state.unstamped_note({"messages": [], "summary": running, "summaryguard": None}) or ""
    assert "not wrapped with stamp_summaries()" in note and "summaryguard' key" not in note


def test_guard_graph_refuses_what_it_cannot_guard() -> None:
    with pytest.raises(TypeError, match="compiled LangGraph graph"):
        guard_graph(object())
    with pytest.raises(TypeError, match="not the string"):
        guard_graph(_graph(), deps="create_vm")  # type: ignore[arg-type]
    graph = guard_graph(_graph())
    with pytest.raises(ValueError, match="reason"):
        graph.accepting("x", reason=" ")
    # refused when given, not at the resume it was meant for (where it failed closed, later)
    with pytest.raises(ValueError, match=r"who accepted it \(accepted_by\)"):
        graph.accepting("x", reason="why", accepted_by="")
    with pytest.raises(TypeError, match="reason string, got int"):
        graph.accepting("x", reason=5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="references"):
        graph.accepting((), reason="why")
    assert graph.accepting(kinds=["no-summary"], reason="adopting an old thread")._acceptance is not None


def test_accepting_a_kind_adopts_an_unstamped_thread() -> None:
    graph = guard_graph(_graph(stamped=False))
    _paused(graph)
    result = graph.accepting(kinds=[ReconciliationKind.NO_SUMMARY], reason="adopt").invoke(None, THREAD)
    assert result["messages"][-1].content == "done"


def test_an_adopted_thread_can_be_summarized_again_and_starts_a_lineage() -> None:
    """Summarized before summaryguard, adopted on record: its next stamped summarization must not refuse."""
    calls = Calls()
    make_vm = guard_tool(tool("create_vm", description="Make a VM.")(calls.make))
    old = StateGraph(State)
    old.add_node("summarize", _summarizer("A VM was created."))  # not stamped: before summaryguard
    old.add_node("then", lambda state: {})
    old.add_edge(START, "summarize")
    old.add_edge("summarize", "then")
    old.add_edge("then", END)
    saver = InMemorySaver()
    old.compile(checkpointer=saver, interrupt_before=["then"]).invoke({"messages": _conversation(), "context": {}}, THREAD)

    def work_then_summarize(state: State) -> dict[str, Any]:
        return {"messages": [AIMessage(f"now {len(state['messages'])} messages", id="w"),
                             ToolMessage(make_vm.invoke({}), name="create_vm", tool_call_id="c2", id="t2"),
                             AIMessage("and a long explanation of the disk options that follows it " * 3, id="a3")]}

    new = StateGraph(State)
    new.add_node("summarize", stamp_summaries(_summarizer("A VM was created.")))
    new.add_node("then", work_then_summarize)
    new.add_node("summarize_again", stamp_summaries(_summarizer("Two VMs were created.")))
    new.add_edge(START, "summarize")
    new.add_edge("summarize", "then")
    new.add_edge("then", "summarize_again")
    new.add_edge("summarize_again", END)
    graph = guard_graph(new.compile(checkpointer=saver, interrupt_before=["then"]))
    adopted = graph.accepting(kinds=["no-summary", "generation-mismatch"], reason="adopt the old thread")
    adopted.invoke(None, THREAD)
    stamp = graph.get_state(THREAD).values["context"]["summaryguard"]
    assert stamp["generation"] == 1 and stamp["parent_generation"] is None  # a fresh lineage
    assert calls.made == ["vm-1"]


# -- tools ----------------------------------------------------------------------------------------


class Lookup(BaseTool):
    name: str = "lookup"
    description: str = "Look something up."

    def _run(self, query: str) -> str:
        return f"found {query}"


def test_guard_tool_keeps_the_tool_what_it_was() -> None:
    calls = Calls()
    original = tool("create_vm", description="Make a VM.")(calls.make)
    guarded = guard_tool(original)
    assert type(guarded) is type(original) and guarded.name == "create_vm"
    assert guarded.args == original.args and guarded_is_marked(guarded)
    assert guard_tool(guarded) is guarded
    assert guarded.invoke({}) == "vm-1"
    assert asyncio.run(guarded.ainvoke({})) == "vm-2"
    assert original._run is not guarded._run  # the original is left alone
    custom = guard_tool(Lookup())
    assert custom.invoke({"query": "q"}) == "found q" and asyncio.run(custom.ainvoke({"query": "r"})) == "found r"


def guarded_is_marked(guarded: Any) -> bool:
    return guarded._run.__summaryguard_tool__ == frozenset({"create_vm"})


def test_guard_tool_on_plain_functions_and_other_things() -> None:
    def create_vm() -> str:
        return "vm-1"

    wrapped = guard_tool(create_vm)
    assert wrapped() == "vm-1" and "create_vm" in wrapped.__summaryguard_tool__
    with pytest.raises(TypeError, match="LangChain tool"):
        guard_tool(42)


def test_a_guarded_tool_refuses_inside_a_resumed_turn_sync_and_async() -> None:
    graph = _graph()
    snapshot = _paused(graph)
    calls = Calls()
    guarded = guard_tool(tool("create_vm", description="Make a VM.")(calls.make))

    @resume_guard
    def resume(checkpoint: Any) -> Any:
        return guarded.invoke({})

    @resume_guard
    async def aresume(checkpoint: Any) -> Any:
        return await guarded.ainvoke({})

    with pytest.raises(SummaryReconciliationError, match="rederivation"):
        resume(snapshot)
    with pytest.raises(SummaryReconciliationError, match="rederivation"):
        asyncio.run(aresume(snapshot))
    assert calls.made == []


# -- vocabulary -----------------------------------------------------------------------------------


def test_the_vocabulary_names_the_frameworks() -> None:
    vocabulary = FrameworkModel.from_mapping(MODEL).vocabulary
    assert set(vocabulary) <= set(hookspecs.VOCABULARY_CATEGORIES)
    assert "langgraph.checkpoint.sqlite.SqliteSaver.put" in vocabulary["checkpoint-writes"]
    assert "langgraph.checkpoint.sqlite.aio.AsyncSqliteSaver.aget_tuple" in vocabulary["checkpoint-loads"]
    assert "langgraph.graph.state.CompiledStateGraph.invoke" in vocabulary["resume-calls"]
    assert "langgraph.graph.state.CompiledStateGraph.update_state" in vocabulary["checkpoint-writes"]
    assert "langmem.short_term.SummarizationNode" in vocabulary["compaction-calls"]
    assert not [n for names in vocabulary.values() for n in names if n.startswith("langchain.")]  # the LangChain room's
    assert "langmem.short_term.RunningSummary" in vocabulary["summary-types"]
    assert "langchain_core.tools.tool" in vocabulary["tool-decorators"]
    assert "langchain_core.tools.BaseTool.ainvoke" in vocabulary["tool-calls"]
    assert "langgraph.prebuilt.ToolNode.invoke" in vocabulary["tool-calls"]
    assert vocabulary["interrupt-calls"] == ("langgraph.types.interrupt",)
    assert vocabulary["resume-inputs"] == ("langgraph.types.Command",)
    assert "summaryguard.plugins.langgraph.guard_graph" in vocabulary["validators"]
    assert "summaryguard.guard.langgraph.guard_graph" in vocabulary["validators"]  # the compatibility path


def test_every_vocabulary_name_is_real() -> None:
    """Each qualified name resolves in the installed packages (optional backends aside)."""
    import importlib

    optional = ("langgraph.checkpoint.postgres", "langchain.")
    missing = []
    for names in MODEL["vocabulary"].values():
        for name in names:
            if name.startswith(optional):
                continue
            module_name, _, attrs = name, "", []
            while module_name:
                try:
                    obj: Any = importlib.import_module(module_name)
                    break
                except ImportError:
                    module_name, _, last = module_name.rpartition(".")
                    attrs.insert(0, last)
            for attr in attrs:
                obj = getattr(obj, attr, None)
            if obj is None:
                missing.append(name)
    assert missing == []


def test_the_plugin_hands_over_the_room_model_as_data() -> None:
    answers = [m for a in get_plugin_manager().hook.summaryguard_frameworks() for m in a or ()]
    assert MODEL in answers
    model = FrameworkModel.from_mapping(MODEL)
    assert set(model.guarantees) == {"generation", "partial"}  # SPEC §5: only the dependency check is ours
    assert "add_node" in model.node_registrations and "compile" in model.graph_derivations


def _remake_graph(make_vm: Any, *, use_async: bool) -> Any:
    """make (a VM) -> summarize (drops it) -> remake (asks the tool again); paused before make."""

    def made(handle: str) -> dict[str, Any]:
        return {"messages": [AIMessage("", id="a1", tool_calls=[{"name": "create_vm", "args": {}, "id": "c1"}]),
                             ToolMessage(handle, name="create_vm", tool_call_id="c1", id="t1")]}

    def remade(handle: str) -> dict[str, Any]:
        return {"messages": [AIMessage(f"remade {handle}", id="r1")]}

    async def amake(state: State) -> dict[str, Any]:
        return made(await make_vm.ainvoke({}))

    async def aremake(state: State) -> dict[str, Any]:
        return remade(await make_vm.ainvoke({}))

    builder = StateGraph(State)
    builder.add_node("make", amake if use_async else (lambda state: made(make_vm.invoke({}))))
    builder.add_node("summarize", stamp_summaries(_summarizer("A VM was created.")))
    builder.add_node("remake", aremake if use_async else (lambda state: remade(make_vm.invoke({}))))
    builder.add_edge(START, "make")
    builder.add_edge("make", "summarize")
    builder.add_edge("summarize", "remake")
    builder.add_edge("remake", END)
    graph = guard_graph(builder.compile(checkpointer=InMemorySaver(), interrupt_before=["make"]))
    graph.invoke({"messages": _conversation()[:1], "context": {}}, THREAD)
    return graph


def test_in_run_drops_are_refused_async_and_accepted_on_record(spy: Any) -> None:
    calls = Calls()

    async def create_vm() -> str:
        """Make a VM (a native coroutine tool: ainvoke runs it, not the sync path)."""
        return calls.make()

    make_vm = guard_tool(tool(create_vm))
    graph = _remake_graph(make_vm, use_async=True)
    with pytest.raises(SummaryReconciliationError, match="during this resumed run"):
        asyncio.run(graph.ainvoke(None, THREAD))
    assert calls.made == ["vm-1"]
    graph = _remake_graph(make_vm, use_async=True)
    result = asyncio.run(graph.accepting("create_vm", reason="new VM is fine").ainvoke(None, THREAD))
    assert result["messages"][-1].content == "remade vm-3"
    assert [r.ref for r in spy.accepted] == ["create_vm"]


def test_a_resumed_stream_that_passes_runs_to_the_end() -> None:
    graph = guard_graph(_graph("A VM vm-1 was created."), deps=["create_vm"])
    _paused(graph)
    chunks = list(graph.stream(None, THREAD))
    assert chunks[-1]["then"]["messages"][-1].content == "done"


def test_errors_about_a_subgraph_checkpoint_name_its_namespace() -> None:
    from langgraph.checkpoint.base import CheckpointTuple

    running = RunningSummary("text", {"h1"}, "h1")
    checkpoint_tuple = CheckpointTuple(
        config={"configurable": {"thread_id": "t", "checkpoint_ns": "child:1", "checkpoint_id": "c-9"}},
        checkpoint={"channel_values": {"context": {"running_summary": running}}},  # type: ignore[typeddict-item]
        metadata={"step": 4},
    )
    with pytest.raises(SummaryReconciliationError) as caught:
        check_resume(checkpoint_tuple, [])
    details = caught.value.details
    assert (details["checkpoint_ns"], details["checkpoint_id"], caught.value.checkpoint_turn) == ("child:1", "c-9", 4)
    assert "no summaryguard stamp" in details["note"]


def test_the_plugin_leaves_other_checkpoints_alone(make_checkpoint: Any) -> None:
    assert plugin.summaryguard_checkpoint_adapter(checkpoint_type=dict, checkpoint={}) is None
    checkpoint = make_checkpoint("mapping", has_summary=False)
    with pytest.raises(SummaryReconciliationError) as caught:
        check_resume(checkpoint, [])
    assert caught.value.details == {}
    assert plugin.summaryguard_resolve_violation(error=caught.value, checkpoint=checkpoint) is None


# -- subgraphs --------------------------------------------------------------------------------


def _summarizing_subgraph_parent(attach: Callable[[State], dict[str, Any]], *, stamped: bool = True) -> Any:
    """A parent graph (not compiled) whose one node is a subgraph: summarize, then ``attach``."""
    inner = StateGraph(State)
    node = _summarizer("A VM was created.")
    inner.add_node("summarize", stamp_summaries(node) if stamped else node)
    inner.add_node("attach", attach)
    inner.add_edge(START, "summarize")
    inner.add_edge("summarize", "attach")
    inner.add_edge("attach", END)
    outer = StateGraph(State)
    outer.add_node("agent", inner.compile())
    outer.add_edge(START, "agent")
    outer.add_edge("agent", END)
    return outer


def _parent_with_summarizing_subgraph(make_vm: Any, *, stamped: bool = True) -> Any:
    def attach(state: State) -> dict[str, Any]:
        interrupt("attach the disk?")
        return {"messages": [AIMessage(f"attached to {make_vm.invoke({})}", id="r")]}

    graph = guard_graph(_summarizing_subgraph_parent(attach, stamped=stamped).compile(checkpointer=InMemorySaver()))
    graph.invoke({"messages": _conversation(), "context": {}}, THREAD)  # pauses inside the subgraph
    return graph


@pytest.mark.parametrize("how", ["invoke", "ainvoke"])
def test_what_a_pending_subgraph_summary_dropped_is_refused_too(how: str) -> None:
    """The parent's state is an exact transcript; the subgraph's summary dropped the handle."""
    calls = Calls()
    make_vm = guard_tool(tool("create_vm", description="Make a VM.")(calls.make))
    graph = _parent_with_summarizing_subgraph(make_vm)
    run = {
        "invoke": lambda g: g.invoke(Command(resume="yes"), THREAD),
        "ainvoke": lambda g: asyncio.run(g.ainvoke(Command(resume="yes"), THREAD)),
    }[how]
    with pytest.raises(SummaryReconciliationError) as caught:
        run(graph)
    assert caught.value.kind is ReconciliationKind.REDERIVATION and calls.made == []
    result = run(graph.accepting("create_vm", reason="a new VM is fine"))
    assert result["messages"][-1].content == "attached to vm-1" and calls.made == ["vm-1"]


def test_an_unstamped_subgraph_summary_fails_closed_naming_its_namespace() -> None:
    calls = Calls()
    make_vm = guard_tool(tool("create_vm", description="Make a VM.")(calls.make))
    graph = _parent_with_summarizing_subgraph(make_vm, stamped=False)
    with pytest.raises(SummaryReconciliationError) as caught:
        graph.invoke(Command(resume="yes"), THREAD)
    assert caught.value.kind is ReconciliationKind.NO_SUMMARY
    assert caught.value.details["checkpoint_ns"].startswith("agent:")
    assert "stamp_summaries()" in caught.value.details["note"]
    assert calls.made == []


# -- what LangGraph itself takes for a resume ------------------------------------------------


def _reentrant(calls: Calls) -> Any:
    """summarize -> stop -> make (a guarded tool): paused before ``make``."""
    make_vm = guard_tool(tool(calls.make, description="Make a VM."), name="create_vm")
    return _graph(then=lambda state: {"messages": [AIMessage(make_vm.invoke({}), id="made")]})


def test_a_run_re_entered_under_its_run_id_is_a_resume_and_is_checked() -> None:
    """LangGraph continues the checkpoint when the run_id that wrote it comes again, whatever
    the input (a worker retrying a crashed run with its first input): that resume ran unchecked."""
    calls = Calls()
    graph = guard_graph(_reentrant(calls))
    config = {**THREAD, "metadata": {"run_id": "run-42"}}
    first = {"messages": _conversation(), "context": {}}
    graph.invoke(first, config)
    assert graph.get_state(THREAD).next == ("then",)
    with pytest.raises(SummaryReconciliationError) as caught:
        graph.invoke(first, config)
    assert caught.value.kind is ReconciliationKind.REDERIVATION and calls.made == []
    with pytest.raises(SummaryReconciliationError):
        list(graph.stream(first, {"configurable": {**THREAD["configurable"], "__pregel_resuming": True}}))
    assert calls.made == []
    # another run_id starts afresh: no resume, nothing checked (LangGraph runs the input from the start)
    graph.invoke(first, {**THREAD, "metadata": {"run_id": "run-43"}})
    assert graph.get_state(THREAD).next == ("then",) and calls.made == []


def test_a_fresh_run_with_a_run_id_on_a_graph_without_checkpoints_just_runs() -> None:
    builder = StateGraph(State)
    builder.add_node("then", lambda state: {"messages": [AIMessage("done", id="done")]})
    builder.add_edge(START, "then")
    builder.add_edge("then", END)
    no_saver = guard_graph(builder.compile())
    result = no_saver.invoke({"messages": [], "context": {}}, {"metadata": {"run_id": "r"}, "configurable": {"thread_id": "x"}})
    assert result["messages"][-1].content == "done"


@pytest.mark.parametrize("config", [None, {}, {"configurable": {}}, {"configurable": {"thread_id": None}}])
def test_a_resume_without_a_thread_is_a_clear_error(config: Any) -> None:
    graph = guard_graph(_graph())
    for run in (lambda: graph.invoke(None, config), lambda: list(graph.stream(Command(resume=1), config))):
        with pytest.raises(ValueError, match="a guarded resume needs the thread to resume"):
            run()


def test_an_acceptance_answers_its_own_admission_not_a_check_inside_the_run() -> None:
    """A controller accepts one thread's missing summary; a resume checked inside that run, of a
    checkpoint with no summary at all, is that checkpoint's own question."""
    inner: list[str] = []

    @resume_guard
    def sub_agent(checkpoint: Any) -> str:
        return "resumed"

    def then(state: State) -> dict[str, Any]:
        try:
            inner.append(sub_agent({"turn": 1, "summary": None, "summary_generation": None}))
        except SummaryReconciliationError as error:
            inner.append(error.kind.value)
        return {"messages": [AIMessage("done", id="done")]}

    graph = guard_graph(_graph(stamped=False, then=then))
    _paused(graph)
    graph.accepting(kinds=[ReconciliationKind.NO_SUMMARY], reason="adopt", accepted_by="ops").invoke(None, THREAD)
    assert inner == ["no-summary"]


@pytest.mark.parametrize("handle_tool_errors", [True, "please try again"])
def test_a_graph_run_inside_a_resume_guard_turn_stops_at_a_refused_tool(handle_tool_errors: Any) -> None:
    """The turn follows the context into the graph's tools; a ToolNode that handles errors
    turned the refusal into a message for the model, and the caller never heard of it."""
    import pickle

    from summaryguard.guard import Checkpoint, DroppedRef, Summary

    calls = Calls()
    make_vm = guard_tool(tool("create_vm", description="Make a VM.")(calls.make))
    builder = StateGraph(MessagesState)
    builder.add_node("plan", lambda state: {"messages": [AIMessage("", tool_calls=[{"name": "create_vm", "args": {}, "id": "c"}])]})
    builder.add_node("tools", ToolNode([make_vm], handle_tool_errors=handle_tool_errors))
    builder.add_edge(START, "plan")
    builder.add_edge("plan", "tools")
    builder.add_edge("tools", END)
    graph = builder.compile()
    summary = Summary(generation=2, content="a VM was made", drop_manifest=(DroppedRef("vm", "vm-1", "create_vm", 5),))

    @resume_guard
    def resume(checkpoint: Any) -> Any:
        return graph.invoke({"messages": [HumanMessage("attach the disk")]})

    with pytest.raises(SummaryReconciliationError) as caught:
        resume(Checkpoint(turn=7, summary=summary, summary_generation=2))
    assert caught.value.kind is ReconciliationKind.REDERIVATION and calls.made == []
    assert type(pickle.loads(pickle.dumps(caught.value))) is SummaryReconciliationError  # as the plain error
    assert graph.invoke({"messages": [HumanMessage("outside any turn")]})["messages"][-1].content == "vm-1"


@pytest.mark.parametrize("refs", [b"create_vm", [1], [""], 5, ["vm", b"disk"]])
def test_accepting_takes_reference_names_only(refs: Any) -> None:
    """``accepting(b"create_vm")`` accepted the numbers 99, 114, ...: nothing, silently."""
    with pytest.raises(TypeError, match="accepting\\(\\) takes reference names"):
        guard_graph(_graph()).accepting(refs, reason="approved")


@pytest.mark.parametrize(("deps", "words"), [(42, "got int"), ([["x"]], "item 0 is \\['x'\\]"), ([""], "item 0 is ''")])
def test_guard_graph_refuses_deps_that_name_nothing_when_built(deps: Any, words: str) -> None:
    with pytest.raises(TypeError, match=words):
        guard_graph(_graph(), deps=deps)


def test_a_replay_to_a_checkpoint_with_a_paused_subgraph_checks_that_subgraph(spy: Any) -> None:
    """A checkpoint from the thread's history names its subgraph's checkpoint without its state:
    the replayed run resumed the subgraph and re-derived what its summary dropped."""
    from summaryguard.guard import Replay

    calls = Calls()
    make_vm = guard_tool(tool("create_vm", description="Make a VM.")(calls.make))
    graph = _parent_with_summarizing_subgraph(make_vm)
    paused = graph.get_state(THREAD)
    graph.update_state(THREAD, {"context": {"next_turn_deps": ["ticket"]}})  # the head now lacks a dependency
    earlier = next(h for h in graph.get_state_history(THREAD) if h.config == paused.config)
    spy.answers = lambda error, checkpoint: Replay(earlier) if error.kind is ReconciliationKind.MISSING_DEPENDENCY else None
    with pytest.raises(SummaryReconciliationError) as caught:
        graph.invoke(Command(resume="yes"), THREAD)
    assert caught.value.kind is ReconciliationKind.REDERIVATION and calls.made == []
    assert [error.kind for error in spy.resolved][:1] == [ReconciliationKind.MISSING_DEPENDENCY]  # the replay happened


@pytest.mark.parametrize("how", ["invoke", "ainvoke", "stream"])
def test_a_refusal_a_node_swallowed_stops_the_run_before_the_next_step(how: str) -> None:
    """A node's own ``except Exception`` hides the refusal: with invoke/ainvoke the later
    nodes ran (and did what they do) before the caller heard of it."""
    calls = Calls()
    make_vm = guard_tool(tool("create_vm", description="Make a VM.")(calls.make))
    later: list[str] = []

    def attach(state: State) -> dict[str, Any]:
        try:
            made = make_vm.invoke({})
        except Exception:  # noqa: BLE001 - the swallowing under test
            made = "failed, please try again"
        return {"messages": [AIMessage(f"attached to {made}", id="r")]}

    builder = StateGraph(State)
    builder.add_node("summarize", stamp_summaries(_summarizer("A VM was created.")))
    builder.add_node("attach", attach)
    builder.add_node("bill", lambda state: (later.append("billed"), {})[1])
    builder.add_edge(START, "summarize")
    builder.add_edge("summarize", "attach")
    builder.add_edge("attach", "bill")
    builder.add_edge("bill", END)
    graph = guard_graph(builder.compile(checkpointer=InMemorySaver(), interrupt_before=["attach"]))
    graph.invoke({"messages": _conversation(), "context": {}}, THREAD)
    assert graph.get_state(THREAD).next == ("attach",)
    run = {
        "invoke": lambda: graph.invoke(None, THREAD),
        "ainvoke": lambda: asyncio.run(graph.ainvoke(None, THREAD)),
        "stream": lambda: list(graph.stream(None, THREAD)),
    }[how]
    with pytest.raises(SummaryReconciliationError) as caught:
        run()
    assert caught.value.kind is ReconciliationKind.REDERIVATION and type(caught.value) is SummaryReconciliationError
    assert calls.made == [] and later == [] and graph.get_state(THREAD).next == ("bill",)


def test_a_context_channel_replaced_whole_leaves_a_summary_no_one_vouches_for() -> None:
    """``update_state`` of the ``context`` dict replaced it, running summary and stamp with it,
    while ``messages`` still opened with langmem's summary: that read as an exact transcript."""
    graph = guard_graph(_graph())
    _paused(graph)
    graph.update_state(THREAD, {"context": {"note": "an operator's note"}})
    with pytest.raises(SummaryReconciliationError) as caught:
        graph.invoke(None, THREAD)
    assert caught.value.kind is ReconciliationKind.NO_SUMMARY
    assert "neither its running summary nor its summaryguard stamp" in caught.value.details["note"]
    # a conversation that never was summarized is still an exact transcript
    plain = guard_graph(_graph(stamped=False))
    plain.graph.invoke({"messages": [HumanMessage("hi", id="h")], "context": {}}, {"configurable": {"thread_id": "p"}})
    assert _state.facts(plain.get_state({"configurable": {"thread_id": "p"}}).values, 1)[1] == 0


def test_an_async_replay_to_a_paused_subgraph_reads_it_with_the_async_saver(spy: Any) -> None:
    """An async saver refuses a synchronous read from its own event loop: the replayed subgraph's
    state is read with aget_state, and the resume is judged on it, not refused for the read."""
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    from summaryguard.guard import Replay

    async def scenario(rederive: bool) -> list[str]:
        calls = Calls()
        make_vm = guard_tool(tool("create_vm", description="Make a VM.")(calls.make))

        def attach(state: State) -> dict[str, Any]:
            interrupt("attach the disk?")
            return {"messages": [AIMessage(make_vm.invoke({}) if rederive else "attached", id="r")]}

        async with AsyncSqliteSaver.from_conn_string(":memory:") as saver:
            graph = guard_graph(_summarizing_subgraph_parent(attach).compile(checkpointer=saver))
            await graph.ainvoke({"messages": _conversation(), "context": {}}, THREAD)
            paused = await graph.aget_state(THREAD)
            await graph.aupdate_state(THREAD, {"context": {"next_turn_deps": ["ticket"]}})
            earlier = [h async for h in graph.aget_state_history(THREAD) if h.config == paused.config][0]
            spy.answers = lambda error, checkpoint: (
                Replay(earlier) if error.kind is ReconciliationKind.MISSING_DEPENDENCY else None
            )
            await graph.ainvoke(Command(resume="yes"), THREAD)
        return calls.made

    assert asyncio.run(scenario(rederive=False)) == []  # a legitimate replayed resume runs
    with pytest.raises(SummaryReconciliationError) as caught:
        asyncio.run(scenario(rederive=True))
    assert caught.value.kind is ReconciliationKind.REDERIVATION


def test_a_re_entry_of_a_finished_run_or_with_the_callers_saver_is_what_langgraph_makes_it() -> None:
    calls = Calls()
    config = {**THREAD, "metadata": {"run_id": "run-42"}}
    first = {"messages": _conversation(), "context": {}}
    # nothing pending: LangGraph runs nothing, so nothing is checked (the summary was never stamped)
    finished = guard_graph(_graph(stamped=False))
    finished.graph.invoke(first, config)
    finished.graph.invoke(None, config)
    assert finished.get_state(THREAD).next == ()
    finished.invoke(first, config)
    # the saver given with the call (a server's, a parent graph's) re-enters as the graph's own does
    saver = InMemorySaver()
    make_vm = guard_tool(tool(calls.make, description="Make a VM."), name="create_vm")
    builder = StateGraph(State)
    builder.add_node("summarize", stamp_summaries(_summarizer("A VM was created.")))
    builder.add_node("then", lambda state: {"messages": [AIMessage(make_vm.invoke({}), id="made")]})
    builder.add_edge(START, "summarize")
    builder.add_edge("summarize", "then")
    builder.add_edge("then", END)
    graph = guard_graph(builder.compile(interrupt_before=["then"]))
    with_saver = {**config, "configurable": {**THREAD["configurable"], "__pregel_checkpointer": saver}}
    graph.invoke(first, with_saver)
    with pytest.raises(SummaryReconciliationError) as caught:
        graph.invoke(first, with_saver)
    assert caught.value.kind is ReconciliationKind.REDERIVATION and calls.made == []
