"""Every rule's documentation examples are run, plugin rules included.

The ``## Example`` and ``## Use instead`` code blocks of a rule's
documentation are what ``summaryguard explain`` prints and what SARIF carries
as the rule's help: a reader copies them. So each one is analyzed as the
command line would (suppression comments applied, SG001 reported) and must
show what it claims: the rule fires on every *Example* block and on no *Use
instead* block. Other rules may fire on either (a *Use instead* that fixes the
generation check may still lack the dependency check): the block documents
one rule, not a whole clean program.
"""

from __future__ import annotations

import re

import pytest

from summaryguard.rules.engine import Analyzer, LintRule, Vocabulary, all_rules, rule_doc
from summaryguard.rules.sg001_unused_suppression import check_comments

RULES = all_rules()
ANALYZER = Analyzer(Vocabulary.build(), RULES)
CODES = {rule.code for rule in RULES}

_SECTION = re.compile(r"^## (?P<title>.+?)\s*$", re.MULTILINE)
_PYTHON_BLOCK = re.compile(r"^```python\n(?P<code>.*?)^```", re.MULTILINE | re.DOTALL)


def code_blocks(doc: str, title: str) -> list[str]:
    """The ```python blocks of the section ``## <title>`` of a rule's markdown documentation."""
    headings = list(_SECTION.finditer(doc))
    for index, heading in enumerate(headings):
        if heading.group("title") == title:
            end = headings[index + 1].start() if index + 1 < len(headings) else len(doc)
            return [m.group("code") for m in _PYTHON_BLOCK.finditer(doc, heading.end(), end)]
    return []


def _codes(source: str) -> list[tuple[int, str]]:
    findings, errors = ANALYZER.analyze([("example.py", source)])
    assert errors == [], errors
    shown = check_comments("example.py", source, findings, CODES)
    return sorted((f.line, f.code) for f in shown)


def _cases() -> list:
    cases = []
    for rule in RULES:
        for title, fires in (("Example", True), ("Use instead", False)):
            cases.append(pytest.param(rule, title, fires, id=f"{rule.code}-{title.replace(' ', '-').lower()}"))
    return cases


@pytest.mark.parametrize(("rule", "title", "fires"), _cases())
def test_documentation_example(rule: type[LintRule], title: str, fires: bool) -> None:
    blocks = code_blocks(rule_doc(rule), title)
    assert blocks, f"{rule.code}: the '## {title}' section has no ```python block"
    for block in blocks:
        found = _codes(block)
        reported = any(code == rule.code for _, code in found)
        assert reported == fires, (
            f"{rule.code} {'does not fire on' if fires else 'fires on'} its '## {title}' block "
            f"(findings: {found}):\n{block}"
        )


def test_code_blocks_reads_one_section() -> None:
    doc = "# X\n\n## Example\n```python\na = 1\n```\ntext\n```python\nb = 2\n```\n## Use instead\n```python\nc\n```\n"
    assert code_blocks(doc, "Example") == ["a = 1\n", "b = 2\n"]
    assert code_blocks(doc, "Use instead") == ["c\n"]
    assert code_blocks(doc, "Known problems") == []
