"""SG201's structural half: where a looked-up reference is missing, is a tool called?

A reference looked up in resumed state is "missing" on one side of:
``if ref not in state`` / ``if x is None`` / ``if not x`` (and their ternary
forms), ``state.get(k) or ...``, ``state.get(k, <default>)``,
``state.setdefault(k, <default>)``, ``getattr(state, k, <default>)``, and an
``except KeyError`` around ``state[k]``. A tool call on that side obtains the
fact again: a new fact with new provenance passed off as the old one.

Both halves need evidence: the container must be resumed state (data flow
from a resume, a checkpoint load or a summary; or a resumed-state name), and
the callee must be a tool (decorator, vocabulary, a project function that
calls tools, or a tool name nothing contradicts).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import libcst as cst

from .evidence import Evidence
from .names import dotted, last_segment
from .syntax import Stmt, calls_in, expressions_of, is_none, iter_exprs, statements, walk_statements

__all__ = ["rederivations"]

_LOOKUP_ERRORS = frozenset({"KeyError", "LookupError", "IndexError", "AttributeError", "Exception", "BaseException"})
_DEFAULTING = frozenset({"get", "setdefault", "pop"})


def rederivations(ev: Evidence) -> list[tuple[cst.Call, str]]:
    """Tool calls that re-derive a missing reference, with a description of why."""
    found: dict[cst.Call, str] = {}
    body = ev.fn.body
    for stmt in walk_statements(body):
        if isinstance(stmt, cst.If):
            side = _missing_side(stmt.test, ev)
            if side is not None:
                branch = stmt.body if side else stmt.orelse
                if isinstance(branch, cst.Else):
                    branch = branch.body
                block = [branch] if isinstance(branch, cst.If) else statements(branch)
                for call in _tool_calls_in_block(block, ev):
                    found.setdefault(call, "when the reference is missing from resumed state")
        elif isinstance(stmt, (cst.Try, cst.TryStar)):
            _try_rederivation(stmt, ev, found)
        for expr in expressions_of(stmt):
            _expression_rederivations(expr, ev, found)
    return list(found.items())


def _missing_side(test: cst.BaseExpression, ev: Evidence) -> bool | None:
    """True: the reference is missing when ``test`` is true; False: when false."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _missing_side(test.expression, ev)
        if inner is not None:
            return not inner
        return True if _is_lookup(test.expression, ev) else None
    if isinstance(test, cst.BooleanOperation):
        left = _missing_side(test.left, ev)
        return left if left is not None else _missing_side(test.right, ev)
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        op = test.comparisons[0].operator
        right = test.comparisons[0].comparator
        if isinstance(op, (cst.In, cst.NotIn)) and ev.resumed_state(right):
            return isinstance(op, cst.NotIn)
        if isinstance(op, (cst.Is, cst.IsNot, cst.Equal, cst.NotEqual)):
            for side, other in ((test.left, right), (right, test.left)):
                if is_none(other) and _is_lookup(side, ev):
                    return isinstance(op, (cst.Is, cst.Equal))
        return None
    if _is_lookup(test, ev):
        return False
    return None


def _is_lookup(expr: cst.BaseExpression, ev: Evidence, seen: frozenset[str] = frozenset()) -> bool:
    """A value looked up in resumed state (or a name bound to one; ``x = x.next``
    cycles are cut by ``seen``)."""
    if isinstance(expr, cst.Name):
        if expr.value in seen:
            return False
        inner = seen | {expr.value}
        return any(_is_lookup(v, ev, inner) for v in ev.assigned.get(expr.value, ())) or (
            expr.value in ev.resumed and bool(ev.assigned.get(expr.value))
        )
    if isinstance(expr, cst.Subscript):
        return ev.resumed_state(expr.value)
    if isinstance(expr, cst.Attribute):
        return ev.resumed_state(expr.value)
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Attribute) and func.attr.value in _DEFAULTING:
            return ev.resumed_state(func.value)
        if isinstance(func, cst.Name) and func.value == "getattr" and expr.args:
            return ev.resumed_state(expr.args[0].value)
    return False


def _expression_rederivations(expr: cst.CSTNode, ev: Evidence, found: dict[cst.Call, str]) -> None:
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


def _default_argument(call: cst.Call, ev: Evidence) -> cst.BaseExpression | None:
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in _DEFAULTING and len(call.args) >= 2:
        if ev.resumed_state(func.value):
            return call.args[1].value
    if isinstance(func, cst.Name) and func.value == "getattr" and len(call.args) >= 3:
        if ev.resumed_state(call.args[0].value):
            return call.args[2].value
    return None


def _try_rederivation(stmt: cst.Try | cst.TryStar, ev: Evidence, found: dict[cst.Call, str]) -> None:
    looks_up = any(
        isinstance(n, (cst.Subscript, cst.Attribute)) and _is_lookup(n, ev)
        for s in statements(stmt.body)
        for e in expressions_of(s)
        for n in iter_exprs(e)
    )
    if not looks_up:
        return
    for handler in stmt.handlers:
        caught = _caught_names(handler.type)
        if handler.type is None or caught & _LOOKUP_ERRORS:
            for call in _tool_calls_in_block(statements(handler.body), ev):
                found.setdefault(call, "in the handler of a failed lookup in resumed state")


def _caught_names(expr: cst.BaseExpression | None) -> set[str]:
    if expr is None:
        return set()
    elements = [e.value for e in expr.elements] if isinstance(expr, cst.Tuple) else [expr]
    return {last_segment(dotted(e)) for e in elements}


def _tool_calls(node: cst.CSTNode, ev: Evidence) -> Iterator[cst.Call]:
    for call in calls_in(node):
        if ev.is_tool_call(call):
            yield call


def _tool_calls_in_block(block: Sequence[Stmt], ev: Evidence) -> Iterator[cst.Call]:
    for stmt in walk_statements(block):
        for expr in expressions_of(stmt):
            yield from _tool_calls(expr, ev)
