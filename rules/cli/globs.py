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

import re
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

    Most paths match no pattern at all, and pathspec tries each pattern in turn (a
    178-line ``.gitignore`` is 178 searches per path: a quarter of a warm run over the
    real-code corpus). One search of all the patterns at once (:func:`_any_pattern`)
    answers None for those; a path it matches gets pathspec's own verdict.
    """
    if is_dir:
        relative = relative.rstrip("/") + "/"
    anything = _any_pattern(spec)
    if anything is not None:
        from pathspec.util import normalize_file  # as check_file reads the path (loaded with the spec)

        if anything.search(normalize_file(relative)) is None:
            return None
    return spec.check_file(relative).include


#: :func:`_any_pattern` by spec (the spec kept with its answer, so that an id is never another's).
_ANY: dict[int, tuple[GitIgnoreSpec, re.Pattern[str] | None]] = {}
#: A named group of pathspec's regexes (its directory mark): one name cannot appear twice in one regex.
_NAMED_GROUP = re.compile(r"\(\?P<[A-Za-z_][A-Za-z0-9_]*>")


def _any_pattern(spec: GitIgnoreSpec) -> re.Pattern[str] | None:
    """One regex that finds a match wherever some pattern of ``spec`` with a verdict
    (include or exclude) would, or None when the patterns cannot be so joined (then every
    path gets pathspec's own answer)."""
    known = _ANY.get(id(spec))
    if known is not None and known[0] is spec:
        return known[1]
    parts = []
    for pattern in spec.patterns:
        if pattern.include is None:
            continue  # a blank or comment line: never a verdict
        regex = getattr(pattern, "regex", None)
        if (
            not isinstance(regex, re.Pattern) or not isinstance(regex.pattern, str)
            or regex.flags & ~re.UNICODE or "(?P=" in regex.pattern
        ):
            parts = None
            break
        parts.append(f"(?:{_NAMED_GROUP.sub('(?:', regex.pattern)})")
    joined: re.Pattern[str] | None = None
    if parts is not None:
        try:
            joined = re.compile("|".join(parts) or "(?!)")
        except re.error:
            joined = None
    if len(_ANY) >= 256:  # a long-lived process (tests, an editor) compiles many over time
        _ANY.clear()
    _ANY[id(spec)] = (spec, joined)
    return joined


def compile_lines(lines: Iterable[str]) -> GitIgnoreSpec:
    """One spec for patterns already checked by :func:`compile_glob` (a later
    ``!pattern`` re-includes what an earlier one excluded)."""
    from pathspec import GitIgnoreSpec

    return GitIgnoreSpec.from_lines(lines)
