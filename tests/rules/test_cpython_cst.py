"""The engine's trees built from CPython's parser are libcst's trees without their layout.

Two properties, each against libcst's own parse of the same text: the same node
classes, structure and values (layout fields aside), and code generated from the
converted tree that CPython reads as the same program. Checked on hand-written
snippets of every construct, on this project's own modules and on hypothesmith's
programs. Their positions: ``test_positions.py``.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Iterator
from pathlib import Path

import hypothesmith
import libcst as cst
import pytest
from hypothesis import HealthCheck, assume, given, settings

from summaryguard.rules.engine import Analyzer, LintRule, Vocabulary, all_rules
from summaryguard.rules.engine import cpython_cst
from summaryguard.rules.engine.cpython_cst import ConvertedModule, convert
from summaryguard.rules.engine.facts import UncheckedResume
from summaryguard.rules.engine.grammar import parse_module

pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning", "ignore::DeprecationWarning")

_REPO = Path(__file__).resolve().parents[2]
_OWN_MODULES = sorted(p for top in ("guard", "rules", "plugins") for p in (_REPO / top).rglob("*.py"))

SNIPPETS = [
    "x = 1\n",
    "a = b = c.d[e](f, *g, h=i, **j)\n",
    "a, *b = c\nfor (x, y) in z: pass\n",
    "x: int = 1\ny: 'List[int]'\nz += 2; w -= 3; v @= m\n",
    "del a, b\ndel (c)\ndel d[0], e.f\n",
    "import a.b.c as d, e\nfrom . import f\nfrom ..g.h import (i as j, k)\nfrom m import *\n",
    "global a, b\ndef f():\n    nonlocal_ = 1\n    def g():\n        nonlocal nonlocal_\n",
    "if a:\n    pass\nelif b:\n    pass\nelse:\n    if c:\n        pass\n",
    "if a: b; c\nelse: d\nwhile x: break\nelse: continue\n",
    "for x in y:\n    pass\nelse:\n    pass\nasync def f():\n    async for a in b: pass\n    async with c as d, e: pass\n",
    "try:\n    pass\nexcept (A, B) as e:\n    raise C from e\nexcept D:\n    raise\nelse:\n    pass\nfinally:\n    pass\n",
    "try:\n    pass\nexcept* E:\n    pass\n",
    "with (open(a) as f, open(b)):\n    pass\nwith a as (b, c): pass\n",
    "@d\n@e.f(g)\nasync def f(a, /, b: int = 1, *c: str, d, e=2, **k) -> None:\n    '''doc'''\n    return\n",
    "def f(*, a, b=1): pass\ndef g(a, b=2, /): pass\ndef h(*args): pass\n",
    "class A(B, *c, metaclass=M, **k):\n    x = 1\n    def f(self): ...\n",
    "x = lambda: 0\ny = lambda a, *b, c=1, **d: (a, b)\n",
    "x = [a for a in b if c if d for e in f]\ny = {k: v for k, v in w}\nz = {a async for a in b}\ng = (x for x in y)\n",
    "f(x for x in y)\nf((x for x in y), z)\n",
    "x = a if b else c\ny = (a if b else c) if d else e\nz = a if (b if c else d) else e\n",
    "x = not a and b or c and not (d or e)\ny = a < b <= c != d is e is not f in g not in h\n",
    "x = (a < b) < c\ny = -a ** -b\nz = (-a) ** b\nw = (a ** b) ** c\nv = a - (b - c) + (d + e)\n",
    "x = a | b ^ c & d << e >> f + g - h * i / j // k % l @ m\ny = ~a + +b\n",
    "x = (1).real\ny = 1.5.real\nz = 1j\nw = 0x1F + 1_000 + 1e5 + .5\n",
    "x = 'a'\ny = b'b' + rb'\\d'\nz = '''c\nd'''\nw = \"e\" 'f'\nv = ('g'\n     'h')\n",
    "x = f'{a!r:>{w}} {b=}'\ny = f'a' 'b' f'{c}'\nz = F'''{\n  d\n}'''\n",
    "x = [*a, *(b or c)]\ny = {**a, **(b or c), 'k': v}\nz = {1, 2, *s}\nt = ()\nu = (1,)\n",
    "x = a[1:2, ::3]\ny = a[b, c]\nz = a[(b, c)]\nw = a[b,]\nv = a[()]\nu = a[*b]\n",
    "if (n := len(a)) > 10: pass\nprint((y := 1), x := 2)\nx = [y := 1, y ** 2]\n",
    "def g():\n    x = yield\n    y = yield from z\n    print((yield))\n    await_ = 1\n    return (yield from w)\n",
    "async def f():\n    await a\n    await (b + c)\n    return [await d async for d in e]\n",
    "match x:\n    case [1, *rest] if rest:\n        pass\n    case {'k': v, **kw}:\n        pass\n    case A(b=c) | None:\n        pass\n    case _:\n        pass\n",
    "def f():\n    match y:\n        case 1:\n            return 2\n    return 3\n",
    "assert a, 'msg'\nassert b\nraise\n",
    "x = ...\ny = None, True, False\n",
    "class A: pass\nclass B(): x = 1; y = 2\n",
    "x = a.b.c(d)(e)[f].g\ny = (a\n     .b)\n",
    "# a comment\n\n\nx = 1  # trailing\n\n",
    "def f(\n    a,\n    b,\n):\n    return (\n        a\n        + b\n    )\n",
    "x = 'ü'  # é, 'not a string'\ny = f'ß{a}' \"#ᵉ\"\nz = b'\\xff'  # ᵉ\n",
    # backslash continuations: one logical line over several physical ones
    "x = 1 + \\\n    2\ny = ('a' \\\n     'b')\n",
    "a = 1; \\\n    b = 2\nc = 3 \\\n ; d = 4\ne = '#'; \\\nf = 5\n",
    "a = 1;\\\n\nb = 2\ns = '''t\\\n'''; u = 1\n",
    "if x: \\\n    y = 1\nwhile a: \\\n  \\\n    b; c\nelse: \\\n    d\ndef f(): \\\n    return 1\n",
    "if x:\n    a = 1; \\\n    b = 2\n    c = 3\n",
]


#: Fields that hold only whitespace and punctuation (the tests' own list, an oracle apart
#: from the engine's).
_LAYOUT = re.compile(
    r"^(whitespace.*|.*_whitespace.*|lpar|rpar|lbracket|rbracket|lbrace|rbrace|comma|semicolon|colon|"
    r"equal|dot|leading_lines|lines_after_decorators|header|footer|star_tok|newline|indent|"
    r"first_colon|second_colon|encoding|default_indent|default_newline|has_trailing_newline)$"
)


def structure(kind: type) -> list[str]:
    return [f.name for f in dataclasses.fields(kind) if not _LAYOUT.match(f.name)]


def differences(ours: cst.CSTNode, theirs: cst.CSTNode, path: str = "") -> Iterator[str]:
    """Where two trees' structure or values differ (layout fields aside)."""
    if type(ours) is not type(theirs) and not (type(ours) is ConvertedModule and type(theirs) is cst.Module):
        yield f"{path}: {type(ours).__name__} != {type(theirs).__name__}"
        return
    for name in structure(type(theirs)):
        x, y = getattr(ours, name), getattr(theirs, name)
        here = f"{path}.{name}"
        if isinstance(x, cst.CSTNode) and isinstance(y, cst.CSTNode):
            yield from differences(x, y, here)
        elif isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)):
            if len(x) != len(y):
                yield f"{here}: {len(x)} items != {len(y)}"
                continue
            for i, (p, q) in enumerate(zip(x, y)):
                if isinstance(p, cst.CSTNode) and isinstance(q, cst.CSTNode):
                    yield from differences(p, q, f"{here}[{i}]")
                elif p != q:
                    yield f"{here}[{i}]: {p!r:.60} != {q!r:.60}"
        elif x != y and {x, y} != {None, cst.MaybeSentinel.DEFAULT}:
            yield f"{here}: {x!r:.60} != {y!r:.60}"


class _Flat(ast.NodeTransformer):
    """``del (a, b)`` and ``del a, b`` are one statement."""

    def visit_Delete(self, node: ast.Delete) -> ast.Delete:
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple):
            node.targets = node.targets[0].elts
        return node


def _meaning(source: str) -> str:
    return ast.dump(_Flat().visit(ast.parse(source)))


def _assert_libcsts_tree(source: str) -> None:
    ours = convert(source)
    assert ours is not None
    theirs = cst.parse_module(source)
    assert list(differences(ours, theirs)) == []
    assert _meaning(ours.code) == _meaning(source)


@pytest.mark.parametrize("source", SNIPPETS)
def test_a_converted_tree_is_libcsts_tree_without_layout(source: str) -> None:
    _assert_libcsts_tree(source)


@pytest.mark.parametrize("path", _OWN_MODULES, ids=lambda p: str(p.relative_to(_REPO)))
def test_this_projects_modules_convert_to_libcsts_trees(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    if cpython_cst.convert(source) is None:  # tabs, or a backslash on a line with a '#': libcst's to parse
        assert "\t" in source or re.search(r"#.*\\\n", source)
        return
    _assert_libcsts_tree(source)


@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)
@given(program=hypothesmith.from_grammar())
def test_any_program_converts_to_libcsts_tree_or_is_left_to_libcst(program: str) -> None:
    try:
        ast.parse(program)
        theirs = cst.parse_module(program)
    except (SyntaxError, ValueError, RecursionError, MemoryError, cst.ParserSyntaxError):
        assume(False)
        return
    ours = convert(program)
    if ours is None:
        return
    assert list(differences(ours, theirs)) == []
    assert _meaning(ours.code) == _meaning(program)


@pytest.mark.parametrize(
    "source",
    [
        "if a:\n\tpass\n",  # tabs: the two parsers may count columns differently
        "x = 1\f\n",
        "x = 1\r\ny = 2\r\n",
        "if x:  # C:\\\n    y = 1\n",  # a backslash after a '#' (a comment's or a string's): libcst tells
        "x = 'ᵉ'; y = ᵉ\n",  # CPython's tree holds identifiers NFKC-normalized (``e``)
        "def ƒ(ß): return ß\n",
        "def broken(:\n",
        "x = (\n",
    ],
)
def test_text_the_conversion_cannot_read_exactly_is_left_to_libcst(source: str) -> None:
    assert convert(source) is None


FSTRINGS = [
    'x = f"a{{b}}c{x}d" + f"" + F\'{y!r}\' + rf"\\d{z}"\n',
    'x = f"{a:>{w}.{p}f} {b:} {c=} {d.e=!s:>3} {g:%Y-%m-%d}"\n',
    "x = f\"{a['k']} {', '.join(b)} {f'{c}'} {d != e} {(lambda: 1)()} {g if h else i}\"\n",
    "x = f'''one\n{\n  a + b\n} two {c}'''\n",
    'log(f"\\N{EM DASH} {a}: {b!a}")\n',
]


@pytest.mark.parametrize("source", FSTRINGS)
def test_f_strings_are_built_from_cpythons_tree_without_libcst(source: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_island(self: object, node: object) -> cst.BaseExpression:
        raise AssertionError(f"libcst was asked to parse {source!r}")

    monkeypatch.setattr(cpython_cst._Converter, "island", no_island)
    _assert_libcsts_tree(source)


@pytest.mark.parametrize(
    "source",
    [
        'x = f"{a+b=}"\n',  # the debug text is the source's spacing: libcst keeps it
        'x = f"{f(a,b).c=}"\n',
        'x = f"{ {1: 2}[k] }"\n',  # a field opening with a brace
        'x = f"{x:{{}}}"\n',
        'x = f"a" "b" f"{c}"\n',
        'x = "é" + f"{é}"\n',  # beyond ASCII: identifiers are checked against libcst's reading
    ],
)
def test_f_strings_the_conversion_leaves_to_libcst_still_convert_exactly(source: str) -> None:
    _assert_libcsts_tree(source)


def test_the_analyzer_parses_text_cpython_reads_by_conversion() -> None:
    tree, shifts = parse_module("x = f(a)\n", None)
    assert isinstance(tree, ConvertedModule) and shifts is None
    assert type(parse_module("x = f(a)\n", None, exact=True)[0]) is cst.Module
    assert type(parse_module("x = f(a)\n", None, validate=True)[0]) is cst.Module
    assert type(parse_module("if a:\n\tpass\n", None)[0]) is cst.Module


_UNCHECKED = "def next_turn(checkpoint):\n    ctx = checkpoint.resume_context()  # why\n    return ctx\n"


class _CommentRule(LintRule):
    """## What it does
    Reports every comment: a plugin's rule that reads layout."""

    code = "XC001"
    name = "every-comment"

    def visit_Comment(self, node: cst.Comment) -> None:
        self.report(node, f"comment {node.value}")

    def leave_Module(self, original_node: cst.Module) -> None:
        for fact in self.model.of(UncheckedResume):  # a node of the engine's tree
            self.report(fact.node, "a resume")


def test_a_plugins_visiting_rule_walks_libcsts_own_tree() -> None:
    """A visiting rule sees comments and whitespace, and libcst's positions; the engine's
    facts (on the converted tree) are still placed for the rules that report them."""
    analyzer = Analyzer(Vocabulary.build(), [*all_rules(), _CommentRule])
    findings, errors = analyzer.analyze([("a.py", _UNCHECKED)])
    assert errors == []
    found = {(f.code, f.line, f.column) for f in findings}
    assert ("XC001", 2, 40) in found
    assert [(f.line, f.column, f.message) for f in findings if f.code == "XC001" and f.line == 2][:1] == [
        (2, 11, "a resume")
    ]
    assert {("SG101", 2, 11), ("SG102", 2, 11), ("SG103", 2, 11)} <= found
