"""Project classes: where a class is defined, its bases, and which method a call on an instance runs.

Call resolution (:mod:`.project`) answers "which function does ``self.m()`` or
``mod.f()`` name". Polymorphic code needs one more answer: a value built by a
factory (``Client.create(kind)`` returning ``OpenAIClient(...)`` or
``AnthropicClient(...)``) runs, on ``value.send(...)``, the method its *class*
has, found in the class or its bases; and inside that method ``self.m()`` runs
the override of that class, not the base's abstract method. This module
indexes classes by qualified name and looks methods up in method-resolution
order (left to right, depth first: C3 differs only on diamonds, which do not
change whether some override calls a model).

Only classes reached through names the module sees (its own classes and the
ones it imports, re-exports followed) are found, exactly as function
resolution does, so a file's facts never depend on which other files are in
the run (SPEC §3.1.1, locality).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from .names import dotted, last_segment
from .project import FunctionInfo, ModuleInfo, Project
from .syntax import statements, walk_statements

__all__ = ["ClassIndex", "ProjectClass"]

#: Bases followed from a class (a deeper hierarchy is cut, never crashed on).
_MAX_BASES = 8


@dataclass(frozen=True, eq=False)
class ProjectClass:
    """A class defined at the top level of a project module."""

    module: ModuleInfo
    node: cst.ClassDef

    @property
    def name(self) -> str:
        return self.node.name.value

    @property
    def qualname(self) -> str:
        return f"{self.module.name}.{self.name}"

    def __hash__(self) -> int:
        return hash((id(self.module), self.name))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ProjectClass) and other.module is self.module and other.name == self.name

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"<ProjectClass {self.qualname}>"


class ClassIndex:
    """The classes of one run's project, built lazily (one scan per module asked about)."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self._defined: dict[int, dict[str, ProjectClass]] = {}
        self._by_last: dict[str, list[ModuleInfo]] | None = None
        self._methods: dict[tuple[ProjectClass, str], FunctionInfo | None] = {}

    def defined(self, module: ModuleInfo) -> dict[str, ProjectClass]:
        """The top-level classes of ``module`` (also inside ``if``/``try`` blocks), by name."""
        found = self._defined.get(id(module))
        if found is None:
            found = {
                stmt.name.value: ProjectClass(module, stmt)
                for stmt in walk_statements(statements(module.tree))
                if isinstance(stmt, cst.ClassDef)
            }
            self._defined[id(module)] = found
        return found

    def find(self, qualified: str, depth: int = 0) -> ProjectClass | None:
        """The project class a qualified name (``pkg.mod.Cls``) denotes, following a
        re-export (``from .impl import Cls`` in ``pkg/__init__.py``) a few hops."""
        owner, _, name = qualified.rpartition(".")
        if not owner or depth > 3:
            return None
        if self._by_last is None:
            self._by_last = {}
            for module in self.project.modules:
                self._by_last.setdefault(last_segment(module.name), []).append(module)
                location = last_segment(module.location)
                if location != last_segment(module.name):
                    self._by_last.setdefault(location, []).append(module)
        for module in self._by_last.get(last_segment(owner), ()):
            if not module.known_as(owner):
                continue
            cls = self.defined(module).get(name)
            if cls is not None:
                return cls
            target = module.imports.aliases.get(name)
            if target and target != qualified:
                found = self.find(target, depth + 1)
                if found is not None:
                    return found
        return None

    def referenced(self, expr: cst.BaseExpression, module: ModuleInfo) -> ProjectClass | None:
        """The project class ``expr`` names in ``module``: one of its own classes, or an imported one."""
        name = dotted(expr)
        if not name or "()" in name or "[]" in name:
            return None
        if name.partition(".")[0] not in module.imports.aliases:
            return self.defined(module).get(name) if isinstance(expr, cst.Name) else None
        return self.find(module.imports.qualify_name(name))

    def bases(self, cls: ProjectClass) -> list[ProjectClass]:
        """The project classes ``cls`` derives from directly, in order (outside bases are skipped)."""
        found = []
        for base in cls.node.bases:
            if base.keyword is None:
                resolved = self.referenced(base.value, cls.module)
                if resolved is not None and resolved != cls:
                    found.append(resolved)
        return found

    def method(self, cls: ProjectClass, name: str) -> FunctionInfo | None:
        """The method ``name`` an instance of ``cls`` runs: its own, else its bases' (MRO order)."""
        key = (cls, name)
        if key in self._methods:
            return self._methods[key]
        self._methods[key] = None  # cycles
        found = None
        seen: set[ProjectClass] = set()
        pending = [cls]
        while pending and found is None and len(seen) < _MAX_BASES:
            current = pending.pop(0)
            if current in seen:
                continue
            seen.add(current)
            found = current.module.classes.get(current.name, {}).get(name)
            pending[:0] = self.bases(current)
        self._methods[key] = found
        return found

    def owner(self, fn: FunctionInfo) -> ProjectClass | None:
        """The class a method is defined in (None for a plain function)."""
        if fn.class_name is None or fn.parent is not None:
            return None
        return self.defined(fn.module).get(fn.class_name)
