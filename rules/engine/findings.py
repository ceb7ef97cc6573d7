"""What a run of the analyzer produces: findings and file errors, as plain data.

Both are frozen, hashable and ordered the way reports list them, so the CLI can
cache, sort, deduplicate and serialize them without knowing anything else
about the engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["FileError", "Finding", "TraceStep", "describe", "finding_from_row", "finding_row", "is_too_deep"]


@dataclass(frozen=True, order=True)
class TraceStep:
    """One link of a finding's evidence chain (source, checks, sink), placed in a file.

    ``basis`` is the link's :attr:`.facts.Step.basis`: ``"value"`` (a value's
    flow or use) or ``"name"`` (a name pattern only). It is not part of the
    step's identity, nor of the JSON and SARIF formats (their schema is fixed);
    the metamorphic tests read it through :attr:`Finding.rests_on_flow`."""

    path: str
    line: int
    note: str
    basis: str = field(default="value", compare=False)


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
    #: The evidence chain, source first, the reported node last; not part of identity.
    trace: tuple[TraceStep, ...] = field(default=(), compare=False)

    @property
    def rests_on_flow(self) -> bool:
        """Whether the evidence chain before the sink (the last step, the reported node
        itself) rests on values alone: it has links, and none of them is a name
        vote. A finding one of whose links is a name depends on that name (SPEC
        §3.1.1: renaming may remove it); one that rests on values must survive it."""
        links = self.trace[:-1]
        return bool(links) and all(step.basis == "value" for step in links)

    @property
    def sort_key(self) -> tuple[str, int, int, str]:
        """The order reports use: by file, position, then code."""
        return (self.path, self.line, self.column, self.code)


_ROW_TYPES = (str, int, int, int, int, str, str, str)


def finding_row(finding: Finding) -> list[object]:
    """A finding as JSON-ready data (the result cache stores these)."""
    f = finding
    trace = [[s.path, s.line, s.note, s.basis] for s in f.trace]
    return [f.path, f.line, f.column, f.end_line, f.end_column, f.code, f.name, f.message, trace]


def finding_from_row(row: object) -> Finding | None:
    """The finding :func:`finding_row` made, or None when ``row`` is not one."""
    if not (isinstance(row, list) and len(row) == len(_ROW_TYPES) + 1 and isinstance(row[-1], list)):
        return None
    if not all(type(value) is kind for value, kind in zip(row, _ROW_TYPES)):
        return None
    steps = []
    for step in row[-1]:
        if not (isinstance(step, list) and len(step) == 4 and type(step[0]) is str and type(step[1]) is int
                and type(step[2]) is str and type(step[3]) is str):
            return None
        steps.append(TraceStep(*step))
    return Finding(*row[:-1], trace=tuple(steps))


@dataclass(frozen=True)
class FileError:
    """A file that could not be analyzed (fully): unreadable, unparsable, too
    deeply nested, or a rule that failed on it. ``line`` is None when the
    problem has no position."""

    path: str
    line: int | None
    message: str


def is_too_deep(exc: BaseException) -> bool:
    """Whether ``exc`` is, or was caused while handling, a RecursionError
    (libcst wraps some of them in its own exceptions)."""
    seen = 0
    current: BaseException | None = exc
    while current is not None and seen < 20:
        if isinstance(current, RecursionError):
            return True
        current = current.__cause__ or current.__context__
        seen += 1
    return False


def describe(exc: BaseException, limit: int = 200) -> str:
    """``Type: message`` for an error report, short and safe: the message of an
    exception about a deep tree can itself recurse when formatted."""
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 - RecursionError included: any failure to format is not the point
        text = "(message could not be formatted)"
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
