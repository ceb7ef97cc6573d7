"""Turn a file into source text the way Python itself would.

Python source is bytes with an encoding declared by a BOM or a PEP 263 coding
cookie (``# -*- coding: latin-1 -*-``), UTF-8 otherwise; a linter that assumes
UTF-8 misreads valid files and crashes on others. :func:`tokenize.detect_encoding`
applies exactly the interpreter's rules. Every failure becomes a
:class:`~summaryguard.rules.cli.report.ReadError` naming the file, the line where
known, and the cause, so one bad file never stops a run.
"""

from __future__ import annotations

import codecs
import io
import os
import stat

from .report import ReadError

__all__ = [
    "MAX_SOURCE_BYTES",
    "FileRefused",
    "decode_source",
    "read_regular_file",
    "read_source",
    "read_source_bytes",
]

#: Largest file read as Python source. The analyzer refuses far smaller files
#: that need libcst (``engine.analyzer.MAX_CHARS``); above this, even CPython's
#: syntax check of a file costs seconds and gigabytes, so the file is refused
#: before it is read (real modules stay far below; generated ones are excluded).
MAX_SOURCE_BYTES = 16 * 1024 * 1024


class FileRefused(Exception):
    """A path that names something other than a regular file, or a file over the size
    limit: refused before (or instead of) reading it. ``reason`` says which."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")


_KINDS = (
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a file either"  # pragma: no cover - doors, whiteouts and the like


def read_regular_file(path: str, max_bytes: int) -> bytes:
    """The bytes of ``path``, which must be a regular file of at most ``max_bytes``.

    A FIFO, a device or a socket named by the user (on the command line, as
    ``--config`` or ``--baseline``) must never hang the run or be read until
    memory runs out (``/dev/zero``): the path is looked at before it is opened,
    opened with ``O_NONBLOCK`` (opening a FIFO does not wait for a writer),
    checked again with ``fstat`` on the open descriptor (the path may have been
    swapped in between), and read at most ``max_bytes + 1`` bytes (a file that
    grows while read is still refused). Raises :class:`FileRefused` for what is
    not a regular file or is too large, ``IsADirectoryError`` for a folder,
    and ``OSError`` for what the system refuses."""
    before = os.stat(path)
    _check(path, before, max_bytes)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    descriptor = os.open(path, flags)
    try:
        _check(path, os.fstat(descriptor), max_bytes)
        chunks: list[bytes] = []
        size = 0
        while size <= max_bytes:
            chunk = os.read(descriptor, min(1 << 20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(descriptor)
    if size > max_bytes:
        raise FileRefused(path, _too_large(size, max_bytes, grew=True))
    return b"".join(chunks)


def _check(path: str, status: os.stat_result, max_bytes: int) -> None:
    if stat.S_ISDIR(status.st_mode):
        raise IsADirectoryError(21, "Is a directory", path)
    if not stat.S_ISREG(status.st_mode):
        raise FileRefused(path, f"not a regular file (it is {_kind(status.st_mode)})")
    if status.st_size > max_bytes:
        raise FileRefused(path, _too_large(status.st_size, max_bytes))


def _too_large(size: int, max_bytes: int, grew: bool = False) -> str:
    more = "more than " if grew else ""
    return f"too large ({more}{size:,} bytes, at most {max_bytes:,})"


def read_source_bytes(path: str) -> bytes | ReadError:
    """The bytes of the source file ``path`` (see :func:`read_regular_file`), or why not."""
    try:
        return read_regular_file(path, MAX_SOURCE_BYTES)
    except IsADirectoryError:
        return ReadError(path, None, "cannot read file: it is a folder")
    except FileRefused as refused:
        if refused.reason.startswith("too large"):
            return ReadError(
                path, None, f"{refused.reason.replace('too large', 'too large to check', 1)}; "
                "exclude it in [tool.summaryguard] if it is generated",
            )
        return ReadError(path, None, f"cannot read file: {refused.reason}")
    except OSError as exc:
        return ReadError(path, None, f"cannot read file: {exc.strerror or exc}")


def read_source(path: str) -> str | ReadError:
    """The decoded text of ``path``, or why it could not be had."""
    raw = read_source_bytes(path)
    if isinstance(raw, ReadError):
        return raw
    return decode_source(path, raw)


def decode_source(path: str, raw: bytes) -> str | ReadError:
    """Decode ``raw`` honoring its BOM or coding cookie (newlines are kept as they are)."""
    if raw.startswith(codecs.BOM_UTF8) or b"coding" in raw[: _second_line_end(raw)]:
        encoding = _declared_encoding(path, raw)
        if isinstance(encoding, ReadError):
            return encoding
    else:
        # no BOM and no cookie where one may be: UTF-8, as :func:`tokenize.detect_encoding`
        # would say, without importing :mod:`tokenize` (a pre-commit run's cost, SPEC §3.1.2)
        encoding = "utf-8"
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        return _undecodable(path, raw, exc, encoding)


def _declared_encoding(path: str, raw: bytes) -> str | ReadError:
    """The encoding that ``raw``'s BOM or coding cookie declares, or why it cannot be had."""
    import tokenize

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
    return encoding


def _second_line_end(raw: bytes) -> int:
    """The end of the first two lines of ``raw``: where PEP 263 lets a coding cookie be
    (counted by ``\\n``: a file whose lines end in a bare ``\\r`` is looked at whole, which
    can only send it to :func:`tokenize.detect_encoding`, never away from it)."""
    first = raw.find(b"\n")
    if first < 0:
        return len(raw)
    second = raw.find(b"\n", first + 1)
    return len(raw) if second < 0 else second


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
