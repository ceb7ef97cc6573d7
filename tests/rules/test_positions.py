"""Positions of a converted tree's nodes are libcst's, read one statement at a time.

Every node asked about gets the position libcst's parse of the whole text gives it
(:func:`~summaryguard.rules.engine.positions.whole_positions`), whichever statement
it is read from: checked on hand-written shapes, this project's own modules, the
fixtures and hypothesmith's programs, each node asked in turn, the last first.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import hypothesmith
import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings
from libcst.metadata import MetadataWrapper, PositionProvider

from summaryguard.rules.engine.cpython_cst import convert
from summaryguard.rules.engine.grammar import parse_module
from summaryguard.rules.engine.positions import StatementPositions, pairs, tree_positions, whole_positions
from summaryguard.rules.engine.syntax import walk_nodes

pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning", "ignore::DeprecationWarning")

_REPO = Path(__file__).resolve().parents[2]
_OWN_MODULES = sorted(p for top in ("guard", "rules", "plugins") for p in (_REPO / top).rglob("*.py"))


def test_positions_of_a_converted_tree_are_libcsts() -> None:
    source = (
        "def f(checkpoint):\n"
        "    x = (  # a comment\n"
        "        checkpoint.resume(  # another\n"
        "            'é', (a)\n"
        "        )\n"
        "    )\n"
        "    return [y for y in x]\n"
    )
    ours = convert(source)
    assert ours is not None
    found = tree_positions(ours, None)
    theirs = cst.parse_module(source)
    expected = MetadataWrapper(theirs, unsafe_skip_copy=True).resolve(PositionProvider)
    paired = list(pairs(ours, theirs))
    assert len(paired) > 20
    for mine, libcsts in paired:
        assert found[mine] == expected[libcsts]
    call = next(n for n, _ in paired if isinstance(n, cst.Call))
    assert (found[call].start.line, found[call].start.column, found[call].end.line) == (3, 8, 5)


def _once(tree: cst.Module) -> list[cst.CSTNode]:
    """The nodes below the tree's statements that stand in one place only (the converter
    shares operator nodes such as ``not`` between places: their position is any of them)."""
    walked = [node for stmt in tree.body for node in walk_nodes(stmt)]
    count = Counter(id(node) for node in walked)
    return [node for node in walked if count[id(node)] == 1]


def _assert_statement_positions(source: str) -> None:
    ours = convert(source)
    if ours is None:
        return
    whole = whole_positions(ours, None)
    lazy = tree_positions(ours, None)
    assert isinstance(lazy, StatementPositions)
    nodes = _once(ours)
    for node in reversed(nodes):  # the last statements first: each resolved when first asked
        assert lazy.get(node) == whole.get(node), type(node).__name__
    cuttable = "\t" not in source and "\f" not in source and "\r" not in source
    assert (lazy._whole is None) == cuttable or not nodes  # read statement by statement where it can be
    assert lazy.get(ours) == whole.get(ours)  # the module itself: from the whole parse
    assert dict(lazy) == whole


_STATEMENTS = (
    "#!/usr/bin/env python\n# a header\n\n"
    "import os; import sys\n"
    "@decorate(\n    1,\n)\n# between\n@other\nasync def f(a, *, b=not c):\n"
    "    if not a and b in c:  # why\n        return [x async for x in a]\n"
    "    # an indented comment, the block's\n\n# a comment of the next statement\n"
    "class K(Base):\n    x: int = 1\n\n    def m(self):\n        return 'é' if self else f\"{self!r}\"\n"
    "x = (1,\n     2); y = 3\n"
    "if x:\n    pass\nelif y:\n    pass\n# trailing at the end"
)


@pytest.mark.parametrize(
    "path",
    [*sorted(Path(__file__).parent.joinpath("fixtures").rglob("*.py")), *_OWN_MODULES[::4]],
    ids=lambda p: p.name,
)
def test_statement_positions_are_the_whole_parses(path: Path) -> None:
    _assert_statement_positions(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("source", [_STATEMENTS, _STATEMENTS + "\n", "x = 1\n"], ids=["shapes", "shapes-newline", "one"])
def test_statement_positions_of_shapes(source: str) -> None:
    assert convert(source) is not None
    _assert_statement_positions(source)


@pytest.mark.parametrize(
    "source", ["s = '\t'\nx = f(a)\n", "x = 1\r\ny = f(x)\r\n", "a = 'x\x0cy'\nb = g(a)\n"], ids=["tab", "crlf", "form-feed"]
)
def test_text_the_converter_refuses_keeps_libcsts_own_positions(source: str) -> None:
    """Tabs, carriage returns and form feeds: libcst parses the text, and its positions
    are its own (no statement is cut apart)."""
    assert convert(source) is None
    tree, _ = parse_module(source, None)
    found = tree_positions(tree, None)
    assert not isinstance(found, StatementPositions)
    call = tree.body[1].body[0].value  # type: ignore[attr-defined]
    assert found[call].start.line == 2


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(hypothesmith.from_node())
def test_statement_positions_of_generated_code(source: str) -> None:
    _assert_statement_positions(source)


def test_a_libcst_tree_keeps_its_own_positions() -> None:
    tree = cst.parse_module("x = f(a)\n")
    found = tree_positions(tree, None)
    assert found == MetadataWrapper(tree, unsafe_skip_copy=True).resolve(PositionProvider)
