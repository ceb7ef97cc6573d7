"""The engine's fast paths over libcst trees give what the plain ones give (issue 10).

Speed work must never move a finding, so each shortcut is held to its plain form:

* :func:`~summaryguard.rules.engine.grammar.parse_module` parses without libcst's
  per-node validation: the tree is the validated parse's, node for node, and
  validation is back on after the parse (and after a parse that fails);
* :func:`~summaryguard.rules.engine.syntax.iter_exprs` reads only the fields that
  can hold nodes and remembers each walk: the same nodes, in the same order, as the
  walk over every dataclass field it replaced, asked once or many times, and after
  the remembered walks were dropped (:data:`~summaryguard.rules.engine.syntax.MAX_WALKED`);
* :func:`~summaryguard.rules.engine.syntax.calls_in` is remembered with the walk:
  the calls of the plain walk, innermost first, however often it is asked;
* a function's body (:class:`~summaryguard.rules.engine.syntax.Body`) remembers its
  statement walk: the plain walk's statements, and a body read again is the same
  object until its node changes (a deferred body parsed later);
* :func:`~summaryguard.rules.engine.flags.scope_nodes` (one walk shared by the flag
  questions) is every node below a body, nested scopes included, in source order;
* :func:`~summaryguard.rules.engine.syntax.string_value` decodes a string literal
  without :func:`ast.literal_eval` where it needs no decoding: the same value as
  libcst's ``evaluated_value``, for any text in any quoting.
"""

from __future__ import annotations

import ast
import dataclasses
import warnings
from collections.abc import Iterator
from pathlib import Path

import hypothesmith
import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from summaryguard.rules.engine import Vocabulary, flags, syntax
from summaryguard.rules.engine.grammar import parse_module
from summaryguard.rules.engine.project import Project

FIXTURES = sorted(Path(__file__).parent.joinpath("fixtures").rglob("*.py"))


def plain_walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The walk as it was: every dataclass field but whitespace and punctuation, any node in it."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        below: list[cst.CSTNode] = []
        for field in dataclasses.fields(current):
            if syntax._SKIPPED_FIELD.match(field.name):
                continue
            value = getattr(current, field.name)
            items = value if isinstance(value, (list, tuple)) else [value]
            below.extend(
                item for item in items if isinstance(item, cst.CSTNode) and type(item) not in syntax._SCOPE_TYPES
            )
        stack.extend(reversed(below))


def roots(module: cst.Module) -> list[cst.CSTNode]:
    """What the engine walks: the expressions of every statement, in every scope."""
    found: list[cst.CSTNode] = []

    class Scopes(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            for stmt in syntax.walk_statements(syntax.statements(node.body)):
                found.extend(syntax.expressions_of(stmt))

    for stmt in syntax.walk_statements(syntax.statements(module)):
        found.extend(syntax.expressions_of(stmt))
    module.visit(Scopes())
    return found


def assert_walks_agree(module: cst.Module) -> None:
    for root in roots(module):
        expected = list(plain_walk(root))
        calls = [n for n in reversed(expected) if isinstance(n, cst.Call)]
        for _ in range(2):  # computed, then remembered
            got = list(syntax.iter_exprs(root))
            assert len(got) == len(expected) and all(a is b for a, b in zip(got, expected))
            found = syntax.calls_in(root)
            assert len(found) == len(calls) and all(a is b for a, b in zip(found, calls))


def plain_statement_walk(stmts: list[syntax.Stmt]) -> Iterator[syntax.Stmt]:
    """Statements depth first, recursively: what ``walk_statements`` yields."""
    for stmt in stmts:
        yield stmt
        for block in syntax.child_blocks(stmt):
            yield from plain_statement_walk(block)


def plain_scope_walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node below ``node``, recursively, nested scopes included."""
    for child in syntax.children(node):
        yield child
        yield from plain_scope_walk(child)


def scopes(module: cst.Module) -> list[list[syntax.Stmt]]:
    """The module's statements and every function's, as the engine reads bodies."""
    found = [syntax.statements(module)]

    class Defs(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            found.append(syntax.statements(node.body))

    module.visit(Defs())
    return found


def assert_bodies_agree(module: cst.Module) -> None:
    for stmts in scopes(module):
        expected = list(plain_statement_walk(stmts))
        body = syntax.Body(stmts)
        assert list(body) == stmts
        for _ in range(2):  # walked, then remembered
            got = list(syntax.walk_statements(body))
            assert len(got) == len(expected) and all(a is b for a, b in zip(got, expected))
        assert list(syntax.walk_statements(stmts)) == expected  # a plain list is walked afresh
        nodes = [n for stmt in stmts for n in (stmt, *plain_scope_walk(stmt))]
        got_nodes = flags.scope_nodes(stmts)
        assert len(got_nodes) == len(nodes) and all(a is b for a, b in zip(got_nodes, nodes))
        assert flags.candidates(stmts, got_nodes) == flags.candidates(stmts)
        assert flags.error_slots(stmts, got_nodes) == flags.error_slots(stmts)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_unvalidated_parse_is_the_validated_parse(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    tree, shifts = parse_module(text, None, exact=True)
    assert shifts is None
    assert tree.deep_equals(cst.parse_module(text)) and tree.code == text
    with pytest.raises(cst.CSTValidationError):  # nodes built after the parse check themselves again
        cst.Name("")


def test_validation_is_back_after_a_parse_that_fails() -> None:
    with pytest.raises(cst.ParserSyntaxError):
        parse_module("def f(:\n", None)
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_walks_are_the_plain_walks(path: Path) -> None:
    assert_walks_agree(cst.parse_module(path.read_text(encoding="utf-8")))


def test_walks_agree_after_the_remembered_ones_are_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(syntax, "MAX_WALKED", 50)
    for path in FIXTURES[:5]:
        assert_walks_agree(cst.parse_module(path.read_text(encoding="utf-8")))
    assert syntax._WALKED[0] <= 50
    syntax.forget_walks()
    assert not syntax._CALLS  # remembered calls go with the walks they were read from


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_body_walks_are_the_plain_walks(path: Path) -> None:
    assert_bodies_agree(cst.parse_module(path.read_text(encoding="utf-8")))


def test_a_body_is_read_once_per_node() -> None:
    text = "def f(x):\n    if x:\n        return 1\n    return 2\n\ng = lambda y: y\n"
    project = Project(Vocabulary.build())
    project.add_module("app/mod.py", cst.parse_module(text), text)
    fns = {fn.name: fn for fn in project.functions}
    f, g = fns["f"], fns["g"]
    assert f.body is f.body and isinstance(f.body, syntax.Body)
    assert [type(s) for s in syntax.walk_statements(f.body)] == [cst.If, cst.Return, cst.Return]
    assert g.body is g.body and [type(s) for s in g.body] == [cst.Return]
    before = f.body
    f.node = cst.parse_module("def f(x):\n    pass\n").body[0]  # a deferred body, parsed later
    assert f.body is not before and [type(s) for s in f.body] == [cst.Pass]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(hypothesmith.from_node())
def test_walks_of_generated_code(source: str) -> None:
    try:
        module = cst.parse_module(source)
    except (cst.ParserSyntaxError, RecursionError):
        return
    assert_walks_agree(module)
    assert_bodies_agree(module)


_QUOTINGS = ("'{}'", '"{}"', "'''{}'''", '"""{}"""', "r'{}'", "b'{}'", "u'{}'", 'R"{}"')


def _literal(text: str, quoting: str) -> cst.SimpleString | None:
    """``text`` written with ``quoting`` as a literal CPython accepts, or None."""
    token = quoting.format(text)
    try:
        node = cst.parse_expression(token)
        with warnings.catch_warnings():  # an invalid escape ("\\d") warns, and still evaluates
            warnings.simplefilter("ignore")
            ast.literal_eval(token)
    except Exception:  # noqa: BLE001 - a text that quoting cannot hold
        return None
    return node if isinstance(node, cst.SimpleString) else None


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.sampled_from("ab_ \t\\\n\r'\"é{}"), max_size=12), st.sampled_from(_QUOTINGS))
def test_string_value_is_libcsts_value(text: str, quoting: str) -> None:
    node = _literal(text, quoting)
    if node is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert syntax.string_value(node) == node.evaluated_value


@pytest.mark.parametrize(
    "token",
    ["''", '""', "'resume'", '"a b"', "'''x\ny'''", '""""""', '"""a"b"""', r"'a\nb'", r"'\x41'", "b'k'", r"r'\d'", "u'x'"],
)
def test_string_value_of_examples(token: str) -> None:
    node = cst.parse_expression(token)
    assert isinstance(node, cst.SimpleString)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert syntax.string_value(node) == node.evaluated_value == ast.literal_eval(token)


def test_string_value_of_a_concatenation_is_libcsts() -> None:
    node = cst.parse_expression("'a' \"b\"")
    assert isinstance(node, cst.ConcatenatedString)
    assert syntax.string_value(node) == "ab"
