"""Tool calls that run before a pause of a graph node, in the same node.

A pause (a call of the vocabulary's ``interrupt-calls``: a framework model names
them, LangGraph's ``interrupt()``, say) stops a node for outside input; when the
graph resumes, the framework re-executes the paused node *from its start*: every
call before the pause runs again. A tool call there obtains its fact a second
time, from a world that has moved on: a re-derivation (reported by the rule of
the framework's room, SG203 for LangGraph).

A may-analysis over the structured statements of one function: the state at a
point is the set of tool calls that can have run on *some* path reaching it
since the function started. An interrupt reports every tool call in that set.
Branches join by union; ``return``/``raise`` end a path; a loop body is run
twice, so a tool call after an ``interrupt()`` in a loop precedes the next
iteration's ``interrupt()``; a handler or ``finally`` may be entered from any
point of its ``try``. Nested functions are their own scopes (a helper that
interrupts is an interrupt for its callers, through its summary).

A tool call is not reported when the result is cached where the re-execution
finds it: in the branch of a check that the cached value is missing
(``if cached is None``, ``if key not in store``), with the result written to a
cache other than the node's own input state (``store.put(...)``,
``cache[key] = ...``) before the interrupt.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import libcst as cst

from .evidence import Evidence
from .names import dotted, last_segment
from .syntax import Stmt, calls_in, expressions_of, is_none, iter_exprs, statements, walk_statements

__all__ = ["calls_pause", "tools_before_pause"]

_EMPTY: frozenset[cst.Call] = frozenset()
_CACHE_WRITES = frozenset({"put", "aput", "set", "aset", "setdefault", "update", "add", "save", "write", "mset"})


def calls_pause(ev: Evidence) -> bool:
    """Whether the function itself pauses its node (for its summary)."""
    return any(ev.is_interrupt(c) for stmt in walk_statements(ev.fn.body) for e in expressions_of(stmt)
               for c in calls_in(e))


def tools_before_pause(ev: Evidence) -> list[tuple[cst.Call, cst.Call]]:
    """(tool call, the first interrupt it precedes) for every tool call that can
    run before an ``interrupt()`` of the same function (call it only for a
    function that :func:`calls_pause`)."""
    if ev.fn.is_module:
        return []
    walker = _Walker(ev)
    walker.block(ev.fn.body, _EMPTY)
    return sorted(walker.found.items(), key=lambda item: _order(walker, item[0]))


def _order(walker: _Walker, call: cst.Call) -> int:
    return walker.seen.get(call, 0)


@dataclass
class _Out:
    fall: frozenset[cst.Call] | None
    breaks: list[frozenset[cst.Call]] = field(default_factory=list)
    continues: list[frozenset[cst.Call]] = field(default_factory=list)
    #: Every tool call that ran anywhere inside (for handlers and ``finally``).
    anywhere: set[cst.Call] = field(default_factory=set)

    def absorb(self, other: _Out) -> None:
        self.breaks.extend(other.breaks)
        self.continues.extend(other.continues)
        self.anywhere |= other.anywhere


def _union(states: Sequence[frozenset[cst.Call] | None]) -> frozenset[cst.Call] | None:
    present = [s for s in states if s is not None]
    if not present:
        return None
    return frozenset().union(*present)


class _Walker:
    def __init__(self, ev: Evidence) -> None:
        self.ev = ev
        self.found: dict[cst.Call, cst.Call] = {}
        self.seen: dict[cst.Call, int] = {}
        self.cached: set[cst.Call] = set()
        self.state_param = ev.fn.params[0] if ev.fn.params else None
        if self.state_param in ("self", "cls"):
            self.state_param = ev.fn.params[1] if len(ev.fn.params) > 1 else None

    # -- expressions ---------------------------------------------------------------------

    def expr(self, node: cst.CSTNode | None, pending: frozenset[cst.Call], out: _Out) -> frozenset[cst.Call]:
        if node is None:
            return pending
        current = set(pending)
        for call in calls_in(node):
            if self.ev.is_interrupt(call):
                for tool in current:
                    self.found.setdefault(tool, call)
            elif call not in self.cached and self.ev.known_tool(call):
                self.seen.setdefault(call, len(self.seen))
                current.add(call)
                out.anywhere.add(call)
        return frozenset(current)

    # -- statements ----------------------------------------------------------------------

    def block(self, stmts: Sequence[Stmt], pending: frozenset[cst.Call] | None) -> _Out:
        out = _Out(pending)
        for stmt in stmts:
            if out.fall is None:
                break
            step = self.stmt(stmt, out.fall)
            out.absorb(step)
            out.fall = step.fall
        return out

    def stmt(self, stmt: Stmt, pending: frozenset[cst.Call]) -> _Out:
        out = _Out(pending)
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            return out
        if isinstance(stmt, cst.If):
            return self._if(stmt, pending)
        if isinstance(stmt, (cst.For, cst.While)):
            return self._loop(stmt, pending)
        if isinstance(stmt, (cst.Try, cst.TryStar)):
            return self._try(stmt, pending)
        if isinstance(stmt, cst.With):
            for item in stmt.items:
                pending = self.expr(item.item, pending, out)
            body = self.block(statements(stmt.body), pending)
            body.anywhere |= out.anywhere
            return body
        if isinstance(stmt, cst.Match):
            pending = self.expr(stmt.subject, pending, out)
            falls: list[frozenset[cst.Call] | None] = [pending]
            for case in stmt.cases:
                result = self.block(statements(case.body), pending)
                out.absorb(result)
                falls.append(result.fall)
            out.fall = _union(falls)
            return out
        after = self.expr(stmt, pending, out)
        if isinstance(stmt, (cst.Return, cst.Raise)):
            out.fall = None
        elif isinstance(stmt, cst.Break):
            out.breaks.append(after)
            out.fall = None
        elif isinstance(stmt, cst.Continue):
            out.continues.append(after)
            out.fall = None
        else:
            out.fall = after
        return out

    def _if(self, stmt: cst.If, pending: frozenset[cst.Call]) -> _Out:
        out = _Out(None)
        falls: list[frozenset[cst.Call] | None] = []
        current: cst.If | None = stmt
        entry: frozenset[cst.Call] | None = pending
        while current is not None and entry is not None:
            entry = self.expr(current.test, entry, out)
            missing = _missing_side(current.test)
            body_stmts = statements(current.body)
            if missing is True:
                self._note_cache(body_stmts)
            body = self.block(body_stmts, entry)
            out.absorb(body)
            falls.append(body.fall)
            orelse = current.orelse
            if isinstance(orelse, cst.If):
                current = orelse
                continue
            if orelse is not None:
                else_stmts = statements(orelse.body)
                if missing is False:
                    self._note_cache(else_stmts)
                other = self.block(else_stmts, entry)
                out.absorb(other)
                entry = other.fall
            current = None
        falls.append(entry)
        out.fall = _union(falls)
        return out

    def _loop(self, stmt: cst.For | cst.While, pending: frozenset[cst.Call]) -> _Out:
        out = _Out(None)
        head = stmt.iter if isinstance(stmt, cst.For) else stmt.test
        entry = self.expr(head, pending, out)
        first = self.block(statements(stmt.body), entry)
        again = _union([entry, first.fall, *first.continues]) or entry
        second = self.block(statements(stmt.body), self.expr(head, again, out))
        out.absorb(first)
        out.absorb(second)
        infinite = isinstance(stmt, cst.While) and isinstance(stmt.test, cst.Name) and stmt.test.value == "True"
        after = _union([] if infinite else [again, second.fall, *second.continues])
        if stmt.orelse is not None and after is not None:
            other = self.block(statements(stmt.orelse.body), after)
            out.absorb(other)
            after = other.fall
        out.fall = _union([after, *first.breaks, *second.breaks])
        out.breaks, out.continues = [], []
        return out

    def _try(self, stmt: cst.Try | cst.TryStar, pending: frozenset[cst.Call]) -> _Out:
        out = _Out(None)
        body = self.block(statements(stmt.body), pending)
        out.absorb(body)
        fall = body.fall
        if stmt.orelse is not None and fall is not None:
            other = self.block(statements(stmt.orelse.body), fall)
            out.absorb(other)
            fall = other.fall
        raised_from = pending | frozenset(body.anywhere)
        falls = [fall]
        for handler in stmt.handlers:
            result = self.block(statements(handler.body), raised_from)
            out.absorb(result)
            falls.append(result.fall)
        fall = _union(falls)
        if stmt.finalbody is not None:
            final = self.block(statements(stmt.finalbody.body), raised_from | frozenset(out.anywhere) | (fall or _EMPTY))
            out.absorb(final)
            fall = final.fall if fall is not None else None
        out.fall = fall
        return out

    # -- caching -------------------------------------------------------------------------

    def _note_cache(self, block: Sequence[Stmt]) -> None:
        """Tool calls of a "the cached value is missing" branch whose result the branch
        writes to a cache that outlives the node's re-execution."""
        tools: dict[str, cst.Call] = {}
        for stmt in walk_statements(block):
            if isinstance(stmt, cst.Assign) and isinstance(stmt.value, (cst.Call, cst.Await)):
                call = stmt.value.expression if isinstance(stmt.value, cst.Await) else stmt.value
                if isinstance(call, cst.Call):
                    for target in stmt.targets:
                        if isinstance(target.target, cst.Name):
                            tools[target.target.value] = call
        if not tools:
            return
        for stmt in walk_statements(block):
            for written in self._cache_writes(stmt):
                call = tools.get(written)
                if call is not None:
                    self.cached.add(call)

    def _cache_writes(self, stmt: Stmt) -> list[str]:
        """Names whose value ``stmt`` stores into a container other than the node's state."""
        names: list[str] = []
        if isinstance(stmt, cst.Assign):
            for target in stmt.targets:
                if isinstance(target.target, (cst.Subscript, cst.Attribute)) and not self._is_state(target.target):
                    names.extend(_names(stmt.value))
        for expr in expressions_of(stmt):
            for call in calls_in(expr):
                func = call.func
                if isinstance(func, cst.Attribute) and func.attr.value in _CACHE_WRITES and not self._is_state(func):
                    for arg in call.args:
                        names.extend(_names(arg.value))
        return names

    def _is_state(self, node: cst.Attribute | cst.Subscript) -> bool:
        root = dotted(node.value) or ""
        return bool(self.state_param) and root.partition(".")[0] == self.state_param


def _names(node: cst.CSTNode) -> list[str]:
    return [n.value for n in iter_exprs(node) if isinstance(n, cst.Name)]


def _missing_side(test: cst.BaseExpression) -> bool | None:
    """True: the checked value is missing when ``test`` is true; False: when false."""
    if isinstance(test, cst.Await):
        return _missing_side(test.expression)
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _missing_side(test.expression)
        return None if inner is None else not inner
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        op = test.comparisons[0].operator
        right = test.comparisons[0].comparator
        if isinstance(op, (cst.In, cst.NotIn)):
            return isinstance(op, cst.NotIn)
        if isinstance(op, (cst.Is, cst.IsNot, cst.Equal, cst.NotEqual)) and (is_none(right) or is_none(test.left)):
            return isinstance(op, (cst.Is, cst.Equal))
        return None
    if isinstance(test, (cst.Name, cst.Attribute, cst.Subscript)):
        return False
    if isinstance(test, cst.Call) and last_segment(dotted(test.func)) in ("get", "aget", "exists", "has"):
        return False
    return None
