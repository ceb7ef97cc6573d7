"""The engine's entry point: pre-filter, parse, summarize, then one rule pass per file.

Order of work, cheapest first, so that cost is paid only where it can matter:

1. the text pre-filter (one compiled regex per run) rejects most files;
2. libcst parses the rest, without metadata, and the project index records
   imports and functions;
3. function summaries are solved across all parsed modules (a validator in
   ``recovery.py`` protects a resume in ``loop.py``) and the semantic model
   of each file is built;
4. only files whose model holds something a selected rule reports (or that a
   model-independent plugin rule wants) get position metadata and the single
   batched visitor pass of all rules.

Nothing here raises for bad input: syntax errors, too-deep nesting and a rule
failing on one file become :class:`FileError` entries and the run goes on.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper

from .base import LintRule, RuleContext
from .findings import FileError, Finding
from .model import FileModel, build_models
from .prefilter import Prefilter
from .project import Project
from .solver import solve
from .vocabulary import Vocabulary

__all__ = ["Analyzer"]

_TOO_DEEP = "too deeply nested to analyze (Python's recursion limit was reached)"


class Analyzer:
    """Built once per run: compiled pre-filter, rule instances, vocabulary."""

    def __init__(self, vocabulary: Vocabulary, rules: Sequence[type[LintRule]]) -> None:
        self.vocabulary = vocabulary
        self.rule_classes = tuple(rules)
        self.rules = [rule() for rule in self.rule_classes]
        self.prefilter = Prefilter(vocabulary, [r.PREFILTER for r in self.rule_classes if r.PREFILTER])

    def might_matter(self, text: str) -> bool:
        """Cheap text scan; False means the file cannot hold a finding."""
        return self.prefilter.might_matter(text)

    def analyze(self, sources: Sequence[tuple[str, str]]) -> tuple[list[Finding], list[FileError]]:
        """Analyze ``(display path, text)`` pairs together (summaries cross modules)."""
        errors: list[FileError] = []
        project = Project(self.vocabulary)
        for path, text in sources:
            if not self.might_matter(text):
                continue
            tree = self._parse(path, text, errors)
            if tree is None:
                continue
            try:
                project.add_module(path, tree, text)
            except RecursionError:
                errors.append(FileError(path, None, _TOO_DEEP))
        project.finish()
        failed: dict[str, str] = {}
        results = solve(project, failed)
        for path, message in failed.items():
            errors.append(FileError(path, None, message))
        models = build_models(project, results)
        findings: list[Finding] = []
        for module in project.modules:
            if module.path in failed:
                continue
            findings.extend(self._run_rules(models[module.path], errors))
        findings.sort(key=lambda f: f.sort_key)
        errors.sort(key=lambda e: (e.path, e.line or 0, e.message))
        return findings, errors

    @staticmethod
    def _parse(path: str, text: str, errors: list[FileError]) -> cst.Module | None:
        try:
            return cst.parse_module(text)
        except cst.ParserSyntaxError as exc:
            errors.append(FileError(path, exc.editor_line, f"syntax error: {exc.message}"))
        except RecursionError:
            errors.append(FileError(path, None, _TOO_DEEP))
        except Exception as exc:  # noqa: BLE001 - the parser's own failures must not stop the run
            errors.append(FileError(path, None, f"could not parse: {type(exc).__name__}: {exc}"))
        return None

    def _run_rules(self, model: FileModel, errors: list[FileError]) -> list[Finding]:
        active = [rule for rule in self.rules if rule.wants(model)]
        if not active:
            return []
        context = RuleContext(model.path, model, self.vocabulary)
        for rule in active:
            rule.begin(context)
        try:
            MetadataWrapper(model.module.tree, unsafe_skip_copy=True).visit_batched(active)
        except RecursionError:
            errors.append(FileError(model.path, None, _TOO_DEEP))
            return []
        except Exception as exc:  # noqa: BLE001 - metadata failures are the file's, not the run's
            errors.append(FileError(model.path, None, f"internal error: {type(exc).__name__}: {exc}"))
            return []
        findings: list[Finding] = []
        for rule in active:
            if rule.failure is not None:
                errors.append(
                    FileError(
                        model.path, None, f"internal error in {rule.code}: {type(rule.failure).__name__}: {rule.failure}"
                    )
                )
                continue
            findings.extend(rule.findings)
        return findings
