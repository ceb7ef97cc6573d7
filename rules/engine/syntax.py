"""Small, shared helpers over libcst nodes: statement lists and expression walks.

libcst keeps every token; the analysis wants "the statements of this block"
and "the expressions inside this statement, but not inside nested functions".
These helpers give exactly that, so the other modules never special-case
``SimpleStatementLine`` versus ``SimpleStatementSuite``.
"""

from __future__ import annotations

import dataclasses
import re
import typing
from collections.abc import Iterable, Iterator, Sequence
from typing import Literal, Union

import libcst as cst

from .cpython_cst import ConvertedModule

__all__ = [
    "Body",
    "Stmt",
    "attribute_assignments",
    "bool_literal",
    "calls_in",
    "expressions_of",
    "forget_walks",
    "identifiers",
    "is_none",
    "iter_exprs",
    "key_read",
    "statements",
    "string_value",
    "walk_nodes",
    "walk_statements",
]

#: A statement as the analysis sees it: compound, or one small statement.
Stmt = Union[cst.BaseCompoundStatement, cst.BaseSmallStatement]

_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def statements(block: cst.BaseSuite | cst.Module | Sequence[cst.CSTNode] | None) -> list[Stmt]:
    """Flatten a suite (or module) into compound and small statements."""
    if block is None:
        return []
    kind = type(block)  # type tests, as in child_blocks: these classes have no subclasses but one
    if kind is cst.SimpleStatementSuite:
        return list(block.body)
    body: Sequence[cst.CSTNode]
    if kind is cst.IndentedBlock or kind is cst.Module or kind is ConvertedModule:
        body = block.body
    else:
        body = block  # type: ignore[assignment]
    out: list[Stmt] = []
    line = cst.SimpleStatementLine
    for stmt in body:
        if type(stmt) is line:
            out.extend(stmt.body)
        else:
            out.append(stmt)  # type: ignore[arg-type]
    return out


def child_blocks(stmt: Stmt) -> list[list[Stmt]]:
    """The nested statement blocks of a compound statement (not nested scopes)."""
    kind = type(stmt)  # type tests: libcst's isinstance goes through ABCMeta, and this runs per statement
    if kind not in _COMPOUND:
        return []
    blocks: list[list[Stmt]] = []
    if kind is cst.If:
        blocks.append(statements(stmt.body))
        if type(stmt.orelse) is cst.If:
            blocks.append([stmt.orelse])
        elif stmt.orelse is not None:
            blocks.append(statements(stmt.orelse.body))
    elif kind is cst.For or kind is cst.While:
        blocks.append(statements(stmt.body))
        if stmt.orelse is not None:
            blocks.append(statements(stmt.orelse.body))
    elif kind is cst.Try or kind is cst.TryStar:
        blocks.append(statements(stmt.body))
        blocks.extend(statements(h.body) for h in stmt.handlers)
        if stmt.orelse is not None:
            blocks.append(statements(stmt.orelse.body))
        if stmt.finalbody is not None:
            blocks.append(statements(stmt.finalbody.body))
    elif kind is cst.With:
        blocks.append(statements(stmt.body))
    else:  # cst.Match
        blocks.extend(statements(case.body) for case in stmt.cases)
    return blocks


#: Statements with nested blocks that stay in the same scope.
_COMPOUND = frozenset({cst.If, cst.For, cst.While, cst.Try, cst.TryStar, cst.With, cst.Match})


class Body(list):  # type: ignore[type-arg]
    """A function's statements (:attr:`.project.FunctionInfo.body`), which remembers
    :func:`walk_statements` of itself. Why: the analysis walks each body dozens of
    times (call graph, bindings, flow, compaction, pauses, graphs: agno's analysis
    made 1.6 million walks of 5,700 functions). Shared: never changed after it is made."""

    __slots__ = ("walked",)

    def __init__(self, stmts: Iterable[Stmt]) -> None:
        super().__init__(stmts)
        self.walked: tuple[Stmt, ...] | None = None


def walk_statements(stmts: Sequence[Stmt]) -> Iterator[Stmt]:
    """Every statement in ``stmts`` and their blocks, depth first, staying in scope."""
    if type(stmts) is Body:
        walked = stmts.walked
        if walked is None:
            walked = stmts.walked = tuple(_walk_statements(stmts))
        return iter(walked)
    return _walk_statements(stmts)


def _walk_statements(stmts: Sequence[Stmt]) -> Iterator[Stmt]:
    stack = list(reversed(stmts))
    while stack:
        stmt = stack.pop()
        yield stmt
        for block in reversed(child_blocks(stmt)):
            stack.extend(reversed(block))


def expressions_of(stmt: Stmt) -> list[cst.CSTNode]:
    """The expressions a statement evaluates itself (a compound statement's
    header only: an ``if`` test, a ``for`` iterable, ``with`` items)."""
    kind = type(stmt)
    if kind is cst.If or kind is cst.While:
        return [stmt.test]
    if kind is cst.For:
        return [stmt.iter]
    if kind is cst.With:
        return [item.item for item in stmt.items]
    if kind is cst.Match:
        return [stmt.subject]
    if kind in _HEADERLESS:
        return []
    return [stmt]


_HEADERLESS = frozenset({cst.Try, cst.TryStar, cst.FunctionDef, cst.ClassDef})


#: Fields that only hold whitespace and punctuation: never walked.
_SKIPPED_FIELD = re.compile(
    r"^(whitespace.*|.*_whitespace.*|lpar|rpar|lbracket|rbracket|lbrace|rbrace|comma|semicolon|colon|"
    r"equal|dot|leading_lines|lines_after_decorators|header|footer|star_tok|newline|indent|"
    r"first_line|empty_lines|encoding|default_newline|default_indent|has_trailing_newline|"
    r"first_colon|second_colon)$"
)
#: Field types that never hold a node (``Name.value``, ``Arg.star``): never read.
_SCALARS = (str, bool, int)
_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(cls: type) -> tuple[str, ...]:
    """The fields of a node type that can hold nodes, in source order (computed once per type)."""
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(
            f.name
            for f in dataclasses.fields(cls)
            if not _SKIPPED_FIELD.match(f.name) and f.type not in _SCALARS and typing.get_origin(f.type) is not Literal
        )
    return names


#: Whether a type is a libcst node, by type: libcst's classes use ABCMeta, whose
#: isinstance() is several times slower than a dict lookup, on the engine's hottest path.
_IS_NODE: dict[type, bool] = {}


def is_node(value: object) -> bool:
    """``isinstance(value, cst.CSTNode)``, answered once per type."""
    kind = type(value)
    known = _IS_NODE.get(kind)
    if known is None:
        known = _IS_NODE[kind] = issubclass(kind, cst.CSTNode)
    return known


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The syntactic children of ``node`` in source order, without whitespace and
    punctuation. libcst's ``node.children`` runs a visitor per call (an order of
    magnitude slower); the dataclass fields give the same structure. A list, not a
    generator: every caller wants them all, and a generator's frame costs more."""
    kind = type(node)
    plan = _FIELDS.get(kind)
    if plan is None:
        plan = _fields(kind)
    known_nodes = _IS_NODE
    found: list[cst.CSTNode] = []
    for name in plan:
        value = getattr(node, name)
        value_kind = type(value)
        if value_kind is list or value_kind is tuple:
            for item in value:
                known = known_nodes.get(type(item))
                if known is None:
                    known = is_node(item)
                if known:
                    found.append(item)
        else:
            known = known_nodes.get(value_kind)
            if known is None:
                known = is_node(value)
            if known:
                found.append(value)
    return found


_SCOPE_TYPES = frozenset(_SCOPES)


#: The walks :func:`iter_exprs` made, by the id of their root (with the root itself,
#: which keeps the id from being reused while the walk is remembered), and how many
#: nodes they hold. The analysis asks for the same walk again and again (langgraph:
#: 211,000 walks of 45,000 roots, each node visited 8.5 times); libcst trees are
#: immutable, so a walk is computed once. Forgotten all at once past :data:`MAX_WALKED`
#: nodes, and all at once when an analysis ends (:func:`forget_walks`).
_WALKS: dict[int, tuple[cst.CSTNode, tuple[cst.CSTNode, ...]]] = {}
#: :func:`calls_in` of the walks above, by the same key, forgotten with them.
_CALLS: dict[int, tuple[cst.CSTNode, tuple[cst.Call, ...]]] = {}
_WALKED = [0]
MAX_WALKED = 3_000_000


def forget_walks() -> None:
    """Drop every remembered walk: called when an analysis ends.

    Why: the walks hold their roots, so remembered past its analysis a walk keeps
    that analysis's trees alive. A run of several groups (two packages, or the
    chunks of one) then carried up to :data:`MAX_WALKED` nodes of the groups before
    into each next one, and the collection at the end of every analysis walked them
    again: 1.6 million live objects, 0.7 s per analysis, a tenth of a two-package
    run (letta with openai-agents, ``--jobs 1``)."""
    _WALKS.clear()
    _CALLS.clear()
    _WALKED[0] = 0


def iter_exprs(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """``node`` and everything below it, not entering lambdas or nested scopes, in
    depth-first source order."""
    known = _WALKS.get(id(node))
    if known is not None:
        return iter(known[1])
    found = walk_nodes(node, _SCOPE_TYPES)
    if _WALKED[0] + len(found) > MAX_WALKED:
        forget_walks()
    _WALKS[id(node)] = (node, found)
    _WALKED[0] += len(found)
    return iter(found)


_NO_STOP: frozenset[type] = frozenset()


def walk_nodes(node: cst.CSTNode, stop: frozenset[type] = _NO_STOP) -> tuple[cst.CSTNode, ...]:
    """``node`` and every node below it in depth-first source order, without entering a
    node whose type is in ``stop`` (:func:`iter_exprs` stops at nested scopes). The
    engine's hottest loop (millions of nodes per real package): :func:`children` is
    inlined (a call per node costs a third more), and the per-type lookups are local names."""
    out: list[cst.CSTNode] = []
    emit = out.append
    stack: list[cst.CSTNode] = [node]
    pop = stack.pop
    scopes = stop
    plans = _FIELDS
    known_nodes = _IS_NODE
    while stack:
        current = pop()
        emit(current)
        kind = type(current)
        plan = plans.get(kind)
        if plan is None:
            plan = _fields(kind)
        below: list[cst.CSTNode] = []
        for name in plan:
            value = getattr(current, name)
            value_kind = type(value)
            if value_kind is list or value_kind is tuple:
                for item in value:
                    item_kind = type(item)
                    known = known_nodes.get(item_kind)
                    if known is None:
                        known = is_node(item)
                    if known and item_kind not in scopes:
                        below.append(item)
            else:
                known = known_nodes.get(value_kind)
                if known is None:
                    known = is_node(value)
                if known and value_kind not in scopes:
                    below.append(value)
        if below:
            below.reverse()
            stack.extend(below)
    return tuple(out)


def calls_in(node: cst.CSTNode) -> tuple[cst.Call, ...]:
    """Calls inside ``node``, innermost (first evaluated) first. Remembered as the walk
    is (see :data:`_WALKS`): agno's analysis asks 575,000 times about 210,000 nodes."""
    known = _CALLS.get(id(node))
    if known is not None:
        return known[1]
    found = [n for n in iter_exprs(node) if type(n) is cst.Call]
    found.reverse()
    calls = tuple(found)
    _CALLS[id(node)] = (node, calls)
    return calls


def string_value(node: cst.SimpleString | cst.ConcatenatedString) -> str | bytes | None:
    """What a string literal evaluates to: libcst's ``evaluated_value``, decoded here when
    the token needs no decoding (no prefix, no backslash, no carriage return).

    Why: libcst evaluates every string with :func:`ast.literal_eval`, which compiles
    the token, and whose recursive closures are a reference cycle per call: a cold
    analysis of langchain-core left 55,000 of them (with their cells and tuples) for
    the collector, a tenth of the garbage it walks after each analysis. Identifier-like
    strings, the ones the engine compares, almost never need decoding."""
    if type(node) is cst.SimpleString:
        raw = node.value
        quote = raw[0]
        if quote == '"' or quote == "'":
            body = raw[3:-3] if len(raw) >= 6 and raw.startswith(quote * 3) else raw[1:-1]
            if "\\" not in body and "\r" not in body:
                return body
    return node.evaluated_value


def identifiers(node: cst.CSTNode) -> Iterator[str]:
    """Names and attribute names mentioned in an expression."""
    for n in iter_exprs(node):
        kind = type(n)  # type tests: see key_read
        if kind is cst.Name:
            yield n.value
        elif kind is cst.SimpleString:
            value = string_value(n)
            if isinstance(value, str) and value.isidentifier():
                yield value


def key_read(node: cst.CSTNode) -> tuple[cst.BaseExpression, str] | None:
    """``(x, "key")`` for ``x["key"]`` and ``x.get("key", ...)``: a mapping's field,
    read the way ``x.key`` reads an attribute."""
    kind = type(node)  # type tests: libcst's isinstance goes through ABCMeta (none of these has a subclass)
    if kind is cst.Subscript:
        if len(node.slice) != 1 or type(node.slice[0].slice) is not cst.Index:
            return None
        owner, key = node.value, node.slice[0].slice.value
    elif kind is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "get":
        if not node.args or node.args[0].keyword is not None or node.args[0].star:
            return None
        owner, key = node.func.value, node.args[0].value
    else:
        return None
    if type(key) is not cst.SimpleString:
        return None
    value = string_value(key)
    return (owner, value) if isinstance(value, str) and value.isidentifier() else None


def is_none(node: cst.CSTNode) -> bool:
    return type(node) is cst.Name and node.value == "None"  # a type test: see key_read


def bool_literal(node: cst.CSTNode) -> bool | None:
    """True/False for a literal that is always truthy/falsy, else None."""
    kind = type(node)  # type tests: see key_read
    if kind is cst.Name:
        if node.value == "True":
            return True
        if node.value in ("False", "None"):
            return False
    if kind is cst.Integer:
        return node.value not in ("0",)
    return None


def attribute_assignments(body: Sequence[Stmt], attr: str) -> list[tuple[str, cst.BaseExpression]]:
    """What a method body assigns to ``self.<attr>`` or ``cls.<attr>`` (``x: T = v`` too),
    in statement order: the receiver's name and the value. The one binding collector for
    instance and class attributes (see :meth:`.project.Project.attribute_assignments`)."""
    found: list[tuple[str, cst.BaseExpression]] = []
    for stmt in walk_statements(body):
        kind = type(stmt)  # type tests: see key_read
        if kind is cst.Assign:
            targets = [t.target for t in stmt.targets]
            value = stmt.value
        elif kind is cst.AnnAssign and stmt.value is not None:
            targets, value = [stmt.target], stmt.value
        else:
            continue
        for target in targets:
            if (
                type(target) is cst.Attribute and target.attr.value == attr
                and type(target.value) is cst.Name and target.value.value in ("self", "cls")
            ):
                found.append((target.value.value, value))
    return found
