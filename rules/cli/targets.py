"""Which Python grammar the checked project targets (SPEC 3.1.1 "Python versions").

The analyzer reads the grammar of the Python the project targets, not the one
summaryguard happens to run on: a file that uses ``type X = ...`` (3.12) in a
project for 3.12 is valid even when the check runs on 3.11. The target comes
from ``target-version`` in ``[tool.summaryguard]`` (validated: an unknown value
is a configuration error naming it), else from the lower bound of
``requires-python`` in the same file's ``[project]`` table, else it is the
newest grammar libcst knows (:data:`None` here: the engine resolves it, so
that this module never imports libcst).

Versions are the ones libcst's ``PartialParserConfig(python_version=...)``
accepts; :data:`KNOWN_TARGETS` mirrors its list (a test checks it).
"""

from __future__ import annotations

import re

__all__ = ["KNOWN_TARGETS", "TargetError", "normalize_target", "target_from_requires_python"]

#: libcst's ``KNOWN_PYTHON_VERSION_STRINGS`` (1.9), oldest first. An older libcst that
#: lacks the newest is given the newest grammar it has (see ``engine.grammar.parser_config``).
KNOWN_TARGETS: tuple[str, ...] = (
    "3.0", "3.1", "3.3", "3.5", "3.6", "3.7", "3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14", "3.15",
)

#: Patterns are compiled by ``re``'s own cache on first use: most runs name no target.
_WRITTEN = r"^(?:py3(?P<short>\d{1,2})|(?P<major>3)\.(?P<minor>\d{1,2}))$"
#: One clause of a version specifier (PEP 440): operator and version.
_CLAUSE = r"^\s*(?P<op>~=|==|>=|>|<=|<|!=|===)\s*(?P<version>[0-9][0-9a-zA-Z.*+!-]*)\s*$"


class TargetError(ValueError):
    """``target-version`` names no Python grammar summaryguard can read; says which are valid."""


def _key(version: str) -> tuple[int, int]:
    major, minor = version.split(".")
    return int(major), int(minor)


def normalize_target(value: str) -> str:
    """``"3.12"`` for ``"3.12"`` or ``"py312"``; :class:`TargetError` for anything else."""
    match = re.match(_WRITTEN, value.strip())
    if match:
        minor = match.group("short") or match.group("minor")
        version = f"3.{int(minor)}"
        if version in KNOWN_TARGETS:
            return version
    raise TargetError(
        f"{value!r} is not a Python version summaryguard can read "
        f"(one of {', '.join(repr(v) for v in KNOWN_TARGETS)}, or the same as 'py312')"
    )


def target_from_requires_python(specifier: object) -> str | None:
    """The oldest Python ``requires-python`` admits, as the nearest known grammar at or
    below it; None when the value has no lower bound or cannot be read (it is another
    tool's key: summaryguard does not judge it, it falls back to its default)."""
    if not isinstance(specifier, str):
        return None
    lowest: tuple[int, int] | None = None
    for clause in specifier.split(","):
        match = re.match(_CLAUSE, clause)
        if match is None:
            if clause.strip():
                return None
            continue
        if match.group("op") not in ("~=", "==", ">=", ">", "==="):
            continue
        parts = re.findall(r"\d+", match.group("version").split("*")[0])
        if not parts or parts[0] != "3":
            continue
        bound = (3, int(parts[1]) if len(parts) > 1 else 0)  # ">3.11" admits 3.11.1: still 3.11's grammar
        lowest = bound if lowest is None else max(lowest, bound)
    if lowest is None:
        return None
    known = [v for v in KNOWN_TARGETS if _key(v) <= lowest]
    return known[-1] if known else KNOWN_TARGETS[0]
