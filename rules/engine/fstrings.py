"""One f-string literal split as libcst splits it: text as written, and replacement fields.

Why: libcst's parse of an f-string was the conversion's largest island (see
:mod:`.cpython_cst`): 1,700 of them in a check of agno's ``agent/_run.py`` in its
package, each a call into libcst's parser. CPython's tree of an f-string holds its
expressions but not the text as written (escapes are decoded, ``{x=}`` becomes a
string and a ``!r``), so the text's structure is read here, and the expressions come
from CPython's tree.

:func:`split` reads the Python 3.11 grammar of f-strings, where a replacement field's
expression cannot hold a backslash, a comment or the literal's own quote. It returns
None for any text it does not read for sure (an implicit concatenation, a backslash
before a brace, ``{{`` inside a format specification, a comment, a string that does
not close): the caller then leaves the literal to libcst.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Field", "Literal", "split"]


@dataclass(frozen=True, slots=True)
class Field:
    """A replacement field ``{expression=!conversion:spec}``."""

    #: The expression's text as written, whitespace around it included.
    expression: str
    #: ``{x=}``: the expression's text is printed before its value.
    debug: bool
    conversion: str | None
    #: The format specification's parts (text and nested fields), or None without a ``:``.
    spec: tuple[str | Field, ...] | None


@dataclass(frozen=True, slots=True)
class Literal:
    """One f-string literal: its opening (prefix and quotes), its closing quotes, its parts."""

    start: str
    end: str
    parts: tuple[str | Field, ...]


class _Unread(Exception):
    """Text :func:`split` does not read for sure."""


def split(text: str) -> Literal | None:
    """``text`` (exactly one f-string literal, as CPython's tokenizer accepted it) split
    into text and fields, or None (see the module's documentation)."""
    prefix_end = 0
    while prefix_end < len(text) and text[prefix_end].isalpha():
        prefix_end += 1
    prefix = text[:prefix_end].lower()
    if "f" not in prefix or not set(prefix) <= {"f", "r"}:
        return None
    quote = text[prefix_end : prefix_end + 3]
    if quote not in ('"""', "'''"):
        quote = text[prefix_end : prefix_end + 1]
    body_start, body_end = prefix_end + len(quote), len(text) - len(quote)
    if body_end < body_start or not text.endswith(quote):
        return None
    reader = _Reader(text, body_start, body_end, quote, "r" in prefix)
    try:
        parts = reader.parts(in_spec=False)  # reads to the body's end, or raises
    except _Unread:
        return None
    return Literal(text[:body_start], quote, parts)


class _Reader:
    """A cursor over one literal's body (``text[at:end]``)."""

    def __init__(self, text: str, at: int, end: int, quote: str, raw: bool) -> None:
        self.text, self.at, self.end, self.quote, self.raw = text, at, end, quote, raw

    def parts(self, in_spec: bool) -> tuple[str | Field, ...]:
        """Text and fields up to the body's end, or, in a format specification, up to
        the ``}`` that closes its field (left unread)."""
        text, end, quote = self.text, self.end, self.quote
        found: list[str | Field] = []
        literal_start = self.at
        while self.at < end:
            char = text[self.at]
            if char == "\\":
                self._escape()
            elif char == "{":
                if text.startswith("{{", self.at):
                    if in_spec:
                        raise _Unread  # libcst reads a dict there, CPython may not
                    self.at += 2
                    continue
                if self.at > literal_start:
                    found.append(text[literal_start : self.at])
                self.at += 1
                found.append(self._field())
                literal_start = self.at
            elif char == "}":
                if in_spec:
                    break
                if not text.startswith("}}", self.at):
                    raise _Unread
                self.at += 2
            elif text.startswith(quote, self.at):
                raise _Unread  # the literal closes before the segment ends: a concatenation
            else:
                self.at += 1
        if in_spec and self.at >= end:
            raise _Unread
        if self.at > literal_start:
            found.append(text[literal_start : self.at])
        return tuple(found)

    def _escape(self) -> None:
        """A backslash in text: ``\\N{...}`` names a character (not in a raw literal); a
        backslash before a brace is left to libcst; any other takes the next character."""
        text, at = self.text, self.at
        following = text[at + 1 : at + 2]
        if following in ("{", "}") or not following:
            raise _Unread
        if following == "N" and not self.raw and text.startswith("{", at + 2):
            close = text.find("}", at + 3, self.end)
            if close < 0:
                raise _Unread
            self.at = close + 1
            return
        self.at = at + 2

    def _field(self) -> Field:
        """After a field's ``{``: the field, up to and past its ``}``."""
        text, end = self.text, self.end
        start = self.at
        depth = 0
        debug = False
        expression_end = -1
        while True:
            if self.at >= end:
                raise _Unread
            char = text[self.at]
            if char in "'\"":
                self._skip_string()
                continue
            if char in "\\#":
                raise _Unread
            if char in "([{":
                depth += 1
            elif char in ")]}":
                if depth == 0:  # char == "}": the field ends
                    break
                depth -= 1
            elif depth == 0 and char in "=!<>" and text.startswith("=", self.at + 1):
                self.at += 2  # ==, !=, <=, >=
                continue
            elif depth == 0 and char == "=":
                debug, expression_end = True, self.at
                self.at += 1
                rest = self.at
                while rest < end and text[rest] in " \t":
                    rest += 1
                if rest >= end or text[rest] not in "!:}":
                    raise _Unread
                self.at = rest
                break
            elif depth == 0 and char in "!:":
                break
            self.at += 1
        expression = text[start : self.at if expression_end < 0 else expression_end]
        conversion: str | None = None
        spec: tuple[str | Field, ...] | None = None
        if text[self.at] == "!":
            conversion = text[self.at + 1 : self.at + 2]
            if conversion not in ("r", "s", "a"):
                raise _Unread
            self.at += 2
        if text[self.at] == ":":
            self.at += 1
            spec = self.parts(in_spec=True)
        if self.at >= end or text[self.at] != "}":
            raise _Unread
        self.at += 1
        return Field(expression, debug, conversion, spec)

    def _skip_string(self) -> None:
        """A string literal inside a field's expression (never the literal's own quote
        in Python 3.11, never a backslash inside a field)."""
        text, at = self.text, self.at
        quote = text[at : at + 3] if text.startswith(text[at] * 3, at) else text[at]
        if self.quote.startswith(quote[0]):
            raise _Unread
        close = text.find(quote, at + len(quote), self.end)
        if close < 0 or "\\" in text[at:close]:
            raise _Unread
        self.at = close + len(quote)
