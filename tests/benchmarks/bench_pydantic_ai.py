"""Overhead of summaryguard on a pydantic-ai run, measured (not a test: pytest does not collect this file).

    python tests/benchmarks/bench_pydantic_ai.py [--samples N]

One sample is one run of a real ``Agent`` (pydantic-ai's ``FunctionModel``,
scripted, no network) that continues a compacted history: an earlier run's
history, folded by the agent's history processor into a summary and read back
from its JSON through ``ModelMessagesTypeAdapter`` (made before the clock
starts), then ``STEPS`` scripted steps (a model call and a tool call each)
and a final answer. The summary dropped only what the run does not need, so
nothing is refused.

* unguarded: ``Agent(capabilities=[ProcessHistory(fold)])``, the history as the plain processor left it;
* guarded: ``Agent(capabilities=[GuardResumes(), StampedHistory(fold)])``, the history as the stamping
  processor left it: the resume check (reading the stamp, digest of the summary text), the history
  comparison before each model request, the tool check per call.

Guarded and unguarded samples alternate in one run; the figure is the median
of the paired ratios of CPU time (the process's: other processes on a shared
machine do not count; each guarded sample against the unguarded one just
before it), goal under 1.05x; the ratios of medians and minima, and of
wall-clock medians, are printed beside.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, ModelResponse, TextPart, ToolCallPart, UserPromptPart
from pydantic_ai.models.function import FunctionModel

from summaryguard.plugins.pydantic_ai import GuardResumes, StampedHistory

from guarded_ratio import print_guarded_ratio

STEPS = 10
GOAL = 1.05
FOLD_AT = 5  # the earlier run's history is folded; the measured run never grows past LIMIT
LIMIT = 100


def fold(messages: list[Any]) -> list[Any]:
    """A history processor: folds all but the newest request into a summary, once the history is long enough."""
    if FOLD_AT <= len(messages) < LIMIT and not any(isinstance(m, ModelResponse) and m.model_name == "summary" for m in messages):
        summary = ModelResponse(parts=[TextPart("The job was started and is running.")], model_name="summary")
        return [ModelRequest(parts=[UserPromptPart("Summary so far:")]), summary, messages[-1]]
    return messages


def steps() -> list[list[Any]]:
    script = [[ToolCallPart("start", {}, tool_call_id="call-start")], [TextPart("The job is started.")], [TextPart("Noted.")]]
    script += [[ToolCallPart("lookup", {"i": i}, tool_call_id=f"call-{i}")] for i in range(STEPS)]
    return [*script, [TextPart("all done")]]


def make(guarded: bool) -> tuple[Agent[None, str], list[list[Any]]]:
    script = steps()

    def model(messages: list[Any], info: Any) -> ModelResponse:
        return ModelResponse(parts=script.pop(0))

    capabilities: list[Any] = [GuardResumes(), StampedHistory(fold)] if guarded else [ProcessHistory(fold)]
    agent: Agent[None, str] = Agent(FunctionModel(model), capabilities=capabilities)

    @agent.tool_plain
    def start() -> str:
        return "job-0"

    @agent.tool_plain
    def lookup(i: int) -> str:
        return f"item-{i}"

    return agent, script


def sample(guarded: bool) -> tuple[float, float]:
    agent, _ = make(guarded)
    first = agent.run_sync("start the job")
    folded = agent.run_sync("thanks", message_history=first.all_messages()).all_messages()
    history = ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(folded))
    cpu, wall = time.process_time(), time.perf_counter()
    result = agent.run_sync("go on with the job", message_history=history)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    assert result.output == "all done", result.output
    return cpu, wall


def main(samples: int) -> int:
    times: dict[bool, list[float]] = {False: [], True: []}
    walls: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(3):  # warm up: imports, schemas, caches
        for guarded in (False, True):
            sample(guarded)
    for _ in range(samples):
        for guarded in (False, True):
            cpu, wall = sample(guarded)
            times[guarded].append(cpu)
            walls[guarded].append(wall)
    print_guarded_ratio(f"pydantic-ai, a run continuing a compacted history (JSON), {STEPS} scripted steps, {samples} samples each", times, walls, GOAL)
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=40, help="samples of each kind (alternated)")
    raise SystemExit(main(parser.parse_args().samples))
