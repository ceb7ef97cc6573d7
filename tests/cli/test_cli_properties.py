"""Open-ended inputs: reading and suppression parsing never raise, whatever the bytes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from summaryguard.rules.cli.report import ReadError
from summaryguard.rules.cli.sources import decode_source
from summaryguard.rules.cli.suppression import parse_suppressions

PYTHONISH = st.text(alphabet=st.sampled_from(list("ab(#)[]{}'\"\\\n\t :=,SGnoqa0123") + ["\r", "\x00", "é"]))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_decode_never_raises(raw: bytes) -> None:
    result = decode_source("f.py", raw)
    assert isinstance(result, (str, ReadError))
    if isinstance(result, ReadError):
        assert result.path == "f.py" and result.message


_LINES = st.sampled_from(
    [b"# -*- coding: latin-1 -*-", b"# coding=cp1252", b"#!/usr/bin/env python", b"x = 1", b"", b"# vim: set fileencoding=utf-8",
     b"s = '\xe9'", b"\xef\xbb\xbf", b"# coding: nope", b"\xff\xfe", "t = 'é'".encode()]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINES, max_size=4), st.sampled_from([b"\n", b"\r\n", b"\r"]))
def test_decoding_agrees_with_tokenize_whatever_the_cookie(lines: list[bytes], newline: bytes) -> None:
    """The path that skips :func:`tokenize.detect_encoding` (no BOM, no cookie in the first
    two lines) decodes exactly as the path that asks it."""
    import io
    import tokenize

    raw = newline.join(lines)
    result = decode_source("f.py", raw)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
        expected: str | None = raw.decode(encoding)
    except (SyntaxError, UnicodeDecodeError):
        expected = None
    assert (result if isinstance(result, str) else None) == expected


@settings(max_examples=300, deadline=None)
@given(PYTHONISH)
def test_suppressions_never_raise(text: str) -> None:
    suppressions = parse_suppressions(text)
    for line, codes in suppressions.by_line.items():
        assert 1 <= line <= text.count("\n") + text.count("\r") + 1
        assert all(code == code.upper() for code in codes)


_ENTRIES = st.sampled_from(["E501", "SG201", "sg101", "SG9", "SG10", "BLE001", "LG7", "W0611", "SG999"])
_COMMENTS = st.builds(
    lambda form, entries: form.format(", ".join(entries)),
    st.sampled_from(["# noqa: {}", "#noqa:{}", "# summaryguard: ignore[{}]", "# type: ignore  # noqa: {}", "'# noqa: {}'"]),
    st.lists(_ENTRIES, min_size=1, max_size=3),
)
_KNOWN = ("SG001", "SG101", "SG102", "SG201", "SG203")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["x = 1", "f(a)", "s = 'x'"]), _COMMENTS), min_size=1, max_size=6))
def test_the_letter_filter_changes_no_verdict(lines: list[tuple[str, str]]) -> None:
    """Skipping the tokenization of files whose comments name only other tools' codes
    (``letters``) keeps every verdict about our codes: what is silenced, unused, unknown."""
    text = "".join(f"{code}  {comment}\n" for code, comment in lines)
    full = parse_suppressions(text)
    filtered = parse_suppressions(text, {"SG"})
    for line in range(1, len(lines) + 1):
        for code in _KNOWN:
            assert full.silences(line, code) == filtered.silences(line, code)
    assert full.unknown(_KNOWN) == filtered.unknown(_KNOWN)
    assert full.unused([], _KNOWN) == filtered.unused([], _KNOWN)


_COMMENTS = st.sampled_from(["# noqa: SG201", "#NOQA:sg1", "# summaryguard: ignore[SG303]", "#SummaryGuard:IGNORE[x]", "# note"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(PYTHONISH, _COMMENTS), max_size=6))
def test_the_marker_test_never_hides_a_suppression(parts: list[str]) -> None:
    """The run skips the comment parser when :func:`may_hold_suppressions` says no: it must
    never say no to a text in which the parser, not asking it, finds a suppression."""
    from unittest import mock

    from summaryguard.rules.cli import suppression
    from summaryguard.rules.cli.markers import may_hold_suppressions

    text = "\n".join(parts)
    with mock.patch.object(suppression, "may_hold_suppressions", lambda _text: True):
        found = suppression.parse_suppressions(text).by_line
    if found:
        assert may_hold_suppressions(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(PYTHONISH, _COMMENTS, st.text(max_size=12)), max_size=6))
def test_the_marker_test_answers_as_lowering_the_text_would(parts: list[str]) -> None:
    """Lowered as UTF-8 bytes (the cheap way), the text holds a marker exactly when it does
    lowered as a string: any character, a lone surrogate too."""
    from summaryguard.rules.cli.markers import may_hold_suppressions

    text = "# " + "\n".join(parts)
    lowered = text.lower()
    assert may_hold_suppressions(text) == ("noqa" in lowered or "summaryguard" in lowered)


def test_the_marker_test_reads_past_other_scripts() -> None:
    from summaryguard.rules.cli.markers import may_hold_suppressions

    assert may_hold_suppressions("x = 'žluťoučký kůň'  # NoQA: SG201\n")
    assert may_hold_suppressions("s = '\udcff'  # SummaryGuard: ignore[SG101]\n")
    assert not may_hold_suppressions("x = 'ǸOQA, Ｎｏｑａ'  # note\n")  # look-alikes are no markers
    assert not may_hold_suppressions("noqa = 1\n")  # no comment sign at all
