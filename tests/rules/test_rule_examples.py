"""Every rule's VALID / INVALID examples, plugin rules included, as test cases."""

from __future__ import annotations

import pytest

from summaryguard.rules.engine import Analyzer, Invalid, Valid, Vocabulary, all_rules
from summaryguard.rules.sg001_unused_suppression import check_comments

RULES = all_rules()
ANALYZER = Analyzer(Vocabulary.build(), RULES)
CODES = {rule.code for rule in RULES}


def _cases() -> list:
    cases = []
    for rule in RULES:
        for number, example in enumerate(rule.VALID):
            cases.append(pytest.param(rule, example, id=f"{rule.code}-valid-{number}"))
        for number, example in enumerate(rule.INVALID):
            cases.append(pytest.param(rule, example, id=f"{rule.code}-invalid-{number}"))
    return cases


def _run(example: Valid | Invalid) -> list[tuple[int, str]]:
    sources = [("example.py", example.code), *((p, _dedent(t)) for p, t in example.files.items())]
    findings, errors = ANALYZER.analyze(sources)
    assert errors == []
    # As the command line reports them: suppression comments applied, unused ones reported (SG001).
    mine = check_comments("example.py", example.code, [f for f in findings if f.path == "example.py"], CODES)
    return sorted((f.line, f.code) for f in mine)


def _dedent(text: str) -> str:
    import textwrap

    return textwrap.dedent(text).lstrip("\n")


@pytest.mark.parametrize(("rule", "example"), _cases())
def test_example(rule, example) -> None:
    found = _run(example)
    if isinstance(example, Valid):
        assert found == []
    else:
        expected = example.expectations()
        assert expected, "an INVALID example must expect at least one finding"
        assert any(code == rule.code for _, code in expected), "an INVALID example must show its own rule"
        assert found == expected
