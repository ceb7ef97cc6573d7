"""Overhead of summaryguard on an OpenAI Agents SDK run, measured (not a test: pytest does not collect this file).

    python tests/benchmarks/bench_openai_agents.py [--samples N]

One sample is one run of a real ``Agent`` (the SDK's ``ScriptedModel``, no
network) that continues a compacted session: an ``OpenAIResponsesCompactionSession``
over a file-backed ``SQLiteSession`` whose history an earlier run left and
``run_compaction`` folded (set up before the clock starts, a fresh session id
per sample), then ``STEPS`` scripted steps (a model call and a tool call each)
and a final answer. Nothing the run needs was dropped, so nothing is refused.

* unguarded: the session as the SDK builds it, the SDK's default runner;
* guarded: ``stamp_compactions(session)`` and ``guard_runner()``: the resume
  check (the session's items and its compaction record), the run hooks, the
  tool check per call.

Guarded and unguarded samples alternate in one run; the figure is the median
of the paired ratios of CPU time (the process's: other processes on a shared
machine do not count; each guarded sample against the unguarded one just
before it), goal under 1.05x; the ratios of medians and minima, and of
wall-clock medians, are printed beside.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from agents import Agent, Runner, function_tool
from agents.memory import OpenAIResponsesCompactionSession, SQLiteSession
from agents.run import AgentRunner, set_default_agent_runner
from agents.testing import ScriptedModel, assistant_message, function_call
from summaryguard.plugins.openai_agents import guard_runner, stamp_compactions

from guarded_ratio import print_guarded_ratio

STEPS = 10
GOAL = 1.05
HISTORY = [
    {"role": "user", "content": "start the job"},
    {"type": "function_call", "call_id": "call-start", "name": "start", "arguments": "{}", "id": "call-start"},
    {"type": "function_call_output", "call_id": "call-start", "output": "job-0"},
    {"role": "assistant", "content": "The job is started."},
]


class Compact:
    """``client.responses.compact``: one opaque item, as the real endpoint returns."""

    def __init__(self) -> None:
        self.responses = SimpleNamespace(compact=self._compact)

    async def _compact(self, **kwargs: Any) -> Any:
        return SimpleNamespace(output=[{"type": "compaction", "id": "cmp", "encrypted_content": "gAAAAopaque"}], usage=None)


@function_tool
def lookup(i: int) -> str:
    """Look item ``i`` up."""
    return f"item-{i}"


async def compacted(db: Path, session_id: str, guarded: bool) -> Any:
    session: Any = OpenAIResponsesCompactionSession(
        session_id, SQLiteSession(session_id, str(db)), client=Compact(), should_trigger_compaction=lambda _: False  # type: ignore[arg-type]
    )
    if guarded:
        session = stamp_compactions(session)
    await session.add_items([dict(item) for item in HISTORY])
    await session.run_compaction({"force": True})
    return session


def agent() -> Agent[Any]:
    steps: list[Any] = [[function_call("lookup", {"i": i}, call_id=f"call-{i}")] for i in range(STEPS)]
    steps.append([assistant_message("all done")])
    return Agent(name="worker", model=ScriptedModel(steps), tools=[lookup])


async def sample(db: Path, session_id: str, guarded: bool, runners: dict[bool, Any]) -> tuple[float, float]:
    session = await compacted(db, session_id, guarded)
    worker = agent()
    set_default_agent_runner(runners[guarded])
    cpu, wall = time.process_time(), time.perf_counter()
    result = await Runner.run(worker, "go on with the job", session=session, max_turns=STEPS + 1)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    assert result.final_output == "all done", result.final_output
    return cpu, wall


async def main(samples: int) -> int:
    runners = {False: AgentRunner(), True: guard_runner()}
    times: dict[bool, list[float]] = {False: [], True: []}
    walls: dict[bool, list[float]] = {False: [], True: []}
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "sessions.db"
        for i in range(3):  # warm up: imports, schema, caches
            for guarded in (False, True):
                await sample(db, f"warm-{guarded}-{i}", guarded, runners)
        for i in range(samples):
            for guarded in (False, True):
                cpu, wall = await sample(db, f"s-{guarded}-{i}", guarded, runners)
                times[guarded].append(cpu)
                walls[guarded].append(wall)
    set_default_agent_runner(None)
    print_guarded_ratio(f"OpenAI Agents SDK, a run continuing a compacted SQLite session, {STEPS} scripted steps, {samples} samples each", times, walls, GOAL)
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=40, help="samples of each kind (alternated)")
    raise SystemExit(asyncio.run(main(parser.parse_args().samples)))
