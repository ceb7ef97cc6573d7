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

from collections.abc import Mapping
from dataclasses import dataclass

import libcst as cst

from . import lexicon
from .conditions import ALL_KINDS, DEPS, Context, Facts
from .names import dotted, last_segment
from .project import FunctionInfo, Project
from .summaries import BOTTOM, Soft, Summary
from .syntax import calls_in, expressions_of, identifiers, is_none, iter_exprs, walk_statements

__all__ = ["Evidence"]

_TB_HEADS = frozenset({"tf", "tensorflow", "keras", "tb", "tensorboard", "torch"})
_CONTAINER_METHODS = frozenset(
    {"get", "items", "keys", "values", "append", "pop", "setdefault", "copy", "update", "register", "add", "remove"}
)
_CONTEXT_WORDS = ("context", "ctx", "state", "session", "memory", "checkpoint", "ckpt", "summar", "snapshot")
_LANGGRAPH = ("langgraph", "langmem")


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
            if isinstance(node, cst.Name):
                names.add(node.value)
            elif isinstance(node, cst.Attribute):
                attrs.add(node.attr.value)
                if node.attr.value in ("summary", "summaries"):
                    head = dotted(node)
                    metrics = metrics or (head is not None and head.partition(".")[0] in _TB_HEADS)
            elif isinstance(node, cst.Call):
                calls.append(node)
            elif isinstance(node, cst.SimpleString):
                value = node.evaluated_value
                if isinstance(value, str) and value.isidentifier():
                    strings.add(value)
        calls.reverse()
        return cls(frozenset(names), frozenset(attrs), frozenset(names | strings), tuple(calls), metrics)


class Evidence(Context):
    """Everything known about one function's values, and the call recognizers."""

    def __init__(self, fn: FunctionInfo, project: Project, summaries: Mapping[FunctionInfo, Summary]) -> None:
        self.fn = fn
        self.project = project
        self.vocab = project.vocabulary
        self.imports = fn.module.imports
        self.summaries = summaries
        self.assigned: dict[str, list[cst.BaseExpression]] = {}
        self.attr_reads: dict[str, set[str]] = {}
        self.flags: dict[str, Facts] = {}
        self.callees: set[FunctionInfo] = set()
        self._resolved: dict[cst.Call, FunctionInfo | None] = {}
        self._profiles: dict[cst.CSTNode, _Profile] = {}
        self._collect()
        self.summary_like = self._summary_like()
        self.checkpoint_like = {n for n in self._names() if lexicon.is_checkpoint_name(n)}
        self.restored: set[str] = set()
        self.resumed: set[str] = set()
        self._taint()

    # -- collection ----------------------------------------------------------------------

    def _names(self) -> set[str]:
        return set(self.fn.params) | set(self.assigned)

    def _collect(self) -> None:
        for stmt in walk_statements(self.fn.body):
            if isinstance(stmt, cst.Assign):
                for target in stmt.targets:
                    self._bind(target.target, stmt.value)
            elif isinstance(stmt, cst.AnnAssign) and stmt.value is not None:
                self._bind(stmt.target, stmt.value)
            elif isinstance(stmt, cst.For):
                self._bind(stmt.target, stmt.iter)
            elif isinstance(stmt, cst.With):
                for item in stmt.items:
                    if item.asname is not None:
                        self._bind(item.asname.name, item.item)
            for expr in expressions_of(stmt):
                for node in iter_exprs(expr):
                    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
                        self.attr_reads.setdefault(node.value.value, set()).add(node.attr.value)
                    elif isinstance(node, cst.NamedExpr):
                        self._bind(node.target, node.value)

    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self.assigned.setdefault(target.value, []).append(value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind(element.value, value)

    def _summary_like(self) -> set[str]:
        found = set()
        for name in self._names():
            reads = self.attr_reads.get(name, set())
            if name in _TB_HEADS:
                continue
            guarantees = reads & lexicon.GUARANTEE_ATTRS
            named = lexicon.is_summary_name(name) or lexicon.is_checkpoint_name(name)
            if (
                reads & lexicon.STRONG_SUMMARY_ATTRS
                or len(guarantees) >= 2
                or (guarantees and named)
                or lexicon.is_summary_name(name)
            ):
                found.add(name)
            annotation = self.fn.annotations.get(name)
            if annotation and self._is_summary_type(annotation):
                found.add(name)
        return found

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
                    if name not in self.restored and self._is_restore(value):
                        self.restored.add(name)
                        changed = True
                    if name not in self.resumed and self._is_resumed_value(value):
                        self.resumed.add(name)
                        changed = True
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

    def resumed_state(self, expr: cst.CSTNode) -> bool:
        """Is ``expr`` (a container or a looked-up value) state that came back from a resume?"""
        names = self._profile(expr).names
        return bool(names & self.resumed or names & self.restored or names & self.summary_like) or any(
            lexicon.is_resumed_state_name(n) for n in names
        )

    def _is_restore(self, value: cst.BaseExpression) -> bool:
        if not isinstance(value, cst.Call):
            return False
        name = dotted(value.func) or ""
        qualified = self.imports.qualify_name(name) if name else ""
        loads = last_segment(name) in lexicon.LOAD_METHODS or self.vocab.matches("checkpoint-loads", qualified)
        if not loads:
            return False
        words = " ".join(identifiers(value)).lower()
        return any(w in words for w in _CONTEXT_WORDS) or self.summary_involved(value)

    def _is_resumed_value(self, value: cst.BaseExpression) -> bool:
        for node in self._profile(value).calls:
            if True:
                callee = self.resolve(node)
                if callee is not None and self.summary_of(callee).returns_resumed:
                    return True
                if self.resume_requirement(node) is not None:
                    return True
        return self._is_restore(value) or self.resumed_state(value)

    # -- calls ---------------------------------------------------------------------------

    def resolve(self, call: cst.Call) -> FunctionInfo | None:
        if call in self._resolved:
            return self._resolved[call]
        found = self.project.resolve(call.func, self.fn)
        self._resolved[call] = found
        if found is not None:
            self.callees.add(found)
        return found

    def summary_of(self, fn: FunctionInfo) -> Summary:
        return self.summaries.get(fn, BOTTOM)

    def qualified(self, call: cst.Call) -> str:
        return self.imports.qualify(call.func) or ""

    def _through_import(self, call: cst.Call) -> bool:
        name = dotted(call.func) or ""
        return name.partition(".")[0] in self.imports.aliases

    def validator_kinds(self, call: cst.Call) -> frozenset[str]:
        """Kinds a normal return of ``call`` guarantees."""
        callee = self.resolve(call)
        if callee is not None:
            if callee.is_guarded:
                return ALL_KINDS
            return self.summary_of(callee).establishes
        qualified = self.qualified(call)
        if self.vocab.matches("validators", qualified) and (self._through_import(call) or "." in qualified):
            return ALL_KINDS
        return frozenset()

    def validator_softs(self, call: cst.Call) -> frozenset[Soft]:
        """Soft checks inside the callee that reach its caller (an ``assert`` in a validator)."""
        callee = self.resolve(call)
        return self.summary_of(callee).soft if callee is not None else frozenset()

    def always_raises(self, call: cst.Call) -> bool:
        callee = self.resolve(call)
        if callee is not None:
            return self.summary_of(callee).always_raises
        return self.qualified(call) in lexicon.EXIT_CALLS

    def resume_requirement(self, call: cst.Call) -> tuple[frozenset[str], str] | None:
        """If ``call`` resumes from summary state: the kinds it needs checked, and a label."""
        callee = self.resolve(call)
        if callee is not None:
            if callee.is_guarded:
                return frozenset(), f"`{callee.name}()` (guarded by resume_guard)"
            summary = self.summary_of(callee)
            if summary.resumes:
                return summary.needs, f"`{callee.name}()` (which resumes inside)"
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
        label = f"`{name}()`"
        if self.vocab.matches("resume-calls", qualified):
            if self._through_import(call) or any(
                self.summary_involved(x) or self.checkpoint_involved(x) for x in inputs
            ):
                return ALL_KINDS, label
        if last in lexicon.WEAK_RESUME_NAMES and any(self.summary_involved(x) for x in inputs):
            return ALL_KINDS, label
        if last in ("invoke", "ainvoke", "stream", "astream") and self._langgraph_resume(call):
            return frozenset({DEPS}), label
        if last in lexicon.RUN_METHODS:
            for arg in call.args:
                if isinstance(arg.value, cst.Name) and arg.value.value in self.restored:
                    if self.summary_involved(arg.value) or self._restored_from_summary(arg.value.value):
                        return ALL_KINDS, label
        return None

    def _restored_from_summary(self, name: str) -> bool:
        return any(self.summary_involved(v) for v in self.assigned.get(name, ()))

    def _langgraph_resume(self, call: cst.Call) -> bool:
        """``graph.invoke(None, config)`` / ``invoke(Command(resume=...))`` where a
        summary lives in the graph state (langmem, a ``summary`` key...)."""
        positional = [a.value for a in call.args if a.keyword is None]
        resumes = bool(positional) and is_none(positional[0]) and len(call.args) >= 2
        for arg in call.args:
            if isinstance(arg.value, cst.Call) and last_segment(dotted(arg.value.func)) == "Command":
                resumes = resumes or any(a.keyword is not None and a.keyword.value == "resume" for a in arg.value.args)
        if not resumes:
            return False
        module = self.fn.module
        return module.mentions_summary and (
            self.imports.imports_any(_LANGGRAPH) or "graph" in (dotted(call.func) or "").lower()
        )

    def is_tool_call(self, call: cst.Call) -> bool:
        """A call that obtains a fact from the outside world (a tool)."""
        callee = self.resolve(call)
        name = dotted(call.func) or ""
        last = last_segment(name)
        if callee is not None:
            summary = self.summary_of(callee)
            if callee.is_tool or summary.calls_tool:
                return True
            if summary is self.project.unknown:
                return lexicon.is_tool_name(callee.name) or self._calls_tool_directly(callee)
            if summary.pure or callee.is_guarded or summary.resumes or summary.establishes or summary.predicate:
                return False
            return lexicon.is_tool_name(callee.name)
        if self.vocab.matches("tool-calls", self.qualified(call)):
            return True
        if not last or last[0].isupper() or last in _CONTAINER_METHODS:
            return False
        segments = [s for s in name.split(".") if s not in ("()", "[]")]
        return any(lexicon.is_tool_name(s) for s in segments[-2:])

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
            return callee.is_tool or self.summary_of(callee).calls_tool
        return self.is_tool_call(call)

    # -- conditions.Context --------------------------------------------------------------

    def definition(self, name: str) -> cst.BaseExpression | None:
        values = self.assigned.get(name)
        return values[-1] if values and len(values) == 1 else None

    def flag(self, name: str) -> Facts | None:
        return self.flags.get(name)

    def predicate(self, call: cst.Call) -> frozenset[str] | None:
        callee = self.resolve(call)
        if callee is None:
            return None
        return self.summary_of(callee).predicate or None
