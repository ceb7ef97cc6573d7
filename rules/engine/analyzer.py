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

import ast
import re
from collections.abc import Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper

from .base import LintRule, RuleContext
from .findings import FileError, Finding, describe, is_too_deep
from .model import FileModel, build_models
from .prefilter import Prefilter
from .project import Project
from .solver import solve
from .vocabulary import Vocabulary

__all__ = ["Analyzer"]

_TOO_DEEP = "too deeply nested to analyze (Python's recursion limit was reached)"
#: Syntax-tree depth beyond which a file is reported instead of analyzed. Real
#: code stays far below (the stdlib's deepest module is under 40); libcst's
#: parser slows down sharply and can exhaust the C stack on such input.
MAX_DEPTH = 200


class Analyzer:
    """Built once per run: compiled pre-filter, rule instances, vocabulary."""

    def __init__(self, vocabulary: Vocabulary, rules: Sequence[type[LintRule]]) -> None:
        self.vocabulary = vocabulary
        self.rule_classes = tuple(rules)
        self.rules = [rule() for rule in self.rule_classes]
        extra = [r.PREFILTER for r in self.rule_classes if r.PREFILTER]
        self.prefilter = Prefilter(vocabulary, extra)
        #: Plugin rules' own pre-filters: a file they keep skips the code-word gate.
        self._extra = re.compile("|".join(f"(?:{p})" for p in extra)) if extra else None

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

    def _parse(self, path: str, text: str, errors: list[FileError]) -> cst.Module | None:
        """Parse with libcst, after CPython's parser (10x cheaper) has vouched for
        the text: it reports syntax errors precisely and refuses nesting that
        would crash or stall libcst's native parser; and whose code words (not
        its docstrings) still show co-occurring evidence."""
        try:
            depth, words = _depth_and_words(ast.parse(text))
        except SyntaxError as exc:
            errors.append(FileError(path, exc.lineno, f"syntax error: {exc.msg}"))
            return None
        except (RecursionError, MemoryError):
            errors.append(FileError(path, None, _TOO_DEEP))
            return None
        except ValueError as exc:  # null bytes
            errors.append(FileError(path, None, f"syntax error: {exc}"))
            return None
        if depth > MAX_DEPTH:
            errors.append(FileError(path, None, f"too deeply nested to analyze ({depth} levels, at most {MAX_DEPTH})"))
            return None
        if not self.prefilter.code_matters(words) and not (self._extra and self._extra.search(text)):
            return None
        try:
            return cst.parse_module(text)
        except cst.ParserSyntaxError as exc:
            errors.append(FileError(path, exc.editor_line, f"syntax error: {exc.message}"))
        except RecursionError:
            errors.append(FileError(path, None, _TOO_DEEP))
        except Exception as exc:  # noqa: BLE001 - the parser's own failures must not stop the run
            message = _TOO_DEEP if is_too_deep(exc) else f"could not parse: {describe(exc)}"
            errors.append(FileError(path, None, message))
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
            message = _TOO_DEEP if is_too_deep(exc) else f"internal error: {describe(exc)}"
            errors.append(FileError(model.path, None, message))
            return []
        findings: list[Finding] = []
        for rule in active:
            if rule.failure is not None:
                errors.append(
                    FileError(
                        model.path, None, f"internal error in {rule.code}: {describe(rule.failure)}"
                    )
                )
                continue
            findings.extend(rule.findings)
        return findings


def _depth_and_words(tree: ast.AST) -> tuple[int, str]:
    """The depth of a syntax tree (iteratively: no recursion on deep input) and
    its code words: identifiers, attribute and parameter names, short strings."""
    deepest = 0
    words: list[str] = []
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > deepest:
            deepest = depth
        word = _WORD_OF.get(type(node))
        if word is not None:
            value = getattr(node, word)
            if isinstance(value, str) and len(value) <= 64:
                words.extend(part for part in value.split(".") if part.isidentifier())
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest, "\n".join(words)


_WORD_OF: dict[type, str] = {
    ast.Name: "id",
    ast.Attribute: "attr",
    ast.FunctionDef: "name",
    ast.AsyncFunctionDef: "name",
    ast.ClassDef: "name",
    ast.arg: "arg",
    ast.keyword: "arg",
    ast.alias: "name",
    ast.ImportFrom: "module",
    ast.Constant: "value",
}
