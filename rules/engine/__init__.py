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
:mod:`.analyzer` (the driver).
"""

from __future__ import annotations

from .analyzer import Analyzer, ScreenFacts
from .base import Invalid, LintRule, RuleContext, Valid, expected_findings
from .findings import FileError, Finding
from .registry import DOC_SECTIONS, all_rules, rule_doc
from .vocabulary import CATEGORIES, Vocabulary

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
