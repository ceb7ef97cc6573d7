"""select / ignore with codes, prefixes and ALL."""

from __future__ import annotations

import pytest

from summaryguard.rules.cli.selection import SelectorError, expand, parse_selector_list, resolve, unknown_selectors

KNOWN = {"SG101", "SG102", "SG104", "SG201", "SG202", "SG301", "XY001"}


@pytest.mark.parametrize(
    ("select", "ignore", "expected"),
    [
        (["ALL"], [], KNOWN),
        (["SG"], [], KNOWN - {"XY001"}),
        (["SG1"], [], {"SG101", "SG102", "SG104"}),
        (["SG20"], [], {"SG201", "SG202"}),
        (["SG201"], [], {"SG201"}),
        (["ALL"], ["SG1", "XY"], {"SG201", "SG202", "SG301"}),
        (["SG2", "SG101"], ["SG202"], {"SG101", "SG201"}),
        ([" sg1 "], ["sg104"], {"SG101", "SG102"}),
        ([], [], set()),
    ],
)
def test_resolve(select: list[str], ignore: list[str], expected: set[str]) -> None:
    assert resolve(select, ignore, KNOWN) == expected


def test_unknown_selectors_are_named_in_order() -> None:
    with pytest.raises(SelectorError) as info:
        resolve(["SG9", "SG1"], ["SG2019"], KNOWN)
    assert info.value.unknown == ["SG9", "SG2019"]
    assert "'SG9'" in str(info.value) and "SG101" in str(info.value)


def test_helpers() -> None:
    assert parse_selector_list("sg1, SG201,,") == ["SG1", "SG201"]
    assert expand("all", KNOWN) == KNOWN
    assert expand("Q", KNOWN) == set()
    assert unknown_selectors(["SG1", "ZZ"], KNOWN) == ["ZZ"]
