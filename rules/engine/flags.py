"""Flags and problem lists: checks whose failing branch records, and a later guard acts.

::

    problems = []                                   ok = True
    if summary.generation != recorded:              if summary.partial:
        problems.append("generation")                   ok = False
    if problems:                                    if not ok:
        raise SummaryReconciliationError(...)           raise SummaryReconciliationError(...)

The flow analysis (:mod:`.flow`) carries, for each such name, the
:class:`~.conditions.Facts` its truthiness proves *on this path*: after
``ok = False`` everything holds "if ``ok`` is truthy" (it is not), on the
other path the check passed; joined, ``ok`` truthy proves that check's kind.
A later ``if not ok: raise`` then establishes it like any fail-closed check,
and a flag that nothing acts on before the resume stays a soft check (SG104).

This module holds the syntax side: which names can be followed (bound only by
plain assignments, never cleared), what a statement does to them, and which
way a loop body moves them (a loop's body is entered with what held before the
loop, so what a later iteration may have changed is forgotten there).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import libcst as cst

from .syntax import Stmt, bool_literal, is_none, statements, walk_nodes, walk_statements

__all__ = [
    "FALSY", "GROWS", "TRUTHY", "VALUE", "candidates", "directions", "effects", "error_slots", "scope_nodes", "touched",
]

#: The name is now truthy (``= True``, ``.append(x)``, ``[k] = v``).
TRUTHY = "truthy"
#: The name is now falsy (``= False``, ``= []``, ``= None``).
FALSY = "falsy"
#: Truthy now, or unchanged (``.extend(xs)``, ``.update(m)``).
GROWS = "grows"
#: Bound to another value: its truthiness is what that expression's facts say.
VALUE = "value"

_ADDS = frozenset({"append", "add", "insert", "appendleft", "setdefault"})
_EXTENDS = frozenset({"extend", "update", "extendleft"})
_SHRINKS = frozenset({"clear", "pop", "popitem", "popleft", "remove", "discard", "difference_update",
                      "intersection_update", "symmetric_difference_update"})
_CONTAINER_CALLS = frozenset({"list", "set", "dict", "deque", "defaultdict", "OrderedDict"})
_DISPLAYS = (cst.List, cst.Set, cst.Dict, cst.Tuple)
_CONTAINERS = (cst.List, cst.Set, cst.Dict, cst.ListComp, cst.SetComp, cst.DictComp)

Effect = tuple[str, str, "cst.BaseExpression | None"]


def _truthiness(value: cst.BaseExpression) -> str:
    literal = bool_literal(value)
    if literal is not None:
        return TRUTHY if literal else FALSY
    if isinstance(value, _DISPLAYS):
        elements = value.elements
        if not elements:
            return FALSY
        if not any(isinstance(e, (cst.StarredElement, cst.StarredDictElement)) for e in elements):
            return TRUTHY
    if isinstance(value, cst.Call) and not value.args and _callee(value) in _CONTAINER_CALLS:
        return FALSY
    return VALUE


def _appends(stmt: cst.AugAssign) -> bool:
    """``x += [item, ...]``: a list that had items added."""
    value = stmt.value
    return isinstance(stmt.operator, cst.AddAssign) and isinstance(value, (cst.List, cst.Tuple)) and (
        _truthiness(value) == TRUTHY
    )


def _callee(call: cst.Call) -> str:
    func = call.func
    return func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else ""


def _receiver(node: cst.BaseExpression) -> str | None:
    """``F`` of ``F[k]`` / ``F.attr``, when ``F`` is a plain name."""
    inner = node.value if isinstance(node, (cst.Subscript, cst.Attribute)) else None
    return inner.value if isinstance(inner, cst.Name) else None


def effects(stmt: Stmt) -> list[Effect]:
    """What a small statement does to the truthiness of plain names: ``(name, kind, value)``."""
    found: list[Effect] = []
    kind = type(stmt)  # type tests: libcst's isinstance goes through ABCMeta (every statement of a flow)
    if kind is cst.Assign:
        for target in stmt.targets:
            found.extend(_bound(target.target, stmt.value))
    elif kind is cst.AnnAssign and stmt.value is not None:
        found.extend(_bound(stmt.target, stmt.value))
    elif kind is cst.AugAssign:
        target = stmt.target
        if isinstance(target, cst.Name):
            found.append((target.value, TRUTHY if _appends(stmt) else VALUE, None))
        elif isinstance(target, cst.Subscript) and _receiver(target) is not None:
            found.append((_receiver(target), TRUTHY, None))  # type: ignore[arg-type]
    elif kind is cst.Expr and type(stmt.value) is cst.Call:
        func = stmt.value.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            if func.attr.value in _ADDS:
                found.append((func.value.value, TRUTHY, None))
            elif func.attr.value in _EXTENDS:
                found.append((func.value.value, GROWS, None))
    return found


def _bound(target: cst.BaseExpression, value: cst.BaseExpression) -> Iterator[Effect]:
    if isinstance(target, cst.Name):
        yield target.value, _truthiness(value), value
    elif isinstance(target, cst.Subscript) and _receiver(target) is not None:
        yield _receiver(target), TRUTHY, None  # type: ignore[misc]


def touched(stmts: Sequence[Stmt]) -> set[str]:
    """Names whose truthiness some statement in ``stmts`` (at any depth) may change."""
    return {name for stmt in walk_statements(stmts) for name, _, _ in effects(stmt)}


def directions(stmts: Sequence[Stmt]) -> dict[str, str]:
    """For each name a loop body changes: ``TRUTHY`` (it only ever becomes truthy),
    ``FALSY`` (only falsy) or ``VALUE`` (either)."""
    seen: dict[str, str] = {}
    for stmt in walk_statements(stmts):
        for name, kind, _ in effects(stmt):
            way = TRUTHY if kind in (TRUTHY, GROWS) else kind
            seen[name] = way if seen.get(name, way) == way else VALUE
    return seen


def candidates(body: Sequence[Stmt], nodes: Sequence[cst.CSTNode] | None = None) -> frozenset[str]:
    """Names bound only by plain assignments (``x = ...``), in this function and the
    scopes nested in it, and never shrunk; a name whose items are added to must be
    bound only to containers (lists, sets, dicts). ``nodes``: :func:`scope_nodes` of
    ``body``, where the caller has them (one walk for this and :func:`error_slots`)."""
    bad: set[str] = set()
    values: dict[str, list[cst.BaseExpression]] = {}
    grown: set[str] = set()
    direct: set[int] = set()
    for node in scope_nodes(body) if nodes is None else nodes:
        kind = type(node)  # type tests, not isinstance: libcst's ABCMeta makes those slow here
        if kind is cst.Expr and type(node.value) is cst.Call:
            direct.add(id(node.value))
        elif kind is cst.Assign or kind is cst.AnnAssign:
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            for target in targets:
                if isinstance(target, cst.Name):
                    if node.value is not None:
                        values.setdefault(target.value, []).append(node.value)
                elif isinstance(target, cst.Subscript):
                    _grow(target, grown)
                elif not isinstance(target, cst.Attribute):
                    bad.update(_names(target))
        elif kind is cst.AugAssign:
            if isinstance(node.target, cst.Name):
                if _appends(node):
                    grown.add(node.target.value)
                else:
                    bad.add(node.target.value)
            elif isinstance(node.target, cst.Subscript):
                _grow(node.target, grown)
        elif kind is cst.Call:
            func = node.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
                method, name = func.attr.value, func.value.value
                if method in _SHRINKS or (method in _ADDS | _EXTENDS and id(node) not in direct):
                    bad.add(name)
                elif method in _ADDS | _EXTENDS:
                    grown.add(name)
        elif kind is cst.Del:
            for target in _del_targets(node.target):
                bad.update(_names(target) if not isinstance(target, cst.Subscript) else [_receiver(target) or ""])
        else:
            binder = _BINDERS.get(kind)
            if binder is not None:
                bad.update(binder(node))
    names = set(values) | grown
    for name in grown:
        if not all(_container(v) for v in values.get(name, ())):
            bad.add(name)
    return frozenset(names - bad)


def error_slots(body: Sequence[Stmt], nodes: Sequence[cst.CSTNode] | None = None) -> frozenset[str]:
    """Names that only ever hold ``None`` or the error caught by the ``except ... as``
    around the assignment (``error = None`` / ``except E as exc: error = exc``).
    Such a name is None exactly when it is falsy, so ``if error is not None`` and
    ``if error`` say the same. Intersect with :func:`candidates` (plain assignments only).
    ``nodes``: as for :func:`candidates`."""
    caught: set[int] = set()
    if nodes is None:
        nodes = scope_nodes(body)
    handlers = (cst.ExceptHandler, cst.ExceptStarHandler)
    assignments = (cst.Assign, cst.AnnAssign)
    for node in nodes:
        if type(node) not in handlers or node.name is None:
            continue
        if not isinstance(node.name.name, cst.Name):
            continue
        bound = node.name.name.value
        for stmt in walk_statements(statements(node.body)):
            if type(stmt) in assignments and isinstance(stmt.value, cst.Name):
                if stmt.value.value == bound:
                    caught.add(id(stmt))
    slots: set[str] = set()
    bad: set[str] = set()
    for node in nodes:
        if type(node) not in assignments or node.value is None:
            continue
        targets = [t.target for t in node.targets] if type(node) is cst.Assign else [node.target]
        for target in targets:
            if isinstance(target, cst.Name):
                (slots if is_none(node.value) or id(node) in caught else bad).add(target.value)
    return frozenset(slots - bad)


def _grow(target: cst.Subscript, grown: set[str]) -> None:
    name = _receiver(target)
    if name is not None:
        grown.add(name)


def _container(value: cst.BaseExpression) -> bool:
    return isinstance(value, _CONTAINERS) or (isinstance(value, cst.Call) and _callee(value) in _CONTAINER_CALLS)


def _del_targets(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return [e.value for e in target.elements]
    return [target]


def _names(target: cst.CSTNode) -> Iterator[str]:
    """Plain names bound by an unpacking or other complex target."""
    stack = [target]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name):
            yield node.value
        elif isinstance(node, (cst.Tuple, cst.List)):
            stack.extend(e.value for e in node.elements)
        elif isinstance(node, cst.StarredElement):
            stack.append(node.value)


def _import_alias(node: cst.ImportAlias) -> Iterable[str]:
    if node.asname is not None:
        return _names(node.asname.name)
    name = node.name
    while isinstance(name, cst.Attribute):
        name = name.value  # type: ignore[assignment]
    return [name.value] if isinstance(name, cst.Name) else []


#: How each kind of node binds names other than by plain assignment (looked up by type:
#: this runs on every node of every function, and libcst's isinstance goes through ABCMeta).
_BINDERS: dict[type, Callable[[Any], Iterable[str]]] = {
    cst.For: lambda n: _names(n.target),
    cst.CompFor: lambda n: _names(n.target),
    cst.WithItem: lambda n: _names(n.asname.name) if n.asname is not None else (),
    cst.ExceptHandler: lambda n: _names(n.name.name) if n.name is not None else (),
    cst.ExceptStarHandler: lambda n: _names(n.name.name) if n.name is not None else (),
    cst.NamedExpr: lambda n: _names(n.target),
    cst.Global: lambda n: [a.name.value for a in n.names],
    cst.Nonlocal: lambda n: [a.name.value for a in n.names],
    cst.FunctionDef: lambda n: [n.name.value],
    cst.ClassDef: lambda n: [n.name.value],
    cst.ImportAlias: _import_alias,
    cst.MatchAs: lambda n: [n.name.value] if n.name is not None else [],
    cst.MatchStar: lambda n: [n.name.value] if n.name is not None else [],
    cst.MatchMapping: lambda n: [n.rest.value] if n.rest is not None else [],
}


def scope_nodes(body: Sequence[Stmt]) -> list[cst.CSTNode]:
    """Every node below ``body``, depth first in source order, nested scopes included
    (a closure may rebind or clear a name)."""
    found: list[cst.CSTNode] = []
    for stmt in body:
        found.extend(walk_nodes(stmt))
    return found
