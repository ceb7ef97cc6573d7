"""Per-function evidence: which values are summary state, and what each call is.

Built once per function analysis, flow-insensitively: assignments (followed
transitively), attribute reads (``x.generation`` makes ``x`` summary-like
whatever its name), parameters and their annotations. On top of that, the
recognizers answer the questions the flow analysis and the rules ask about a
call: is it a resume (and which checks does it need), a validator (and which
checks does it establish), a call that never returns, a tool call? Each answer
combines votes: a qualified name or a decorator is enough on its own; a name
pattern only counts when another vote agrees.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import libcst as cst

from summaryguard.plugins.framework import FrameworkModel

from . import lexicon
from .annotations import annotated_class, field_annotation, param_annotation, return_annotation
from .arguments import bound_arguments
from .conditions import ALL_KINDS, DEPS, GENERATION, PARTIAL, Context
from .facts import NAME, VALUE, Step
from .names import dotted, last_segment, shown
from .project import FunctionInfo, Project
from .behaviour import BOTTOM, Soft, FunctionSummary
from .syntax import (
    calls_in,
    expressions_of,
    identifiers,
    is_none,
    iter_exprs,
    key_read,
    string_value,
    walk_statements,
)

__all__ = ["Evidence", "Requirement"]

_TB_HEADS = frozenset({"tf", "tensorflow", "keras", "tb", "tensorboard", "torch"})
_CONTEXT_WORDS = ("context", "ctx", "state", "session", "memory", "checkpoint", "ckpt", "summar", "snapshot")
_MODEL_KINDS = {"generation": GENERATION, "partial": PARTIAL, "deps": DEPS}


#: Keys whose reading makes a mapping summary state on its own (``checkpoint["summary"]``).
#: A bare ``"generation"`` is not one: an evolutionary-algorithm checkpoint has one too.
_STRONG_SUMMARY_KEYS = lexicon.STRONG_SUMMARY_ATTRS - {"generation"}
#: Keys that count only two together (``ckpt["partial"]`` alone may be a download's).
_GUARANTEE_KEYS = lexicon.GUARANTEE_ATTRS | {"generation"}


def _returns_tool(fn: FunctionInfo) -> bool:
    """``def make_tools(): @tool def create_vm(): ...; return create_vm``."""
    for stmt in walk_statements(fn.body):
        if isinstance(stmt, cst.Return) and stmt.value is not None:
            for node in iter_exprs(stmt.value):
                if isinstance(node, cst.Name) and node.value in fn.nested and fn.nested[node.value].is_tool:
                    return True
    return False


def _assigned_in(fn: FunctionInfo, name: str) -> list[cst.BaseExpression]:
    """The values ``name`` is bound to by plain assignments in ``fn``'s own body."""
    found: list[cst.BaseExpression] = []
    for stmt in walk_statements(fn.body):
        if isinstance(stmt, cst.Assign):
            for target in stmt.targets:
                if isinstance(target.target, cst.Name) and target.target.value == name:
                    found.append(stmt.value)
        elif isinstance(stmt, cst.AnnAssign) and stmt.value is not None:
            if isinstance(stmt.target, cst.Name) and stmt.target.value == name:
                found.append(stmt.value)
    return found


@dataclass(frozen=True)
class Requirement:
    """A resume from summary state: the checks it needs, how a message names it,
    and the evidence that it resumes from a summary (source first)."""

    kinds: frozenset[str]
    label: str
    trace: tuple[Step, ...] = ()
    #: The project function that resumes inside, when the call is one of those:
    #: where its finding is reported depends on whether any caller checks.
    callee: FunctionInfo | None = None
    #: The parameter whose value is resumed, when only a caller can show it is summary state.
    through: str | None = None


@dataclass(frozen=True)
class _Profile:
    """Names (incl. attribute names), attribute names, all words (names and
    identifier-like strings) and calls of one expression."""

    names: frozenset[str]
    attrs: frozenset[str]
    words: frozenset[str]
    calls: tuple[cst.Call, ...]
    #: The expression reads TensorBoard/Keras summaries (``tf.summary``): metrics.
    metrics: bool

    @classmethod
    def of(cls, expr: cst.CSTNode) -> _Profile:
        names: set[str] = set()
        attrs: set[str] = set()
        strings: set[str] = set()
        calls: list[cst.Call] = []
        metrics = False
        for node in iter_exprs(expr):
            kind = type(node)  # type tests: see Evidence._collect
            if kind is cst.Name:
                names.add(node.value)
            elif kind is cst.Attribute:
                attrs.add(node.attr.value)
                if node.attr.value in ("summary", "summaries"):
                    head = dotted(node)
                    metrics = metrics or (head is not None and head.partition(".")[0] in _TB_HEADS)
            elif kind is cst.Call:
                calls.append(node)
            elif kind is cst.SimpleString:
                value = string_value(node)
                if isinstance(value, str) and value.isidentifier():
                    strings.add(value)
        calls.reverse()
        return cls(frozenset(names), frozenset(attrs), frozenset(names | strings), tuple(calls), metrics)


class Evidence(Context):
    """Everything known about one function's values, and the call recognizers."""

    def __init__(self, fn: FunctionInfo, project: Project, summaries: Mapping[FunctionInfo, FunctionSummary]) -> None:
        self.fn = fn
        self.project = project
        self.vocab = project.vocabulary
        self.imports = fn.module.imports
        self.summaries = summaries
        self.assigned: dict[str, list[cst.BaseExpression]] = {}
        #: ``a, b = f()``: which element of each value a name was unpacked from (by the value's id).
        self.positions: dict[str, dict[int, int]] = {}
        self.attr_reads: dict[str, set[str]] = {}
        #: Keys read from a name by ``name["key"]`` / ``name.get("key")`` (a checkpoint read as a dict).
        self.key_reads: dict[str, set[str]] = {}
        self.callees: set[FunctionInfo] = set()
        #: Where a name first shows it is summary state, resumed or restored: a trace's source.
        self.origin: dict[str, Step] = {}
        #: The first read of each (name, attribute or key), for :attr:`origin`.
        self._reads: dict[tuple[str, str], cst.CSTNode] = {}
        self._resolved: dict[cst.Call, FunctionInfo | None] = {}
        self._profiles: dict[cst.CSTNode, _Profile] = {}
        self._collect()
        #: FunctionSummary objects by usage (``.verbatim_refs`` / ``.generation`` read, a summary type):
        #: resumed state on their own. ``summary_like`` adds names and word-level flow.
        self.summary_objects: set[str] = set()
        self.summary_like = self._summary_like()
        self.checkpoint_like = {n for n in self._names() if lexicon.is_checkpoint_name(n)}
        self.restored: set[str] = set()
        #: Values that came back from a resume for certain (data flow from a resume
        #: call, a load of a checkpoint carrying a summary, a summary object), never
        #: a name alone: the containers SG201 may trust on their own.
        self.resumed: set[str] = set()
        if fn.resumes_state is not None and fn.params:
            # A graph node's input is the graph state: on a resume it is what the
            # checkpoint (and the summary folded into it) restored.
            state = fn.params[1] if fn.params[0] in ("self", "cls") and len(fn.params) > 1 else fn.params[0]
            self.resumed.add(state)
            self.origin.setdefault(state, fn.resumes_state)
        self._taint()

    # -- collection ----------------------------------------------------------------------

    def _names(self) -> set[str]:
        return set(self.fn.params) | set(self.assigned)

    def _collect(self) -> None:
        for stmt in walk_statements(self.fn.body):
            stmt_kind = type(stmt)  # type tests, as below
            if stmt_kind is cst.Assign:
                for target in stmt.targets:
                    self._bind(target.target, stmt.value)
            elif stmt_kind is cst.AnnAssign and stmt.value is not None:
                self._bind(stmt.target, stmt.value)
            elif stmt_kind is cst.For:
                self._bind(stmt.target, stmt.iter)
            elif stmt_kind is cst.With:
                for item in stmt.items:
                    if item.asname is not None:
                        self._bind(item.asname.name, item.item)
            for expr in expressions_of(stmt):
                for node in iter_exprs(expr):
                    # type tests, not isinstance: libcst's ABCMeta makes a failed isinstance a
                    # Python call, and this runs for every node of every analyzed function
                    kind = type(node)
                    if kind is cst.Attribute and type(node.value) is cst.Name:
                        self.attr_reads.setdefault(node.value.value, set()).add(node.attr.value)
                        self._reads.setdefault((node.value.value, "." + node.attr.value), node)
                    elif kind is cst.Subscript or kind is cst.Call:
                        read = key_read(node)
                        if read is not None and isinstance(read[0], cst.Name):
                            self.key_reads.setdefault(read[0].value, set()).add(read[1])
                            self._reads.setdefault((read[0].value, read[1]), node)
                    elif kind is cst.NamedExpr:
                        self._bind(node.target, node.value)

    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression, position: int | None = None) -> None:
        if isinstance(target, cst.Name):
            self.assigned.setdefault(target.value, []).append(value)
            if position is not None:
                self.positions.setdefault(target.value, {})[id(value)] = position
        elif isinstance(target, (cst.Tuple, cst.List)):
            starred = False
            for index, element in enumerate(target.elements):
                starred = starred or isinstance(element, cst.StarredElement)
                # an element's position in the value is known up to the first star, at the top level
                known = index if position is None and not starred else None
                self._bind(element.value, value, known)

    def _summary_like(self) -> set[str]:
        found = set()
        for name in self._names():
            reads = self.attr_reads.get(name, set())
            if name in _TB_HEADS or name in ("self", "cls"):
                # ``self.summary`` is summary state; ``self`` (everything else it holds) is not
                continue
            guarantees = reads & lexicon.GUARANTEE_ATTRS
            named = lexicon.is_summary_name(name) or lexicon.is_checkpoint_name(name)
            annotation = self.fn.annotations.get(name)
            keys = self.key_reads.get(name, set())
            strong_reads = reads & lexicon.STRONG_SUMMARY_ATTRS
            strong_keys = keys & _STRONG_SUMMARY_KEYS
            if strong_reads or len(guarantees) >= 2 or strong_keys or len(keys & _GUARANTEE_KEYS) >= 2:
                self.summary_objects.add(name)
                found.add(name)
                if strong_reads or len(guarantees) >= 2:
                    attr = sorted(strong_reads or guarantees)[0]
                    self._note(name, self._reads.get((name, "." + attr)), f"`{name}.{attr}` is read: summary state")
                else:
                    key = sorted(strong_keys or keys & _GUARANTEE_KEYS)[0]
                    self._note(name, self._reads.get((name, key)), f"`{name}[{key!r}]` is read: summary state")
            elif (guarantees and named) or (annotation and self._is_summary_type(annotation)):
                self.summary_objects.add(name)
                found.add(name)
                self._note(name, None, f"`{name}` is named or annotated as summary state", NAME)
            elif lexicon.is_summary_name(name):
                found.add(name)
                self._note(name, None, f"`{name}` is named like summary state", NAME)
        return found

    def _resumed_origin(self, name: str, value: cst.BaseExpression) -> Step:
        """Where ``name`` shows it holds resumed state: a load, a read of the summary, a resume."""
        path = self.fn.module.path
        if self._rehydrates(value):
            # a load known by its qualified name carries a summary by value; any other
            # load carries one by what its input shows (a name, perhaps)
            source = None if self.vocab.matches("checkpoint-loads", self.qualified(value)) else self.source(value)
            basis = source.basis if source is not None else VALUE
            return Step(path, value, f"`{name}` is loaded from a checkpoint that carries a summary", basis)
        if not isinstance(value, cst.Call):
            source = self.source(value)
            if source is not None:
                return Step(path, value, f"`{name}` holds summary state ({source.note})", source.basis)
        # the resume's own evidence decides: `checkpoint.resume_context()` resumes from
        # summary state only by the name `checkpoint`
        for call in self._profile(value).calls:
            requirement = self.resume_requirement(call)
            if requirement is not None:
                basis = NAME if any(step.basis == NAME for step in requirement.trace) else VALUE
                return Step(path, value, f"`{name}` comes back from a resume", basis)
        source = self.source(value)
        if source is not None:  # read out of resumed state: `doc = ctx["refs"].get("doc")`
            return Step(path, value, f"`{name}` is read from resumed state ({source.note})", source.basis)
        return Step(path, value, f"`{name}` comes back from a resume")

    def _note(self, name: str, node: cst.CSTNode | None, note: str, basis: str = VALUE) -> None:
        """Record where ``name`` first shows what it is (a trace's source)."""
        if name not in self.origin:
            where = node if node is not None else self._binding_node(name)
            self.origin[name] = Step(self.fn.module.path, where, note, basis)

    def _binding_node(self, name: str) -> cst.CSTNode:
        values = self.assigned.get(name)
        return values[0] if values else self.fn.node

    def source(self, expr: cst.CSTNode) -> Step | None:
        """The evidence that summary state flows into ``expr``: a value's flow or use
        before a name alone."""
        profile = self._profile(expr)
        if profile.attrs & lexicon.STRONG_SUMMARY_ATTRS:
            for node in iter_exprs(expr):
                if isinstance(node, cst.Attribute) and node.attr.value in lexicon.STRONG_SUMMARY_ATTRS:
                    return Step(self.fn.module.path, node, f"`.{node.attr.value}` is read: summary state")
        steps = [self.origin[n] for n in sorted(profile.names) if n in self.origin]
        steps.sort(key=lambda s: s.basis != VALUE)
        if steps:
            return steps[0]
        for word in sorted(profile.words):
            if lexicon.is_summary_name(word) or lexicon.is_checkpoint_name(word):
                return Step(self.fn.module.path, expr, f"`{word}` is named like summary or checkpoint state", NAME)
        return None

    def _is_summary_type(self, annotation: str) -> bool:
        qualified = self.imports.qualify_name(annotation)
        return lexicon.is_summary_name(annotation) or (
            qualified.startswith("summaryguard.") and last_segment(qualified) in ("Summary", "Checkpoint")
        )

    def _taint(self) -> None:
        """Follow assignments: summary-like, restored and resumed values."""
        for _ in range(3):
            changed = False
            for name, values in self.assigned.items():
                for value in values:
                    if name not in self.summary_like and self.summary_involved(value):
                        self.summary_like.add(name)
                        changed = True
                        source = self.source(value)
                        if source is not None:
                            self._note(name, value, f"`{name}` is bound to summary state ({source.note})", source.basis)
                    if name not in self.restored and self._is_restore(value):
                        self.restored.add(name)
                        changed = True
                        self._note(name, value, f"`{name}` is loaded from a checkpoint")
                    if name not in self.resumed and self._is_resumed_value(value):
                        self.resumed.add(name)
                        changed = True
                        self.origin[name] = self._resumed_origin(name, value)
                        if name not in self.summary_like and self._rehydrates(value):
                            self.summary_like.add(name)  # a checkpoint that carries a summary is summary state
            if not changed:
                break

    # -- value questions -----------------------------------------------------------------

    def _profile(self, expr: cst.CSTNode) -> _Profile:
        """The words and calls of an expression, computed once per node."""
        profile = self._profiles.get(expr)
        if profile is None:
            profile = self._profiles[expr] = _Profile.of(expr)
        return profile

    def summary_involved(self, expr: cst.CSTNode) -> bool:
        """Does summary state flow into ``expr`` (by usage, flow or name)?"""
        profile = self._profile(expr)
        if profile.metrics:
            return False
        if profile.attrs & lexicon.STRONG_SUMMARY_ATTRS or profile.names & self.summary_like:
            return True
        return any(lexicon.is_summary_name(w) for w in profile.words if w not in _TB_HEADS)

    def checkpoint_involved(self, expr: cst.CSTNode) -> bool:
        profile = self._profile(expr)
        return bool(profile.names & self.checkpoint_like) or any(
            lexicon.is_checkpoint_name(w) for w in profile.words
        )

    def resumed_state(self, expr: cst.CSTNode, *, strong: bool = False) -> bool:
        """Is ``expr`` (a container or a looked-up value) state that came back from a resume?

        ``strong``: only by data flow (:attr:`resumed`, :attr:`summary_objects`);
        otherwise a name (``summary``, ``resume_state``) or a load of any state
        is one vote too."""
        names = self._profile(expr).names
        if names & self.resumed or names & self.summary_objects:
            return True
        if strong:
            return False
        return bool(names & self.restored or names & self.summary_like) or any(
            lexicon.is_resumed_state_name(n) for n in names
        )

    def _rehydrates(self, value: cst.BaseExpression) -> bool:
        """A load of a checkpoint that carries a summary: summary state in the load
        (``Context.from_dict(ckpt["summary"])``), our own checkpoint loads, or a
        framework checkpoint load of a graph that summarizes."""
        if not isinstance(value, cst.Call) or not self._is_restore(value):
            return False
        if self.summary_involved(value):
            return True
        qualified = self.qualified(value)
        if not self.vocab.matches("checkpoint-loads", qualified):
            return False
        if qualified.startswith("summaryguard."):
            return True
        # a framework checkpoint load (``graph.get_state(config)``) of a graph that summarizes
        graphs = self.project.graphs
        func = value.func
        return graphs is not None and isinstance(func, cst.Attribute) and graphs.summarizer(func.value, self.fn) is not None

    def _is_restore(self, value: cst.BaseExpression) -> bool:
        if type(value) is cst.Await:  # `session = await service.get_session(...)` (type tests: ABCMeta)
            value = value.expression
        if type(value) is not cst.Call:
            return False
        name = dotted(value.func) or ""
        qualified = self.qualified(value)
        if qualified.startswith("summaryguard.") and self.vocab.matches("checkpoint-loads", qualified):
            return True  # summaryguard's own checkpoints always carry a summary
        loads = last_segment(name) in lexicon.LOAD_METHODS or self.vocab.matches("checkpoint-loads", qualified)
        if not loads:
            return False
        words = " ".join(identifiers(value)).lower()
        return any(w in words for w in _CONTEXT_WORDS) or self.summary_involved(value)

    def _is_resumed_value(self, value: cst.BaseExpression) -> bool:
        """Does ``value`` come from a resume (by data flow, not by name)?"""
        for node in self._profile(value).calls:
            callee = self.resolve(node)
            if callee is not None and self.behaviour(callee).returns_resumed:
                return True
            if self.resume_requirement(node) is not None:
                return True
        return self._rehydrates(value) or self.resumed_state(value, strong=True)

    # -- calls ---------------------------------------------------------------------------

    def resolve(self, call: cst.Call) -> FunctionInfo | None:
        if call in self._resolved:
            return self._resolved[call]
        found = self.project.resolve(call.func, self.fn)
        self._resolved[call] = found
        if found is not None:
            self.callees.add(found)
        return found

    def behaviour(self, fn: FunctionInfo) -> FunctionSummary:
        return self.summaries.get(fn, BOTTOM)

    def qualified(self, call: cst.Call) -> str:
        """The qualified name of what ``call`` calls. A method on a receiver built by a
        constructor (``store = CheckpointStore(p)``; ``self.store`` set to one in the class;
        ``CheckpointStore(p).latest()``) is named by the class: ``...CheckpointStore.load``,
        what the value is, not what the local is called."""
        func = call.func
        if type(func) is cst.Attribute:  # type tests: libcst's isinstance goes through ABCMeta
            cls = self._constructed_class(func.value)
            if cls is not None:
                return f"{cls}.{func.attr.value}"
        return self.imports.qualify(func) or ""

    def _constructed_class(self, receiver: cst.BaseExpression) -> str | None:
        """The qualified class ``receiver`` is an instance of, when one constructor builds it."""
        values: list[cst.BaseExpression]
        positions: dict[int, int] = {}
        kind = type(receiver)  # type tests: libcst's isinstance goes through ABCMeta
        if kind is cst.Call:
            values = [receiver]
        elif kind is cst.Name and receiver.value in self.fn.params:
            # typed code says what a parameter is (``session: ClientSession``)
            return annotated_class(param_annotation(self.fn, receiver.value), self.imports)
        elif kind is cst.Name:
            values = self.assigned.get(receiver.value, [])
            positions = self.positions.get(receiver.value, {})
        elif (
            kind is cst.Attribute
            and type(receiver.value) is cst.Name
            and receiver.value.value == "self"
            and self.fn.class_name is not None
        ):
            values = self._self_attribute_values(receiver.attr.value)
            if not values:  # a declared field (``llm: LLM`` in a pydantic model or a dataclass)
                declared = field_annotation(self.fn.module, self.fn.class_name, receiver.attr.value)
                return annotated_class(declared, self.imports)
        else:
            return None
        classes = {self._class_called(v, positions.get(id(v))) for v in values}
        if len(classes) != 1:
            return None
        return classes.pop()

    def _class_called(self, value: cst.BaseExpression, position: int | None = None) -> str | None:
        """The class of what ``value`` evaluates to: a constructor's class, or the class a
        project function's return annotation names (element ``position`` of a tuple)."""
        if type(value) is cst.Await:  # type tests, as in _constructed_class
            value = value.expression
        if type(value) is not cst.Call:
            return None
        qualified = self.imports.qualify(value.func)
        if position is None and qualified and last_segment(qualified)[:1].isupper():
            return qualified
        callee = self.project.resolve(value.func, self.fn)
        if callee is None:
            return None
        return annotated_class(return_annotation(callee), callee.module.imports, position)

    def _self_attribute_values(self, attr: str) -> list[cst.BaseExpression]:
        """What the class's methods assign to ``self.<attr>``."""
        assigned = self.project.attribute_assignments(self.fn.module, self.fn.class_name, attr)
        return [value for value, _, receiver in assigned if receiver == "self"]

    def _through_import(self, call: cst.Call) -> bool:
        name = dotted(call.func) or ""
        return name.partition(".")[0] in self.imports.aliases

    def validator_kinds(self, call: cst.Call) -> frozenset[str]:
        """Kinds a normal return of ``call`` guarantees."""
        callee = self.resolve(call)
        if callee is not None:
            if callee.is_guarded:
                return ALL_KINDS
            return self.behaviour(callee).establishes
        qualified = self.qualified(call)
        if self.vocab.matches("validators", qualified) and (self._through_import(call) or "." in qualified):
            return ALL_KINDS
        return frozenset()

    def validator_softs(self, call: cst.Call) -> frozenset[Soft]:
        """Soft checks inside the callee that reach its caller (an ``assert`` in a validator)."""
        callee = self.resolve(call)
        return self.behaviour(callee).soft if callee is not None else frozenset()

    def always_raises(self, call: cst.Call) -> bool:
        callee = self.resolve(call)
        if callee is not None:
            return self.behaviour(callee).always_raises
        return self.qualified(call) in lexicon.EXIT_CALLS

    def resume_requirement(self, call: cst.Call) -> Requirement | None:
        """If ``call`` resumes from summary state: the checks it needs, its label, its evidence."""
        path = self.fn.module.path
        callee = self.resolve(call)
        if callee is not None:
            if callee.is_guarded:
                return Requirement(frozenset(), f"`{callee.name}()` (guarded by resume_guard)")
            summary = self.behaviour(callee)
            if summary.resumes:
                step = Step(path, call, f"`{callee.name}()` resumes from summary state inside it")
                return Requirement(summary.needs, f"`{callee.name}()` (which resumes inside)", (step,), callee)
            if summary.resumes_through:
                return self._resume_through(call, callee, summary)
            return None
        name = dotted(call.func)
        if name is None:
            return None
        last = last_segment(name)
        if not last or last[0].isupper():
            return None
        qualified = self.imports.qualify_name(name)
        receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
        inputs = [a.value for a in call.args] + ([receiver] if receiver is not None else [])
        label = f"`{shown(name)}()`"
        framework = self._framework_resume(call, receiver, last)
        if framework is not None:
            return framework if framework.kinds else None
        run = self._run_call_resume(call, qualified, label)
        if run is not None:
            return run if run.kinds else None
        if self.vocab.matches("resume-calls", qualified):
            involved = [x for x in inputs if self.summary_involved(x) or self.checkpoint_involved(x)]
            if self._through_import(call) or involved:
                sources = [s for s in map(self.source, involved) if s is not None]
                sources.sort(key=lambda s: s.basis != VALUE)
                return Requirement(ALL_KINDS, label, tuple(sources[:1]))
        if last in lexicon.WEAK_RESUME_NAMES:
            involved = [x for x in inputs if self.summary_involved(x)]
            if involved:
                sources = [s for s in map(self.source, involved) if s is not None]
                sources.sort(key=lambda s: s.basis != VALUE)
                return Requirement(ALL_KINDS, label, tuple(sources[:1]))
            through = self._parameter_among(a.value for a in call.args)
            if through is not None:
                return Requirement(ALL_KINDS, label, through=through)
        if last in lexicon.RUN_METHODS:
            for arg in call.args:
                if isinstance(arg.value, cst.Name) and arg.value.value in self.restored:
                    if self.summary_involved(arg.value) or self._restored_from_summary(arg.value.value):
                        origin = self.origin.get(arg.value.value)
                        return Requirement(ALL_KINDS, label, (origin,) if origin is not None else ())
        return None

    def _parameter_among(self, values: Iterable[cst.BaseExpression]) -> str | None:
        """The first value that is one of this function's own parameters, as it came in."""
        for value in values:
            if (
                isinstance(value, cst.Name)
                and value.value in self.fn.params
                and value.value not in ("self", "cls")
                and value.value not in self.assigned
            ):
                return value.value
        return None

    def _resume_through(self, call: cst.Call, callee: FunctionInfo, summary: FunctionSummary) -> Requirement | None:
        """A call of a function that resumes what one of its parameters receives: a resume
        when this call passes summary state there (or passes its own parameter on)."""
        arguments = bound_arguments(call, callee)
        label = f"`{callee.name}()` (which resumes what it is given)"
        path = self.fn.module.path
        for param, kinds in sorted(summary.resumes_through, key=lambda t: t[0]):
            argument = arguments.get(param)
            if argument is None:
                continue
            if self.summary_involved(argument):
                source = self.source(argument)
                step = Step(path, call, f"`{callee.name}()` resumes its parameter `{param}`, given summary state here")
                return Requirement(kinds, label, (source, step) if source is not None else (step,))
            through = self._parameter_among([argument])
            if through is not None:
                return Requirement(kinds, label, through=through)
        return None

    def _framework_resume(self, call: cst.Call, receiver: cst.BaseExpression | None, last: str) -> Requirement | None:
        """A framework's resume (a model's ``resume_methods`` given a resume input) of a
        graph that summarizes; the checks it needs are those its framework does not
        guarantee. A graph wrapped by a validator (``guard_graph(graph)``) needs none."""
        graphs = self.project.graphs
        if receiver is None or graphs is None:
            return None
        for model in self.vocab.frameworks:
            if last not in model.resume_methods or not self._resume_input(call, model):
                continue
            label = f"`{shown(dotted(call.func) or last)}()`"
            if self._guarded_graph(receiver):
                return Requirement(frozenset(), label)  # guard_graph checks the invariant before the run
            source = graphs.summarizer(receiver, self.fn)
            if source is None:
                return Requirement(frozenset(), label)  # a graph without summarization resumes no summary
            # What the framework whose summarizer built this graph guarantees of its summaries
            # (one framework's summary is not another's), else what the resume's framework does.
            owner = graphs.framework_of(source) or model
            kinds = ALL_KINDS - {_MODEL_KINDS[k] for k in owner.guarantees}
            resumes = Step(self.fn.module.path, call, f"`{shown(dotted(call.func) or last)}()` continues the thread "
                           "from its checkpoint")
            return Requirement(frozenset(kinds), label, (source, resumes))
        return None

    def _run_call_resume(self, call: cst.Call, qualified: str, label: str) -> Requirement | None:
        """A model's ``run_calls`` (``Runner.run(agent, state, session=session)``): the run continues
        what its arguments hold. It resumes from summary state when it is handed restored state
        (a loaded run state) and one of its arguments was built by a compaction-call (a session
        that compacts). A run that continues a live session resumes nothing: no checkpoint was
        restored (SPEC §3.1: the resume continues the agent from restored state), and a
        human-approval resume of an agent whose session does not compact resumes no summary."""
        for model in self.vocab.frameworks:
            if qualified not in model.run_calls:
                continue
            if model.run_guards and self._module_installs(model.run_guards):
                return Requirement(frozenset(), label)  # the module installed a checked runner at import
            restored = self._restored_argument(call)
            if restored is None:
                return Requirement(frozenset(), label)
            for arg in call.args:
                built = self._built_by_compaction(arg.value)
                if built is None:
                    continue
                kinds = ALL_KINDS - {_MODEL_KINDS[k] for k in model.guarantees}
                path = self.fn.module.path
                source = Step(path, built, f"`{shown(dotted(built.func) or '')}(...)` compacts the history it holds")
                steps = (restored, source, Step(path, call, f"{label} continues that history"))
                return Requirement(frozenset(kinds), label, steps)
            return Requirement(frozenset(), label)
        return None

    def _restored_argument(self, call: cst.Call) -> Step | None:
        """Where an argument of ``call`` was restored (a checkpoint load, directly or by name)."""
        return self._restored_among(arg.value for arg in call.args)

    def _restored_among(self, values: Iterable[cst.BaseExpression]) -> Step | None:
        """Where the first restored value of ``values`` was restored (a checkpoint load, directly or by name)."""
        path = self.fn.module.path
        for value in values:
            if isinstance(value, cst.Name) and value.value in self.restored:
                return self.origin.get(value.value) or Step(path, value, f"`{value.value}` is loaded from a checkpoint")
            for candidate in self._with_bindings(value):
                if isinstance(candidate, cst.Await):  # `state = await RunState.from_string(...)`
                    candidate = candidate.expression
                if isinstance(candidate, cst.Call) and self.vocab.matches("checkpoint-loads", self.qualified(candidate)):
                    return Step(path, candidate, f"`{shown(dotted(candidate.func) or '')}(...)` loads a checkpoint")
        return None

    def _module_installs(self, guards: tuple[str, ...]) -> bool:
        """Whether this module's top level calls one of ``guards`` (its top-level statements only:
        asked only at a ``run_calls`` call, so no cache is worth keeping)."""
        module = self.fn.module
        for stmt in module.tree.body:
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                value = getattr(small, "value", None)
                name = dotted(value.func) if isinstance(value, cst.Call) else None
                if name and module.imports.qualify_name(name) in guards:
                    return True
        return False

    def _with_bindings(self, value: cst.BaseExpression) -> list[cst.BaseExpression]:
        """``value``, and what this function binds to it when it is a name."""
        return [value, *self.assigned.get(value.value, ())] if isinstance(value, cst.Name) else [value]

    def _built_by_compaction(self, value: cst.BaseExpression) -> cst.Call | None:
        """The compaction-call (through an import) that built ``value``, directly or through a name."""
        for candidate in self._with_bindings(value):
            for inner in self._profile(candidate).calls:
                if self._through_import(inner) and self.vocab.matches("compaction-calls", self.qualified(inner)):
                    return inner
        return None

    def _resume_input(self, call: cst.Call, model: FrameworkModel) -> bool:
        """``invoke(None, config)`` / ``invoke(Command(resume=...))`` / ``run(q, message_history=loaded)``, as the model says."""
        positional = [a.value for a in call.args if a.keyword is None]
        if model.resume_none_input and positional and is_none(positional[0]) and len(call.args) >= 2:
            return True
        if model.resume_state_keywords:
            state = model.resume_state_keywords
            given = [a.value for a in call.args if a.keyword is not None and a.keyword.value in state]
            if given and self._restored_among(given) is not None:
                return True
        if model.resume_keywords and any(  # `run_async(..., invocation_id=inv)`
            a.keyword is not None and a.keyword.value in model.resume_keywords and not is_none(a.value) for a in call.args
        ):
            return True
        keywords = set(model.resume_input_keywords)
        for arg in call.args:
            value = arg.value
            if isinstance(value, cst.Call) and self.qualified(value) in model.resume_input_types:
                if any(a.keyword is not None and a.keyword.value in keywords for a in value.args):
                    return True
        return False

    def _guarded_graph(self, receiver: cst.BaseExpression) -> bool:
        """A graph wrapped by a validator (``guard_graph(graph)``), directly or through a name."""
        values = [receiver]
        if isinstance(receiver, cst.Name):
            values.extend(self.assigned.get(receiver.value, ()))
            graphs = self.project.graphs
            if receiver.value not in self.assigned and graphs is not None:
                # `agent = Agent(..., capabilities=[GuardResumes()])` at the top level, or in an enclosing function
                module = self.fn.module
                values.extend(v for v, scope in graphs.bindings(receiver, self.fn) if scope.module is module)
        return any(
            self.vocab.matches("validators", self.qualified(c)) for v in values for c in self._profile(v).calls
        )

    def _restored_from_summary(self, name: str) -> bool:
        return any(self.summary_involved(v) for v in self.assigned.get(name, ()))

    def is_interrupt(self, call: cst.Call) -> bool:
        """A call that pauses a graph node (the vocabulary's ``interrupt-calls``, through an
        import) or a project function that makes one. A local function that happens
        to be called ``interrupt`` is neither."""
        callee = self.resolve(call)
        if callee is not None:
            return self.behaviour(callee).pauses
        return self._through_import(call) and self.vocab.matches("interrupt-calls", self.qualified(call))

    def known_tool(self, call: cst.Call) -> bool:
        """A call that obtains a fact from the outside world, by evidence other than its
        name (SPEC §3.1.1): a tool decorator, the vocabulary (configured or from a
        plugin, on the receiver's class where a constructor or an annotation says it),
        a framework's tool object, or a project function that calls such a tool. Every
        rule asks this one question: SG201, the re-run search before a pause (SG203)
        and a broad handler's "re-derives" (SG202)."""
        if self._runs_tool_object(call):
            return True
        callee = self.resolve(call)
        if callee is not None:
            summary = self.behaviour(callee)
            if callee.is_tool or summary.calls_tool:
                return True
            return summary is self.project.unknown and self._calls_tool_directly(callee)
        return self.vocab.matches("tool-calls", self.qualified(call))

    def tool_evidence(self, call: cst.Call) -> Step | None:
        """Why ``call`` is a :meth:`known_tool` (a trace step), or None when it is not one.

        Only for calls already found to matter: the hot path asks :meth:`known_tool`."""
        if not self.known_tool(call):
            return None
        path = self.fn.module.path
        label = f"`{shown(dotted(call.func) or 'tool')}()`"
        callee = self.resolve(call)
        if self._runs_tool_object(call):
            note = f"{label} runs a framework tool object"
        elif callee is None:
            note = f"{label} is a tool call the vocabulary knows (`tool-calls`, a framework model)"
        elif callee.is_tool:
            decorators = ", ".join(f"`{d}`" for d in callee.decorators) or "a tool decorator"
            note = f"{label} is a tool: `{callee.name}` is decorated with {decorators}"
        else:
            note = f"{label} is a tool: `{callee.name}` calls one"
        return Step(path, call, note)

    def state_origin(self, container: cst.CSTNode) -> Step:
        """Where the resumed state ``container`` (SG201's lookup target) shows it is
        resumed: the origin of a name in it, a value's flow before a name."""
        names = self._profile(container).names
        steps = [self.origin[n] for n in sorted(names) if n in self.origin and (
            n in self.resumed or n in self.summary_objects or n in self.restored or n in self.summary_like
        )]
        steps.sort(key=lambda s: s.basis != VALUE)
        if steps:
            return steps[0]
        shown_names = ", ".join(f"`{n}`" for n in sorted(names)) or "the container"
        return Step(self.fn.module.path, container, f"{shown_names} named like resumed state", NAME)

    def _runs_tool_object(self, call: cst.Call) -> bool:
        """``create_vm.invoke({})`` where ``create_vm`` is a framework's tool object (a
        model's ``tool_run_methods``): a function decorated as a tool, or a name bound to
        ``tool(...)`` or a model's tool factory (here or in an enclosing function)."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in self.vocab.tool_run_methods):
            return False
        receiver = func.value
        if not isinstance(receiver, cst.Name):
            return False
        scope: FunctionInfo | None = self.fn
        while scope is not None:
            values = self.assigned.get(receiver.value) if scope is self.fn else _assigned_in(scope, receiver.value)
            if values:
                return any(self._makes_tool(v) for v in values)
            if receiver.value in scope.params:
                return False
            scope = scope.parent
        top = self.fn.module.functions[0]
        if top is not self.fn and receiver.value not in self.fn.params:
            values = _assigned_in(top, receiver.value)
            if values:
                return any(self._makes_tool(v) for v in values)
        return self._tool_function(receiver.value)

    def _tool_function(self, name: str) -> bool:
        """A plain name that is a ``@tool`` function of the project (not a method)."""
        return any(f.is_tool and f.class_name is None for f in self.project.named(name))

    def _makes_tool(self, value: cst.BaseExpression) -> bool:
        """``tool(f)``, ``StructuredTool.from_function(f)``, ``guard(create_vm)`` of a
        ``@tool`` function, or a project function returning one (``make_tools()``)."""
        for inner in self._profile(value).calls:
            qualified = self.qualified(inner)
            if self.vocab.matches("tool-decorators", qualified) or self.vocab.is_tool_factory(qualified):
                return True
            target = self.project.resolve(inner.func, self.fn)
            if target is not None and (target.is_tool or _returns_tool(target)):
                return True
        return any(isinstance(n, cst.Name) and self._tool_function(n.value) for n in iter_exprs(value))

    def _calls_tool_directly(self, fn: FunctionInfo) -> bool:
        """For a function left unanalyzed: does its body call a tool (one level)?"""
        cache = self.project.direct_tool_calls
        if fn not in cache:
            cache[fn] = False  # cycles
            inner = Evidence(fn, self.project, self.summaries)
            cache[fn] = any(
                inner._tool_by_evidence(call)
                for stmt in walk_statements(fn.body)
                for expr in expressions_of(stmt)
                for call in calls_in(expr)
            )
        return cache[fn]

    def _tool_by_evidence(self, call: cst.Call) -> bool:
        callee = self.resolve(call)
        if callee is not None:
            return callee.is_tool or self.behaviour(callee).calls_tool
        return self._runs_tool_object(call) or self.vocab.matches("tool-calls", self.qualified(call))

    # -- conditions.Context --------------------------------------------------------------

    def definition(self, name: str) -> cst.BaseExpression | None:
        values = self.assigned.get(name)
        return values[-1] if values and len(values) == 1 else None

    def predicate(self, call: cst.Call) -> frozenset[str] | None:
        callee = self.resolve(call)
        if callee is None:
            return None
        return self.behaviour(callee).predicate or None

