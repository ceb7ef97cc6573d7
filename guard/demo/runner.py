"""Runs the demo and prints it (see the package docstring)."""

from __future__ import annotations

import argparse
import sys
import tempfile
from importlib import resources
from typing import TextIO

from summaryguard.guard import (
    CheckpointStore,
    Compactor,
    SummaryReconciliationError,
    accept_divergence,
    resume_guard,
    tool_guard,
)

from . import unguarded_agent
from .unguarded_agent import Agent, provision_bucket, put_record, salient_summary
from .world import World

AGENT_FILE = "unguarded_agent.py"
#: What a project would put under [tool.summaryguard] to name its tools.
DEMO_TOOL_CALLS = ("summaryguard.guard.demo.unguarded_agent.provision_bucket", "*.provision")
CRASH_AT = 5
CHECKPOINT_AT = 3


def main(argv: list[str] | None = None, out: TextIO | None = None) -> int:
    parser = argparse.ArgumentParser(prog="summaryguard demo", description=__doc__)
    parser.add_argument("--no-analysis", action="store_true", help="skip the static-analysis part")
    args = parser.parse_args(argv)
    out = out or sys.stdout
    say = _Printer(out)
    if not args.no_analysis:
        analyze(say)
    with tempfile.TemporaryDirectory(prefix="summaryguard-demo-") as folder:
        unguarded(say, folder + "/unguarded")
        guarded(say, folder + "/guarded")
    return 0


class _Printer:
    def __init__(self, out: TextIO) -> None:
        self.out = out

    def __call__(self, text: str = "") -> None:
        self.out.write(text + "\n")

    def heading(self, text: str) -> None:
        self("")
        self(text)
        self("=" * len(text))


# -- part 1: the analyzer ----------------------------------------------------------------


def analyze(say: _Printer) -> None:
    say.heading("1. summaryguard check on the bundled agent")
    source = resources.files(unguarded_agent.__package__).joinpath(AGENT_FILE).read_text(encoding="utf-8")
    try:
        from summaryguard.rules.engine import Analyzer, Vocabulary, all_rules
    except ImportError as exc:  # pragma: no cover - only in a broken install
        say(f"(analyzer unavailable: {exc})")
        return
    analyzer = Analyzer(Vocabulary.build(tool_calls=DEMO_TOOL_CALLS), all_rules())
    findings, errors = analyzer.analyze([(AGENT_FILE, source)])
    lines = source.splitlines()
    for f in findings:
        say(f"{f.path}:{f.line}:{f.column}: {f.code} [{f.name}] {f.message}")
        say(f"    {lines[f.line - 1].strip()}")
    for e in errors:
        say(f"{e.path}:{e.line}: error: {e.message}")
    say(f"{len(findings)} finding(s). Now watch what they cost at run time.")


# -- part 2: the failure, unguarded -------------------------------------------------------


def _life_until_crash(
    say: _Printer, folder: str, agent_factory: type[Agent] = Agent
) -> tuple[World, CheckpointStore, list[tuple[int, str]]]:
    """Turns 1..CRASH_AT-1, compaction + checkpoint at CHECKPOINT_AT, then a crash."""
    world = World()
    store = CheckpointStore(folder)
    compactor = Compactor(salient_summary, lock=store.lock)
    agent = agent_factory(world, store, compactor)
    for turn in range(1, CRASH_AT):
        agent.run_turn(turn)
        say(f"  turn {turn}: wrote record {turn} into {agent.bucket}")
        if turn == CHECKPOINT_AT:
            cp = agent.compact_and_checkpoint(turn)
            summary = cp.summary
            assert summary is not None
            dropped = ", ".join(f"{d.ref}={d.last_known} (from {d.tool})" for d in summary.drop_manifest) or "nothing"
            say(f"  turn {turn}: compaction -> summary gen {summary.generation}: {summary.content!r}")
            say(f"           drop manifest: {dropped}")
            say(f"           checkpoint written: turn {cp.turn}, summary gen {cp.summary_generation}")
    say(f"  turn {CRASH_AT}: *** crash *** (process killed; turn {CHECKPOINT_AT + 1} was never checkpointed)")
    return world, store, agent.lineage


def unguarded(say: _Printer, folder: str) -> None:
    say.heading("2. The failure, replayed without the guard")
    world, store, before = _life_until_crash(say, folder)
    checkpoint = store.latest()
    assert checkpoint is not None
    say(f"  recovery: latest checkpoint is turn {checkpoint.turn} (digest verified)")
    agent = Agent(world, store, Compactor(salient_summary, lock=store.lock))
    bucket = agent.resume(checkpoint)  # summaryguard: ignore[SG1] reason: replays the unguarded agent
    say(f"  resume: the summary has no bucket handle, so the agent asked again -> {bucket}")
    for turn in range(checkpoint.turn + 1, CRASH_AT + 2):
        agent.run_turn(turn)
        say(f"  turn {turn}: wrote record {turn} into {agent.bucket}")
    say("")
    say("  lineage before the crash:   " + _lineage(before))
    say("  lineage after recovery:     " + _lineage(agent.lineage))
    say(f"  The run 'succeeded' and nothing raised, yet record {CHECKPOINT_AT + 1} was written twice, into two")
    say(f"  buckets, and records 1-{CHECKPOINT_AT + 1} sit in a bucket the agent no longer knows.")


def _lineage(pairs: list[tuple[int, str]]) -> str:
    return ", ".join(f"t{t}->{b}" for t, b in sorted(pairs))


# -- part 3: the same life, guarded --------------------------------------------------------


def guarded(say: _Printer, folder: str) -> None:
    say.heading("3. The same run with summaryguard")
    guarded_tool = tool_guard(name="provision_bucket")(provision_bucket)

    def make_agent(world: World, store: CheckpointStore, compactor: Compactor) -> Agent:
        return Agent(world, store, compactor, provision=guarded_tool, put=put_record)

    world, store, _ = _life_until_crash(say, folder, make_agent)  # type: ignore[arg-type]
    checkpoint = store.latest()
    assert checkpoint is not None
    agent = make_agent(world, store, Compactor(salient_summary, lock=store.lock))

    say("")
    say('  a) resume declared with its dependency: @resume_guard(deps=lambda cp: ["bucket"])')
    resume_declared = resume_guard(deps=lambda cp: ["bucket"])(Agent.resume)
    try:
        resume_declared(agent, checkpoint)
    except SummaryReconciliationError as err:
        _show_error(say, err)
    else:  # pragma: no cover - the demo's point
        raise AssertionError("the guard let a resume through without the handle")

    say("")
    say("  b) no dependency declared, but the tool is wrapped with tool_guard:")
    resume_plain = resume_guard(Agent.resume)
    try:
        resume_plain(agent, checkpoint)
    except SummaryReconciliationError as err:
        _show_error(say, err)
    else:  # pragma: no cover
        raise AssertionError("tool_guard let a re-derivation through")
    say(f"     the outside world was not asked again: {len(world.buckets)} bucket(s) exist, as before the crash")

    say("")
    say("  c) the controller decides: it accepts the divergence on record, then resumes")

    @resume_guard
    def resume_accepting(checkpoint: object) -> str:
        (record,) = accept_divergence("bucket", reason="bucket lost in compaction; start a new one", accepted_by="demo operator")
        say(f"     recorded: {record}")
        return agent.resume(checkpoint)  # type: ignore[arg-type]

    bucket = resume_accepting(checkpoint)
    say(f"     resumed into a new bucket {bucket}, with its provenance on record")
    say("")
    say("Without the guard the divergence was silent; with it, the first post-recovery turn")
    say("stopped with the reason, the generation, the turn and the missing reference.")


def _show_error(say: _Printer, err: SummaryReconciliationError) -> None:
    say(f"     SummaryReconciliationError [{err.kind}]")
    say(f"       summary_generation={err.summary_generation} checkpoint_turn={err.checkpoint_turn} "
        f"missing_ref={err.missing_ref!r}")
    say(f"       reason: {err.reason}")
