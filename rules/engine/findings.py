"""What a run of the analyzer produces: findings and file errors, as plain data.

Both are frozen, hashable and ordered the way reports list them, so the CLI can
cache, sort, deduplicate and serialize them without knowing anything else
about the engine.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FileError", "Finding"]


@dataclass(frozen=True, order=True)
class Finding:
    """One rule violation. Lines and columns are 1-based; ``line`` is the first
    line of the reported node, ``end_line``/``end_column`` its end (exclusive
    column, as editors and SARIF expect)."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    code: str
    name: str
    message: str

    @property
    def sort_key(self) -> tuple[str, int, int, str]:
        """The order reports use: by file, position, then code."""
        return (self.path, self.line, self.column, self.code)


@dataclass(frozen=True)
class FileError:
    """A file that could not be analyzed (fully): unreadable, unparsable, too
    deeply nested, or a rule that failed on it. ``line`` is None when the
    problem has no position."""

    path: str
    line: int | None
    message: str
