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

import libcst as cst

__all__ = ["ImportTable", "dotted", "last_segment", "module_name_for", "shown"]


def dotted(expr: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a Name/Attribute chain; calls and subscripts in the chain
    become ``()`` / ``[]`` so ``get().x`` reads ``().x`` (never a known name)."""
    parts: list[str] = []
    node: cst.BaseExpression = expr
    while True:
        if isinstance(node, cst.Name):
            parts.append(node.value)
            break
        if isinstance(node, cst.Attribute):
            parts.append(node.attr.value)
            node = node.value
            continue
        if isinstance(node, cst.Call):
            parts.append("()")
            node = node.func
            continue
        if isinstance(node, cst.Subscript):
            parts.append("[]")
            node = node.value
            continue
        return None if not parts else ".".join(reversed(parts))
    return ".".join(reversed(parts))


def shown(name: str) -> str:
    """A :func:`dotted` name as a person reads it: ``get().x`` rather than ``get.().x``."""
    return name.replace(".()", "(...)").replace(".[]", "[...]")


def last_segment(name: str | None) -> str:
    return "" if not name else name.rpartition(".")[2]


def module_name_for(path: str) -> tuple[str, bool]:
    """Dotted module name from a display path, and whether it is a package
    (``__init__.py``). ``src/app/loop.py`` -> ``src.app.loop``; resolution
    matches on name suffixes, so a leading ``src`` does no harm."""
    clean = path.replace("\\", "/")
    while clean.startswith("./"):
        clean = clean[2:]
    if clean.endswith(".py"):
        clean = clean[:-3]
    elif clean.endswith(".pyi"):
        clean = clean[:-4]
    parts = [p for p in clean.split("/") if p and p not in (".", "..")]
    is_package = bool(parts) and parts[-1] == "__init__"
    if is_package:
        parts.pop()
    return ".".join(parts) or "__main__", is_package


class ImportTable:
    """Local name -> qualified name, from every import in one module."""

    def __init__(self, module_name: str, is_package: bool) -> None:
        self.module_name = module_name
        self._package = module_name if is_package else module_name.rpartition(".")[0]
        self.aliases: dict[str, str] = {}

    def add(self, node: cst.Import | cst.ImportFrom) -> None:
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = dotted(alias.name) or ""
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    self.aliases[alias.asname.name.value] = full
                else:
                    head = full.partition(".")[0]
                    self.aliases[head] = head
            return
        base = self._from_base(node)
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            name = dotted(alias.name) or ""
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.aliases[local] = f"{base}.{name}" if base else name

    def _from_base(self, node: cst.ImportFrom) -> str:
        module = dotted(node.module) if node.module is not None else ""
        level = len(node.relative)
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

