"""How names are shown in messages."""

from __future__ import annotations


def test_shown_reads_calls_and_subscripts_as_written() -> None:
    from summaryguard.rules.engine.names import shown

    assert shown("run.graph.().invoke") == "run.graph(...).invoke"
    assert shown("state.[].get") == "state[...].get"
    assert shown("agent.resume") == "agent.resume"
