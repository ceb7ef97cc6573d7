"""Overhead of summaryguard on a LangChain v1 agent, measured (not a test: pytest does not collect this file).

    python tests/benchmarks/bench_langchain.py [--samples N]

One sample is one human-approval cycle of a real ``create_agent`` graph
(InMemorySaver, a scripted chat model, ``summarizer=`` a plain function that
quotes every tool result, so nothing is dropped and nothing is refused): a
fresh request runs to the approval of its first tool call, then
``invoke(Command(resume={"decisions": [approve]}))`` resumes it through 10 more
scripted steps (a model call and a tool call each), with two or three
summarizations on the way.

* unguarded: ``SummarizationMiddleware``, the agent as ``create_agent`` returns it;
* guarded: ``StampedSummarization`` + ``RefuseRederivation`` + ``guard_agent``:
  the resume check, a stamp per summary, the tool check per call.

Guarded and unguarded samples are interleaved on fresh threads, in the same
run; the figure is the median of the paired ratios of CPU time (the process's,
all its threads: other processes on a shared machine do not count; each
guarded sample against the unguarded one just before it), goal under 1.05x;
the ratios of medians and minima, and of wall-clock medians, are printed beside.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time
from collections.abc import Sequence
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware, SummarizationMiddleware
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from summaryguard.plugins.langchain import RefuseRederivation, StampedSummarization, guard_agent

STEPS = 10
GOAL = 1.05
APPROVE = {"decisions": [{"type": "approve"}]}


class Scripted(BaseChatModel):
    """Tool calls ``start``, then ``lookup`` ``STEPS`` times, then a final answer (per thread, by its messages)."""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Scripted:
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        done = sum(1 for m in messages if isinstance(m, ToolMessage)) + _folded(messages)
        if done == 0:
            message = AIMessage("", tool_calls=[{"name": "start", "args": {}, "id": "call-start"}])
        elif done <= STEPS:
            message = AIMessage("", tool_calls=[{"name": "lookup", "args": {"i": done}, "id": f"call-{done}"}])
        else:
            message = AIMessage("all done")
        return ChatResult(generations=[ChatGeneration(message=message)])


def _folded(messages: Sequence[BaseMessage]) -> int:
    """Tool results a summary folded (it quotes each as ``[result]``)."""
    return sum(str(m.content).count("[result") for m in messages if m.additional_kwargs.get("lc_source"))


def quote_everything(messages: Sequence[BaseMessage]) -> str:
    """A summarizer with no model that keeps every tool result verbatim (nothing is dropped)."""
    parts = []
    for m in messages:
        if isinstance(m, ToolMessage):
            parts.append(f"[result {m.content}]")
        elif m.additional_kwargs.get("lc_source"):
            parts.append(str(m.content).split("\n\n", 1)[-1])
    return " ".join(parts)


@tool
def start() -> str:
    """Start the job."""
    return "job-0"


@tool
def lookup(i: int) -> str:
    """Look item ``i`` up."""
    return f"item-{i}"


def build(guarded: bool) -> Any:
    model = Scripted()
    options: dict[str, Any] = {"trigger": ("messages", 8), "keep": ("messages", 2), "summarizer": quote_everything}
    summarize = StampedSummarization(model, **options) if guarded else SummarizationMiddleware(model, **options)
    middleware: list[Any] = [summarize, HumanInTheLoopMiddleware(interrupt_on={"start": True})]
    if guarded:
        middleware.insert(1, RefuseRederivation())
    agent = create_agent(model, [start, lookup], middleware=middleware, checkpointer=InMemorySaver())
    return guard_agent(agent) if guarded else agent


def cycle(agent: Any, thread: str) -> tuple[float, float]:
    """CPU seconds of the process (all its threads: load from other processes does not count) and wall seconds."""
    config = {"configurable": {"thread_id": thread}}
    cpu, wall = time.process_time(), time.perf_counter()
    agent.invoke({"messages": [HumanMessage("run the job")]}, config)
    result = agent.invoke(Command(resume=APPROVE), config)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    assert result["messages"][-1].content == "all done", result["messages"][-1]
    return cpu, wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=60, help="samples of each kind (interleaved)")
    args = parser.parse_args()
    agents = {"unguarded": build(False), "guarded": build(True)}
    threads = itertools.count()
    for name, agent in agents.items():  # warm up: imports, compiled graphs, caches
        for _ in range(3):
            cycle(agent, f"warm-{name}-{next(threads)}")
    times: dict[str, list[float]] = {name: [] for name in agents}
    walls: dict[str, list[float]] = {name: [] for name in agents}
    for _ in range(args.samples):
        for name, agent in agents.items():
            cpu, wall = cycle(agent, f"{name}-{next(threads)}")
            times[name].append(cpu)
            walls[name].append(wall)
    guarded = build(True)
    cycle(guarded, "check")
    stamp = guarded.get_state({"configurable": {"thread_id": "check"}}).values["summaryguard"]
    print(f"LangChain create_agent, human-approval resume + {STEPS} scripted steps, {args.samples} samples each")
    print(f"(guarded run: {stamp['generation']} stamped summaries, {len(stamp['drop_manifest'])} dropped references)")
    for name, samples in times.items():
        print(
            f"  {name:<10} CPU median {statistics.median(samples) * 1e3:7.2f} ms, min {min(samples) * 1e3:7.2f} ms"
            f"   (wall median {statistics.median(walls[name]) * 1e3:7.2f} ms)"
        )
    # Each guarded sample against the unguarded one run right before it: load that drifts
    # during the run moves both halves of a pair alike.
    paired = statistics.median(g / u for g, u in zip(times["guarded"], times["unguarded"]))
    median = statistics.median(times["guarded"]) / statistics.median(times["unguarded"])
    best = min(times["guarded"]) / min(times["unguarded"])
    wall = statistics.median(walls["guarded"]) / statistics.median(walls["unguarded"])
    verdict = "meets" if paired < GOAL else "misses"
    print(f"  guarded / unguarded CPU: median of paired ratios {paired:.3f}x: {verdict} the goal (< {GOAL}x)")
    print(f"                           ratio of medians {median:.3f}x, of minima {best:.3f}x")
    print(f"  guarded / unguarded wall (shared machine, noisier): ratio of medians {wall:.3f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
