"""Overhead of summaryguard on a Google ADK run, measured (not a test: pytest does not collect this file).

    python tests/benchmarks/bench_adk.py [--samples N]

One sample is one run of a real ADK ``Agent`` (scripted ``BaseLlm`` models,
no network) that continues a compacted session: a file-backed
``SqliteSessionService`` session whose first invocation (one tool call) the
runner compacted (set up before the clock starts, a fresh session id per
sample), then ``STEPS`` scripted steps (a model call and a tool call each) and
a final answer, after which the runner compacts again. Nothing the run needs
was dropped, so nothing is refused.

* unguarded: the app and runner as ADK builds them;
* guarded: ``stamp_compactions(app)`` and ``guard_runner(runner)``: the
  resume check (the session read and its stamp), the resumed turn, the plugin's
  tool check per call, the stamp of the compaction at the end.

Guarded and unguarded samples alternate in one run; the figure is the median
of the paired ratios of CPU time (the process's, its threads included: other
processes on a shared machine do not count; each guarded sample against the
unguarded one just before it), goal under 1.05x; the ratios of medians and
minima, and of wall-clock medians, are printed beside.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import tempfile
import time
import warnings
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

warnings.filterwarnings("ignore", category=UserWarning)  # ADK's [EXPERIMENTAL] notices

from google.adk import Agent, Runner
from google.adk.apps.app import App, EventsCompactionConfig
from google.adk.apps.llm_event_summarizer import LlmEventSummarizer
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.genai import types
from pydantic import Field
from summaryguard.plugins.adk import guard_runner, stamp_compactions

from guarded_ratio import print_guarded_ratio

STEPS = 10
GOAL = 1.05
APP, USER = "bench", "u"


class Scripted(BaseLlm):
    model: str = "scripted"
    steps: list[Any] = Field(default_factory=list)

    async def generate_content_async(self, llm_request: Any, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        yield LlmResponse(content=self.steps.pop(0))


def text(value: str) -> types.Content:
    return types.Content(role="model", parts=[types.Part(text=value)])


def call(name: str, args: dict[str, Any], call_id: str) -> types.Content:
    return types.Content(role="model", parts=[types.Part(function_call=types.FunctionCall(name=name, args=args, id=call_id))])


def start() -> str:
    """Start the job; returns its handle."""
    return "job-0"


def lookup(i: int) -> str:
    """Look item ``i`` up."""
    return f"item-{i}"


def runner(db: Path, guarded: bool) -> tuple[Any, Scripted, Scripted]:
    model, summarizer = Scripted(), Scripted()
    app = App(
        name=APP,
        root_agent=Agent(name="worker", model=model, tools=[start, lookup]),
        events_compaction_config=EventsCompactionConfig(
            summarizer=LlmEventSummarizer(llm=summarizer), compaction_interval=1, overlap_size=0
        ),
    )
    if guarded:
        app = stamp_compactions(app)
    built: Any = Runner(app=app, session_service=SqliteSessionService(str(db)))
    return (guard_runner(built) if guarded else built), model, summarizer


async def run(runner: Any, session_id: str, message: str) -> list[Any]:
    content = types.Content(role="user", parts=[types.Part(text=message)])
    return [e async for e in runner.run_async(user_id=USER, session_id=session_id, new_message=content)]


async def sample(db: Path, session_id: str, guarded: bool) -> tuple[float, float]:
    adk, model, summarizer = runner(db, guarded)
    await adk.session_service.create_session(app_name=APP, user_id=USER, session_id=session_id)
    model.steps = [call("start", {}, "call-start"), text("The job is started.")]
    summarizer.steps = [text("The user started a job (job-0).")]
    await run(adk, session_id, "start the job")  # compacted at the end of the invocation
    model.steps = [call("lookup", {"i": i}, f"call-{i}") for i in range(STEPS)] + [text("all done")]
    summarizer.steps = [text("The job job-0 ran ten lookups; all done.")]
    cpu, wall = time.process_time(), time.perf_counter()
    events = await run(adk, session_id, "go on with the job")
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    assert events[-1].content.parts[0].text == "all done" or any(
        e.content and e.content.parts and e.content.parts[0].text == "all done" for e in events
    )
    return cpu, wall


async def main(samples: int) -> int:
    logging.getLogger("google_adk").setLevel(logging.ERROR)  # "missing token usage" notices
    times: dict[bool, list[float]] = {False: [], True: []}
    walls: dict[bool, list[float]] = {False: [], True: []}
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "sessions.db"
        for i in range(3):  # warm up: imports, schema, caches
            for guarded in (False, True):
                await sample(db, f"warm-{guarded}-{i}", guarded)
        for i in range(samples):
            for guarded in (False, True):
                cpu, wall = await sample(db, f"s-{guarded}-{i}", guarded)
                times[guarded].append(cpu)
                walls[guarded].append(wall)
    print_guarded_ratio(f"Google ADK, a run continuing a compacted SQLite session, {STEPS} scripted steps, {samples} samples each", times, walls, GOAL)
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=30, help="samples of each kind (alternated)")
    raise SystemExit(asyncio.run(main(parser.parse_args().samples)))
