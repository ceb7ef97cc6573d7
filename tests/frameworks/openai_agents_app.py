"""A small OpenAI Agents SDK agent that loses a handle the way SPEC §1 tells it.

``create_vm`` creates a VM in an outside world that moves on (each VM gets a
new handle), the session's compaction (``OpenAIResponsesCompactionSession``
with a client whose ``responses.compact`` returns an opaque item, as the real
one does) folds the tool result away, and ``attach_disk`` (which needs a
human's approval) attaches a disk to the VM. The model is the SDK's own
``agents.testing.ScriptedModel``; nothing talks to OpenAI.

Run as a script, it is the process that stops:

* ``crash DB WORLD``: creates the VM, compacts, and is killed (SIGKILL);
* ``torn DB WORLD``: creates the VM and is killed during the compaction,
  between the SDK's clear of the history and its add of the compacted items;
* ``approve DB WORLD STATE``: creates the VM, compacts, asks to attach the disk,
  and exits at the approval, leaving ``RunState.to_string()`` in STATE;
* ``all BASE``: each of the three in a process of its own, forked from this
  one (the SDK is imported once), in ``BASE/<mode>/``; prints each exit status.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import signal
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from agents import Agent, Runner, function_tool
from agents.memory import OpenAIResponsesCompactionSession, SQLiteSession
from agents.testing import ScriptedModel, assistant_message, function_call
from summaryguard.plugins.openai_agents import stamp_compactions

from fake_world import World

SESSION_ID = "provision-1"
REQUEST = "Create a small virtual machine and attach a 100 GB data disk to it."
SUMMARY_TEXT = "The user asked for a VM with a data disk; the VM was created and awaits its disk."


class CompactClient:
    """``client.responses.compact``: one opaque item, as the real endpoint returns (its content is encrypted)."""

    def __init__(self) -> None:
        self.responses = SimpleNamespace(compact=self._compact)
        self.calls = 0

    async def _compact(self, **kwargs: Any) -> Any:
        self.calls += 1
        body = json.dumps(kwargs.get("input") or kwargs.get("previous_response_id"), sort_keys=True, default=str)
        sealed = "gAAAA" + hashlib.sha256((SUMMARY_TEXT + body).encode()).hexdigest()
        return SimpleNamespace(output=[{"type": "compaction", "id": "cmp_1", "encrypted_content": sealed}], usage=None)


class KilledMidCompaction(SQLiteSession):
    """A real SQLite session; the process dies (SIGKILL) when the compacted items are about to be added."""

    async def add_items(self, items: list[Any]) -> None:
        if any(isinstance(i, dict) and i.get("type") == "compaction" for i in items):
            os.kill(os.getpid(), signal.SIGKILL)
        await super().add_items(items)


def tools(world: World) -> list[Any]:
    @function_tool
    def create_vm(size: str) -> str:
        """Create a virtual machine; returns its handle."""
        return world.create_vm()

    @function_tool(needs_approval=True)
    def attach_disk(vm: str, gb: int) -> str:
        """Attach a data disk to the VM with this handle."""
        return world.attach_disk(vm)

    return [create_vm, attach_disk]


def make_agent(world: World, steps: list[Any]) -> tuple[Agent[Any], ScriptedModel]:
    model = ScriptedModel(steps)
    return Agent(name="provisioner", instructions="Provision what the user asks for.", model=model, tools=tools(world)), model


def make_session(db: str | os.PathLike[str], *, store: type[SQLiteSession] = SQLiteSession, stamped: bool = True) -> Any:
    session = OpenAIResponsesCompactionSession(
        SESSION_ID,
        store(SESSION_ID, os.fspath(db)),
        client=CompactClient(),  # type: ignore[arg-type]
        should_trigger_compaction=lambda context: False,  # compaction is asked for explicitly below
    )
    return stamp_compactions(session) if stamped else session


CREATE = [[function_call("create_vm", {"size": "small"}, call_id="call-create")], [assistant_message("Created the VM.")]]


async def create_and_compact(db: str, world: World, *, store: type[SQLiteSession] = SQLiteSession, stamped: bool = True) -> Any:
    session = make_session(db, store=store, stamped=stamped)
    agent, _ = make_agent(world, list(CREATE))
    await Runner.run(agent, REQUEST, session=session)
    await session.run_compaction({"force": True})
    return session


async def main(mode: str, db: str, world_path: str, state_path: str | None = None) -> None:
    world = World(world_path)
    if mode == "crash":
        await create_and_compact(db, world)
        print("compacted", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    elif mode == "torn":
        await create_and_compact(db, world, store=KilledMidCompaction)
    elif mode == "approve":
        session = await create_and_compact(db, world)
        agent, _ = make_agent(
            world, [[function_call("attach_disk", {"vm": world.created[-1], "gb": 100}, call_id="call-attach")]]
        )
        result = await Runner.run(agent, "Now attach the disk.", session=session)
        assert result.interruptions, "attach_disk should wait for approval"
        Path(state_path or "").write_text(result.to_state().to_string())
        print("waiting for approval", flush=True)
    else:
        raise SystemExit(f"unknown mode {mode!r}")


def fork_all(base: str) -> None:
    """Each mode in a forked child (a real process, really killed); one line ``exit mode status`` per child."""
    for mode in ("crash", "torn", "approve"):
        folder = Path(base) / mode
        folder.mkdir(parents=True, exist_ok=True)
        args = [mode, str(folder / "session.db"), str(folder / "world.json"), str(folder / "state.txt")]
        pid = os.fork()
        if pid == 0:
            try:
                asyncio.run(main(*args))
            finally:
                os._exit(0)
        _, status = os.waitpid(pid, 0)
        print("exit", mode, -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "all":
        fork_all(sys.argv[2])
    else:
        asyncio.run(main(*sys.argv[1:]))
