"""A small LangGraph agent that loses a handle the way SPEC §1 tells it.

``plan`` asks for a VM, ``tools`` (a real ``ToolNode``) creates it in an
outside world that moves on (each VM gets a new handle), ``summarize`` (langmem's
``SummarizationNode`` with a fake chat model) folds the tool result into a
summary that does not quote the handle, and ``attach`` attaches a disk to the
VM. In the process that made the VM, ``attach`` finds the handle in the
agent's session cache; after a crash only the checkpoint (SQLite on disk)
is left, the handle is not in it, and the naive agent asks the tool again.

Run as a script, it is the process that crashes: ``python langgraph_app.py
DB WORLD`` runs the graph and is killed (SIGKILL) as ``attach`` starts.
"""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import sys
from typing import Any

from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langmem.short_term import SummarizationNode

from fake_world import World

THREAD = {"configurable": {"thread_id": "provision-1"}}
SUMMARY = "The user asked for a virtual machine with a data disk; the VM was created and awaits its disk."
REQUEST = "Create a virtual machine and attach a 100 GB data disk to it. Keep the machine small."
HANDLE = re.compile(r"\bvm-\d+\b")

#: The agent's in-process working memory: what a crash takes away.
SESSION: dict[str, str] = {}


class State(MessagesState):
    context: dict[str, Any]


def make_tools(world: World) -> Any:
    @tool
    def create_vm() -> str:
        """Create a virtual machine and return its handle."""
        handle = world.create_vm()
        SESSION["vm"] = handle
        return handle

    return create_vm


def build(
    world: World,
    saver: Any,
    *,
    guarded: bool = False,
    crash: bool = False,
    deps: Any = None,
    handle_tool_errors: Any = None,
) -> Any:
    """The compiled graph; with ``guarded`` the two lines and the tool wrapper of summaryguard."""
    from summaryguard.plugins.langgraph import guard_graph, guard_tool, stamp_summaries

    create_vm = make_tools(world)
    if guarded:
        create_vm = guard_tool(create_vm)

    def plan(state: State) -> dict[str, Any]:
        return {"messages": [AIMessage("", id="plan-1", tool_calls=[{"name": "create_vm", "args": {}, "id": "call-1"}])]}

    def attach(state: State) -> dict[str, Any]:
        if crash:
            os.kill(os.getpid(), signal.SIGKILL)
        vm = SESSION.get("vm") or _find_handle(state["messages"])
        if vm is None:
            # The naive recovery of SPEC §1: the handle is gone, so ask the tool again.
            vm = create_vm.invoke({})
        world.attach_disk(vm)
        return {"messages": [AIMessage(f"Attached the data disk to {vm}.", id="attach-1")]}

    summarize: Any = SummarizationNode(
        model=FakeListChatModel(responses=[SUMMARY]),
        max_tokens=400,
        max_tokens_before_summary=40,  # past the request, at the tool call: its result is folded too
        max_summary_tokens=100,
        output_messages_key="messages",
    )
    if guarded:
        summarize = stamp_summaries(summarize)
    tools = ToolNode([create_vm]) if handle_tool_errors is None else ToolNode([create_vm], handle_tool_errors=handle_tool_errors)
    builder = StateGraph(State)
    builder.add_node("plan", plan)
    builder.add_node("tools", tools)
    builder.add_node("summarize", summarize)
    builder.add_node("attach", attach)
    builder.add_edge(START, "plan")
    builder.add_edge("plan", "tools")
    builder.add_edge("tools", "summarize")
    builder.add_edge("summarize", "attach")
    builder.add_edge("attach", END)
    graph = builder.compile(checkpointer=saver)
    return guard_graph(graph, deps=deps) if guarded else graph


def _find_handle(messages: list[Any]) -> str | None:
    for message in reversed(messages):
        found = HANDLE.search(message.content if isinstance(message.content, str) else "")
        if found:
            return found.group(0)
    return None


def sqlite_saver(path: str | os.PathLike[str]) -> SqliteSaver:
    """A SQLite checkpointer on disk that may deserialize langmem's RunningSummary."""
    conn = sqlite3.connect(str(path), check_same_thread=False)
    serde = JsonPlusSerializer(allowed_msgpack_modules=[("langmem.short_term.summarization", "RunningSummary")])
    return SqliteSaver(conn, serde=serde)


def first_input() -> dict[str, Any]:
    return {"messages": [HumanMessage(REQUEST, id="ask-1")], "context": {}}


def main(argv: list[str]) -> None:
    db, world_path, mode = argv[1], argv[2], argv[3]
    graph = build(World(world_path), sqlite_saver(db), guarded=mode == "guarded", crash=True)
    graph.invoke(first_input(), THREAD, durability="sync")
    raise SystemExit("unreachable: attach should have killed this process")


if __name__ == "__main__":
    main(sys.argv)
