"""Rename the user's own identifiers to neutral names: the transformer of the metamorphic tests (issue 9).

SPEC §3.1.1: names corroborate, they never decide. Renaming the user's
functions, classes, parameters, locals and the attributes the user binds to
names that carry no summary / checkpoint / resume / tool word must not create
a finding, and must not remove one whose evidence is a value's flow.
:func:`neutralize` does that renaming, consistently across the modules it is
given (a function renamed in ``recovery.py`` is renamed where ``loop.py``
imports and calls it).

What is renamed (every identifier the user *binds*):

* function and method names, class names, parameters (and the keywords of
  calls whose callee is one of the user's functions or classes), variables of
  every binding form (assignment, ``for``, ``with ... as``, ``except ... as``,
  walrus, comprehension, ``global``/``nonlocal``, ``match`` captures, import
  aliases of the user's own modules), and the names of ``__all__``;
* attributes the user binds: ``obj.x = ...`` (``self.x``), class-level fields
  and methods, read anywhere as ``something.x``.

What is kept (why):

* anything imported from outside the given modules, and every attribute read
  on such a name or on a builtin or literal (``os.path``, ``json.load``,
  ``"".join``): that is library API. An attribute name that is ever read on a
  library value is kept everywhere, since ``resp.x`` and ``self.x`` cannot be
  told apart without types;
* builtins, dunder names, ``self``/``cls``, ``_``, and module names (the
  files keep their names, so imports keep working);
* :data:`PROTOCOL_ATTRIBUTES`: the summary protocol and summaryguard's data
  model, read from :mod:`summaryguard.guard.model` (every field and public
  method of ``Summary``, ``Checkpoint``, ``DroppedRef``) and from the
  lexicon's ``STRONG_SUMMARY_ATTRS``, ``GUARANTEE_ATTRS`` and
  ``CHECKPOINT_ATTRS``; SPEC §3.1.1 names them as what renaming leaves alone;
* :data:`VOCABULARY_METHODS`: method names the analyzer's vocabulary lists
  (the last segment of every entry of ``Vocabulary.build()``, defaults and
  plugins, every name of the frameworks' models, and the lexicon's run, load
  and weak resume verbs): ``resume_context``, ``invoke``, ``from_dict``. They
  are kept *as attributes* only (``x.invoke()`` may be a framework's object);
  a module-level function of the user that happens to be called ``rehydrate``
  is renamed like any other;
* methods and class-level fields of a class with a library base (directly or
  through the user's classes), and its public ``self.x`` attributes: they may
  implement the base's protocol (``BaseTool._run``, a ``TypedDict``'s keys, a
  pydantic model's fields). Private ``self._x`` attributes are renamed;
* string contents (``state["summary"]``, ``getattr(obj, "x")``), comments,
  decorators' imported names, keywords of calls to library callees.

Known limits (best effort, as any untyped renaming): a user function called
through another name (``fn = compact; fn(summary=s)``) keeps its keywords
while its parameters are renamed; names looked up by string (``getattr``,
``hasattr``, string annotations) are not followed. Neither changes what the
analyzer reads about values.

Every rename replaces one identifier by another, so line structure, comments
and ``# expect:`` markers stay where they were. A module that libcst cannot
parse, or does not print back exactly as it read it (a trailing blank line of
spaces), is returned unchanged.
"""

from __future__ import annotations

import builtins
import dataclasses
import keyword
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

import libcst as cst
from libcst.helpers import get_full_name_for_node

__all__ = ["PROTOCOL_ATTRIBUTES", "VOCABULARY_METHODS", "neutralize"]

#: The summary protocol as SPEC §3.1.1 and the issue list it, beside the data model's own names.
_PROTOCOL_WORDS = frozenset(
    {
        "generation", "partial", "verbatim_refs", "dropped", "drop_manifest", "summary", "summary_generation",
        "turn", "checkpoint_turn", "next_turn_deps", "content", "parent_generation", "refs", "state", "turns",
        "provenance", "ref", "last_known", "tool",
    }
)
#: Bases that say nothing about a class's protocol: its fields and methods are the user's own.
_NEUTRAL_BASES = frozenset({"object", "ABC", "abc.ABC", "Generic", "typing.Generic", "Protocol", "typing.Protocol"})
#: Never renamed as a bare name.
_KEPT_NAMES = frozenset({"self", "cls", "_", "mcs", "metacls"})
_LITERALS = (
    cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.Integer, cst.Float, cst.Imaginary,
    cst.List, cst.Dict, cst.Set, cst.Tuple, cst.ListComp, cst.DictComp, cst.SetComp, cst.GeneratorExp,
)
_BUILTINS = frozenset(dir(builtins)) - {"super"}


def _model_names() -> set[str]:
    from summaryguard.guard import model
    from summaryguard.rules.engine import lexicon

    names = set(_PROTOCOL_WORDS)
    for cls in (model.Summary, model.Checkpoint, model.DroppedRef):
        names.update(f.name for f in dataclasses.fields(cls))
        names.update(n for n in vars(cls) if not n.startswith("_"))
    names |= lexicon.STRONG_SUMMARY_ATTRS | lexicon.GUARANTEE_ATTRS | lexicon.CHECKPOINT_ATTRS
    return names


def _last_segments(values: Iterable[object], every: bool = False) -> set[str]:
    """The last segment of each dotted name in ``values`` (with ``every``, all of them)."""
    found = set()
    for value in values:
        if isinstance(value, str):
            segments = value.split(".") if every else [value.rpartition(".")[2]]
            found.update(segment for segment in segments if segment.isidentifier())
        elif isinstance(value, (tuple, list, frozenset, set)):
            found |= _last_segments(value, every)
        elif isinstance(value, Mapping):
            found |= _last_segments(value.values(), every)
    return found


def _vocabulary_names() -> set[str]:
    from summaryguard.rules.engine import lexicon
    from summaryguard.rules.engine.vocabulary import Vocabulary

    vocabulary = Vocabulary.build()
    names = _last_segments(vocabulary.entries.values())
    for framework in getattr(vocabulary, "frameworks", ()):
        # the frameworks' own names, classes included (``agents.Runner.run``: ``Runner`` too):
        # renaming them inside the framework's own source would change what the code is
        names |= _last_segments(tuple(framework), every=True)  # a model is a NamedTuple: its values
    return names | lexicon.RUN_METHODS | lexicon.LOAD_METHODS | lexicon.WEAK_RESUME_NAMES


#: Attributes of the summary protocol and of summaryguard's data model: never renamed.
PROTOCOL_ATTRIBUTES: frozenset[str] = frozenset(_model_names())
#: Method names the analyzer's vocabulary lists: never renamed as attributes.
VOCABULARY_METHODS: frozenset[str] = frozenset(_vocabulary_names())
#: The frameworks' own class names (``Runner``, ``RunState``): never renamed, also where the
#: checked code is the framework's own source that defines them.
FRAMEWORK_CLASSES: frozenset[str] = frozenset(n for n in VOCABULARY_METHODS if n[:1].isupper())


@dataclass
class _Class:
    name: str
    module: str
    bases: list[tuple[str, bool]]  # (dotted base, whether it is a library name in its module)
    fields: set[str] = field(default_factory=set)
    methods: set[str] = field(default_factory=set)
    attributes: set[str] = field(default_factory=set)  # self.x = ... inside its methods
    init_params: list[str] | None = None


@dataclass
class _Module:
    """What one module binds and imports (filled by :class:`_Collector`)."""

    name: str
    tree: cst.Module
    external: set[str] = field(default_factory=set)  # names bound by imports of library modules
    user_modules: set[str] = field(default_factory=set)  # names bound to the user's own modules
    star_external: bool = False
    bound: set[str] = field(default_factory=set)  # every name bound here (any scope)
    class_scopes: dict[int, set[str]] = field(default_factory=dict)  # id(ClassDef) -> names its body binds
    # (root name or None, root is a literal, attribute): attribute reads, judged once imports are known
    reads: list[tuple[str | None, bool, str]] = field(default_factory=list)
    writes: list[tuple[str | None, bool, str]] = field(default_factory=list)
    all_strings: set[int] = field(default_factory=set)  # ids of __all__'s string elements


def _root(expr: cst.BaseExpression) -> cst.BaseExpression:
    while True:
        if isinstance(expr, cst.Attribute):
            expr = expr.value
        elif isinstance(expr, cst.Call):
            expr = expr.func
        elif isinstance(expr, cst.Subscript):
            expr = expr.value
        elif isinstance(expr, cst.Await):
            expr = expr.expression
        else:
            return expr


def _root_key(expr: cst.BaseExpression) -> tuple[str | None, bool]:
    root = _root(expr)
    if isinstance(root, cst.Name):
        return root.value, False
    return None, isinstance(root, _LITERALS)


def _target_names(target: cst.BaseExpression) -> Iterable[cst.BaseExpression]:
    """The simple targets of an assignment target (tuples unpacked)."""
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _target_names(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _target_names(target.value)
    else:
        yield target


class _Collector(cst.CSTVisitor):
    """One pass over a module: what it binds, where, and what it imports."""

    def __init__(self, info: _Module, neutralizer: _Neutralizer) -> None:
        self.info = info
        self.n = neutralizer
        self.classes: list[_Class | None] = []  # the class whose body is being visited (None: a function)

    # -- scopes ---------------------------------------------------------------------------
    def _in_class(self) -> _Class | None:
        return self.classes[-1] if self.classes else None

    def _bind(self, name: str, kind: str, node: cst.CSTNode | None = None) -> None:
        self.info.bound.add(name)
        owner = self._in_class()
        if owner is not None and kind != "param":
            (owner.methods if kind == "function" else owner.fields).add(name)
            self.n.attr_bindings.setdefault(name, "method" if kind == "function" else "attribute")
            scope = self._class_scope_stack[-1]
            scope.add(name)
        else:
            known = self.n.name_bindings.get(name)
            if known is None or _PRIORITY[kind] < _PRIORITY[known]:
                self.n.name_bindings[name] = kind

    def _bind_target(self, target: cst.BaseExpression, kind: str = "variable") -> None:
        for simple in _target_names(target):
            if isinstance(simple, cst.Name):
                self._bind(simple.value, kind)
            elif isinstance(simple, cst.Attribute):
                root, literal = _root_key(simple.value)
                self.info.writes.append((root, literal, simple.attr.value))
                if root in ("self", "cls"):
                    for owner in reversed(self._method_owners):
                        if owner is not None:
                            owner.attributes.add(simple.attr.value)
                            break

    def visit_Module(self, node: cst.Module) -> None:
        self._class_scope_stack: list[set[str]] = []
        self._method_owners: list[_Class | None] = []

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._bind(node.name.value, "class")
        bases = []
        for arg in node.bases:
            target = arg.value.value if isinstance(arg.value, cst.Subscript) else arg.value
            dotted = get_full_name_for_node(target) or ""
            root = dotted.partition(".")[0]
            bases.append((dotted, root in self.info.external or root in _BUILTINS or not dotted))
        owner = _Class(node.name.value, self.info.name, bases)
        self.n.classes.setdefault(node.name.value, []).append(owner)
        self.classes.append(owner)
        scope: set[str] = set()
        self.info.class_scopes[id(node)] = scope
        self._class_scope_stack.append(scope)
        self._method_owners.append(owner)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.classes.pop()
        self._class_scope_stack.pop()
        self._method_owners.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._bind(node.name.value, "function")
        owner = self._in_class()
        params = [p.name.value for p in _all_params(node.params)]
        self.n.functions.setdefault(node.name.value, []).append(params)
        if owner is not None and node.name.value == "__init__":
            owner.init_params = params
        self.classes.append(None)
        if owner is None:
            self._method_owners.append(self._method_owners[-1] if self._method_owners else None)
        else:
            self._method_owners.append(owner)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.classes.pop()
        self._method_owners.pop()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.classes.append(None)

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self.classes.pop()

    def visit_Param(self, node: cst.Param) -> None:
        self.info.bound.add(node.name.value)
        known = self.n.name_bindings.get(node.name.value)
        if known is None or _PRIORITY["param"] < _PRIORITY[known]:
            self.n.name_bindings[node.name.value] = "param"

    # -- binding forms --------------------------------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind_target(target.target)
            if isinstance(target.target, cst.Name) and target.target.value == "__all__":
                self._all_strings(node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind_target(node.target)
        if isinstance(node.target, cst.Name) and node.target.value == "__all__":
            self._all_strings(node.value)

    def _all_strings(self, value: cst.BaseExpression) -> None:
        if isinstance(value, (cst.List, cst.Tuple)):
            for element in value.elements:
                if isinstance(element.value, cst.SimpleString):
                    self.info.all_strings.add(id(element.value))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind_target(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._bind_target(node.target)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bind_target(node.target)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind_target(node.asname.name)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._bind_target(node.name.name)

    def visit_ExceptStarHandler(self, node: cst.ExceptStarHandler) -> None:
        if node.name is not None:
            self._bind_target(node.name.name)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind_target(node.target)

    def visit_Global(self, node: cst.Global) -> None:
        for item in node.names:
            self.info.bound.add(item.name.value)
            self.n.name_bindings.setdefault(item.name.value, "variable")

    visit_Nonlocal = visit_Global  # type: ignore[assignment]

    def visit_MatchAs(self, node: cst.MatchAs) -> None:
        if node.name is not None:
            self._bind(node.name.value, "variable")

    def visit_MatchStar(self, node: cst.MatchStar) -> None:
        if node.name is not None:
            self._bind(node.name.value, "variable")

    def visit_MatchMapping(self, node: cst.MatchMapping) -> None:
        if node.rest is not None:
            self._bind(node.rest.value, "variable")

    # -- imports and reads ----------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            dotted = get_full_name_for_node(alias.name) or ""
            bound = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) \
                else dotted.partition(".")[0]
            (self.info.user_modules if self.n.is_user_module(dotted) else self.info.external).add(bound)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        user = bool(node.relative) or self.n.is_user_module(get_full_name_for_node(node.module) or "")
        if isinstance(node.names, cst.ImportStar):
            if not user:
                self.info.star_external = True
            return
        for alias in node.names:
            imported = get_full_name_for_node(alias.name) or ""
            bound = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) \
                else imported
            if not user:
                self.info.external.add(bound)
            elif imported in self.n.module_stems:
                self.info.user_modules.add(bound)
            elif alias.asname is not None:
                self._bind(bound, "variable")

    def visit_Attribute(self, node: cst.Attribute) -> None:
        root, literal = _root_key(node.value)
        self.info.reads.append((root, literal, node.attr.value))


def _all_params(params: cst.Parameters) -> list[cst.Param]:
    found = [*params.posonly_params, *params.params, *params.kwonly_params]
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            found.append(star)
    return found


class _Neutralizer:
    """The decisions for one set of modules: which identifier becomes which neutral name, where."""

    def __init__(self, sources: Mapping[str, str]) -> None:
        self.name_bindings: dict[str, str] = {}  # bare names the user binds -> kind
        self.attr_bindings: dict[str, str] = {}  # attributes the user binds -> kind
        self.functions: dict[str, list[list[str]]] = {}
        self.classes: dict[str, list[_Class]] = {}
        self.modules: dict[str, _Module] = {}
        self.module_names = {_module_name(path, sources) for path in sources} | {
            _dotted(path) for path in sources
        }
        self.module_prefixes = {
            ".".join(parts[:i]) for name in self.module_names for parts in [name.split(".")] for i in
            range(1, len(parts) + 1)
        }
        self.module_stems = {part for name in self.module_prefixes for part in name.split(".")}
        for path, text in sources.items():
            try:
                tree = cst.parse_module(text)
            except Exception:  # noqa: BLE001 - a module libcst cannot parse stays as it is
                continue
            if tree.code != text:  # libcst does not give this text back exactly: leave it alone
                continue
            info = self.modules[path] = _Module(_module_name(path, sources), tree)
            tree.visit(_Collector(info, self))
        self._decide()

    def is_user_module(self, dotted: str) -> bool:
        return bool(dotted) and dotted in self.module_prefixes

    # -- decisions ------------------------------------------------------------------------
    def _library_attribute(self, info: _Module, root: str | None, literal: bool) -> bool:
        if literal:
            return True
        if root is None:
            return False
        return root in info.external or (root in _BUILTINS and root not in info.bound)

    def _external_ancestry(self, cls: _Class, seen: frozenset[int] = frozenset()) -> bool:
        if id(cls) in seen:
            return False
        for dotted, library in cls.bases:
            if dotted in _NEUTRAL_BASES:
                continue
            users = self.classes.get(dotted.rpartition(".")[2], []) if not library else []
            if not users:
                return True
            if any(self._external_ancestry(base, seen | {id(cls)}) for base in users):
                return True
        return False

    def _decide(self) -> None:
        kept_attributes = set(PROTOCOL_ATTRIBUTES | VOCABULARY_METHODS)
        for info in self.modules.values():
            for root, literal, attr in info.reads + info.writes:
                if self._library_attribute(info, root, literal):
                    kept_attributes.add(attr)
            for root, literal, attr in info.writes:
                if not self._library_attribute(info, root, literal):
                    self.attr_bindings.setdefault(attr, "attribute")
        for group in self.classes.values():
            for cls in group:
                if self._external_ancestry(cls):
                    kept_attributes |= cls.fields | cls.methods
                    kept_attributes |= {a for a in cls.attributes if not a.startswith("_")}
        kept_names = _BUILTINS | _KEPT_NAMES | self.module_stems | FRAMEWORK_CLASSES
        self.name_ok = {
            n for n in self.name_bindings if n not in kept_names and not _dunder(n) and n not in keyword.kwlist
        }
        self.attr_ok = {n for n in self.attr_bindings if n not in kept_attributes and not _dunder(n)}
        kinds = {**{n: self.attr_bindings[n] for n in self.attr_ok}, **{n: self.name_bindings[n] for n in self.name_ok}}
        taken = set(self.name_bindings) | set(self.attr_bindings) | _all_identifiers(self.modules.values())
        self.new: dict[str, str] = {}
        counter = 0
        for name in sorted(kinds):
            prefix = _PREFIX[kinds[name]]
            underscores = len(name) - len(name.lstrip("_"))
            while True:
                counter += 1
                candidate = "_" * underscores + f"{prefix}{counter}"
                if candidate not in taken:
                    break
            self.new[name] = candidate
        self.keywords = self._keywords()

    def _keywords(self) -> dict[str, dict[str, str]]:
        """Callee name -> {keyword: new keyword} for the user's own functions and classes."""
        found: dict[str, dict[str, str]] = {}
        for callee, signatures in self.functions.items():
            for params in signatures:
                for p in params:
                    if p in self.name_ok:
                        found.setdefault(callee, {})[p] = self.new[p]
        for callee, group in self.classes.items():
            for cls in group:
                for owner in self._user_mro(cls):
                    if owner.init_params is not None:
                        names = {p: p in self.name_ok for p in owner.init_params}
                        break
                else:
                    names = {f: f in self.attr_ok for o in self._user_mro(cls) for f in o.fields}
                for keyword_name, renamed in names.items():
                    if renamed:
                        found.setdefault(callee, {})[keyword_name] = self.new[keyword_name]
        return found

    def _user_mro(self, cls: _Class) -> list[_Class]:
        order, queue, seen = [], [cls], set()
        while queue:
            current = queue.pop(0)
            if id(current) in seen:
                continue
            seen.add(id(current))
            order.append(current)
            for dotted, library in current.bases:
                if not library:
                    queue.extend(self.classes.get(dotted.rpartition(".")[2], []))
        return order

    # -- per-occurrence rules ------------------------------------------------------------
    def bare(self, info: _Module, name: str) -> str | None:
        if name in info.external or name not in self.name_ok:
            return None
        if info.star_external and name not in info.bound:
            return None
        return self.new[name]

    def attribute(self, info: _Module, node: cst.Attribute) -> str | None:
        name = node.attr.value
        value = node.value
        if self._user_module_path(info, value):
            return self.new.get(name) if name in self.name_ok else None
        root, literal = _root_key(value)
        if self._library_attribute(info, root, literal) or name not in self.attr_ok:
            return None
        return self.new[name]

    def _user_module_path(self, info: _Module, value: cst.BaseExpression) -> bool:
        """Whether ``value`` names one of the user's modules (``recovery``, ``pkg.memory``):
        its attributes are that module's globals."""
        while isinstance(value, cst.Attribute):
            if value.attr.value not in self.module_stems:
                return False
            value = value.value
        return isinstance(value, cst.Name) and value.value in info.user_modules

    def callee_keywords(self, info: _Module, func: cst.BaseExpression) -> Mapping[str, str]:
        if isinstance(func, cst.Name):
            if func.value in info.external or (func.value in _BUILTINS and func.value not in info.bound):
                return {}
            return self.keywords.get(func.value, {})
        if isinstance(func, cst.Attribute):
            root, literal = _root_key(func.value)
            if self._library_attribute(info, root, literal):
                return {}
            return self.keywords.get(func.attr.value, {})
        return {}


_PRIORITY = {"class": 0, "function": 1, "param": 2, "variable": 3}
_PREFIX = {"class": "C", "function": "f", "method": "f", "param": "a", "variable": "v", "attribute": "m"}


def _dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _all_identifiers(modules: Iterable[_Module]) -> set[str]:
    found: set[str] = set()

    class Names(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            found.add(node.value)

    for info in modules:
        info.tree.visit(Names())
    return found


def _dotted(path: str) -> str:
    stem = path[:-4] if path.endswith(".pyi") else path[:-3] if path.endswith(".py") else path
    parts = [p for p in stem.split("/") if p]
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _module_name(path: str, sources: Mapping[str, str]) -> str:
    """The name the module is imported by: from the topmost folder that is a package."""
    parts = [p for p in _dotted(path).split(".") if p]
    if not parts:
        return ""
    folders = path.split("/")[:-1]
    start = len(folders)
    while start > 0 and "/".join(folders[:start]) + "/__init__.py" in sources:
        start -= 1
    is_init = path.endswith(("__init__.py", "__init__.pyi"))
    keep = len(folders) - start + (0 if is_init else 1)
    return ".".join(parts[len(parts) - keep:]) if keep else parts[-1]


class _Renamer(cst.CSTTransformer):
    """The second pass: apply the decisions, one identifier at a time."""

    def __init__(self, n: _Neutralizer, info: _Module) -> None:
        self.n = n
        self.info = info
        self.fixed: dict[int, str | None] = {}  # id(Name) -> new value, or None: keep
        self.frames: list[set[str] | None] = []  # class body names, or None in a function
        self.bodies: dict[int, set[str] | None] = {}

    def _class_names(self) -> set[str] | None:
        return self.frames[-1] if self.frames else None

    def _member(self, name: str) -> str | None:
        return self.n.new[name] if name in self.n.attr_ok else None

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        scope = self._class_names()
        self.fixed[id(node.name)] = self._member(node.name.value) if scope is not None else self.n.bare(
            self.info, node.name.value
        )
        self.bodies[id(node.body)] = self.info.class_scopes.get(id(node), set())
        for arg in node.keywords:
            if arg.keyword is not None:
                self.fixed[id(arg.keyword)] = None

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        scope = self._class_names()
        self.fixed[id(node.name)] = self._member(node.name.value) if scope is not None else self.n.bare(
            self.info, node.name.value
        )
        self.bodies[id(node.body)] = None

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.bodies[id(node.body)] = None

    def on_visit(self, node: cst.CSTNode) -> bool:
        if id(node) in self.bodies:
            self.frames.append(self.bodies[id(node)])
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):  # type: ignore[no-untyped-def]
        result = super().on_leave(original_node, updated_node)
        if id(original_node) in self.bodies:
            self.frames.pop()
        return result

    def visit_Param(self, node: cst.Param) -> None:
        self.fixed[id(node.name)] = self.n.bare(self.info, node.name.value)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        # an import's dotted module (`from pkg.sdk.llm import X`) was already kept whole
        self.fixed.setdefault(id(node.attr), self.n.attribute(self.info, node))

    def visit_Call(self, node: cst.Call) -> None:
        keywords = self.n.callee_keywords(self.info, node.func)
        for arg in node.args:
            if arg.keyword is not None:
                self.fixed[id(arg.keyword)] = keywords.get(arg.keyword.value)

    def visit_Import(self, node: cst.Import) -> bool:
        return False  # module names and their aliases stay

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.module is not None:
            self._keep_all(node.module)
        if isinstance(node.names, cst.ImportStar):
            return
        user = bool(node.relative) or self.n.is_user_module(get_full_name_for_node(node.module) or "")
        for alias in node.names:
            if not user:
                self._keep_all(alias.name)
                if alias.asname is not None:
                    self._keep_all(alias.asname.name)

    def _keep_all(self, node: cst.CSTNode) -> None:
        if isinstance(node, cst.Name):
            self.fixed[id(node)] = None
        elif isinstance(node, cst.Attribute):
            self._keep_all(node.value)
            self.fixed[id(node.attr)] = None

    def visit_MatchKeywordElement(self, node: cst.MatchKeywordElement) -> None:
        self.fixed[id(node.key)] = self._member(node.key.value)

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        key = id(original_node)
        if key in self.fixed:
            new = self.fixed[key]
        else:
            scope = self._class_names()
            if scope is not None and original_node.value in scope:
                new = self._member(original_node.value)
            else:
                new = self.n.bare(self.info, original_node.value)
        return updated_node.with_changes(value=new) if new else updated_node

    def leave_SimpleString(self, original_node: cst.SimpleString, updated_node: cst.SimpleString) -> cst.SimpleString:
        if id(original_node) not in self.info.all_strings:
            return updated_node
        value = original_node.evaluated_value
        if isinstance(value, str) and value in self.n.name_ok and value not in self.info.external:
            quote = original_node.quote
            return updated_node.with_changes(value=f"{original_node.prefix}{quote}{self.n.new[value]}{quote}")
        return updated_node


def neutralize(sources: Mapping[str, str]) -> dict[str, str]:
    """``sources`` (posix path -> text) with the user's identifiers renamed to neutral names.

    All modules are renamed together, so a name keeps its meaning across them;
    the result has the same paths, the same number of lines, the same comments."""
    neutralizer = _Neutralizer(sources)
    result = {}
    for path, text in sources.items():
        info = neutralizer.modules.get(path)
        result[path] = text if info is None else info.tree.visit(_Renamer(neutralizer, info)).code
    return result


@lru_cache(maxsize=1)
def protected_names() -> frozenset[str]:
    """Every attribute name kept whatever the code does (for tests and reports)."""
    return PROTOCOL_ATTRIBUTES | VOCABULARY_METHODS
