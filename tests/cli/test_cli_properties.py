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


@settings(max_examples=300, deadline=None)
@given(PYTHONISH)
def test_suppressions_never_raise(text: str) -> None:
    suppressions = parse_suppressions(text)
    for line, codes in suppressions.by_line.items():
        assert 1 <= line <= text.count("\n") + text.count("\r") + 1
        assert all(code == code.upper() for code in codes)
