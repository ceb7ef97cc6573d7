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

Both halves need evidence, and two names never make a finding: a callee known
to be a tool (decorator, vocabulary, a project function that calls one) is
taken where the container is resumed state by data flow (a resume, a load of
a checkpoint carrying a summary, a summary object) or by name
(``resume_state``); a callee only named like a tool (``search_tool``,
``tools.x``) only where the container is resumed state by data flow.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import libcst as cst

from .evidence import Evidence
from .names import dotted, last_segment
from .syntax import Stmt, calls_in, expressions_of, is_none, iter_exprs, statements, walk_statements

__all__ = ["rederivations"]

_LOOKUP_ERRORS = frozenset({"KeyError", "LookupError", "IndexError", "AttributeError", "Exception", "BaseException"})
_DEFAULTING = frozenset({"get", "setdefault", "pop"})
_STORING = frozenset({"update", "setdefault", "append", "add", "insert", "__setitem__", "set"})


@dataclass(frozen=True)
class _Pass:
    """One search: containers resumed by data flow (``strong``) with any tool, or
    containers resumed by any vote with known tools only."""

    evidence: Evidence
    strong: bool

    def state(self, expr: cst.CSTNode) -> bool:
        return self.evidence.resumed_state(expr, strong=self.strong)

    def tool(self, call: cst.Call) -> bool:
        return self.evidence.is_tool_call(call) if self.strong else self.evidence.known_tool(call)


def rederivations(ev: Evidence) -> list[tuple[cst.Call, str]]:
    """Tool calls that re-derive a missing reference, with a description of why."""
    found: dict[cst.Call, str] = {}
    for strong in (True, False):
        _search(_Pass(ev, strong), found)
    return list(found.items())


def _search(ev: _Pass, found: dict[cst.Call, str]) -> None:
    body = ev.evidence.fn.body
    for stmt in walk_statements(body):
        if isinstance(stmt, cst.If):
            side = _missing_side(stmt.test, ev)
            if side is not None:
                branch = stmt.body if side else stmt.orelse
                if isinstance(branch, cst.Else):
                    branch = branch.body
                block = [branch] if isinstance(branch, cst.If) else statements(branch)
                for call in _rederiving_calls(block, _referenced(stmt.test), ev):
                    found.setdefault(call, "when the reference is missing from resumed state")
        elif isinstance(stmt, (cst.Try, cst.TryStar)):
            _try_rederivation(stmt, ev, found)
        for expr in expressions_of(stmt):
            _expression_rederivations(expr, ev, found)


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
    if not isinstance(expr, cst.Name):
        return _is_direct_lookup(expr, ev)
    seen = {expr.value}
    stack = [expr.value]
    while stack:
        name = stack.pop()
        values = ev.evidence.assigned.get(name, ())
        if values and name in ev.evidence.resumed:
            return True
        for value in values:
            if isinstance(value, cst.Name):
                if value.value not in seen:
                    seen.add(value.value)
                    stack.append(value.value)
            elif _is_direct_lookup(value, ev):
                return True
    return False


def _is_direct_lookup(expr: cst.BaseExpression, ev: _Pass) -> bool:
    """``state[k]``, ``state.attr``, ``state.get(k)``, ``getattr(state, k)`` on resumed state."""
    if isinstance(expr, cst.Subscript):
        return ev.state(expr.value)
    if isinstance(expr, cst.Attribute):
        return ev.state(expr.value)
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Attribute) and func.attr.value in _DEFAULTING:
            return ev.state(func.value)
        if isinstance(func, cst.Name) and func.value == "getattr" and expr.args:
            return ev.state(expr.args[0].value)
    return False


def _expression_rederivations(expr: cst.CSTNode, ev: _Pass, found: dict[cst.Call, str]) -> None:
    for node in iter_exprs(expr):
        if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.Or):
            if _is_lookup(node.left, ev):
                for call in _tool_calls(node.right, ev):
                    found.setdefault(call, "as the fallback of a lookup in resumed state (`... or tool()`)")
        elif isinstance(node, cst.IfExp):
            side = _missing_side(node.test, ev)
            if side is not None:
                branch = node.body if side else node.orelse
                for call in _tool_calls(branch, ev):
                    found.setdefault(call, "when the reference is missing from resumed state")
        elif isinstance(node, cst.Call):
            default = _default_argument(node, ev)
            if default is not None:
                method = last_segment(dotted(node.func))
                for call in _tool_calls(default, ev):
                    found.setdefault(call, f"as the default of `{method}()` on resumed state (it even runs when "
                                     "the reference is present)")


def _default_argument(call: cst.Call, ev: _Pass) -> cst.BaseExpression | None:
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in _DEFAULTING and len(call.args) >= 2:
        if ev.state(func.value):
            return call.args[1].value
    if isinstance(func, cst.Name) and func.value == "getattr" and len(call.args) >= 3:
        if ev.state(call.args[0].value):
            return call.args[2].value
    return None


def _try_rederivation(stmt: cst.Try | cst.TryStar, ev: _Pass, found: dict[cst.Call, str]) -> None:
    looks_up = any(
        isinstance(n, (cst.Subscript, cst.Attribute)) and _is_lookup(n, ev)
        for s in statements(stmt.body)
        for e in expressions_of(s)
        for n in iter_exprs(e)
    )
    if not looks_up:
        return
    looked_up: set[str] = set()
    for s in statements(stmt.body):
        looked_up |= _bound_names(s)
        for e in expressions_of(s):
            looked_up |= _referenced(e)
    for handler in stmt.handlers:
        caught = _caught_names(handler.type)
        if handler.type is None or caught & _LOOKUP_ERRORS:
            for call in _rederiving_calls(statements(handler.body), looked_up, ev):
                found.setdefault(call, "in the handler of a failed lookup in resumed state")


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
            value = node.evaluated_value
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
