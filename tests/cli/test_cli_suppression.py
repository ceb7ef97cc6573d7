"""Suppression comments: found with tokenize, matched on a finding's first line."""

from __future__ import annotations

from dataclasses import dataclass

from summaryguard.rules.suppression import apply_suppressions, parse_suppressions

SOURCE = '''\
a = 1  # noqa: SG201
b = "# noqa: SG202"
c = 2  # summaryguard: ignore[SG301, sg302] reason: the handle is idempotent
d = 3  # noqa
e = 4  # noqa: E501  # summaryguard: ignore[SG101]
f = 5  # NOQA:SG101,SG102 because
g = """
# noqa: SG999
"""
h = 6  # summaryguard: ignore
i = 7  # summaryguard:ignore[SG104 SG103]
'''


def test_parse() -> None:
    assert dict(parse_suppressions(SOURCE).by_line) == {
        1: {"SG201"},
        3: {"SG301", "SG302"},
        5: {"E501", "SG101"},
        6: {"SG101", "SG102"},
        11: {"SG103", "SG104"},
    }


def test_no_comment_at_all() -> None:
    assert dict(parse_suppressions("x = 1\n").by_line) == {}


def test_untokenizable_source_keeps_what_came_before() -> None:
    text = "a = 1  # noqa: SG201\nb = (\n"
    assert dict(parse_suppressions(text).by_line) == {1: {"SG201"}}
    assert dict(parse_suppressions("a = 1  # noqa: SG201\n  b = 2\n c = 3 # noqa: SG202\n").by_line) == {1: {"SG201"}}


@dataclass(frozen=True)
class Located:
    line: int
    code: str


def test_apply_matches_line_and_exact_code() -> None:
    suppressions = parse_suppressions(SOURCE)
    findings = [Located(1, "SG201"), Located(1, "SG202"), Located(2, "SG202"), Located(4, "SG201"), Located(10, "SG101")]
    assert apply_suppressions(findings, suppressions) == [
        Located(1, "SG202"),
        Located(2, "SG202"),
        Located(4, "SG201"),
        Located(10, "SG101"),
    ]
