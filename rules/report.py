"""The result of one ``check`` run, as every output format sees it.

Formatters depend on this module only, never on the engine: findings and
errors are read through the small protocols below, so the engine's
``Finding`` / ``FileError`` and the CLI's own :class:`ReadError` (a file that
could not be found, read or decoded, before any parsing) are reported alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

__all__ = ["ErrorLike", "FindingLike", "ReadError", "Report"]


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


class ErrorLike(Protocol):
    """What a formatter reads from an error: the file, the line when known, the cause."""

    @property
    def path(self) -> str: ...
    @property
    def line(self) -> int | None: ...
    @property
    def message(self) -> str: ...


@dataclass(frozen=True)
class ReadError:
    """A path that could not be turned into source text (missing, unreadable, undecodable)."""

    path: str
    line: int | None
    message: str


@dataclass(frozen=True)
class Report:
    """Everything a formatter prints: sorted findings and errors, and run statistics."""

    findings: Sequence[FindingLike]
    errors: Sequence[ErrorLike]
    files: int
    seconds: float

    @staticmethod
    def build(
        findings: Sequence[FindingLike], errors: Sequence[ErrorLike], files: int, seconds: float
    ) -> Report:
        """A report with findings and errors in a stable order (path, position, code)."""
        return Report(
            findings=sorted(findings, key=lambda f: (f.path, f.line, f.column, f.code, f.message)),
            errors=sorted(errors, key=lambda e: (e.path, e.line or 0, e.message)),
            files=files,
            seconds=seconds,
        )
