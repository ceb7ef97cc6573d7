"""Suppression comments: found with tokenize, matched on a finding's first line."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from summaryguard.rules.cli.suppression import apply_suppressions, covers, parse_suppressions

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


@pytest.mark.parametrize(
    ("entry", "code", "silenced"),
    [
        ("SG201", "SG201", True),
        ("SG20", "SG201", True),
        ("SG2", "SG101", False),
        ("SG", "SG201", False),  # a blanket, not a prefix
        ("ALL", "SG201", False),
        ("SG2011", "SG201", False),
    ],
)
def test_an_entry_covers_its_code_or_codes_it_prefixes(entry: str, code: str, silenced: bool) -> None:
    assert covers(entry, code) is silenced


def test_apply_with_prefixes_as_in_select() -> None:
    suppressions = parse_suppressions("a = 1  # noqa: SG1\nb = 2  # summaryguard: ignore[SG, ALL]\n")
    findings = [Located(1, "SG101"), Located(1, "SG104"), Located(1, "SG201"), Located(2, "SG101")]
    assert apply_suppressions(findings, suppressions) == [Located(1, "SG201"), Located(2, "SG101")]


def test_entries_of_ignore_forms_are_ours() -> None:
    assert dict(parse_suppressions(SOURCE).ours) == {3: {"SG301", "SG302"}, 5: {"SG101"}, 11: {"SG103", "SG104"}}
    suppressions = parse_suppressions("a = 1  # noqa: E501, SG999, XY1\nb = 2  # summaryguard: ignore[E501]\n")
    assert [(u.line, u.codes) for u in suppressions.unknown({"SG001", "SG201"})] == [(1, ("SG999",)), (2, ("E501",))]
