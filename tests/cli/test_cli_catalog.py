"""``summaryguard rules`` and ``summaryguard explain``, over the real rules."""

from __future__ import annotations

import pytest

from summaryguard.rules.cli.catalog import UnknownRuleError, find_rule, format_rules_table, short_description
from summaryguard.rules.cli import main
from summaryguard.rules.engine import all_rules, rule_doc
from summaryguard.rules.cli.exitcodes import ExitCode

RULES = all_rules()


def test_rules_table_lists_every_rule(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules"]) == ExitCode.OK
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split() == ["CODE", "NAME", "DESCRIPTION"]
    starts = [line.split()[:2] for line in lines[1:] if not line.startswith(" ")]
    assert starts == [[rule.code, rule.name] for rule in sorted(RULES, key=lambda r: r.code)]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_every_rule_has_a_short_description(rule: type) -> None:
    description = short_description(rule)
    assert description and "``" not in description and "\n" not in description


def test_table_wraps_to_the_width() -> None:
    table = format_rules_table(RULES, width=80)
    assert all(len(line) <= 80 for line in table.splitlines())
    joined = " ".join(table.split())
    for rule in RULES:
        assert " ".join(short_description(rule).split()) in joined


class Undocumented:
    """No sections at all.

    Just prose.
    """

    code = "XX001"
    name = "undocumented"


class Headed:
    """## Why is this bad?
    It is.

    ## What it does
    Checks a thing. And more.
    """

    code = "XX002"
    name = "headed"


def test_short_description_shapes() -> None:
    assert short_description(Undocumented) == "No sections at all."
    assert short_description(Headed) == "Checks a thing."
    assert short_description(type("Bare", (), {"__doc__": None})) == ""


def test_explain(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "sg201"]) == ExitCode.OK
    out = capsys.readouterr().out
    rule = find_rule("SG201", RULES)
    assert out == rule_doc(rule).rstrip("\n") + "\n"
    for section in ("What it does", "Why is this bad?", "Example", "Use instead"):
        assert f"## {section}" in out


def test_explain_unknown_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "SG999"]) == ExitCode.ERROR
    err = capsys.readouterr().err
    assert err.startswith("summaryguard explain: error: unknown rule code 'SG999'; valid codes: ")
    for rule in RULES:
        assert rule.code in err
    with pytest.raises(UnknownRuleError):
        find_rule("SG1", RULES)  # a prefix is not a rule
