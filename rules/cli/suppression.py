"""Line suppressions: ``# summaryguard: ignore[SG201]`` and ``# noqa: SG201``.

A suppression silences the named codes for findings that *start* on the line
holding the comment (a finding's line is the first line of the node it
reports). Several codes may be listed, separated by commas or spaces. A code
prefix works as it does in ``--select`` / ``--ignore``: ``ignore[SG10]``
silences SG101, SG102 and SG103. A prefix must keep at least one digit
(``SG`` or ``ALL`` would be a blanket suppression, and silence nothing). The
``summaryguard:`` form may be followed by ``reason: ...`` so the reason for
accepting the risk lives next to it::

    handle = fetch_handle()  # summaryguard: ignore[SG201] reason: handle is idempotent

Bare ``# noqa`` (no codes) and ``# noqa`` with only other tools' codes do
**not** silence summaryguard, and neither does ``# summaryguard: ignore``
without codes. A blanket ``# noqa`` is usually written for another linter
(flake8, ruff), and it must not hide, as a side effect, a resume that fails
open: each of our findings is silenced only by naming its code.

Comments are found with :mod:`tokenize`, so a ``#`` inside a string is never
taken for one. A file that does not tokenize keeps the suppressions found
before the point of failure (the engine reports the syntax error itself).

A suppression that silences nothing is itself reported (SG001,
``unused-suppression``): :meth:`Suppressions.unused` lists the comments that
name a code the run checked with no finding of that code on their line,
:meth:`Suppressions.nameless` those in our form that name no code at all
(``# summaryguard: ignore SG201``: the brackets are missing), and
:meth:`Suppressions.unknown` those that name a code no rule has (``SG999``,
a typo that would otherwise leave the finding it meant to accept reported,
or hide that it was never accepted). In ``summaryguard: ignore[...]`` every
entry is ours; in ``noqa`` only entries in a known code's letter prefix
(``SG...``), so another tool's ``E501`` is left alone.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from .markers import may_hold_suppressions

__all__ = ["Suppressions", "UnusedSuppression", "apply_suppressions", "covers", "letter_prefixes", "parse_suppressions"]

_CODE = r"[A-Za-z]+[0-9]+"
_CODE_LIST = rf"{_CODE}(?:\s*[,\s]\s*{_CODE})*"
_NOQA = re.compile(rf"#\s*noqa\s*:\s*(?P<codes>{_CODE_LIST})", re.IGNORECASE)
_IGNORE = re.compile(r"#\s*summaryguard\s*:\s*ignore\s*\[(?P<codes>[^\]]*)\]", re.IGNORECASE)
#: Our form's head, with or without a list, anywhere in a text (an upper bound, see :func:`_names_any`).
_IGNORE_WORDS = re.compile(r"#\s*summaryguard\s*:\s*ignore\b", re.IGNORECASE)
#: Our form where a comment (or a second comment in one) begins, naming no code in brackets:
#: nothing after ``ignore`` (or only another comment), empty brackets, or codes without them
#: (``ignore SG201``, ``ignore: SG201``). It silences nothing, and is reported. Prose that
#: quotes the form (in backticks) or goes on in words (``ignore comments need...``), and other
#: directives (``ignore-file``), are not suppressions at all.
_NAMELESS = re.compile(
    r"(?:^|(?<=\s))#\s*summaryguard\s*:\s*ignore(?:\s*\[\s*\]|\s*[:=]?\s*[A-Za-z]+[0-9]+\b|\s*$|\s+#)",
    re.IGNORECASE,
)
_SPLIT = re.compile(r"[\s,]+")
#: An entry that can name codes: letters then at least one digit (a code or a prefix of one).
_ENTRY = re.compile(r"(?P<letters>[A-Z]+)[0-9]+")


def covers(entry: str, code: str) -> bool:
    """Does the suppression entry ``entry`` (upper case) silence ``code``? It does when
    it is the code or a prefix of it with at least one digit, as ``--select`` reads it."""
    return code.startswith(entry) and _ENTRY.fullmatch(entry) is not None


def letter_prefixes(codes: Iterable[str]) -> frozenset[str]:
    """``{"SG"}`` for ``SG101``, ``SG203``: the letters a ``noqa`` entry must have to be ours."""
    return frozenset(letters for letters in map(_letters, codes) if letters)


def _letters(entry: str) -> str | None:
    match = _ENTRY.fullmatch(entry)
    return match.group("letters") if match is not None else None


@dataclass(frozen=True)
class UnusedSuppression:
    """A suppression comment naming checked codes that silenced nothing on its line
    (or, from :meth:`Suppressions.unknown`, codes that no rule has).

    ``column``/``end_column`` span the comment (1-based, end exclusive)."""

    line: int
    column: int
    end_column: int
    codes: tuple[str, ...]


@dataclass(frozen=True)
class Suppressions:
    """The codes silenced on each line of one file."""

    by_line: Mapping[int, frozenset[str]]
    #: Where each suppression comment is: line -> (column, end column), 1-based, end exclusive.
    spans: Mapping[int, tuple[int, int]] = field(default_factory=dict)
    #: The entries of ``summaryguard: ignore[...]`` forms, by line (no other tool's codes there).
    ours: Mapping[int, frozenset[str]] = field(default_factory=dict)
    #: Comments in our form that name no code (``# summaryguard: ignore SG201``): line -> span.
    malformed: Mapping[int, tuple[int, int]] = field(default_factory=dict)

    def silences(self, line: int, code: str) -> bool:
        entries = self.by_line.get(line)
        if not entries:
            return False
        return code in entries or any(covers(entry, code) for entry in entries)

    def unused(self, findings: Iterable[_Located], checked: Collection[str]) -> list[UnusedSuppression]:
        """The comments naming a code in ``checked`` with no such finding on their line.

        ``findings`` are the file's findings *before* suppressions are applied.
        Codes the run did not check (other tools' codes, rules not selected)
        are never reported: nobody can tell whether they would be used.
        """
        if not self.by_line:
            return []
        found = {(f.line, f.code) for f in findings}
        unused = []
        for line in sorted(self.by_line):
            codes = []
            for entry in sorted(self.by_line[line]):
                covered = [code for code in checked if covers(entry, code)]
                if covered and not any((line, code) in found for code in covered):
                    codes.append(entry)
            if codes:
                unused.append(self._at(line, codes))
        return unused

    def unknown(self, known: Collection[str]) -> list[UnusedSuppression]:
        """The comments naming an entry that covers no code in ``known`` (every rule of
        the run, selected or not): any entry of ``summaryguard: ignore[...]``, and a
        ``noqa`` entry whose letters are those of a known code (``SG999``, not ``E501``)."""
        if not self.by_line:
            return []
        spaces = {_letters(code) for code in known}
        found = []
        for line in sorted(self.by_line):
            ours = self.ours.get(line, frozenset())
            codes = [
                entry
                for entry in sorted(self.by_line[line])
                if (entry in ours or _letters(entry) in spaces) and not any(covers(entry, c) for c in known)
            ]
            if codes:
                found.append(self._at(line, codes))
        return found

    def nameless(self) -> list[UnusedSuppression]:
        """The comments in the ``summaryguard: ignore`` form that name no code: they were
        written to silence something, and silence nothing (see :data:`_NAMELESS`)."""
        return [UnusedSuppression(line, *self.malformed[line], ()) for line in sorted(self.malformed)]

    def _at(self, line: int, codes: list[str]) -> UnusedSuppression:
        column, end_column = self.spans.get(line, (1, 1))
        return UnusedSuppression(line, column, end_column, tuple(codes))


def parse_suppressions(text: str, letters: Collection[str] | None = None) -> Suppressions:
    """Every suppression comment in ``text``, by line.

    ``letters``: the letter prefixes of the run's codes (``SG``). A file whose
    comments name only other tools' codes (``# noqa: E501``, common in real
    code) then costs a regular-expression scan instead of a tokenization: such
    entries silence, and are reported as, nothing (see :meth:`Suppressions.unknown`).
    """
    by_line: dict[int, set[str]] = {}
    spans: dict[int, tuple[int, int]] = {}
    ours: dict[int, set[str]] = {}
    malformed: dict[int, tuple[int, int]] = {}
    if not may_hold_suppressions(text):
        return Suppressions({})
    if letters is not None and not _names_any(text, frozenset(letters)):
        return Suppressions({})
    try:
        # universal newlines: a lone CR ends a line for CPython and libcst, so it does here
        for token in tokenize.generate_tokens(io.StringIO(text, newline=None).readline):
            if token.type == tokenize.COMMENT:
                codes, named = _codes_in(token.string)
                line = token.start[0]
                span = (token.start[1] + 1, token.end[1] + 1)
                if codes:
                    by_line.setdefault(line, set()).update(codes)
                    spans[line] = span
                    if named:
                        ours.setdefault(line, set()).update(named)
                if _NAMELESS.search(token.string) is not None:
                    malformed[line] = span
    except (tokenize.TokenError, SyntaxError):
        pass  # keep what was found before the point of failure
    return Suppressions(
        {line: frozenset(codes) for line, codes in by_line.items()},
        spans,
        {line: frozenset(codes) for line, codes in ours.items()},
        malformed,
    )


def _names_any(text: str, letters: frozenset[str]) -> bool:
    """Could a comment in ``text`` name one of our codes? (Strings included: an upper
    bound, which the tokenization then settles.)"""
    if _IGNORE_WORDS.search(text) is not None:  # a list to read, or a malformed comment to report
        return True
    for match in _NOQA.finditer(text):
        for entry in _SPLIT.split(match.group("codes").upper()):
            if entry and _letters(entry) in letters:
                return True
    return False


def _codes_in(comment: str) -> tuple[set[str], set[str]]:
    """Every entry of the comment, and those of its ``summaryguard: ignore[...]`` forms."""
    codes: set[str] = set()
    named: set[str] = set()
    for pattern in (_NOQA, _IGNORE):
        # The comment token holds everything after the first '#', so one
        # comment may carry both forms: a noqa list, then an ignore[...] list.
        for match in pattern.finditer(comment):
            found = {c.upper() for c in _SPLIT.split(match.group("codes")) if c}
            codes |= found
            if pattern is _IGNORE:
                named |= found
    return codes, named


class _Located(Protocol):
    @property
    def line(self) -> int: ...
    @property
    def code(self) -> str: ...


F = TypeVar("F", bound=_Located)


def apply_suppressions(findings: Iterable[F], suppressions: Suppressions) -> list[F]:
    """The findings that no comment on their first line silences."""
    return [f for f in findings if not suppressions.silences(f.line, f.code)]
