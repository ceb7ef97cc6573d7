"""A small pydantic-ai agent that loses a handle the way SPEC §1 tells it.

``create_vm`` creates a VM in an outside world that moves on (each VM gets a
new handle); the agent's history processor (summaryguard's ``StampedHistory``
around a plain summarizing function) folds the tool result into a summary
that does not keep the handle; ``attach_disk`` (which needs a human's
approval) attaches a disk to a VM. The model is pydantic-ai's own
``FunctionModel``, scripted; nothing talks to a provider. The history is
persisted as JSON through ``ModelMessagesTypeAdapter``, as applications do.

Run as a script, it is the process that stops:

* ``crash HISTORY WORLD``: creates the VM, compacts on the next run, persists, and is killed (SIGKILL);
* ``truncated HISTORY WORLD``: the same, but the summarizer's response was cut off (``finish_reason="length"``);
* ``torn HISTORY WORLD``: persists the history at every model request, and is killed inside the summarizer;
* ``approve HISTORY WORLD``: creates the VM, compacts, asks to attach the disk, and exits at the approval;
* ``all BASE``: each of the four in a process of its own, forked from this one (pydantic-ai is
  imported once), in ``BASE/<mode>/``; prints each exit status.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from summaryguard.plugins.pydantic_ai import StampedHistory

from fake_world import World

REQUEST = "Create a small virtual machine."
ATTACH = "Now attach a 100 GB data disk to it."
SUMMARY_TEXT = "The user asked for a VM with a data disk; the VM was created and awaits its disk."
#: Fold once the history holds this many messages (the next request included).
FOLD_AT = 5


def summary_of(text: str, *, cut_off: bool = False) -> ModelResponse:
    """What a summarizing model returns: the summary text (cut off at its token limit, when told)."""
    return ModelResponse(parts=[TextPart(text)], finish_reason="length" if cut_off else "stop")


def summarizer(*, cut_off: bool = False, before: Callable[[], None] | None = None) -> Callable[..., list[ModelMessage]]:
    """A plain pydantic-ai history processor: folds all but the newest request into a summary (it drops the handle)."""

    def summarize_old_messages(messages: list[ModelMessage]) -> list[ModelMessage]:
        if len(messages) < FOLD_AT:
            return messages
        if before is not None:
            before()
        text = SUMMARY_TEXT[:40] if cut_off else SUMMARY_TEXT
        return [ModelRequest(parts=[UserPromptPart("Summary of the conversation so far:")]), summary_of(text, cut_off=cut_off), messages[-1]]

    return summarize_old_messages


class Script:
    """``FunctionModel``'s function: answers from a list of steps, and counts the calls."""

    def __init__(self, steps: list[list[Any]]) -> None:
        self.steps = list(steps)
        self.calls = 0

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.calls += 1
        if not self.steps:
            raise AssertionError("the model was asked more often than the script says")
        return ModelResponse(parts=self.steps.pop(0))


def make_agent(
    world: World,
    steps: list[list[Any]],
    *,
    processor: Callable[..., Any] | None = None,
    guard: AbstractCapability[Any] | None = None,
    extra: list[AbstractCapability[Any]] = (),  # type: ignore[assignment]
) -> tuple[Agent[None, Any], Script]:
    """The provisioning agent: ``create_vm`` and ``attach_disk`` (approval), its history processor, and a guard if given."""
    script = Script(steps)
    capabilities: list[AbstractCapability[Any]] = [c for c in (guard,) if c is not None]
    capabilities += [StampedHistory(processor or summarizer()), *extra]
    agent: Agent[None, Any] = Agent(
        FunctionModel(script), capabilities=capabilities, output_type=[str, DeferredToolRequests]
    )

    @agent.tool_plain
    def create_vm(size: str) -> str:
        """Create a virtual machine; returns its handle."""
        return world.create_vm()

    @agent.tool_plain(requires_approval=True)
    def attach_disk(vm: str, gb: int) -> str:
        """Attach a data disk to the VM with this handle."""
        return world.attach_disk(vm)

    return agent, script


def call(tool: str, args: dict[str, Any], call_id: str) -> ToolCallPart:
    return ToolCallPart(tool, args, tool_call_id=call_id)


def text(content: str) -> TextPart:
    return TextPart(content)


CREATE = [[call("create_vm", {"size": "small"}, "call-create")], [text("Created the VM.")]]


def save(path: str | os.PathLike[str], messages: list[ModelMessage]) -> None:
    """Persist a history as the application does: JSON through the framework's adapter, replaced atomically."""
    tmp = Path(f"{os.fspath(path)}.tmp")
    tmp.write_bytes(ModelMessagesTypeAdapter.dump_json(messages))
    os.replace(tmp, path)


def load(path: str | os.PathLike[str]) -> list[ModelMessage]:
    return ModelMessagesTypeAdapter.validate_json(Path(path).read_bytes())


class PersistEveryStep(AbstractCapability[Any]):
    """Persists the history after every model response (an application that saves as it goes)."""

    def __init__(self, path: str) -> None:
        self.path = path

    async def after_model_request(self, ctx: Any, *, request_context: Any, response: Any) -> Any:
        save(self.path, [*ctx.messages, response])
        return response


def main(mode: str, history: str, world_path: str) -> None:
    world = World(world_path)
    if mode == "torn":
        def kill() -> None:
            os.kill(os.getpid(), signal.SIGKILL)

        agent, _ = make_agent(
            world, [*CREATE, [text("never")]], processor=summarizer(before=kill), extra=[PersistEveryStep(history)]
        )
        first = agent.run_sync(REQUEST)
        agent.run_sync(ATTACH, message_history=first.all_messages())
        return
    cut_off = mode == "truncated"
    steps = [*CREATE, [call("attach_disk", {"vm": "vm-1", "gb": 100}, "call-attach")] if mode == "approve" else [text("Noted.")]]
    agent, _ = make_agent(world, steps, processor=summarizer(cut_off=cut_off))
    first = agent.run_sync(REQUEST)
    second = agent.run_sync(ATTACH if mode == "approve" else "Thanks.", message_history=first.all_messages())
    save(history, second.all_messages())
    if mode == "approve":
        assert isinstance(second.output, DeferredToolRequests), "attach_disk should wait for approval"
        print("waiting for approval", flush=True)
        return
    print("compacted", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)


def fork_all(base: str) -> None:
    """Each mode in a forked child (a real process, really killed); one line ``exit mode status`` per child."""
    for mode in ("crash", "truncated", "torn", "approve"):
        folder = Path(base) / mode
        folder.mkdir(parents=True, exist_ok=True)
        pid = os.fork()
        if pid == 0:
            try:
                main(mode, str(folder / "history.json"), str(folder / "world.json"))
            finally:
                os._exit(0)
        _, status = os.waitpid(pid, 0)
        print("exit", mode, -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "all":
        fork_all(sys.argv[2])
    else:
        main(*sys.argv[1:])
