"""Reading files as Python does: BOM, coding cookies, and a reason for every failure."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from summaryguard.rules.cli.report import ReadError
from summaryguard.rules.cli.sources import decode_source, read_source


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        (b"x = 1\r\ny = 2\r\n", "x = 1\r\ny = 2\r\n"),
        (codecs.BOM_UTF8 + "s = 'é'\n".encode(), "s = 'é'\n"),
        (b"# -*- coding: latin-1 -*-\ns = '\xe9'\n", "# -*- coding: latin-1 -*-\ns = 'é'\n"),
        (b"#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\ns = '\x80'\n", "#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\ns = '€'\n"),
        (b"", ""),
    ],
)
def test_decodes_like_python(raw: bytes, text: str) -> None:
    assert decode_source("f.py", raw) == text


@pytest.mark.parametrize(
    ("raw", "line", "fragment"),
    [
        (b"a = 1\nb = 2\nc = '\xff'\n", 3, "cannot decode file as utf-8: byte 0xff"),
        (b"c = '\xff'\n", 1, "byte 0xff"),
        (b"# coding: no-such-codec\n", 1, "unknown encoding: no-such-codec"),
        (b"#!/bin/python\n# coding: nope\n", 2, "unknown encoding: nope"),
        (codecs.BOM_UTF8 + b"# coding: latin-1\n", 1, "byte-order mark"),
        (b"# coding: ascii\nx = '\xc3\xa9'\n", 2, "as ascii"),
    ],
)
def test_undecodable(raw: bytes, line: int, fragment: str) -> None:
    error = decode_source("f.py", raw)
    assert isinstance(error, ReadError)
    assert (error.path, error.line) == ("f.py", line)
    assert fragment in error.message


def test_read_source(tmp_path: Path) -> None:
    good = tmp_path / "good.py"
    good.write_bytes(b"x = 1\n")
    assert read_source(str(good)) == "x = 1\n"
    folder = tmp_path / "folder.py"
    folder.mkdir()
    assert read_source(str(folder)) == ReadError(str(folder), None, "cannot read file: it is a folder")
    dangling = tmp_path / "dangling.py"
    dangling.symlink_to(tmp_path / "nowhere.py")
    error = read_source(str(dangling))
    assert isinstance(error, ReadError) and "No such file" in error.message
