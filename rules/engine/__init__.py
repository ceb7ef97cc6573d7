"""summaryguard's analysis engine: the API the command line codes against.

::

    vocabulary = Vocabulary.build(tool_calls=..., resume_calls=..., validators=...)
    analyzer = Analyzer(vocabulary, all_rules())      # once per run
    findings, errors = analyzer.analyze([(path, text), ...])

Modules, one job each: :mod:`.vocabulary` (names), :mod:`.prefilter` (text
scan), :mod:`.names` (imports -> qualified names), :mod:`.project` (index and
call resolution), :mod:`.evidence` (what values and calls are),
:mod:`.conditions` (what a test proves), :mod:`.flow` (dominating checks),
:mod:`.rederive` (SG201's shapes), :mod:`.behaviour` / :mod:`.solver`
(function summaries to a fixed point), :mod:`.model` (verdicts by node),
:mod:`.base` (the rule class), :mod:`.registry` (which rules exist),
:mod:`.relevance` / :mod:`.outline` (which bodies libcst parses),
:mod:`.bodies` (a context module's bodies, parsed when read),
:mod:`.host_syntax` (CPython's syntax check of a dismissed file),
:mod:`.analyzer` (the driver).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from .analyzer import Analyzer, ScreenFacts
    from .base import Invalid, LintRule, RuleContext, Valid, expected_findings
    from .findings import FileError, Finding
    from .registry import DOC_SECTIONS, all_rules, rule_doc
    from .vocabulary import CATEGORIES, Vocabulary

#: Where each exported name lives. The names load on first use (PEP 562), so that
#: ``import summaryguard.rules.engine.prefilter`` (or ``.vocabulary``, ``.registry``)
#: does not import libcst: a run whose files the text pre-filter dismisses never
#: needs it (SPEC §3.1.2).
_HOMES = {
    "Analyzer": "analyzer",
    "ScreenFacts": "analyzer",
    "Invalid": "base",
    "LintRule": "base",
    "RuleContext": "base",
    "Valid": "base",
    "expected_findings": "base",
    "FileError": "findings",
    "Finding": "findings",
    "DOC_SECTIONS": "registry",
    "all_rules": "registry",
    "rule_doc": "registry",
    "CATEGORIES": "vocabulary",
    "Vocabulary": "vocabulary",
}

__all__ = [
    "CATEGORIES",
    "DOC_SECTIONS",
    "Analyzer",
    "ScreenFacts",
    "FileError",
    "Finding",
    "Invalid",
    "LintRule",
    "RuleContext",
    "Valid",
    "Vocabulary",
    "all_rules",
    "expected_findings",
    "rule_doc",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
