"""SG201's structural half: where a looked-up reference is missing, is a tool called?

A reference looked up in resumed state is "missing" on one side of:
``if ref not in state`` / ``if x is None`` / ``if not x`` (and their ternary
forms), ``state.get(k) or ...``, ``state.get(k, <default>)``,
``state.setdefault(k, <default>)``, ``getattr(state, k, <default>)``, and an
``except KeyError`` around ``state[k]``. A tool call on that side whose result
takes the missing reference's place obtains the fact again: a new fact with new
provenance passed off as the old one. Its result must flow there (bound to the
looked-up name or key, stored into the resumed state, returned or yielded, or
the fallback of the lookup itself): a call on the missing side whose result
goes elsewhere, or nowhere, obtains something else.

Both halves need evidence. The callee must be a tool by what the code says of
it, never by its name (SPEC §3.1.1): a tool decorator, the vocabulary
(configured ``tool-calls``, a framework model), a framework tool object, or a
project function that calls such a tool; ``search_tool(q)`` or ``tools.x()``
with nothing else saying so is not one. The container is resumed state by data
flow (a resume, a load of a checkpoint carrying a summary, a summary object)
or, as one vote, by name (``resume_state``).

Each re-derivation carries its evidence chain, source to sink: where the
container shows it is resumed state, the lookup that finds the reference
missing, and why the callee is a tool (the tool call itself is the sink).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import libcst as cst

from .evidence import Evidence
from .facts import Step
from .names import dotted, last_segment
from .syntax import Stmt, calls_in, expressions_of, is_none, iter_exprs, statements, string_value, walk_statements

__all__ = ["rederivations"]

_LOOKUP_ERRORS = frozenset({"KeyError", "LookupError", "IndexError", "AttributeError", "Exception", "BaseException"})
_DEFAULTING = frozenset({"get", "setdefault", "pop"})
_STORING = frozenset({"update", "setdefault", "append", "add", "insert", "__setitem__", "set"})


#: A re-derivation: the tool call, how the reference was found missing, and its evidence chain.
Rederived = tuple[cst.Call, str, tuple[Step, ...]]


@dataclass
class _Pass:
    """The search over one function: what is resumed state, what is a tool, and
    the last resumed container a lookup matched (the source of the chain)."""

    evidence: Evidence
    container: cst.CSTNode | None = None

    def state(self, expr: cst.CSTNode) -> bool:
        if self.evidence.resumed_state(expr):
            self.container = expr
            return True
        return False

    def tool(self, call: cst.Call) -> bool:
        return self.evidence.known_tool(call)


@dataclass(frozen=True)
class _Check:
    """The lookup that found the reference missing: its node, and the resumed container it read."""

    node: cst.CSTNode
    container: cst.CSTNode
    note: str


def rederivations(ev: Evidence) -> list[Rederived]:
    """Tool calls that re-derive a missing reference, with a description of why and the evidence chain."""
    found: dict[cst.Call, tuple[str, _Check]] = {}
    _search(_Pass(ev), found)
    chains: list[Rederived] = []
    for call, (why, check) in found.items():
        steps = [ev.state_origin(check.container), Step(ev.fn.module.path, check.node, check.note)]
        tool = ev.tool_evidence(call)
        if tool is not None:
            steps.append(tool)
        chains.append((call, why, tuple(steps)))
    return chains


_Found = dict[cst.Call, tuple[str, _Check]]
_MISSING = "the reference is looked up in resumed state here and found missing"


def _search(ev: _Pass, found: _Found) -> None:
    body = ev.evidence.fn.body
    for stmt in walk_statements(body):
        ev.container = None
        kind = type(stmt)  # type tests: libcst's isinstance goes through ABCMeta (every statement)
        if kind is cst.If:
            side = _missing_side(stmt.test, ev)
            if side is not None:
                check = _Check(stmt.test, _container(ev, stmt.test), _MISSING)
                branch = stmt.body if side else stmt.orelse
                if isinstance(branch, cst.Else):
                    branch = branch.body
                block = [branch] if isinstance(branch, cst.If) else statements(branch)
                for call in _rederiving_calls(block, _referenced(stmt.test), ev):
                    found.setdefault(call, ("when the reference is missing from resumed state", check))
        elif kind is cst.Try or kind is cst.TryStar:
            _try_rederivation(stmt, ev, found)
        for expr in expressions_of(stmt):
            _expression_rederivations(expr, ev, found)


def _container(ev: _Pass, fallback: cst.CSTNode) -> cst.CSTNode:
    """The resumed container the last successful lookup matched (the check itself if none did)."""
    return ev.container if ev.container is not None else fallback


def _missing_side(test: cst.BaseExpression, ev: _Pass) -> bool | None:
    """True: the reference is missing when ``test`` is true; False: when false.

    Iterative over ``not`` prefixes and the left spine of ``and``/``or`` chains
    (libcst nests ``a or b or c`` as a left-deep tree, so a long chain would
    otherwise recurse once per operand)."""
    negated = False
    pending: list[tuple[cst.BaseExpression, bool]] = []  # right operands still to try, innermost last
    while True:
        side = _missing_side_leaf(test, ev, negated)
        if side is not None:
            return side
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            test, negated = test.expression, not negated
            continue
        if isinstance(test, cst.BooleanOperation):
            pending.append((test.right, negated))
            test = test.left
            continue
        if not pending:
            return None
        test, negated = pending.pop()


def _missing_side_leaf(test: cst.BaseExpression, ev: _Pass, negated: bool) -> bool | None:
    """The answer for one operand that is not ``not`` or ``and``/``or`` (None: no answer)."""
    if isinstance(test, cst.BooleanOperation) or (
        isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
    ):
        return None  # taken apart by the caller
    side: bool | None = None
    if isinstance(test, cst.Comparison):
        if len(test.comparisons) == 1:
            side = _comparison_side(test, ev)
    elif _is_lookup(test, ev):
        side = False
    return side if side is None or not negated else not side


def _comparison_side(test: cst.Comparison, ev: _Pass) -> bool | None:
    op = test.comparisons[0].operator
    right = test.comparisons[0].comparator
    if isinstance(op, (cst.In, cst.NotIn)) and ev.state(right):
        return isinstance(op, cst.NotIn)
    if isinstance(op, (cst.Is, cst.IsNot, cst.Equal, cst.NotEqual)):
        for side, other in ((test.left, right), (right, test.left)):
            if is_none(other) and _is_lookup(side, ev):
                return isinstance(op, (cst.Is, cst.Equal))
    return None


def _is_lookup(expr: cst.BaseExpression, ev: _Pass) -> bool:
    """A value looked up in resumed state, or a name bound to one.

    Names are followed through plain aliases (``a = b``) as a graph search with
    one visited set: aliases can form cycles (``x = x``, ``a = b; b = a``,
    ``name, node = node``) and dense alias graphs, so following them
    recursively per path would never end, or take exponential time."""
    if type(expr) is not cst.Name:  # type tests, as in _is_direct_lookup
        return _is_direct_lookup(expr, ev)
    seen = {expr.value}
    stack = [expr.value]
    while stack:
        name = stack.pop()
        values = ev.evidence.assigned.get(name, ())
        if values and name in ev.evidence.resumed:
            ev.container = expr
            return True
        for value in values:
            if type(value) is cst.Name:
                if value.value not in seen:
                    seen.add(value.value)
                    stack.append(value.value)
            elif _is_direct_lookup(value, ev):
                return True
    return False


def _is_direct_lookup(expr: cst.BaseExpression, ev: _Pass) -> bool:
    """``state[k]``, ``state.attr``, ``state.get(k)``, ``getattr(state, k)`` on resumed state."""
    kind = type(expr)  # type tests: libcst's isinstance goes through ABCMeta (per looked-up value)
    if kind is cst.Subscript or kind is cst.Attribute:
        return ev.state(expr.value)
    if kind is cst.Call:
        func = expr.func
        func_kind = type(func)
        if func_kind is cst.Attribute and func.attr.value in _DEFAULTING:
            return ev.state(func.value)
        if func_kind is cst.Name and func.value == "getattr" and expr.args:
            return ev.state(expr.args[0].value)
    return False


def _expression_rederivations(expr: cst.CSTNode, ev: _Pass, found: _Found) -> None:
    for node in iter_exprs(expr):
        ev.container = None
        kind = type(node)  # type tests, not isinstance: libcst's ABCMeta makes a failed isinstance slow
        if kind is not cst.BooleanOperation and kind is not cst.IfExp and kind is not cst.Call:
            continue
        if kind is cst.BooleanOperation and type(node.operator) is cst.Or:
            if _is_lookup(node.left, ev):
                check = _Check(node.left, _container(ev, node.left), f"{_MISSING} (`... or ...`)")
                for call in _tool_calls(node.right, ev):
                    found.setdefault(call, ("as the fallback of a lookup in resumed state (`... or tool()`)", check))
        elif kind is cst.IfExp:
            side = _missing_side(node.test, ev)
            if side is not None:
                check = _Check(node.test, _container(ev, node.test), _MISSING)
                branch = node.body if side else node.orelse
                for call in _tool_calls(branch, ev):
                    found.setdefault(call, ("when the reference is missing from resumed state", check))
        elif kind is cst.Call:
            default = _default_argument(node, ev)
            if default is not None:
                method = last_segment(dotted(node.func))
                check = _Check(node, _container(ev, node), f"the reference is looked up in resumed state by "
                               f"`{method}()`, whose default is computed first")
                for call in _tool_calls(default, ev):
                    found.setdefault(call, (f"as the default of `{method}()` on resumed state (it even runs when "
                                     "the reference is present)", check))


def _default_argument(call: cst.Call, ev: _Pass) -> cst.BaseExpression | None:
    func = call.func
    kind = type(func)  # type tests: libcst's isinstance goes through ABCMeta (every call)
    if kind is cst.Attribute and func.attr.value in _DEFAULTING and len(call.args) >= 2:
        if ev.state(func.value):
            return call.args[1].value
    if kind is cst.Name and func.value == "getattr" and len(call.args) >= 3:
        if ev.state(call.args[0].value):
            return call.args[2].value
    return None


def _try_rederivation(stmt: cst.Try | cst.TryStar, ev: _Pass, found: _Found) -> None:
    ev.container = None
    lookup = next(
        (
            n
            for s in statements(stmt.body)
            for e in expressions_of(s)
            for n in iter_exprs(e)
            if isinstance(n, (cst.Subscript, cst.Attribute)) and _is_lookup(n, ev)
        ),
        None,
    )
    if lookup is None:
        return
    container = _container(ev, lookup)
    looked_up: set[str] = set()
    for s in statements(stmt.body):
        looked_up |= _bound_names(s)
        for e in expressions_of(s):
            looked_up |= _referenced(e)
    for handler in stmt.handlers:
        caught = _caught_names(handler.type)
        if handler.type is None or caught & _LOOKUP_ERRORS:
            check = _Check(lookup, container, "the reference is looked up in resumed state here; the handler "
                           "runs when it is missing")
            for call in _rederiving_calls(statements(handler.body), looked_up, ev):
                found.setdefault(call, ("in the handler of a failed lookup in resumed state", check))


def _caught_names(expr: cst.BaseExpression | None) -> set[str]:
    if expr is None:
        return set()
    elements = [e.value for e in expr.elements] if isinstance(expr, cst.Tuple) else [expr]
    return {last_segment(dotted(e)) for e in elements}


def _tool_calls(node: cst.CSTNode, ev: _Pass) -> Iterator[cst.Call]:
    for call in calls_in(node):
        if ev.tool(call):
            yield call


def _referenced(expr: cst.CSTNode) -> set[str]:
    """What a lookup names: its names, attribute names and identifier-like keys."""
    found: set[str] = set()
    for node in iter_exprs(expr):
        if isinstance(node, cst.Name):
            found.add(node.value)
        elif isinstance(node, cst.Attribute):
            found.add(node.attr.value)
        elif isinstance(node, cst.SimpleString):
            value = string_value(node)
            if isinstance(value, str) and value.isidentifier():
                found.add(value)
    return found


def _bound_names(stmt: Stmt) -> set[str]:
    targets: list[cst.BaseExpression] = []
    if isinstance(stmt, cst.Assign):
        targets = [t.target for t in stmt.targets]
    elif isinstance(stmt, (cst.AnnAssign, cst.AugAssign)):
        targets = [stmt.target]
    return {n.value for t in targets for n in iter_exprs(t) if isinstance(n, cst.Name)}


def _rederiving_calls(block: Sequence[Stmt], references: set[str], ev: _Pass) -> Iterator[cst.Call]:
    """Tool calls in ``block`` whose result takes the place of the missing reference."""
    for stmt in walk_statements(block):
        if isinstance(stmt, (cst.Return, cst.Expr)):
            value = stmt.value
            if isinstance(stmt, cst.Expr):
                # a bare call's result is dropped: only a yielded one, or one stored into
                # the resumed state by the call it is an argument of, takes the place
                if isinstance(value, cst.Yield):
                    yield from _tool_calls(value, ev)
                elif isinstance(value, cst.Call) and _stores_into_state(value, ev):
                    for arg in value.args:
                        yield from _tool_calls(arg.value, ev)
                continue
            if value is not None:
                yield from _tool_calls(value, ev)
        elif isinstance(stmt, (cst.Assign, cst.AnnAssign, cst.AugAssign)) and stmt.value is not None:
            targets = [t.target for t in stmt.targets] if isinstance(stmt, cst.Assign) else [stmt.target]
            if any(_takes_place(t, references, ev) for t in targets):
                yield from _tool_calls(stmt.value, ev)


def _takes_place(target: cst.BaseExpression, references: set[str], ev: _Pass) -> bool:
    """An assignment target that holds the missing reference: its name, or resumed state."""
    if isinstance(target, cst.Name):
        return target.value in references
    if isinstance(target, (cst.Subscript, cst.Attribute)):
        return ev.state(target.value) or (isinstance(target, cst.Attribute) and target.attr.value in references)
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_takes_place(e.value, references, ev) for e in target.elements)
    return False


def _stores_into_state(call: cst.Call, ev: _Pass) -> bool:
    """``state.update(vm=tool())``, ``state.setdefault("vm", tool())``: a method of the resumed state."""
    func = call.func
    return isinstance(func, cst.Attribute) and func.attr.value in _STORING and ev.state(func.value)
