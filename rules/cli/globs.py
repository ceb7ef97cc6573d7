"""Gitignore-style globs, shared by ``exclude``, ``per-file-ignores`` and ``.gitignore``.

One syntax for every path pattern a user writes, the one they already know
from ``.gitignore``: ``build`` matches a folder or file of that name at any
depth, ``/build`` only at the root, ``tests/*`` everything below ``tests``,
``!keep.py`` re-includes. Matching is done by the well-kept ``pathspec``
library; this module adds the strictness a configuration needs (a pattern
that would silently match nothing is an error, not a no-op).

``pathspec`` is imported when a pattern is first compiled (about 25 ms): a
pre-commit run names its files and, with no ``exclude`` or
``per-file-ignores`` configured and no ``.gitignore`` read, never needs it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from pathspec import GitIgnoreSpec

__all__ = ["GlobError", "compile_glob", "compile_gitignore_lines", "compile_lines", "is_ignored"]


class GlobError(ValueError):
    """A configured pattern is not a valid glob."""


def compile_glob(pattern: str) -> GitIgnoreSpec:
    """Compile one configured pattern, or raise :class:`GlobError` saying why."""
    if not pattern.strip():
        raise GlobError("an empty pattern matches nothing")
    if pattern.startswith("#"):
        raise GlobError("a pattern starting with '#' is a comment in gitignore syntax and matches nothing")
    from pathspec import GitIgnoreSpec

    try:
        spec = GitIgnoreSpec.from_lines([pattern])
    except Exception as exc:  # pathspec raises its own error types, which vary by version
        raise GlobError(f"not a valid glob ({exc})") from None
    if not spec.patterns or all(p.include is None for p in spec.patterns):
        raise GlobError("not a valid glob (unbalanced '[' or nothing to match)")
    return spec


def compile_gitignore_lines(lines: Iterable[str]) -> GitIgnoreSpec:
    """Compile a ``.gitignore`` file leniently, as git does: bad lines are skipped."""
    from pathspec import GitIgnoreSpec

    lines = list(lines)
    try:
        return GitIgnoreSpec.from_lines(lines)  # the usual file: every line is good, one compile
    except Exception:  # noqa: BLE001 - some line is bad: find which, one by one
        pass
    good: list[str] = []
    for line in lines:
        try:
            GitIgnoreSpec.from_lines([line])
        except Exception:  # git ignores a malformed line; so do we
            continue
        good.append(line)
    return GitIgnoreSpec.from_lines(good)


def is_ignored(spec: GitIgnoreSpec, relative: str, is_dir: bool) -> bool | None:
    """Whether ``spec`` ignores ``relative`` (True), re-includes it (False), or says nothing (None).

    ``relative`` uses ``/`` separators and is relative to the folder the
    patterns belong to; folders get a trailing ``/`` so that ``build/``
    patterns match them.
    """
    if is_dir:
        relative = relative.rstrip("/") + "/"
    return spec.check_file(relative).include


def compile_lines(lines: Iterable[str]) -> GitIgnoreSpec:
    """One spec for patterns already checked by :func:`compile_glob` (a later
    ``!pattern`` re-includes what an earlier one excluded)."""
    from pathspec import GitIgnoreSpec

    return GitIgnoreSpec.from_lines(lines)
