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

from summaryguard.rules.engine import positions as positions_module
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
    lone_backslash = any(line.strip() == "\\" for line in source.split("\n"))  # libcst drops such a line
    cuttable = "\t" not in source and "\f" not in source and "\r" not in source and not lone_backslash
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


#: Statements in blocks of every kind, read apart from the statement around them.
_NESTED = (
    "class Agent(Base):\n"
    "    '''A docstring\nwhose lines are not indented.'''\n\n"
    "    @property\n    # between decorators\n    @cached(\n        1,\n    )\n"
    "    async def resume(self, checkpoint):  # a comment\n"
    "        if checkpoint is None: return None\n"
    "        for turn in checkpoint.turns:\n            a = 1; b = f(\n  turn)\n"
    "        else:\n            pass\n"
    "        while self.busy:\n            wait()\n        else:\n            done()\n"
    "        # a comment of the block\n"
    "        try:\n            x = load(checkpoint)\n"
    "        except KeyError as e:\n            raise Stop() from e\n"
    "        except (OSError, ValueError):\n            pass\n"
    "        else:\n            y = x\n        finally:\n            close()\n"
    "        if a:\n            return 1\n        elif b:\n            return 2\n"
    "        elif c:\n            return 3\n        else:\n            if d:\n                return 4\n"
    "        async with lock() as held, other():\n            async for item in held:\n"
    "                yield item\n"
    "        match checkpoint:\n            case {'summary': s}:\n                return s\n"
    "            case _:\n                pass\n"
    "        def inner():\n            return \\\n                self.summary\n"
    "        return inner\n"
    "    def other(self):  # long enough that the class costs more than its methods\n"
    + "".join(f"        v{i} = w({i})\n" for i in range(200))
    + "    # the class's footer\n\n"
    + "def last():\n    return [y\nfor y in z]"
)


@pytest.mark.parametrize(
    "source",
    [_STATEMENTS, _STATEMENTS + "\n", "x = 1\n", _NESTED, _NESTED + "\n"],
    ids=["shapes", "shapes-newline", "one", "nested", "nested-newline"],
)
def test_statement_positions_of_shapes(source: str) -> None:
    assert convert(source) is not None
    _assert_statement_positions(source)


class _Nested:
    """:data:`_NESTED` converted, its whole parse's positions, its lazy positions, and the
    texts those are read from (as libcst parses them), each nested statement's refused
    when ``refuse_nested``."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, refuse_nested: bool = False) -> None:
        ours = convert(_NESTED)
        assert ours is not None
        self.whole = whole_positions(ours, None)
        self.texts: list[str] = []

        def parse(text: str, target: str | None, exact: bool = False) -> tuple[cst.Module, object]:
            self.texts.append(text)
            if refuse_nested and text.startswith("if 1:\n"):
                raise cst.ParserSyntaxError("refused", lines=[text], raw_line=1, raw_column=0)
            return parse_module(text, target, exact=exact)

        monkeypatch.setattr(positions_module, "parse_module", parse)
        self.lazy = tree_positions(ours, None)
        self.method = ours.body[0].body.body[1]  # type: ignore[attr-defined]
        assert isinstance(self.method, cst.FunctionDef) and self.method.name.value == "resume"
        self.loop = self.method.body.body[1]
        assert isinstance(self.loop, cst.For)
        self.call = self.loop.body.body[0].body[1].value  # type: ignore[attr-defined]  # ``f(turn)`` in ``a = 1; b = f(turn)``
        assert isinstance(self.call, cst.Call)

    def agrees(self, node: cst.CSTNode) -> bool:
        return self.lazy.get(node) == self.whole[node]


def test_a_node_in_a_method_is_placed_by_parsing_that_statement_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """A finding in one method of a long class parses its statement, not the class."""
    case = _Nested(monkeypatch)
    texts, loop = case.texts, case.loop
    assert case.agrees(case.call)
    assert case.lazy[case.call].start.line == 13
    assert len(texts) == 1 and texts[0].startswith("if 1:\n            a = 1; b = f(") and "for" not in texts[0]
    assert case.agrees(loop.body.body[0])  # the same statement's: nothing parsed again
    assert len(texts) == 1
    assert case.agrees(loop.iter)  # the loop's own header: the loop
    assert len(texts) == 2 and texts[1].startswith("if 1:\n        for turn") and "while" not in texts[1]
    assert case.agrees(case.method.decorators[1])  # the method's own line: the method
    assert len(texts) == 3 and texts[2].startswith("if 1:\n    @property\n    # between")
    assert "class Agent" not in "".join(texts)


def test_a_statement_that_cannot_be_read_apart_is_read_with_the_statement_around_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """When libcst refuses a nested statement's lines alone, the enclosing statements are
    tried outwards, each once, and last the top-level statement: the positions stay the
    whole parse's."""
    case = _Nested(monkeypatch, refuse_nested=True)
    assert case.agrees(case.call)
    firsts = [t.removeprefix("if 1:\n").split("\n")[0].strip()[:12] for t in case.texts]
    assert firsts == ["a = 1; b = f", "for turn in ", "@property", "class Agent("]
    assert case.agrees(case.loop.iter)
    assert len(case.texts) == 4  # each statement tried once


def _deep_function(depth: int, lines_per_level: int) -> str:
    """A function of ``depth`` nested ``if``s, each with its own statements before the next."""
    out = ["def f():"]
    for level in range(depth):
        indent = "    " * (level + 1)
        out.append(f"{indent}if a{level}:")
        out.extend(f"{indent}    x{level}_{i} = g({i})" for i in range(lines_per_level))
    return "\n".join(out) + "\n"


def test_asking_outwards_through_deep_blocks_costs_less_than_two_parses_of_the_statement(monkeypatch: pytest.MonkeyPatch) -> None:
    """A trace that walks out of a deep statement of a long function asks each enclosing
    ``if`` in turn: each level read apart would parse the function again and again. Past
    the function's own length in lines, its one parse places the rest."""
    source = _deep_function(8, 40)
    ours = convert(source)
    assert ours is not None
    whole = whole_positions(ours, None)
    texts: list[str] = []

    def parse(text: str, target: str | None, exact: bool = False) -> tuple[cst.Module, object]:
        texts.append(text)
        return parse_module(text, target, exact=exact)

    monkeypatch.setattr(positions_module, "parse_module", parse)
    lazy = tree_positions(ours, None)
    tests: list[cst.CSTNode] = []
    block = ours.body[0].body  # type: ignore[attr-defined]
    while True:
        inner = next((s for s in block.body if isinstance(s, cst.If)), None)
        if inner is None:
            break
        tests.append(inner.test)
        block = inner.body
    assert len(tests) == 8
    for test in reversed(tests):  # the innermost first
        assert lazy.get(test) == whole[test]
    parsed = sum(text.count("\n") for text in texts)
    assert parsed <= 1.5 * source.count("\n") + len(texts)
    assert texts[-1].startswith("def f():")  # the function's own parse placed the outer ones
    assert texts[0].startswith("if 1:\n" + "    " * 8 + "if a7:")  # the innermost alone, first


def test_a_line_of_a_lone_backslash_keeps_libcsts_own_lines() -> None:
    """libcst's parse drops a line that holds only a backslash continuation, so its lines
    after it are one less than the file's: a statement read apart would disagree with it.
    Such a text is placed by the whole parse, as libcst places it."""
    _assert_statement_positions("def f():\n    x = 1\n    \\\n    y = g(x)\n\ndef h():\n    return 1\n")


def test_a_block_not_cut_apart_is_placed_with_its_statement(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``match`` is read whole (its cases are not cut apart), inside the method."""
    case = _Nested(monkeypatch)
    match = next(s for s in case.method.body.body if isinstance(s, cst.Match))
    assert case.agrees(match.cases[0].body.body[0].body[0].value)  # type: ignore[attr-defined]  # ``return s``
    assert len(case.texts) == 1 and case.texts[0].startswith("if 1:\n        match checkpoint:")


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
