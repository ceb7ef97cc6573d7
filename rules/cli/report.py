"""The result of one ``check`` run, as every output format sees it.

Formatters depend on this module only, never on the engine: findings and
errors are read through the small protocols below, so the engine's
``Finding`` / ``FileError`` and the CLI's own :class:`ReadError` (a file that
could not be found, read or decoded, before any parsing) are reported alike.

The records are NamedTuples, not dataclasses: every ``check`` builds them, a
pre-commit run on a dismissed file too, and a frozen dataclass costs about four
million instructions to create (six generated methods compiled), a NamedTuple
under one, and the ``dataclasses`` module with ``inspect`` a tenth of flake8's
whole run (SPEC §3.1.2).
"""

# No ``from __future__ import annotations`` here, nor in the other modules that define
# a run's NamedTuples: typing.NamedTuple compiles every annotation it is given as a
# string (a ForwardRef each), a few times the cost of the class itself. Names that only
# a type checker sees are quoted.
import os
from collections.abc import Mapping, Sequence
from typing import NamedTuple, Protocol

__all__ = [
    "BaselineStats", "ErrorLike", "FindingLike", "ReadError", "Report", "RuleInfo", "TraceStepLike", "displayable",
    "step_path",
]


def displayable(text: str) -> str:
    """``text`` as valid Unicode, for output: the bytes of a file name that is not
    UTF-8 (which Python holds as lone surrogates, ``os.fsdecode``'s
    ``surrogateescape``) are shown as ``\\xNN``, so ``b"\\xff.py"`` prints as
    ``\\xff.py`` instead of failing to encode, or writing bytes that are not UTF-8.
    Every format shows paths and messages through this; SARIF's URIs
    percent-encode the bytes themselves instead."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a lone surrogate that no file name decodes to
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def step_path(path: str, finding_path: str, cwd: str) -> str:
    """Where a trace step is: a step in a module the run found through an import (a context
    module, which the engine names by its absolute path) is shown relative to ``cwd`` when
    the finding's path is relative and the module lies below ``cwd``; otherwise the path is
    shown as it is (a file of the run keeps the path it was given, ``./pkg/a.py`` included).
    SARIF makes the same choice for its URIs (``formats.sarif.artifact_location``)."""
    if not os.path.isabs(path) or os.path.isabs(finding_path):
        return path
    prefix = cwd if cwd.endswith(os.sep) else cwd + os.sep
    return path[len(prefix) :] if path.startswith(prefix) else path


class FindingLike(Protocol):
    """What a formatter reads from a finding (1-based lines and columns)."""

    @property
    def path(self) -> str: ...
    @property
    def line(self) -> int: ...
    @property
    def column(self) -> int: ...
    @property
    def end_line(self) -> int: ...
    @property
    def end_column(self) -> int: ...
    @property
    def code(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def trace(self) -> "Sequence[TraceStepLike]": ...


class TraceStepLike(Protocol):
    """One link of a finding's evidence chain: where, and what it shows."""

    @property
    def path(self) -> str: ...
    @property
    def line(self) -> int: ...
    @property
    def note(self) -> str: ...


class ErrorLike(Protocol):
    """What a formatter reads from an error: the file, the line when known, the cause."""

    @property
    def path(self) -> str: ...
    @property
    def line(self) -> int | None: ...
    @property
    def message(self) -> str: ...


class ReadError(NamedTuple):
    """A path that could not be turned into source text (missing, unreadable, undecodable)."""

    path: str
    line: int | None
    message: str


class RuleInfo(NamedTuple):
    """A rule as reports describe it (SARIF's ``rules`` list): its code, name and documentation."""

    code: str
    name: str
    #: One sentence: the first of *What it does*.
    short_description: str
    #: The *What it does* section as plain text.
    full_description: str
    #: The whole documentation, markdown (what ``summaryguard explain`` prints).
    help_markdown: str


class BaselineStats(NamedTuple):
    """What ``--baseline`` did to a run: findings it hid, and entries nothing matched any more."""

    path: str
    #: Findings recorded in the baseline, hence not reported.
    matched: int
    #: Entries for files and codes checked in this run that no finding matched (fixed since).
    stale: int


class Report(NamedTuple):
    """Everything a formatter prints: sorted findings and errors, and run statistics."""

    findings: Sequence[FindingLike]
    errors: Sequence[ErrorLike]
    files: int
    seconds: float
    #: The rules selected for the run, sorted by code (formats that describe rules use them).
    rules: Sequence[RuleInfo] = ()
    #: A stable identity for each finding that survives lines moving (see ``fingerprint``).
    fingerprints: Mapping[FindingLike, str] = {}  # shared, never mutated (Report.build gives its own)
    #: Set when the run compared its findings with a baseline.
    baseline: BaselineStats | None = None
    #: ``--show-trace``: the text format prints each finding's evidence chain.
    show_trace: bool = False

    @staticmethod
    def build(
        findings: Sequence[FindingLike],
        errors: Sequence[ErrorLike],
        files: int,
        seconds: float,
        *,
        rules: Sequence[RuleInfo] = (),
        fingerprints: Mapping[FindingLike, str] | None = None,
        baseline: BaselineStats | None = None,
        show_trace: bool = False,
    ) -> "Report":
        """A report with findings and errors in a stable order (path, position, code)."""
        return Report(
            findings=sorted(findings, key=lambda f: (f.path, f.line, f.column, f.code, f.message)),
            errors=sorted(errors, key=lambda e: (e.path, e.line or 0, e.message)),
            files=files,
            seconds=seconds,
            rules=tuple(sorted(rules, key=lambda r: r.code)),
            fingerprints=dict(fingerprints or {}),
            baseline=baseline,
            show_trace=show_trace,
        )
