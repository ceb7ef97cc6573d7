"""The README says what the code does: its rule table and its quick start."""

from __future__ import annotations

import re
from pathlib import Path

from summaryguard.rules.engine import all_rules

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_rule_table_lists_every_rule_and_nothing_else() -> None:
    rows = dict(re.findall(r"^\| (SG\d{3}) \| `([a-z-]+)` \|", README, flags=re.M))
    # every rule: the built-in ones and the framework rooms' (registered through their plugins)
    assert rows == {rule.code: rule.name for rule in all_rules(use_plugins=True)}


def test_quick_start_is_two_commands_and_ci_runs_the_second() -> None:
    block = README.split("## Quick start", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    commands = [line.strip() for line in block.strip().splitlines()]
    assert len(commands) == 2
    assert commands[0] == "pip install . && summaryguard demo"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    ci_command = [line for line in ci.splitlines() if "pytest" in line and not line.startswith("#")]
    assert len(ci_command) == 1
    # CI adds only pip's -q; the steps are the README's, in order.
    assert ci_command[0].replace("python -m pip install -q", "pip install") == commands[1]
