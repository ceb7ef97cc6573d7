"""``summaryguard rules`` and ``summaryguard explain``: the rules as their classes describe them.

Rule documentation lives on the rule class (ruff-style sections: *What it
does*, *Why is this bad?*, *Example*, *Use instead*); this module only
presents it, so the table, ``explain`` and any generated docs never drift
from the rules themselves.
"""

from __future__ import annotations

import inspect
import re
import shutil
import textwrap
from collections.abc import Callable, Sequence
from typing import Any

from .report import RuleInfo
from .selection import normalize

__all__ = [
    "UnknownRuleError",
    "explain",
    "find_rule",
    "format_rules_table",
    "rule_info",
    "section_text",
    "short_description",
]

_HEADING = re.compile(r"^\s*#+\s*(?P<title>.*?)\s*$")
_RST_LITERAL = re.compile(r"``(.+?)``")
_MIN_DESCRIPTION = 30


class UnknownRuleError(LookupError):
    """``explain`` was given a code that no rule has."""

    def __init__(self, code: str, known: Sequence[str]) -> None:
        self.code = code
        self.known = sorted(known)
        super().__init__(f"unknown rule code {code!r}; valid codes: {', '.join(self.known)}")


def short_description(rule: Any) -> str:
    """One line: the first sentence of *What it does*, else of the docstring."""
    doc = inspect.cleandoc(rule.__doc__ or "")
    lines = doc.splitlines()
    start = 0
    for index, line in enumerate(lines):
        heading = _HEADING.match(line)
        if heading and heading.group("title").lower().startswith("what it does"):
            start = index + 1
            break
    paragraph: list[str] = []
    for line in lines[start:]:
        if _HEADING.match(line):
            if paragraph:
                break
            continue
        if not line.strip():
            if paragraph:
                break
            continue
        paragraph.append(line.strip())
    text = _RST_LITERAL.sub(r"`\1`", " ".join(paragraph))
    return re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0] if text else ""


def section_text(rule: Any, title: str) -> str:
    """The paragraphs of the documentation section whose heading starts with ``title``, as one line of text."""
    lines = inspect.cleandoc(rule.__doc__ or "").splitlines()
    inside = False
    body: list[str] = []
    for line in lines:
        heading = _HEADING.match(line)
        if heading:
            if inside:
                break
            inside = heading.group("title").lower().startswith(title.lower())
            continue
        if inside:
            body.append(line.strip())
    return _RST_LITERAL.sub(r"`\1`", " ".join(part for part in body if part))


def rule_info(rule: Any, rule_doc: Callable[[Any], str]) -> RuleInfo:
    """The rule as reports describe it (SARIF's ``rules``), from its own documentation."""
    return RuleInfo(
        code=rule.code,
        name=rule.name,
        short_description=short_description(rule),
        full_description=section_text(rule, "What it does") or short_description(rule),
        help_markdown=rule_doc(rule),
    )


def format_rules_table(rules: Sequence[Any], width: int | None = None) -> str:
    """An aligned ``code  name  description`` table, sorted by code.

    Descriptions are wrapped (not cut) to ``width`` columns, by default the
    terminal's, so nothing of the rule's own words is lost.
    """
    if width is None:
        width = shutil.get_terminal_size((100, 24)).columns
    ordered = sorted(rules, key=lambda r: r.code)
    rows = [("CODE", "NAME", "DESCRIPTION")] + [(r.code, r.name, short_description(r)) for r in ordered]
    code_width = max(len(row[0]) for row in rows)
    name_width = max(len(row[1]) for row in rows)
    indent = code_width + name_width + 4
    wrap_at = max(width - indent, _MIN_DESCRIPTION)
    lines = []
    for code, name, description in rows:
        wrapped = textwrap.wrap(description, wrap_at) or [""]
        lines.append(f"{code:<{code_width}}  {name:<{name_width}}  {wrapped[0]}".rstrip())
        lines.extend(" " * indent + more for more in wrapped[1:])
    return "\n".join(lines)


def find_rule(code: str, rules: Sequence[Any]) -> Any:
    """The rule with ``code`` (case-insensitive), or :class:`UnknownRuleError`."""
    wanted = normalize(code)
    for rule in rules:
        if rule.code == wanted:
            return rule
    raise UnknownRuleError(code, [r.code for r in rules])


def explain(code: str, rules: Sequence[Any], rule_doc: Callable[[Any], str]) -> str:
    """The documentation of the rule with ``code``."""
    return rule_doc(find_rule(code, rules))
