"""Qualified names from imports, without libcst's scope metadata.

The analyzer needs "what does this dotted expression refer to" for calls,
decorators and exception types. A module's import statements answer that for
every name that matters (``from summaryguard.guard import check_resume as cr``
makes ``cr(...)`` a call of ``summaryguard.guard.check_resume``), at a fraction
of the cost of ``QualifiedNameProvider`` (which needs the scope analysis of the
whole file). Names bound by assignment are not followed: that is the job of
the per-function data flow in :mod:`.flow`.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

import libcst as cst

from .cpython_tree import statements_below
from .module_paths import module_location, module_name_for, package_root
from .prefilter import DISPATCH_CALLS

__all__ = [
    "ImportTable",
    "dotted",
    "dotted_cpython",
    "dispatches_parameters",
    "imported_modules",
    "last_segment",
    "module_location",
    "module_name_for",
    "package_root",
    "returns_imported_instances",
    "shown",
]


def dotted(expr: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a Name/Attribute chain; calls and subscripts in the chain
    become ``()`` / ``[]`` so ``get().x`` reads ``().x`` (never a known name)."""
    parts: list[str] = []
    node: cst.BaseExpression = expr
    # type tests, not isinstance: libcst's node classes go through ABCMeta, and this
    # runs for nearly every call and attribute the engine looks at
    while True:
        kind = type(node)
        if kind is cst.Name:
            parts.append(node.value)  # type: ignore[attr-defined]
            break
        if kind is cst.Attribute:
            parts.append(node.attr.value)  # type: ignore[attr-defined]
            node = node.value  # type: ignore[attr-defined]
        elif kind is cst.Call:
            parts.append("()")
            node = node.func  # type: ignore[attr-defined]
        elif kind is cst.Subscript:
            parts.append("[]")
            node = node.value  # type: ignore[attr-defined]
        else:
            return None if not parts else ".".join(reversed(parts))
    return ".".join(reversed(parts))


#: Constants in CPython's tree that are names in libcst's (``None``, ``True``, ``False``).
_NAMED_CONSTANTS = (None, True, False)


def dotted_cpython(expr: ast.expr) -> str | None:
    """:func:`dotted` of CPython's node of the same expression (the project's index of a
    context module is read from CPython's tree, see :meth:`.project.Project.add_outline`)."""
    parts: list[str] = []
    node = expr
    while True:
        kind = type(node)
        if kind is ast.Name:
            parts.append(node.id)  # type: ignore[attr-defined]
            break
        if kind is ast.Constant and any(node.value is c for c in _NAMED_CONSTANTS):  # type: ignore[attr-defined]
            parts.append(repr(node.value))  # type: ignore[attr-defined]
            break  # libcst's Name("None"); identity, since 1 == True
        if kind is ast.Attribute:
            parts.append(node.attr)  # type: ignore[attr-defined]
            node = node.value  # type: ignore[attr-defined]
        elif kind is ast.Call:
            parts.append("()")
            node = node.func  # type: ignore[attr-defined]
        elif kind is ast.Subscript:
            parts.append("[]")
            node = node.value  # type: ignore[attr-defined]
        else:
            return None if not parts else ".".join(reversed(parts))
    return ".".join(reversed(parts))


def _as_name(alias: cst.ImportAlias) -> str | None:
    return alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) else None


def shown(name: str) -> str:
    """A :func:`dotted` name as a person reads it: ``get().x`` rather than ``get.().x``."""
    return name.replace(".()", "(...)").replace(".[]", "[...]")


def call_label(node: object) -> str:
    """How a message names a call: ``agent.resume()``, or "this call"."""
    name = dotted(node.func) if isinstance(node, cst.Call) else None
    return f"`{name or 'this call'}()`"


def record_label(node: object) -> str:
    """How a message names a record under construction: ``Record(...)``, or "this summary record"."""
    name = last_segment(dotted(node.func)) if isinstance(node, cst.Call) else ""
    return f"`{name}(...)`" if name else "this summary record"


def last_segment(name: str | None) -> str:
    return "" if not name else name.rpartition(".")[2]


def imported_modules(tree: ast.Module) -> tuple[str, ...]:
    """Every module an import statement of ``tree`` may load, as written:
    ``import a.b`` gives ``a.b``; ``from a import b`` gives ``a`` and ``a.b``
    (``b`` may be a submodule); relative imports keep their leading dots
    (``from . import x`` gives ``.`` and ``.x``). Sorted, each once."""
    found: set[str] = set()
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            dots = "." * node.level
            base = f"{dots}{node.module or ''}"
            found.add(base)
            joiner = "" if base.endswith(".") else "."
            found.update(f"{base}{joiner}{alias.name}" for alias in node.names if alias.name != "*")
        else:  # a statement, an ``except`` clause or a ``case`` block
            stack.extend(statements_below(node))
    return tuple(sorted(found))


def returns_imported_instances(tree: ast.Module) -> bool:
    """Whether some function of ``tree`` returns the call of a name a ``from`` import binds
    (``from .providers import HostedClient`` ... ``return HostedClient(config)``): a factory
    whose returns are instances of another module's classes. What the value is decides
    what its methods run in the importer (see :mod:`.classes`), whatever the names are."""
    imported: set[str] = set()
    returned: set[str] = set()
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.ImportFrom):
            imported.update(alias.asname or alias.name for alias in node.names if alias.name != "*")
        elif isinstance(node, ast.Return):
            value = node.value
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
                returned.add(value.func.id)
        else:  # a statement, an ``except`` clause or a ``case`` block
            stack.extend(statements_below(node))
    return not returned.isdisjoint(imported)


def dispatches_parameters(tree: ast.Module) -> bool:
    """Whether some function of ``tree`` hands one of its parameters, or a closure of its
    own, to a task, thread or executor (:data:`DISPATCH_CALLS`): a fire-and-forget helper,
    whose callers dispatch what they give it, whatever it is called."""
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        params = {a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)}
        params |= {s.name for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
        for call in ast.walk(node):
            if not isinstance(call, ast.Call):
                continue
            func = call.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name not in DISPATCH_CALLS:
                continue
            for arg in (*call.args, *(k.value for k in call.keywords)):
                run = arg.func if isinstance(arg, ast.Call) else arg
                if isinstance(run, ast.Name) and run.id in params:
                    return True
    return False


class ImportTable:
    """Local name -> qualified name, from every import in one module."""

    def __init__(self, module_name: str, is_package: bool) -> None:
        self.module_name = module_name
        self._package = module_name if is_package else module_name.rpartition(".")[0]
        self.aliases: dict[str, str] = {}

    def add(self, node: cst.Import | cst.ImportFrom) -> None:
        if isinstance(node, cst.Import):
            self.add_import(tuple((dotted(a.name) or "", _as_name(a)) for a in node.names))
        elif not isinstance(node.names, cst.ImportStar):
            module = dotted(node.module) or "" if node.module is not None else None
            self.add_from(module, len(node.relative), tuple((dotted(a.name) or "", _as_name(a)) for a in node.names))

    def add_import(self, names: Sequence[tuple[str, str | None]]) -> None:
        """``import name [as asname], ...``, as ``(name, asname)`` pairs."""
        for full, asname in names:
            if asname is not None:
                self.aliases[asname] = full
            else:
                head = full.partition(".")[0]
                self.aliases[head] = head

    def add_from(self, module: str | None, level: int, names: Sequence[tuple[str, str | None]]) -> None:
        """``from [.]*module import name [as asname], ...`` (``*``: nothing is bound by name)."""
        base = self._base(module or "", level)
        for name, asname in names:
            if name == "*":
                return
            self.aliases[asname or name] = f"{base}.{name}" if base else name

    def _base(self, module: str, level: int) -> str:
        """The module a ``from`` import of ``module`` at relative ``level`` names."""
        if not level:
            return module or ""
        package = self._package.split(".") if self._package else []
        if level > 1:
            package = package[: len(package) - (level - 1)] if level - 1 <= len(package) else []
        return ".".join([*package, module] if module else package)

    def qualify(self, expr: cst.BaseExpression) -> str | None:
        """The qualified name of ``expr`` with its first segment resolved."""
        name = dotted(expr)
        return None if name is None else self.qualify_name(name)

    def qualify_name(self, name: str) -> str:
        """:meth:`qualify` for a dotted string."""
        head, dot, rest = name.partition(".")
        target = self.aliases.get(head)
        return name if target is None else f"{target}{dot}{rest}"

    def imports_any(self, prefixes: tuple[str, ...]) -> bool:
        return any(q == p or q.startswith(p + ".") for q in self.aliases.values() for p in prefixes)

