"""The project index: every module and function given to one run, and call resolution.

Function summaries only pay off across modules (a validator defined in
``recovery.py`` protecting a resume in ``loop.py``), so the engine first
indexes all parsed modules, then resolves calls against that index: local and
nested functions, ``self.method`` in the same class, imported names (absolute
or relative; matched on dotted suffixes of the module's name from its package
structure, or of its absolute location, so neither the working folder nor a
folder without ``__init__.py`` matters), and, as a last resort, a method name
defined exactly once in the project.

*Context* modules are indexed like the others but are not being checked: the
project modules that checked files import (found on disk by the command
line, see :mod:`summaryguard.rules.cli.dependencies`). They lend their facts
(validators, resume functions, tools) and get no findings of their own.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import libcst as cst

from .module_index import Entry
from .names import ImportTable, dotted, last_segment, module_location, module_name_for
from .syntax import Body, Stmt, attribute_assignments, calls_in, expressions_of, statements, walk_statements
from .vocabulary import Vocabulary

if TYPE_CHECKING:  # pragma: no cover
    from .bodies import ParsedBody
    from .facts import Step
    from .graphs import GraphValues

__all__ = ["Assigned", "FunctionInfo", "ModuleInfo", "Project"]

_SUMMARY_TEXT = re.compile(r"summar(?!ywriter|y_writer)", re.IGNORECASE)


@dataclass(eq=False)
class FunctionInfo:
    """One function (or a module's top-level code, ``name == "<module>"``).

    A lambda bound to a name (``resume = lambda cp: agent.resume(cp.summary)``) is
    a function like a ``def`` of that name: calling the name calls it. Its body is
    one ``return`` of the lambda's expression, made once (the ``return`` is not in
    the tree; everything it holds is)."""

    qualname: str
    name: str
    node: cst.FunctionDef | cst.Lambda | cst.Module
    module: ModuleInfo
    class_name: str | None = None
    parent: FunctionInfo | None = None
    params: tuple[str, ...] = ()
    annotations: dict[str, str] = field(default_factory=dict)
    decorators: tuple[str, ...] = ()
    nested: dict[str, FunctionInfo] = field(default_factory=dict)
    is_guarded: bool = False
    is_tool: bool = False
    #: A node of a graph that summarizes (registered on its builder, see :mod:`.graphs`):
    #: its first parameter is the graph state a resume restores, summary included.
    #: The value is the evidence: where the graph's summarizer is built.
    resumes_state: Step | None = None
    #: :attr:`body`, with the node it was read from (a deferred body replaces the node).
    _body: tuple[cst.CSTNode, Body] | None = field(default=None, repr=False)

    def __getattr__(self, name: str) -> Any:
        """``node`` of a function whose body is parsed when first read (see :mod:`.bodies`),
        or of a module whose tree is built when first read (:meth:`Project.add_outline`):
        called only while the attribute is missing, so a parsed node costs nothing more."""
        found = self.__dict__
        if name != "node":
            raise AttributeError(name)
        if "_unbuilt" in found:  # its module's tree is not built yet: building it binds this node
            self._build()
            return self.node
        load = found.get("_load_body")
        if load is None:
            raise AttributeError(name)
        node = self.node = load()
        del found["_load_body"]
        return node

    def _build(self) -> None:
        """Build the tree of this function's module, which binds its node (or its header
        and deferred body): see :meth:`Project.add_outline`."""
        self.module.tree  # noqa: B018 - the read builds the tree (ModuleInfo.__getattr__)
        self.__dict__.pop("_unbuilt", None)

    def defer_body(self, load: Callable[[], cst.FunctionDef]) -> None:
        """Parse this function's body when its ``node`` is first read: ``load`` returns the
        ``def`` with its body (see :mod:`.bodies`); until then :attr:`header` is the ``def``
        the module's tree holds, its body blanked."""
        self.__dict__["_header"] = self.node
        self.__dict__["_load_body"] = load
        del self.__dict__["node"]

    @property
    def header(self) -> cst.FunctionDef | cst.Lambda | cst.Module:
        """The node as far as its ``def`` line goes (name, parameters, annotations,
        decorators), without parsing a deferred body."""
        found = self.__dict__
        if "_unbuilt" in found:
            self._build()
        return found["node"] if "node" in found else found["_header"]

    @property
    def body(self) -> list[Stmt]:
        """The function's statements (a lambda's: a ``return`` of its expression).

        Computed once per node and shared by every reader, who must not change it: a
        package's analysis reads a body about a hundred times per function (agno:
        675,000 reads of 5,700 functions, each a new flattened list before)."""
        node = self.node
        known = self._body
        if known is not None and known[0] is node:  # (its walk is remembered too: see Body)
            return known[1]
        kind = type(node)  # type tests: libcst's isinstance goes through ABCMeta
        if kind is cst.Lambda:
            found = Body([cst.Return(value=node.body)])
        else:
            found = Body(statements(node.body if kind is cst.FunctionDef else node))
        self._body = (node, found)
        return found

    @property
    def is_module(self) -> bool:
        """A module's top-level code (no ``def`` or lambda is named ``<module>``): known
        without building the tree of a module indexed from CPython's."""
        return self.name == "<module>"

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"<FunctionInfo {self.qualname}>"


@dataclass(eq=False)
class ModuleInfo:
    """One parsed module and what was found in it."""

    path: str
    tree: cst.Module
    imports: ImportTable
    functions: list[FunctionInfo] = field(default_factory=list)
    toplevel: dict[str, FunctionInfo] = field(default_factory=dict)
    classes: dict[str, dict[str, FunctionInfo]] = field(default_factory=dict)
    mentions_summary: bool = False
    #: Indexed for its facts only: imported by a checked file, not checked itself.
    context: bool = False
    #: The file's absolute location as a dotted name (see :func:`.names.module_location`).
    location: str = ""
    #: Bodies parsed after the module's tree, when first read (see :mod:`.bodies`).
    parsed_bodies: list[ParsedBody] = field(default_factory=list)

    def __getattr__(self, name: str) -> Any:
        """``tree`` of a module indexed from CPython's tree (:meth:`Project.add_outline`),
        built when first read: called only while the attribute is missing."""
        build = self.__dict__.pop("_build", None)
        if name != "tree" or build is None:
            raise AttributeError(name)
        build(self)
        return self.tree

    @property
    def name(self) -> str:
        return self.imports.module_name

    def place(self, fn: FunctionInfo) -> None:
        """Index ``fn``, a function of this module: a method by its class, a nested function
        by the function around it, any other by its name at the top level."""
        self.functions.append(fn)
        if fn.class_name is not None and fn.parent is None:
            self.classes.setdefault(fn.class_name, {})[fn.name] = fn
        elif fn.parent is not None:
            fn.parent.nested[fn.name] = fn
        else:
            self.toplevel[fn.name] = fn

    def known_as(self, dotted_name: str) -> bool:
        """Whether an import of ``dotted_name`` can mean this module."""
        name = self.name
        suffix = "." + dotted_name
        return name == dotted_name or name.endswith(suffix) or self.location.endswith(suffix)


def _named_lambda(stmt: Stmt) -> tuple[str, cst.Lambda] | None:
    """``name = lambda ...`` / ``name: T = lambda ...``: the name and the lambda
    (the same test as :func:`.relevance.scan`'s, on the stdlib tree)."""
    if isinstance(stmt, cst.Assign) and len(stmt.targets) == 1:
        target, value = stmt.targets[0].target, stmt.value
    elif isinstance(stmt, cst.AnnAssign) and stmt.value is not None:
        target, value = stmt.target, stmt.value
    else:
        return None
    if isinstance(target, cst.Name) and isinstance(value, cst.Lambda):
        return target.value, value
    return None


def _instance_method(fn: FunctionInfo, decorator: str) -> str | None:
    """``@agent.tool`` where ``agent = Agent(...)`` (a class imported, bound in an enclosing
    function or at the module's top level): the decorator as ``<class>.<method>``
    (``pydantic_ai.Agent.tool``), so the vocabulary can name an instance's decorator methods."""
    receiver, dot, method = decorator.partition(".")
    imports = fn.module.imports
    if not dot or "." in method or receiver in imports.aliases:
        return None
    scope: FunctionInfo | None = fn.parent
    while True:
        body = scope.body if scope is not None else statements(fn.module.tree)
        for stmt in body:
            if (
                isinstance(stmt, cst.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0].target, cst.Name)
                and stmt.targets[0].target.value == receiver
                and isinstance(stmt.value, cst.Call)
            ):
                built = imports.qualify(stmt.value.func)
                head = (dotted(stmt.value.func) or "").partition(".")[0]
                return f"{built}.{method}" if built and head in imports.aliases else None
        if scope is None:
            return None
        scope = scope.parent


#: Stands for the tree of a module indexed from CPython's (:meth:`Project.add_outline`) until it is built.
_UNBUILT = cst.Module(body=[])


def _empty(name: str, kind: type | None, tree: cst.Module) -> cst.Module | cst.FunctionDef | cst.Lambda:
    """The node of a function of ``kind`` (its index says which) when its module's tree could
    not be built: its name, no body."""
    if kind is cst.FunctionDef:
        return cst.FunctionDef(
            name=cst.Name(name), params=cst.Parameters(), body=cst.IndentedBlock(body=[cst.SimpleStatementLine([cst.Pass()])])
        )
    if kind is cst.Lambda:
        return cst.Lambda(params=cst.Parameters(), body=cst.Name("None"))
    return tree


#: One assignment to a class's attribute (:meth:`Project.attribute_assignments`): the
#: value, the method that assigns it, the receiver's name (``self`` or ``cls``).
Assigned = tuple[cst.BaseExpression, FunctionInfo, str]


#: How many re-exports :meth:`Project.lookup` follows (``pkg`` re-exporting ``pkg.api`` re-exporting ...).
_MAX_RE_EXPORTS = 4


class Project:
    """All modules of one run, indexed for call resolution."""

    def __init__(self, vocabulary: Vocabulary) -> None:
        self.vocabulary = vocabulary
        self.modules: list[ModuleInfo] = []
        self.functions: list[FunctionInfo] = []
        self._by_name: dict[str, list[FunctionInfo]] = {}
        #: Qualified names that may be worth analyzing (None: all); see :mod:`.relevance`.
        self.relevant: set[str] | None = None
        #: Those analyzed first (None: all of :attr:`relevant`); the solver grows from
        #: them to the callers that turn out to matter (see :func:`.solver.solve`).
        self.seeds: set[str] | None = None
        #: By qualified name, the names each function calls (the last segment, as CPython's
        #: screening saw them): a cheap first cut for analyses that follow calls (see
        #: :mod:`.inflight`); a function missing here is not cut.
        self.calls: dict[str, set[str]] = {}
        #: By qualified name, the words each function uses (names, attribute names, as
        #: CPython's screening saw them): which bodies can mention a name at all. Like
        #: :attr:`calls`, the union over the functions of one qualified name (two modules
        #: of one name, in folders without ``__init__.py``).
        self.words: dict[str, set[str]] = {}
        #: Memo of :meth:`attribute_assignments`.
        self._assigned: dict[tuple[ModuleInfo, str | None, str], tuple[Assigned, ...]] = {}
        #: The summary given to functions not worth analyzing (set by the solver).
        self.unknown: object = None
        #: With context modules, the functions the checked modules' functions reach through
        #: their resolved calls (set by the solver, :func:`.solver.demanded`): no other can
        #: change a fact of theirs. None: every module is checked, every function counts.
        self.reached: set[FunctionInfo] | None = None
        #: The resolved calls of each function whose calls were read, by function (set by the
        #: solver, :class:`.solver._CallsOnDemand`): read again by the compaction facts.
        self.call_edges: Mapping[FunctionInfo, Sequence[FunctionInfo]] | None = None
        #: Memo of :meth:`Evidence._calls_tool_directly` for unanalyzed functions.
        self.direct_tool_calls: dict[FunctionInfo, bool] = {}
        #: :meth:`_visible` by module id.
        self._visible_from: dict[int, frozenset[int]] = {}
        self._known_as: tuple[int, dict[str, set[int]]] | None = None
        #: The modules by id, for :meth:`_re_exported` (rebuilt when a module was added).
        self._by_id: dict[int, ModuleInfo] | None = None
        #: Which graph values summarize (set by :meth:`finish` when a framework model is loaded).
        self.graphs: GraphValues | None = None
        #: Memo of :meth:`resolve`: (id of the callee expression, id of the caller) -> (the
        #: expression, the caller, the function). Emptied when a module is added.
        self._resolved: dict[tuple[int, int], tuple[cst.BaseExpression, FunctionInfo, FunctionInfo | None]] = {}

    def add_module(self, path: str, tree: cst.Module, text: str, context: bool = False) -> ModuleInfo:
        name, is_package = module_name_for(path)
        module = ModuleInfo(path, tree, ImportTable(name, is_package), context=context)
        module.location = module_location(path)
        module.mentions_summary = bool(_SUMMARY_TEXT.search(text))
        top = FunctionInfo(f"{name}.<module>", "<module>", tree, module)
        module.functions.append(top)
        self._collect(module, statements(tree), top, None, name)
        for fn in module.functions:
            self.functions.append(fn)
            self._by_name.setdefault(fn.name, []).append(fn)
        self.modules.append(module)
        self._resolved.clear()  # a call may now resolve into the new module
        return module

    def add_outline(
        self,
        path: str,
        entries: Sequence[Entry],
        text: str,
        build: Callable[[], cst.Module | None],
        then: Callable[[ModuleInfo], None] | None = None,
    ) -> ModuleInfo:
        """A context module indexed from the screening's data (``entries``, see
        :mod:`.module_index`: CPython's tree of its outline), without libcst or any parse: its
        functions, classes and imports are known at once, and ``build`` makes its libcst
        tree (from the outline) when something first reads the tree or a node of it.

        Why: a file checked alone brings every project module it imports, transitively,
        as context, and the index needs them all (a call resolves into any of them), while
        the analysis reads few: agno's ``agent/_utils.py`` brings 90 and reads nodes of 5,
        ``agent/_run.py`` 146 and 56. Converting all of them to libcst's nodes was most of
        the check of such a file.

        The index is the one :meth:`add_module` makes of the tree ``build`` returns
        (:func:`.module_index.index_entries` reads CPython's tree as :meth:`_collect` reads
        libcst's, and the conversion keeps CPython's structure, see :mod:`.cpython_cst`);
        only text whose names both trees spell alike, and whose indentation CPython's
        parser reads as libcst does, has entries. Every file of the real-code corpus that
        has them (4,709), each under two outlines, gives the same index this way as
        :meth:`add_module`'s, each function bound to the same node.
        When ``build`` fails (None), the module keeps its index with empty bodies. ``then``
        runs once the tree is bound (:func:`.bodies.defer_bodies`)."""
        name, is_package = module_name_for(path)
        module = ModuleInfo(path, _UNBUILT, ImportTable(name, is_package), context=True)
        del module.__dict__["tree"]
        module.location = module_location(path)
        module.mentions_summary = bool(_SUMMARY_TEXT.search(text))
        top = FunctionInfo(f"{name}.<module>", "<module>", _UNBUILT, module)
        top.__dict__["_unbuilt"] = cst.Module
        module.functions.append(top)
        functions: list[FunctionInfo] = []
        for entry in entries:
            if entry[0] == "import":
                module.imports.add_import(entry[2])
            elif entry[0] == "from":
                module.imports.add_from(entry[2], entry[3], entry[4])
            else:
                kind, _, qualname, fn_name, class_name, parent, params, annotations, decorators = entry
                owner = functions[parent] if parent >= 0 else None
                fn = FunctionInfo(f"{name}.{qualname}", fn_name, _UNBUILT, module, class_name=class_name, parent=owner)
                fn.__dict__["_unbuilt"] = cst.FunctionDef if kind == "def" else cst.Lambda  # what it will be
                fn.params, fn.annotations, fn.decorators = params, dict(annotations), decorators
                functions.append(fn)
                module.place(fn)
        for fn in module.functions:
            del fn.__dict__["node"]
            self.functions.append(fn)
            self._by_name.setdefault(fn.name, []).append(fn)

        def built(module: ModuleInfo) -> None:
            self._bind(module, build())
            if then is not None:
                then(module)

        module.__dict__["_build"] = built
        self.modules.append(module)
        self._resolved.clear()
        return module

    def _bind(self, module: ModuleInfo, tree: cst.Module | None) -> None:
        """Give ``module`` (indexed by :meth:`add_outline`) its tree, and each of its functions
        its node: those :meth:`_collect` finds in the tree, in the same order. A tree whose
        functions are not the index's (not expected) counts as none: no node of it is
        bound to a function it is not."""
        found: list[FunctionInfo] = []
        twin: ModuleInfo | None = None
        if tree is not None:
            twin = ModuleInfo(module.path, tree, ImportTable(module.name, False), context=True)
            top = FunctionInfo(module.functions[0].qualname, "<module>", tree, twin)
            twin.functions.append(top)
            try:
                self._collect(twin, statements(tree), top, None, module.name)
            except RecursionError:
                twin.functions.clear()
            found = twin.functions
            if [(f.qualname, f.params) for f in found] != [(f.qualname, f.params) for f in module.functions]:
                tree, found = None, []
        if tree is None:
            tree = cst.Module(body=[])
        module.tree = tree
        for index, fn in enumerate(module.functions):
            kind = fn.__dict__.pop("_unbuilt", None)
            fn.node = found[index].node if found else _empty(fn.name, kind, tree)
        if twin is not None:  # its functions and it point to each other: a cycle that held the tree
            for fn in twin.functions:
                fn.__dict__.clear()
            twin.__dict__.clear()

    # -- indexing ------------------------------------------------------------------------

    def _collect(
        self, module: ModuleInfo, body: list[Stmt], owner: FunctionInfo, class_name: str | None, prefix: str
    ) -> None:
        for stmt in walk_statements(body):
            kind = type(stmt)  # type tests: libcst's isinstance goes through ABCMeta (every statement)
            if kind is cst.Import or kind is cst.ImportFrom:
                module.imports.add(stmt)
            elif kind is cst.FunctionDef:
                self._add_function(module, stmt, owner, class_name, prefix)
            elif (kind is cst.Assign or kind is cst.AnnAssign) and (named := _named_lambda(stmt)) is not None:
                self._add_function(module, named[1], owner, class_name, prefix, named[0])
            elif kind is cst.ClassDef:
                self._collect(module, statements(stmt.body), owner, stmt.name.value, f"{prefix}.{stmt.name.value}")

    def _add_function(
        self,
        module: ModuleInfo,
        node: cst.FunctionDef | cst.Lambda,
        owner: FunctionInfo,
        class_name: str | None,
        prefix: str,
        bound_to: str | None = None,
    ) -> None:
        name = node.name.value if isinstance(node, cst.FunctionDef) else bound_to or "<lambda>"
        nested_owner = owner if not owner.is_module else None
        fn = FunctionInfo(f"{prefix}.{name}", name, node, module, class_name=class_name, parent=nested_owner)
        params = [*node.params.posonly_params, *node.params.params, *node.params.kwonly_params]
        for extra in (node.params.star_arg, node.params.star_kwarg):
            if isinstance(extra, cst.Param):
                params.append(extra)
        fn.params = tuple(p.name.value for p in params)
        fn.annotations = {
            p.name.value: dotted(p.annotation.annotation) or "" for p in params if p.annotation is not None
        }
        if isinstance(node, cst.FunctionDef):
            fn.decorators = tuple(self._decorator_name(module, d) for d in node.decorators)
        module.place(fn)
        if isinstance(node, cst.FunctionDef):
            self._collect(module, statements(node.body), fn, None, f"{prefix}.{name}.<locals>")

    @staticmethod
    def _decorator_name(module: ModuleInfo, decorator: cst.Decorator) -> str:
        expr = decorator.decorator
        if isinstance(expr, cst.Call):
            expr = expr.func
        return dotted(expr) or ""

    def finish(self) -> None:
        """Resolve decorators once imports of every module are known, then find the
        nodes of graphs that summarize (their input is resumed state)."""
        vocab = self.vocabulary
        for fn in self.functions:
            qualified = [_instance_method(fn, d) or fn.module.imports.qualify_name(d) for d in fn.decorators]
            fn.decorators = tuple(qualified)
            fn.is_guarded = any(vocab.matches("validators", q) for q in qualified)
            fn.is_tool = any(vocab.matches("tool-decorators", q) for q in qualified)
        if not vocab.frameworks:
            return
        from .graphs import GraphValues

        self.graphs = GraphValues(self)
        registrations = frozenset(n for m in vocab.frameworks for n in m.node_registrations)
        if registrations:
            for module in self.modules:
                self._graph_nodes(module, registrations)

    def _graph_nodes(self, module: ModuleInfo, registrations: frozenset[str]) -> None:
        """Functions registered as nodes on a builder whose graph summarizes."""
        for fn in module.functions:
            if not self.may_call(fn, registrations):
                continue  # registers nothing: no walk
            for stmt in walk_statements(fn.body):
                for expr in expressions_of(stmt):
                    for call in calls_in(expr):
                        func = call.func
                        if not (isinstance(func, cst.Attribute) and func.attr.value in registrations):
                            continue
                        nodes = [
                            self.resolve(arg.value, fn)
                            for arg in call.args
                            if isinstance(arg.value, (cst.Name, cst.Attribute))
                            and (arg.keyword is None or arg.keyword.value in ("node", "action"))
                        ]
                        nodes = [n for n in nodes if n is not None and not n.is_module]
                        if not nodes:
                            continue
                        source = self.graphs.summarizer(func.value, fn)
                        if source is not None:
                            for node in nodes:
                                node.resumes_state = node.resumes_state or source

    def may_call(self, fn: FunctionInfo, names: frozenset[str]) -> bool:
        """Whether ``fn`` may call one of ``names`` (by last segment): False only when
        CPython's screening saw its calls (:attr:`calls`) and none is one of them, so an
        analysis looking for those calls can skip its body without walking it."""
        called = self.calls.get(fn.qualname)
        return called is None or not called.isdisjoint(names)

    def may_mention(self, fn: FunctionInfo, word: str) -> bool:
        """Whether ``fn``'s body may use the name or attribute ``word``: False only when
        CPython's screening saw its words (:attr:`words`) and ``word`` is not one, so an
        analysis looking for ``self.<word> = ...`` need not read (nor parse) its body.
        The screening keeps words of at most 64 characters, as CPython spells them
        (NFKC-normalized, where libcst keeps what is written): any other word may be there."""
        used = self.words.get(fn.qualname)
        return used is None or word in used or len(word) > 64 or not word.isascii()

    def attribute_assignments(self, module: ModuleInfo, class_name: str | None, attr: str) -> tuple[Assigned, ...]:
        """What the methods of ``module``'s class ``class_name`` assign to ``self.<attr>`` or
        ``cls.<attr>``: each value, the method, and the receiver's name, in method and
        statement order; once per class and attribute. A method whose words cannot mention
        ``attr`` (:meth:`may_mention`) is not read, nor, in a context module, parsed (see
        :mod:`.bodies`)."""
        key = (module, class_name, attr)
        found = self._assigned.get(key)
        if found is None:
            found = self._assigned[key] = tuple(
                (value, method, receiver)
                for method in module.classes.get(class_name or "", {}).values()
                if self.may_mention(method, attr)
                for receiver, value in attribute_assignments(method.body, attr)
            )
        return found

    def graph_nodes(self) -> set[str]:
        """Nodes of graphs that summarize: their state is what a resume restores."""
        return {fn.qualname for fn in self.functions if fn.resumes_state is not None}

    def release(self) -> None:
        """Break the index's reference cycles once its analysis is done; the project is
        empty afterwards.

        Why: a function points to its module and the module to its functions, and the
        analyses keep the project, so every libcst tree of a run is reachable only
        through cycles: without this the trees outlive the analysis until the next
        collection, which walks all of them first (agno checked whole: 6.7 M objects,
        4.3 s of an 88 s check). Cleared, reference counting frees them at once."""
        for module in self.modules:
            for fn in module.functions:
                fn.__dict__.clear()
            module.__dict__.clear()
        self.__dict__.clear()

    def demand_roots(self) -> list[FunctionInfo] | None:
        """The functions whose analyses the checked modules' facts read, or None when
        every module is checked: the checked modules' functions. The solver analyzes what
        these reach (:func:`.solver.demanded`): a context function counts only through
        the calls that reach it, its summary and the compaction of what its parameters
        bring alike (SG303 reports at a checked call that resolves to it, see
        :func:`.compaction.compaction_facts`)."""
        if not any(module.context for module in self.modules):
            return None
        return [fn for module in self.modules if not module.context for fn in module.functions]

    # -- resolution ----------------------------------------------------------------------

    def resolve(self, func: cst.BaseExpression, caller: FunctionInfo) -> FunctionInfo | None:
        """The project function a call's callee refers to, if known.

        Memoized: one run asks about each call four to five times (the call graph, the
        evidence, the flow facts, the compaction facts: 121,000 questions about 27,000
        calls in langgraph). The key is made of ids, since libcst hashes a node in
        Python; the entry keeps both objects, so an id is never another object's."""
        key = (id(func), id(caller))
        known = self._resolved.get(key)
        if known is not None and known[0] is func and known[1] is caller:
            return known[2]
        found = self._resolve(func, caller)
        self._resolved[key] = (func, caller, found)
        return found

    def _resolve(self, func: cst.BaseExpression, caller: FunctionInfo) -> FunctionInfo | None:
        module = caller.module
        kind = type(func)  # type tests: libcst's isinstance goes through ABCMeta (a call per test)
        if kind is cst.Name:
            scope: FunctionInfo | None = caller
            while scope is not None:
                found = scope.nested.get(func.value)
                if found is not None:
                    return found
                scope = scope.parent
            local = module.toplevel.get(func.value)
            if local is not None and func.value not in module.imports.aliases:
                return local
        elif kind is cst.Attribute and type(func.value) is cst.Name:
            if func.value.value in ("self", "cls") and caller.class_name is not None:
                method = module.classes.get(caller.class_name, {}).get(func.attr.value)
                if method is not None:
                    return method
        name = dotted(func)
        if name is None:
            return None
        if kind is cst.Name and func.value not in module.imports.aliases:
            return None  # a bare name neither defined here nor imported: never another module's function
        qualified = module.imports.qualify(func) or name
        head = name.partition(".")[0]
        if head in module.imports.aliases:
            # an imported name: its qualified name says which module (never a suffix match of a local)
            return self.lookup(qualified)
        if kind is cst.Attribute:
            # a method of a local value: the one method of that name this module can see
            return self._unique_method(func.attr.value, module)
        return None

    def named(self, name: str) -> tuple[FunctionInfo, ...]:
        """Every function of the project whose own name is ``name``."""
        return tuple(self._by_name.get(name, ()))

    def lookup(self, qualified: str, hops: int = 0) -> FunctionInfo | None:
        """A function whose qualified name is ``qualified`` or ends with it, or that a
        project module re-exports under that name (:meth:`_re_exported`)."""
        candidates = self._by_name.get(last_segment(qualified), ())
        suffix = "." + qualified
        for fn in candidates:
            if fn.qualname == qualified or fn.qualname.endswith(suffix):
                return fn
        for fn in candidates:  # by location: a module in a plain folder or a namespace package
            module = fn.module
            if module.location and (module.location + fn.qualname[len(module.name):]).endswith(suffix):
                return fn
        return self._re_exported(qualified, hops)

    def _re_exported(self, qualified: str, hops: int) -> FunctionInfo | None:
        """The function ``pkg.verify`` names when ``pkg/__init__.py`` holds ``from .checks
        import verify``: a package's public name for a function defined in one of its
        modules (the usual way a package exports its API). Followed through the importing
        module's own import table, a few re-exports deep."""
        owner, _, name = qualified.rpartition(".")
        if not owner or hops >= _MAX_RE_EXPORTS:
            return None
        ids = self._known_as_index().get(owner)
        if not ids:
            return None
        by_id = self._modules_by_id()
        for module_id in ids:
            target = by_id[module_id].imports.aliases.get(name)
            if target is not None and target != qualified:
                found = self.lookup(target, hops + 1)
                if found is not None:
                    return found
        return None

    def _modules_by_id(self) -> dict[int, ModuleInfo]:
        known = self._by_id
        if known is None or len(known) != len(self.modules):
            known = self._by_id = {id(m): m for m in self.modules}
        return known

    def _unique_method(self, name: str, module: ModuleInfo) -> FunctionInfo | None:
        """The one method called ``name`` in ``module`` or the project modules it imports.

        Only those: a file's findings never depend on which other files are in the
        run (SPEC §3.1.1, locality), and the modules it imports are in every run."""
        candidates = [f for f in self._by_name.get(name, ()) if f.class_name is not None]
        if len(candidates) > 1 or (candidates and candidates[0].module is not module):
            visible = self._visible(module)
            candidates = [f for f in candidates if id(f.module) in visible]
        return candidates[0] if len(candidates) == 1 else None

    def _visible(self, module: ModuleInfo) -> frozenset[int]:
        """``module`` and the project modules it imports (by id), computed once per module."""
        found = self._visible_from.get(id(module))
        if found is None:
            names = {c for q in module.imports.aliases.values() for c in (q, q.rpartition(".")[0]) if c}
            index = self._known_as_index()
            found = frozenset({id(module)}.union(*(index.get(n, ()) for n in names)))
            self._visible_from[id(module)] = found
        return found

    def _known_as_index(self) -> dict[str, set[int]]:
        """Every dotted name an import can mean each module by (:meth:`ModuleInfo.known_as`:
        its name, and each suffix of its name or location that follows a dot), to the ids
        of those modules: one dictionary look-up per imported name, instead of a test of
        every module of the run (quadratic in the modules: 3% of letta's cold run).
        Rebuilt when a module was added since."""
        if self._known_as is not None and self._known_as[0] == len(self.modules):
            return self._known_as[1]
        index: dict[str, set[int]] = {}
        for m in self.modules:
            names = {m.name}
            for text in (m.name, m.location):
                start = text.find(".")
                while start >= 0:
                    names.add(text[start + 1 :])
                    start = text.find(".", start + 1)
            for name in names:
                index.setdefault(name, set()).add(id(m))
        self._known_as = (len(self.modules), index)
        return index
