"""The rule base class and its examples.

A rule is one :class:`LintRule` subclass in its own module (``rules/sgNNN_*.py``),
Fixit style: it declares ``code`` and ``name``, documents itself in its
docstring with the ruff sections, carries ``VALID`` and ``INVALID`` examples,
and visits libcst nodes. The engine runs every selected rule in *one* batched
pass over one ``MetadataWrapper`` per file, so a rule declares the metadata it
needs in ``METADATA_DEPENDENCIES`` and never parses anything itself.

Built-in rules read the per-file semantic model (``self.context.model``: the
flow analysis, summaries and their verdicts, keyed by node) and report what it
says at the node they visit. A plugin rule may do the same or inspect nodes on
its own; it sets ``USES_MODEL = False`` to be run on every file the pre-filter
lets through (and ``PREFILTER`` to widen the pre-filter for its own needs).

Examples: ``Valid(source)`` must produce no finding of any rule;
``Invalid(source)`` lists its expected findings either as
``expected=[(line, "SG101"), ...]`` or, when ``expected`` is omitted, as
``# expect: SG101`` comments on the lines concerned (``# expect: SG101,SG102``
for several). ``files`` adds sibling modules analyzed together with the
example (``{"recovery.py": "..."}``); the example itself is ``example.py``.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import libcst as cst
from libcst.metadata import PositionProvider

from .findings import Finding

if TYPE_CHECKING:  # pragma: no cover
    from .model import FileModel
    from .vocabulary import Vocabulary

__all__ = ["Invalid", "LintRule", "RuleContext", "Valid", "expected_findings"]

_EXPECT = re.compile(r"#\s*expect:\s*([A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*)")


@dataclass(frozen=True)
class Valid:
    """A source on which no rule reports anything."""

    source: str
    files: Mapping[str, str] = field(default_factory=dict)

    @property
    def code(self) -> str:
        return textwrap.dedent(self.source).lstrip("\n")


@dataclass(frozen=True)
class Invalid:
    """A source with its exact expected findings, as (line, code) pairs."""

    source: str
    expected: Sequence[tuple[int, str]] | None = None
    files: Mapping[str, str] = field(default_factory=dict)

    @property
    def code(self) -> str:
        return textwrap.dedent(self.source).lstrip("\n")

    def expectations(self) -> list[tuple[int, str]]:
        if self.expected is not None:
            return sorted(self.expected)
        return expected_findings(self.code)


def expected_findings(text: str) -> list[tuple[int, str]]:
    """``# expect: CODE[, CODE]`` comments of a source, as sorted (line, code) pairs."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        match = _EXPECT.search(line)
        if match:
            found.extend((number, code.strip()) for code in match.group(1).split(","))
    return sorted(found)


@dataclass(frozen=True)
class RuleContext:
    """What a rule may know about the file it is visiting."""

    path: str
    model: FileModel
    vocabulary: Vocabulary


class LintRule(cst.BatchableCSTVisitor):
    """Base of every rule. Subclasses set the class attributes below and define
    ``visit_<Node>`` methods that call :meth:`report`."""

    code: ClassVar[str] = ""
    name: ClassVar[str] = ""
    METADATA_DEPENDENCIES: ClassVar[tuple[Any, ...]] = (PositionProvider,)
    VALID: ClassVar[Sequence[Valid]] = ()
    INVALID: ClassVar[Sequence[Invalid]] = ()
    #: Report facts of the semantic model: run only on files whose model has some.
    USES_MODEL: ClassVar[bool] = True
    #: A regular expression that makes the pre-filter keep a file for this rule.
    PREFILTER: ClassVar[str | None] = None

    def __init__(self) -> None:
        super().__init__()
        self.context: RuleContext | None = None
        self.findings: list[Finding] = []
        self.failure: BaseException | None = None

    # -- engine side ---------------------------------------------------------------------

    def begin(self, context: RuleContext) -> None:
        """Called before each file's pass (instances are reused across files)."""
        self.context = context
        self.findings = []
        self.failure = None

    def wants(self, model: FileModel) -> bool:
        """Whether this file needs the visitor pass for this rule."""
        return not self.USES_MODEL or self.code in model.codes

    def get_visitors(self) -> Mapping[str, Callable[[cst.CSTNode], Any]]:
        """Every visitor method, guarded: a rule that raises stops for this file only."""
        return {name: self._guard(method) for name, method in super().get_visitors().items()}

    def _guard(self, method: Callable[[cst.CSTNode], Any]) -> Callable[[cst.CSTNode], Any]:
        def guarded(node: cst.CSTNode) -> Any:
            if self.failure is not None:
                return None
            try:
                return method(node)
            except RecursionError:
                raise
            except Exception as exc:  # noqa: BLE001 - reported as a FileError by the engine
                self.failure = exc
                return None

        return guarded

    # -- rule side -----------------------------------------------------------------------

    @property
    def model(self) -> FileModel:
        assert self.context is not None
        return self.context.model

    def report_model(self, node: cst.CSTNode) -> None:
        """Report every fact of this rule's code that the model holds for ``node``."""
        for fact in self.model.at(node, self.code):
            self.report(node, fact.message)

    def report(self, node: cst.CSTNode, message: str) -> None:
        assert self.context is not None
        position = self.get_metadata(PositionProvider, node)
        self.findings.append(
            Finding(
                path=self.context.path,
                line=position.start.line,
                column=position.start.column + 1,
                end_line=position.end.line,
                end_column=position.end.column + 1,
                code=self.code,
                name=self.name,
                message=message,
            )
        )
