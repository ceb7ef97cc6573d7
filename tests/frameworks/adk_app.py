"""A small Google ADK agent that loses a handle the way SPEC §1 tells it.

``create_vm`` creates a VM in an outside world that moves on (each VM gets a
new handle), the app's events compaction (``LlmEventSummarizer``, stamped by
summaryguard) folds the tool result away, and ``attach_disk`` attaches a disk
to the VM. The agent's model and the summarizer's model are scripted
``BaseLlm`` subclasses; nothing talks to Gemini.

Run as a script, it is the process that stops:

* ``crash DB WORLD``: creates the VM, the runner compacts the invocation, and
  the process is killed (SIGKILL);
* ``midtool DB WORLD``: in a resumable app, the process is killed inside
  ``create_vm``, after the world made the VM and before ADK recorded the result;
* ``all BASE``: each of the two in a process of its own, forked from this one
  (ADK is imported once), in ``BASE/<mode>/``; prints each exit status.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import Any

from google.adk import Agent, Runner
from google.adk.apps.app import App, EventsCompactionConfig, ResumabilityConfig
from google.adk.apps.llm_event_summarizer import LlmEventSummarizer
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.genai import types
from pydantic import Field
from summaryguard.plugins.adk import stamp_compactions

from fake_world import World

APP = "ops"
USER = "u"
SESSION_ID = "provision-1"
REQUEST = "Create a small virtual machine and attach a 100 GB data disk to it."
SUMMARY_TEXT = "The user asked for a VM with a data disk; the VM was created and awaits its disk."

Step = types.Content | LlmResponse | Callable[[Any], Any]


class ScriptedLlm(BaseLlm):
    """A model that answers with the next scripted step (a ``Content``, an ``LlmResponse`` or a function of the request)."""

    model: str = "scripted"
    steps: list[Any] = Field(default_factory=list)
    calls: int = 0

    async def generate_content_async(self, llm_request: Any, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        self.calls += 1
        if not self.steps:
            raise AssertionError("the scripted model was called more often than scripted")
        step = self.steps.pop(0)
        if callable(step):
            step = step(llm_request)
        yield step if isinstance(step, LlmResponse) else LlmResponse(content=step)


def text(value: str) -> types.Content:
    return types.Content(role="model", parts=[types.Part(text=value)])


def call(name: str, args: dict[str, Any], call_id: str) -> types.Content:
    return types.Content(role="model", parts=[types.Part(function_call=types.FunctionCall(name=name, args=args, id=call_id))])


def user(value: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=value)])


def echo(request: Any) -> types.Content:
    """A summarizer's model that keeps everything it was shown, verbatim (the best a summary can do)."""
    prompt = request.contents[0].parts[0].text
    return text("Summary of the conversation so far: " + prompt.rsplit("\n\n", 1)[-1])


def tools(world: World, *, kill_in_create: bool = False, log: int = 0) -> list[Any]:
    def create_vm(size: str) -> Any:
        """Create a virtual machine; returns its handle."""
        handle = world.create_vm()
        if kill_in_create:
            os.kill(os.getpid(), signal.SIGKILL)  # the VM exists; ADK never records the result
        if log:
            return {"log": "provisioning " + "." * log, "vm": handle}
        return handle

    def attach_disk(vm: str, gb: int) -> str:
        """Attach a data disk to the VM with this handle."""
        return world.attach_disk(vm)

    return [create_vm, attach_disk]


def make_app(
    world: World,
    steps: list[Any],
    *,
    summary: list[Any] | None = None,
    stamped: bool = True,
    compacting: bool = True,
    resumable: bool = False,
    kill_in_create: bool = False,
    log: int = 0,
) -> tuple[App, ScriptedLlm, ScriptedLlm]:
    """The app, its agent's model and its summarizer's model (every invocation is compacted once it ends)."""
    model = ScriptedLlm(steps=list(steps))
    summarizer = ScriptedLlm(steps=list(summary if summary is not None else [text(SUMMARY_TEXT)]))
    agent = Agent(
        name="provisioner",
        model=model,
        instruction="Provision what the user asks for.",
        tools=tools(world, kill_in_create=kill_in_create, log=log),
    )
    config = (
        EventsCompactionConfig(summarizer=LlmEventSummarizer(llm=summarizer), compaction_interval=1, overlap_size=0)
        if compacting
        else None
    )
    app = App(
        name=APP,
        root_agent=agent,
        events_compaction_config=config,
        resumability_config=ResumabilityConfig(is_resumable=True) if resumable else None,
    )
    return (stamp_compactions(app) if stamped and compacting else app), model, summarizer


def make_runner(app: App, db: str | os.PathLike[str]) -> Runner:
    return Runner(app=app, session_service=SqliteSessionService(os.fspath(db)))


CREATE = [call("create_vm", {"size": "small"}, "call-create"), text("Created the VM.")]


async def run(runner: Any, message: types.Content | None = None, **kwargs: Any) -> list[Any]:
    """Every event of one run (creating the session first when it does not exist)."""
    service = runner.session_service
    if await service.get_session(app_name=APP, user_id=USER, session_id=SESSION_ID) is None:
        await service.create_session(app_name=APP, user_id=USER, session_id=SESSION_ID)
    return [e async for e in runner.run_async(user_id=USER, session_id=SESSION_ID, new_message=message, **kwargs)]


async def main(mode: str, db: str, world_path: str) -> None:
    world = World(world_path)
    if mode == "crash":
        app, _, _ = make_app(world, CREATE)
        await run(make_runner(app, db), user(REQUEST))
        print("compacted", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    elif mode == "midtool":
        app, _, _ = make_app(world, CREATE, compacting=False, resumable=True, kill_in_create=True)
        await run(make_runner(app, db), user(REQUEST))
    else:
        raise SystemExit(f"unknown mode {mode!r}")


def fork_all(base: str) -> None:
    """Each mode in a forked child (a real process, really killed); one line ``exit mode status`` per child."""
    for mode in ("crash", "midtool"):
        folder = Path(base) / mode
        folder.mkdir(parents=True, exist_ok=True)
        pid = os.fork()
        if pid == 0:
            try:
                asyncio.run(main(mode, str(folder / "session.db"), str(folder / "world.json")))
            finally:
                os._exit(0)
        _, status = os.waitpid(pid, 0)
        print("exit", mode, -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "all":
        fork_all(sys.argv[2])
    else:
        asyncio.run(main(*sys.argv[1:]))
