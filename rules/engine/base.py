"""The rule base class and its examples.

A rule is one :class:`LintRule` subclass in its own module (``rules/sgNNN_*.py``),
Fixit style: it declares ``code`` and ``name``, documents itself in its
docstring with the ruff sections, carries ``VALID`` and ``INVALID`` examples,
and visits libcst nodes. The engine runs every selected rule in *one* batched
pass over one ``MetadataWrapper`` per file, so a rule declares the metadata it
needs in ``METADATA_DEPENDENCIES`` and never parses anything itself.

A rule owns its decision, code and message. Most rules decide over the typed
facts the engine computes about values (:mod:`.facts`): such a rule names the
fact kind it reports (``FACT``), may narrow it (:meth:`LintRule.accepts`), and
words each finding (:meth:`LintRule.message`); it needs no visitor, and its
findings carry the fact's evidence chain as their trace. A rule that inspects
nodes on its own sets no ``FACT`` and defines ``visit_<Node>`` methods that call
:meth:`LintRule.report`; it runs on every file the pre-filter lets through
(``PREFILTER`` widens the pre-filter for its own needs).

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

from .facts import Fact, Step
from .findings import Finding, TraceStep

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
    #: The kind of engine fact this rule reports (None: the rule visits nodes itself).
    FACT: ClassVar[type[Fact] | None] = None
    #: A regular expression that makes the pre-filter keep a file for this rule.
    PREFILTER: ClassVar[str | None] = None

    def __init__(self) -> None:
        super().__init__()
        self.context: RuleContext | None = None
        self.findings: list[Finding] = []
        self.failure: BaseException | None = None

    # -- engine side ---------------------------------------------------------------------

    def begin(self, context: RuleContext) -> None:
        """Called before each file's pass (instances are reused across files): what
        an earlier file left is forgotten (see :meth:`end`), even where no pass
        ended it."""
        self.end()
        self.context = context

    def end(self) -> None:
        """Called after each file's pass, once its findings are read: the instance
        outlives the file, and what it held of it (the model, the positions of
        every node) would keep the file's tree alive until the next file."""
        self.context = None
        self.findings = []
        self.failure = None
        self.metadata = {}

    def wants(self, model: FileModel) -> bool:
        """Whether this file needs the visitor pass for this rule (a rule that
        reports facts needs none)."""
        return self.FACT is None

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

    def accepts(self, fact: Fact) -> bool:
        """Whether this rule reports ``fact`` (one of its ``FACT`` kind); narrow it
        where several rules share a kind (SG101-SG103 by the check missing)."""
        return True

    def message(self, fact: Fact) -> str:
        """The finding's message for ``fact``: what is wrong, why, what to do."""
        raise NotImplementedError(f"{type(self).__name__} sets FACT but defines no message()")

    def report_facts(self, model: FileModel, where: Callable[[Step], TraceStep | None]) -> None:
        """Report every fact of this rule in ``model``; ``where`` places a trace step."""
        kind = self.FACT
        assert kind is not None and self.context is not None
        for fact in model.of(kind):
            if not self.accepts(fact):
                continue
            sink = Step(fact.path, fact.node, self.sink_note(fact))
            steps = [where(step) for step in (*fact.trace, sink)]
            self.report(fact.node, self.message(fact), tuple(s for s in steps if s is not None))

    def sink_note(self, fact: Fact) -> str:
        """The last link of a finding's trace: what this rule reports at the node."""
        return f"{self.code}: reported here"

    def report(self, node: cst.CSTNode, message: str, trace: tuple[TraceStep, ...] = ()) -> None:
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
                trace=trace,
            )
        )
