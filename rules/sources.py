"""Turn a file into source text the way Python itself would.

Python source is bytes with an encoding declared by a BOM or a PEP 263 coding
cookie (``# -*- coding: latin-1 -*-``), UTF-8 otherwise; a linter that assumes
UTF-8 misreads valid files and crashes on others. :func:`tokenize.detect_encoding`
applies exactly the interpreter's rules. Every failure becomes a
:class:`~summaryguard.rules.report.ReadError` naming the file, the line where
known, and the cause, so one bad file never stops a run.
"""

from __future__ import annotations

import codecs
import io
import tokenize

from .report import ReadError

__all__ = ["decode_source", "read_source"]


def read_source(path: str) -> str | ReadError:
    """The decoded text of ``path``, or why it could not be had."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except IsADirectoryError:
        return ReadError(path, None, "cannot read file: it is a folder")
    except OSError as exc:
        return ReadError(path, None, f"cannot read file: {exc.strerror or exc}")
    return decode_source(path, raw)


def decode_source(path: str, raw: bytes) -> str | ReadError:
    """Decode ``raw`` honoring its BOM or coding cookie (newlines are kept as they are)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as exc:
        # Either undecodable bytes in the first two lines (reported like any
        # other undecodable byte), or a bad cookie: unknown encoding, or a BOM
        # that contradicts it.
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as undecodable:
            return _undecodable(path, raw, undecodable, "utf-8")
        reason = exc.msg
        if raw.startswith(codecs.BOM_UTF8):
            reason = "the file starts with a UTF-8 byte-order mark but its coding comment declares another encoding"
        return ReadError(path, _cookie_line(raw), f"cannot decode file: {reason}")
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        return _undecodable(path, raw, exc, encoding)


def _undecodable(path: str, raw: bytes, exc: UnicodeDecodeError, encoding: str) -> ReadError:
    return ReadError(
        path,
        raw[: exc.start].count(b"\n") + 1,
        f"cannot decode file as {encoding}: byte 0x{raw[exc.start]:02x} is invalid "
        "(declare the file's encoding with a coding comment, or save it as UTF-8)",
    )


def _cookie_line(raw: bytes) -> int:
    """The line (1 or 2) that holds the coding cookie: the only place it may be."""
    first_two = raw.split(b"\n", 2)[:2]
    for number, line in enumerate(first_two, start=1):
        if b"coding" in line:
            return number
    return 1
