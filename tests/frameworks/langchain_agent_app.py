"""A LangChain v1 agent (``create_agent``) that loses a VM handle to its summarization middleware.

The agent is asked for a VM with a data disk. Its model is a small scripted
``BaseChatModel`` that acts on what it can see, like a real one: with no VM
handle in its messages it calls ``create_vm``; it then asks ``disk_types``;
with a handle in view it calls ``attach_disk``. The summarization middleware
(trigger at 5 messages, keep 2, a plain function as ``summarizer``: no model)
folds the ``create_vm`` result into a summary that does not quote the handle
(``--keep-handle`` writes one that does). The outside world is a file that
never hands out a handle twice.

Run as a script it is the process that stops:

* ``crash DB WORLD``: runs the agent and is killed (SIGKILL) on the first model
  call after the summary: the checkpoint holds the summary, the next step is
  the model.
* ``approve FOLDER``: runs the agent with human approval of ``create_vm`` and
  ``attach_disk``, twice (``FOLDER/dropped``: the summary drops the handle;
  ``FOLDER/kept``: it quotes it), each with its own ``checkpoints.db`` and
  ``world.json``; approves the first ``create_vm`` and exits at the next
  approval request (a pending interrupt in the checkpoint).
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware, SummarizationMiddleware
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool

from summaryguard.plugins.langchain import RefuseRederivation, StampedSummarization, guard_agent

from fake_world import World

#: A small recursion limit: a looping agent fails in a few steps (create_agent's default is 9999).
THREAD = {"configurable": {"thread_id": "provision-1"}, "recursion_limit": 40}
REQUEST = "Create a small virtual machine and attach a data disk to it."
HANDLE = re.compile(r"\bvm-\d+\b")
APPROVE = {"decisions": [{"type": "approve"}]}


def _text(message: BaseMessage) -> str:
    return message.content if isinstance(message.content, str) else str(message.content)


class PolicyModel(BaseChatModel):
    """A chat model that acts on what it sees (no network): the agent's next move from its messages."""

    crash_after_summary: bool = False
    raise_after_summary: bool = False
    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "summaryguard-policy"

    def bind_tools(self, tools: Any, **kwargs: Any) -> PolicyModel:
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        self.calls += 1
        return ChatResult(generations=[ChatGeneration(message=self.decide(messages))])

    def decide(self, messages: Sequence[BaseMessage]) -> AIMessage:
        summarized = any(m.additional_kwargs.get("lc_source") == "summarization" for m in messages)
        if summarized and self.crash_after_summary:
            os.kill(os.getpid(), signal.SIGKILL)
        if summarized and self.raise_after_summary:
            raise RuntimeError("the model process went away")
        last = messages[-1]
        if isinstance(last, ToolMessage) and last.name == "attach_disk":
            return AIMessage(content=f"Done: {_text(last)}.")
        seen = "\n".join(_text(m) for m in messages)
        handle = HANDLE.search(seen)
        if handle is None:
            return _call("create_vm", {})
        if "premium-ssd" not in seen:
            return _call("disk_types", {})
        return _call("attach_disk", {"vm": handle.group(0)})


def _call(name: str, args: dict[str, Any]) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call-{name}-{os.urandom(3).hex()}"}])


def summarizer(keep_handle: bool) -> Any:
    """A summarizer with no model: what a model would say, quoting the VM handle only if asked to."""

    def summarize(messages: Sequence[BaseMessage]) -> str:
        folded = "\n".join(_text(m) for m in messages)
        text = "The user asked for a small VM with a data disk; the VM was created."
        if "premium-ssd" in folded:
            text += " Disks on offer: premium-ssd."
        handle = HANDLE.search(folded)
        return f"{text} Its handle is {handle.group(0)}." if keep_handle and handle else text

    return summarize


def tools(world: World) -> list[Any]:
    @tool
    def create_vm() -> str:
        """Create a virtual machine and return its handle."""
        return world.create_vm()

    @tool
    def disk_types() -> str:
        """List the disk types on offer."""
        return "premium-ssd, standard-hdd"

    @tool
    def attach_disk(vm: str) -> str:
        """Attach a data disk to the virtual machine ``vm``."""
        return world.attach_disk(vm)

    return [create_vm, disk_types, attach_disk]


def build(
    saver: Any,
    world: World,
    *,
    guarded: bool = True,
    keep_handle: bool = False,
    approve: bool = False,
    model: PolicyModel | None = None,
    deps: Any = None,
    refuse: bool = True,
    tool_list: list[Any] | None = None,
    **summarization: Any,
) -> Any:
    """The agent: stamped summarization and refusals when ``guarded``, LangChain's plain middleware otherwise."""
    model = model or PolicyModel()
    options = {"trigger": ("messages", 5), "keep": ("messages", 2), "summarizer": summarizer(keep_handle), **summarization}
    middleware: list[Any] = [StampedSummarization(model, **options) if guarded else SummarizationMiddleware(model, **options)]
    if guarded and refuse:
        middleware.append(RefuseRederivation())
    if approve:
        middleware.append(HumanInTheLoopMiddleware(interrupt_on={"create_vm": True, "attach_disk": True}))
    agent = create_agent(model, tool_list if tool_list is not None else tools(world), middleware=middleware, checkpointer=saver)
    return guard_agent(agent, deps=deps) if guarded else agent


def main(argv: list[str]) -> int:
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.types import Command

    mode, *paths = argv
    if mode == "crash":
        db, world_path = paths
        with SqliteSaver.from_conn_string(db) as saver:
            agent = build(saver, World(world_path), model=PolicyModel(crash_after_summary=True))
            agent.invoke({"messages": [HumanMessage(REQUEST)]}, THREAD, durability="sync")
        return 3  # not reached: the model call after the summary kills the process
    if mode == "approve":
        for name in ("dropped", "kept"):
            folder = Path(paths[0]) / name
            folder.mkdir(parents=True, exist_ok=True)
            with SqliteSaver.from_conn_string(str(folder / "checkpoints.db")) as saver:
                agent = build(saver, World(folder / "world.json"), keep_handle=name == "kept", approve=True)
                agent.invoke({"messages": [HumanMessage(REQUEST)]}, THREAD)  # pauses before create_vm
                result = agent.invoke(Command(resume=APPROVE), THREAD)  # runs to the next approval request
                print(json.dumps([i.value for i in result.get("__interrupt__", ())], default=str))
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
