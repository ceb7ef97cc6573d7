"""Which graph values summarize: the value a resume continues, followed to where it is built.

A framework's resume (``graph.invoke(None, config)``, ``agent.invoke(Command(resume=...))``)
continues from a summary only when the graph built into *that value* has a
summarization node or middleware (SPEC §3.1.1): never because the module imports
a package that also exports one. This module follows the receiver of a resume
back through bindings (locals, enclosing functions, the module's top level,
``self.x`` set in the class, names imported from project modules, and the return
values of project functions) to the call that builds it, and reads the framework
models (:mod:`summaryguard.plugins.framework`) to know what building means:

* a factory (``create_agent(model, tools, middleware=[SummarizationMiddleware(...)])``)
  summarizes when one of its arguments is a summarizer;
* a builder (``StateGraph(State)``) summarizes when a node registered on it
  (``builder.add_node(fn)``) is a summarizer, or a function whose body runs one;
* a derivation (``builder.compile(...)``, ``graph.with_config(...)``) is the graph
  of its receiver.

A summarizer is a call of the vocabulary's ``compaction-calls`` or
``summary-types`` (framework names, so they survive the user's renaming), or of
a project class derived from one. Answers are memoized per node.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import libcst as cst

from .arguments import bound_arguments
from .facts import Step
from .names import dotted, last_segment
from .project import FunctionInfo, ModuleInfo, Project
from .syntax import calls_in, expressions_of, statements, walk_statements
from .vocabulary import NameMatcher

if TYPE_CHECKING:  # pragma: no cover
    from summaryguard.plugins.framework import FrameworkModel

__all__ = ["GraphValues"]

_DEPTH = 6


class GraphValues:
    """One per project: the summarizer built into graph values, if any."""

    def __init__(self, project: Project) -> None:
        self.project = project
        vocab = project.vocabulary
        self.vocab = vocab
        models = vocab.frameworks
        self._builders = NameMatcher(n for m in models for n in m.graph_builders)
        self._factories = NameMatcher(n for m in models for n in m.graph_factories)
        self._registrations = frozenset(n for m in models for n in m.node_registrations)
        self._derivations = frozenset(n for m in models for n in m.graph_derivations)
        self._memo: dict[tuple[int, int], Step | None] = {}
        self._bodies: dict[int, Step | None] = {}
        self._classes: dict[int, dict[str, cst.ClassDef]] = {}
        #: Each model with the summarizer names it owns (its compaction calls and summary types).
        self._owners = [
            (NameMatcher((*m.vocabulary.get("compaction-calls", ()), *m.vocabulary.get("summary-types", ()))), m)
            for m in models
        ]
        #: The framework model of each summarizer call found (by node id), for its guarantees.
        self._framework: dict[int, FrameworkModel] = {}

    # -- the question ----------------------------------------------------------------------

    def framework_of(self, step: Step) -> FrameworkModel | None:
        """The model of the framework whose summarizer ``step`` (an answer of :meth:`summarizer`) is.

        What a resume of the graph may take for granted is what *that*
        framework guarantees of the summaries it writes (``guarantees``): a
        graph value knows which summarizer it was built with."""
        return self._framework.get(id(step.node))

    def _own(self, call: cst.Call, qualified: str) -> None:
        for names, model in self._owners:
            if names(qualified):
                self._framework[id(call)] = model
                return

    def summarizer(self, expr: cst.BaseExpression, fn: FunctionInfo, depth: int = 0) -> Step | None:
        """The summarizer built into the graph ``expr`` evaluates to in ``fn``, or None."""
        if depth > _DEPTH:
            return None
        key = (id(expr), id(fn))
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = None  # cycles
        found = self._summarizer(expr, fn, depth)
        self._memo[key] = found
        return found

    def _summarizer(self, expr: cst.BaseExpression, fn: FunctionInfo, depth: int) -> Step | None:
        if isinstance(expr, cst.Await):
            return self.summarizer(expr.expression, fn, depth + 1)
        if isinstance(expr, cst.Call):
            return self._built_by(expr, fn, depth)
        for value, scope in self._bindings(expr, fn):
            found = self.summarizer(value, scope, depth + 1)
            if found is not None:
                return found
            if isinstance(expr, cst.Name) and self._is_builder(value, scope):
                found = self._registered(expr.value, scope, depth)
                if found is not None:
                    return found
        return None

    def _built_by(self, call: cst.Call, fn: FunctionInfo, depth: int) -> Step | None:
        qualified = fn.module.imports.qualify(call.func) or ""
        if self._factories(qualified) or self._builders(qualified):
            for arg in call.args:
                found = self._summarizer_in(arg.value, fn, depth)
                if found is not None:
                    return found
            return None
        func = call.func
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in self._derivations:
                return self.summarizer(func.value, fn, depth + 1)
            if method in self._registrations:
                return self._node_summarizer(call, fn, depth) or self.summarizer(func.value, fn, depth + 1)
        callee = self.project.resolve(func, fn)
        if callee is not None and not callee.is_module:
            arguments: dict[str, cst.BaseExpression] | None = None
            for value in _returned(callee):
                found = self.summarizer(value, callee, depth + 1)
                if found is not None:
                    return found
                # `return b.compile()` with `b` a parameter: the graph is the caller's argument
                root = self._derived_from(value)
                if root is not None and root in callee.params:
                    arguments = bound_arguments(call, callee) if arguments is None else arguments
                    argument = arguments.get(root)
                    if argument is not None:
                        found = self.summarizer(argument, fn, depth + 1)
                        if found is not None:
                            return found
        return None

    def _derived_from(self, value: cst.BaseExpression) -> str | None:
        """The name whose graph ``value`` is, through derivations (``b.compile().with_config()``)."""
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
            if value.func.attr.value not in self._derivations:
                return None
            value = value.func.value
        return value.value if isinstance(value, cst.Name) else None

    # -- builders and their nodes ------------------------------------------------------------

    def _is_builder(self, value: cst.BaseExpression, fn: FunctionInfo) -> bool:
        return isinstance(value, cst.Call) and bool(self._builders(fn.module.imports.qualify(value.func) or ""))

    def _registered(self, name: str, scope: FunctionInfo, depth: int) -> Step | None:
        """A summarizing node registered on the builder bound to ``name`` in ``scope``,
        there or in a project function the builder is handed to (``add_nodes(builder)``)."""
        for stmt in walk_statements(scope.body):
            for expr in expressions_of(stmt):
                for call in calls_in(expr):
                    func = call.func
                    if (
                        isinstance(func, cst.Attribute)
                        and func.attr.value in self._registrations
                        and isinstance(func.value, cst.Name)
                        and func.value.value == name
                    ):
                        found = self._node_summarizer(call, scope, depth)
                        if found is not None:
                            return found
                    elif depth < _DEPTH and any(isinstance(a.value, cst.Name) and a.value.value == name for a in call.args):
                        found = self._registered_in_callee(call, name, scope, depth)
                        if found is not None:
                            return found
        return None

    def _registered_in_callee(self, call: cst.Call, name: str, scope: FunctionInfo, depth: int) -> Step | None:
        callee = self.project.resolve(call.func, scope)
        if callee is None or callee.is_module or callee is scope:
            return None
        for param, argument in bound_arguments(call, callee).items():
            if isinstance(argument, cst.Name) and argument.value == name and not _assigned(callee, param):
                found = self._registered(param, callee, depth + 1)
                if found is not None:
                    return found
        return None

    def _node_summarizer(self, registration: cst.Call, fn: FunctionInfo, depth: int) -> Step | None:
        for arg in registration.args:
            found = self._summarizer_in(arg.value, fn, depth)
            if found is not None:
                return found
        return None

    def _summarizer_in(self, expr: cst.BaseExpression, fn: FunctionInfo, depth: int) -> Step | None:
        """A summarizer in an argument: a summarizer call, a list of parts holding one,
        or a (project) function whose body runs one."""
        if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
            for element in expr.elements:
                found = self._summarizer_in(element.value, fn, depth)
                if found is not None:
                    return found
            return None
        if isinstance(expr, cst.Call):
            found = self._summarizer_call(expr, fn)
            if found is None and depth < _DEPTH and self._factories(fn.module.imports.qualify(expr.func) or ""):
                # a part that is itself built from parts (ADK's `App(events_compaction_config=...)`)
                found = self._built_by(expr, fn, depth + 1)
            return found
        if isinstance(expr, (cst.Name, cst.Attribute)):
            target = self.project.resolve(expr, fn)
            if target is not None and not target.is_module:
                return self._runs_summarizer(target)
            if depth < _DEPTH:
                for value, scope in self._bindings(expr, fn):
                    found = self._summarizer_in(value, scope, depth + 1)
                    if found is not None:
                        return found
        return None

    def _summarizer_call(self, call: cst.Call, fn: FunctionInfo) -> Step | None:
        qualified = fn.module.imports.qualify(call.func) or ""
        if self.vocab.matches("compaction-calls", qualified) or self.vocab.matches("summary-types", qualified):
            self._own(call, qualified)
            return Step(fn.module.path, call, f"`{last_segment(qualified)}(...)` summarizes this graph's state")
        derived = self._derived_class(call, fn)
        if derived is not None:
            name, base = derived
            self._own(call, base)
            return Step(fn.module.path, call, f"`{name}(...)` (a summarizer's subclass) summarizes this graph's state")
        return None

    def _runs_summarizer(self, fn: FunctionInfo) -> Step | None:
        """A node function whose own body runs a summarizer (``summarize_messages(...)``)."""
        key = id(fn)
        if key not in self._bodies:
            self._bodies[key] = None
            for stmt in walk_statements(fn.body):
                for expr in expressions_of(stmt):
                    for call in calls_in(expr):
                        found = self._summarizer_call(call, fn)
                        if found is not None:
                            self._bodies[key] = found
                            return found
        return self._bodies[key]

    def _derived_class(self, call: cst.Call, fn: FunctionInfo) -> tuple[str, str] | None:
        """The project class ``call`` instantiates and the summarizer class it derives from, if any."""
        name = dotted(call.func)
        if name is None or "." in name:
            return None
        for module in self._modules_defining(name, fn.module):
            node = self._class_nodes(module).get(name)
            if node is None:
                continue
            for base in node.bases:
                qualified = module.imports.qualify(base.value) or ""
                if self.vocab.matches("compaction-calls", qualified) or self.vocab.matches("summary-types", qualified):
                    return name, qualified
        return None

    def _modules_defining(self, name: str, module: ModuleInfo) -> Iterator[ModuleInfo]:
        yield module
        qualified = module.imports.aliases.get(name)
        if qualified:
            owner = qualified.rpartition(".")[0]
            for other in self.project.modules:
                if other is not module and other.known_as(owner):
                    yield other

    def _class_nodes(self, module: ModuleInfo) -> dict[str, cst.ClassDef]:
        found = self._classes.get(id(module))
        if found is None:
            found = self._classes[id(module)] = {
                s.name.value: s for s in statements(module.tree) if isinstance(s, cst.ClassDef)
            }
        return found

    # -- bindings ------------------------------------------------------------------------

    def bindings(self, expr: cst.BaseExpression, fn: FunctionInfo) -> Iterator[tuple[cst.BaseExpression, FunctionInfo]]:
        """The values the name (or ``self.x``) ``expr`` may be bound to in ``fn``, each with its scope."""
        return self._bindings(expr, fn)

    def _bindings(self, expr: cst.BaseExpression, fn: FunctionInfo) -> Iterator[tuple[cst.BaseExpression, FunctionInfo]]:
        """The values ``expr`` (a name or ``self.x``) may be bound to, each with its scope."""
        if isinstance(expr, cst.Name):
            name = expr.value
            scope: FunctionInfo | None = fn
            while scope is not None:
                values = _assigned(scope, name)
                if values:
                    yield from ((v, scope) for v in values)
                    return
                if name in scope.params:
                    return
                scope = scope.parent
            top = fn.module.functions[0]
            values = _assigned(top, name)
            if values:
                yield from ((v, top) for v in values)
                return
            qualified = fn.module.imports.aliases.get(name)
            if qualified:
                owner, _, attr = qualified.rpartition(".")
                for module in self.project.modules:
                    if module is not fn.module and owner and module.known_as(owner):
                        other = module.functions[0]
                        yield from ((v, other) for v in _assigned(other, attr))
        elif (
            isinstance(expr, cst.Attribute)
            and isinstance(expr.value, cst.Name)
            and expr.value.value in ("self", "cls")
            and fn.class_name is not None
        ):
            for value, method, receiver in self.project.attribute_assignments(fn.module, fn.class_name, expr.attr.value):
                if receiver == "self":
                    yield value, method


def _assigned(fn: FunctionInfo, name: str) -> list[cst.BaseExpression]:
    found: list[cst.BaseExpression] = []
    for stmt in walk_statements(fn.body):
        if isinstance(stmt, cst.Assign):
            if any(isinstance(t.target, cst.Name) and t.target.value == name for t in stmt.targets):
                found.append(stmt.value)
        elif isinstance(stmt, cst.AnnAssign) and stmt.value is not None:
            if isinstance(stmt.target, cst.Name) and stmt.target.value == name:
                found.append(stmt.value)
    return found


def _returned(fn: FunctionInfo) -> list[cst.BaseExpression]:
    return [s.value for s in walk_statements(fn.body) if isinstance(s, cst.Return) and s.value is not None]
