"""SG201's evidence chain: where the state was resumed, the lookup that found the
reference missing, why the callee is a tool; and never a tool by its name alone.

SPEC §3.1.1: "a function is a tool because a decorator, a framework model, the
configuration, ``tool_guard`` or what it calls says so, not because its name
ends in ``_tool(s)``". Every SG201 of every rule example and fixture is checked
for a complete chain whose tool link rests on a value.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from summaryguard.rules.engine import Analyzer, Vocabulary, all_rules

RULES = all_rules()
ANALYZER = Analyzer(Vocabulary.build(), RULES)
FIXTURES = Path(__file__).parent / "fixtures"


def _sg201(sources: dict[str, str]) -> list:
    findings, errors = ANALYZER.analyze(sorted(sources.items()))
    assert errors == []
    return [f for f in findings if f.code == "SG201"]


def _dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


_VALUE_STATE_HEAD = """
    from summaryguard.guard import Checkpoint

    def next_turn(blob):
        restored = Checkpoint.from_json(blob)
        return restored.handles.get("notes") or {callee}("latest")
"""


@pytest.mark.parametrize("name", ["summarize_tool", "search_tool", "tools.search", "atool"])
def test_a_tool_by_its_name_alone_makes_no_finding(name: str) -> None:
    """The review's case: resumed state by value, a callee that is a tool only by its name."""
    head = f"def {name}(text):\n    return text\n\n" if "." not in name else ""
    source = head + _dedent(_VALUE_STATE_HEAD.format(callee=name))
    assert _sg201({"m.py": source}) == []


def test_the_same_callee_is_a_tool_once_something_says_so() -> None:
    source = "from agents import function_tool\n\n@function_tool\ndef summarize_tool(text: str) -> str:\n" \
             "    return text\n\n" + _dedent(_VALUE_STATE_HEAD.format(callee="summarize_tool"))
    found = _sg201({"m.py": source})
    assert [f.line for f in found] == [11]
    notes = [s.note for s in found[0].trace]
    assert "`restored` is loaded from a checkpoint" in notes[0] and found[0].trace[0].line == 10
    assert "found missing" in notes[1]
    assert "decorated with `agents.function_tool`" in notes[2]
    assert found[0].rests_on_flow  # all three links are values: renaming cannot remove it


def _all_sources() -> dict[str, dict[str, str]]:
    cases: dict[str, dict[str, str]] = {}
    for rule in RULES:
        for number, example in enumerate(rule.INVALID):
            cases[f"{rule.code}-invalid-{number}"] = {
                "example.py": example.code, **{p: _dedent(t) for p, t in example.files.items()}
            }
    for path in sorted(FIXTURES.glob("*.py")):
        cases[f"fixture-{path.name}"] = {path.name: path.read_text()}
    return cases


CASES = _all_sources()
WITH_SG201 = sorted(c for c, sources in CASES.items() if "SG201" in "".join(sources.values()))


@pytest.mark.parametrize("case_id", WITH_SG201)
def test_every_rederivation_carries_its_chain(case_id: str) -> None:
    for finding in _sg201(CASES[case_id]):
        links = finding.trace[:-1]
        assert len(links) == 3, (finding.line, finding.trace)
        state, check, tool = links
        assert state.note and state.note != check.note, state  # the source: resumed or summarized state
        assert "looked up in resumed state" in check.note and check.basis == "value", check
        assert "tool" in tool.note and tool.basis == "value", tool  # never a name
        assert check.line <= finding.line
