"""The compaction side of the invariant: SG301-SG304.

Compaction must stamp every summary with a generation and a drop manifest,
must not re-summarize a summary nobody reconciled, and must not overlap a
checkpoint write. This module finds, per parsed module:

* **summarizer calls**: a call of the ``compaction-calls`` vocabulary
  (langmem's ``summarize_messages``, a configured name; the generic
  ``*.summarize`` / ``*.compact`` globs only with a second vote), an LLM call
  (``llm.invoke``, ``client.chat.completions.create``, ...) whose input
  carries a summarization instruction, or the conversation inside a function
  named for compaction, or a project function that returns such output.
  ``summaryguard.guard.Compactor`` is recognized and is compliant by
  construction (it stamps, records drops, vouches for its input, holds its
  lock);
* **summary records** (SG301/SG302): the outermost dict literal, ``dict(...)``
  or class instantiation holding summarizer output, when it is summary-like
  (a ``summary`` key, field or class, or built in a compaction function), and
  which keys it carries, including ones set on it afterwards
  (``record["generation"] = ...``) and ones a same-module class sets itself;
* **re-compaction** (SG303): a summarizer call whose input carries an earlier
  summary (``state["summary"]``, ``checkpoint.summary``, a
  ``previous_summary`` parameter, a prompt built from one), judged with the
  same dominance analysis as the resume rules (:mod:`.flow`):
  ``check_resume``, ``compactor.adopt``, a validator or a generation
  comparison that raises or returns must dominate the call. When the summary
  only arrives through a parameter and the function has callers, the check may
  sit before every call of it instead, and the unchecked calls are reported;
* **dispatch and writes** (SG304): compaction handed to a thread, task,
  executor or callback, and checkpoint writes elsewhere in the same module,
  with the locks held at each (``with lock:``, ``async with``,
  ``acquire()``/``release()``, ``fcntl.flock``, file locks; a
  ``Compactor.compact`` holds ``<compactor>.lock``).

Everything is decided from syntax and the project index, one module at a
time, after the function summaries are solved.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

import libcst as cst

from .conditions import ALL_KINDS, GENERATION
from .evidence import Evidence
from .facts import Fact, Recompaction, SummaryRecord, UnserializedWrite
from .flow import FlowAnalysis, State
from .names import dotted, last_segment
from .project import FunctionInfo, ModuleInfo, Project
from .summaries import Summary
from .syntax import Stmt, calls_in, child_blocks, children, expressions_of, iter_exprs, statements, walk_statements

__all__ = ["compaction_facts"]

_GUARD = "summaryguard.guard"
_COMPACTOR = frozenset({f"{_GUARD}.Compactor", f"{_GUARD}.compactor.Compactor"})
_STORE = frozenset({f"{_GUARD}.CheckpointStore", f"{_GUARD}.store.CheckpointStore"})
_GUARD_SUMMARY = frozenset({f"{_GUARD}.Summary", f"{_GUARD}.model.Summary"})
_GUARD_SUMMARY_FIELDS = ("generation", "content", "verbatim_refs", "drop_manifest", "parent_generation")

#: A string that asks for a summary (prose: ``"summary_text"`` or ``"index_summary"`` is a key, not a request).
_INSTRUCTION = re.compile(r"summar|condens|compress|compact", re.IGNORECASE)
_TOKEN = re.compile(r"[\w.\-/]*")
#: A prompt template or rendered prompt: its ``invoke``/``format`` fills a template and runs no model.
_PROMPT_TYPE = re.compile(r"(Prompt|Template|PromptValue)$")
#: A name for a prompt constant (``SUMMARY_PROMPT``).
_PROMPT_NAME = re.compile(r"prompt|instruction|template|system", re.IGNORECASE)
_CONVERSATION = re.compile(r"messages|msgs|(^|_)turns?($|_)|history|transcript|conversation|dialog", re.IGNORECASE)
_COMPACTION_FN = re.compile(r"summar|compact|condens|compress|rollup|distill", re.IGNORECASE)
_SUMMARY_WORD = re.compile(r"summar", re.IGNORECASE)
#: An earlier summary is a *summary* (a noun), not a summarizer or a prompt.
_SUMMARY_NOUN = re.compile(r"summary|summaries", re.IGNORECASE)
#: ...but not its settings: ``summary_prompt``, ``summary_model``, ``max_summary_tokens``.
_SUMMARY_SETTING = re.compile(
    r"prompt|instruction|template|system|model|llm|max|min|tokens|len|size|limit|chars|fn|func|key|path|file|dir|"
    r"interval|every|threshold|enabled",
    re.IGNORECASE,
)
_GENERATION_KEY = re.compile(r"generation|(^|_)gen($|_)|lineage|summary_version", re.IGNORECASE)
_DROP_KEY = re.compile(r"drop|manifest|evict|omit|prune|discard|removed", re.IGNORECASE)
_LLM_RECEIVER = re.compile(
    r"llm|(^|_)lm($|_)|model|client|chain|chat|openai|anthropic|completion|messages|gpt|claude|gemini|"
    r"summari[sz]er|runnable",
    re.IGNORECASE,
)
_LLM_CALLABLE = re.compile(r"^(a?llm|lm|model|chat_model|summari[sz]er|a?summari[sz]e_fn)$", re.IGNORECASE)
#: Methods that run a model whatever the receiver is called (LangChain runnables, Gemini, litellm).
_LLM_ANY = frozenset({"invoke", "ainvoke", "generate_content", "generate_content_async", "completion", "acompletion"})
#: Methods that run a model only on a model-like receiver (``client.chat.completions.create``).
_LLM_ON_RECEIVER = frozenset(
    {"create", "acreate", "generate", "agenerate", "complete", "acomplete", "chat", "achat", "predict", "apredict",
     "call", "acall", "run", "arun"}
)
_LLM_MODULES = ("openai", "anthropic", "litellm", "langchain", "langchain_core", "langchain_openai",
                "langchain_anthropic", "google.generativeai", "google.genai", "ollama", "mistralai", "cohere")
_GENERIC_COMPACTION = frozenset({"compact", "acompact", "summarize", "asummarize"})
_NOT_RECORD_CLASS = re.compile(r"(Message|MessageChunk|Prompt|PromptTemplate|Error|Exception|Warning)$")
_LOG_CALLS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "log", "print"})

_LOCK_PARTS = frozenset({"lock", "rlock", "alock", "locks", "mutex", "sem", "semaphore", "filelock", "flock"})
_LOCK_TYPES = frozenset(
    {"Lock", "RLock", "Semaphore", "BoundedSemaphore", "Condition", "FileLock", "SoftFileLock", "CompactionLock",
     "AsyncFileLock", "InterProcessLock"}
)
_EXECUTOR_TYPES = frozenset({"ThreadPoolExecutor", "ProcessPoolExecutor", "Pool", "ThreadPool"})
#: ``with X() as x:`` waits, on exit, for the work dispatched through ``x``.
_WAITS_ON_EXIT = _EXECUTOR_TYPES | {"TaskGroup", "open_nursery", "create_task_group"}
_SERIALIZERS = frozenset({"dump", "dumps", "write", "write_text", "write_bytes", "save", "put", "aput", "put_writes",
                          "aput_writes", "persist", "store", "save_state", "savez"})
_SYNC_METHODS = frozenset({"join", "result", "wait", "shutdown", "gather"})


# -- per-function view ----------------------------------------------------------------------


@dataclass(eq=False)
class _Fn:
    """Bindings and summarizer output of one function."""

    fn: FunctionInfo
    assigned: dict[str, list[cst.BaseExpression]] = field(default_factory=dict)
    types: dict[str, str] = field(default_factory=dict)
    tainted: set[str] = field(default_factory=set)
    compaction_named: bool = False


def _bind(table: dict[str, list[cst.BaseExpression]], target: cst.BaseExpression, value: cst.BaseExpression) -> None:
    if isinstance(target, cst.Name):
        table.setdefault(target.value, []).append(value)
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            _bind(table, element.value, value)


def _bindings(body: Iterable[Stmt]) -> dict[str, list[cst.BaseExpression]]:
    table: dict[str, list[cst.BaseExpression]] = {}
    for stmt in walk_statements(list(body)):
        if isinstance(stmt, cst.Assign):
            for target in stmt.targets:
                _bind(table, target.target, stmt.value)
        elif isinstance(stmt, cst.AnnAssign) and stmt.value is not None:
            _bind(table, stmt.target, stmt.value)
        elif isinstance(stmt, cst.With):
            for item in stmt.items:
                if item.asname is not None:
                    _bind(table, item.asname.name, item.item)
        elif isinstance(stmt, cst.For):
            _bind(table, stmt.target, stmt.iter)
    return table


def _strings(node: cst.CSTNode) -> Iterator[str]:
    for n in iter_exprs(node):
        if isinstance(n, cst.SimpleString):
            value = n.evaluated_value
            if isinstance(value, str):
                yield value
        elif isinstance(n, cst.FormattedStringText):
            yield n.value


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _summary_value(word: str) -> bool:
    """``previous_summary``, ``running_summary``, ``summary`` -- a summary itself."""
    return bool(_SUMMARY_NOUN.search(word)) and not _SUMMARY_SETTING.search(word)


def _key_names(record: cst.CSTNode) -> tuple[set[str], bool]:
    """Every key and keyword in ``record`` (at any depth), and whether a ``**``
    splat hides some."""
    keys: set[str] = set()
    opaque = False
    for n in iter_exprs(record):
        if isinstance(n, cst.DictElement) and isinstance(n.key, cst.SimpleString):
            value = n.key.evaluated_value
            if isinstance(value, str):
                keys.add(value)
        elif isinstance(n, cst.StarredDictElement):
            opaque = True
        elif isinstance(n, cst.Arg):
            if n.keyword is not None:
                keys.add(n.keyword.value)
            elif n.star == "**":
                opaque = True
    return keys, opaque


@dataclass(eq=False)
class _Calls:
    """A function's calls in source order: (call, locks held, statement index, loops)."""

    calls: list[tuple[cst.Call, frozenset[str], int, tuple[int, ...]]] = field(default_factory=list)
    #: (statement index, loops) of the points where the function waits for dispatched work.
    syncs: list[tuple[int, tuple[int, ...]]] = field(default_factory=list)
    #: Calls the function awaits in place (``await asyncio.gather(...)``).
    awaited: set[cst.Call] = field(default_factory=set)


# -- the analysis ---------------------------------------------------------------------------


class _Analysis:
    def __init__(self, project: Project, summaries: Mapping[FunctionInfo, Summary]) -> None:
        self.project = project
        self.vocab = project.vocabulary
        self.summaries = summaries
        self._fns: dict[FunctionInfo, _Fn] = {}
        self._returns_summary: dict[FunctionInfo, bool] = {}
        self._summarizer: dict[cst.Call, bool] = {}
        self._calls: dict[FunctionInfo, _Calls] = {}
        self._compaction_locks: dict[FunctionInfo, frozenset[str] | None] = {}
        self._constants: dict[str, dict[str, list[cst.BaseExpression]]] = {}
        self._classes: dict[str, dict[str, cst.ClassDef]] = {}

    # -- module facts -------------------------------------------------------------------

    def constants(self, module: ModuleInfo) -> dict[str, list[cst.BaseExpression]]:
        found = self._constants.get(module.path)
        if found is None:
            found = self._constants[module.path] = _bindings(statements(module.tree))
        return found

    def classes(self, module: ModuleInfo) -> dict[str, cst.ClassDef]:
        found = self._classes.get(module.path)
        if found is None:
            found = {}
            for fn in module.functions:
                for stmt in walk_statements(fn.body) if fn.is_module else ():
                    if isinstance(stmt, cst.ClassDef):
                        found[stmt.name.value] = stmt
            self._classes[module.path] = found
        return found

    def view(self, fn: FunctionInfo) -> _Fn:
        found = self._fns.get(fn)
        if found is not None:
            return found
        view = self._fns[fn] = _Fn(fn, _bindings(fn.body))
        view.compaction_named = bool(_COMPACTION_FN.search(fn.name)) and not fn.is_module
        imports = fn.module.imports
        for name, values in view.assigned.items():
            for value in values:
                if isinstance(value, cst.Call):
                    view.types[name] = imports.qualify(value.func) or ""
        for name, annotation in fn.annotations.items():
            view.types.setdefault(name, imports.qualify_name(annotation))
        for _ in range(4):  # summarizer output, followed through assignments
            grown = {
                name for name, values in view.assigned.items()
                if name not in view.tainted and any(self.carries(v, view) for v in values)
            }
            if not grown:
                break
            view.tainted |= grown
        return view

    def type_of(self, expr: cst.BaseExpression, view: _Fn) -> str:
        """The qualified class a name, ``self.attr`` or constructor call refers to ('' if unknown)."""
        module = view.fn.module
        if isinstance(expr, cst.Call):
            return module.imports.qualify(expr.func) or ""
        if isinstance(expr, cst.Name):
            scope: FunctionInfo | None = view.fn
            while scope is not None:
                known = self.view(scope).types.get(expr.value)
                if known:
                    return known
                scope = scope.parent
            values = self.constants(module).get(expr.value, [])
            return next((module.imports.qualify(v.func) or "" for v in values if isinstance(v, cst.Call)), "")
        if isinstance(expr, cst.Attribute) and dotted(expr.value) in ("self", "cls") and view.fn.class_name:
            attr = expr.attr.value
            for method in module.classes.get(view.fn.class_name, {}).values():
                for stmt in walk_statements(method.body):
                    if isinstance(stmt, (cst.Assign, cst.AnnAssign)) and isinstance(stmt.value, cst.Call):
                        targets = [t.target for t in stmt.targets] if isinstance(stmt, cst.Assign) else [stmt.target]
                        if any(isinstance(t, cst.Attribute) and t.attr.value == attr and dotted(t.value) == "self"
                               for t in targets):
                            return module.imports.qualify(stmt.value.func) or ""
                annotation = method.annotations.get(attr)
                if annotation and method.name == "__init__":
                    return module.imports.qualify_name(annotation)
        return ""

    # -- summarizers --------------------------------------------------------------------

    def is_compactor(self, expr: cst.BaseExpression, view: _Fn) -> bool:
        return self.type_of(expr, view) in _COMPACTOR

    def guarded_compaction(self, call: cst.Call, view: _Fn) -> bool:
        """``compactor.compact(...)`` on a ``summaryguard.guard.Compactor``."""
        func = call.func
        return isinstance(func, cst.Attribute) and func.attr.value == "compact" and self.is_compactor(func.value, view)

    def is_summarizer(self, call: cst.Call, view: _Fn, depth: int = 0) -> bool:
        """A call whose result is raw summary text (see module doc)."""
        known = self._summarizer.get(call)
        if known is None:
            known = self._summarizer[call] = self._is_summarizer(call, view, depth)
        return known

    def _is_summarizer(self, call: cst.Call, view: _Fn, depth: int) -> bool:
        if self.guarded_compaction(call, view):
            return False
        func = call.func
        name = dotted(func) or ""
        last = last_segment(name)
        imports = view.fn.module.imports
        qualified = imports.qualify(func) or ""
        if self.vocab.matches("compaction-calls", qualified):
            if _is_class_name(last):
                return False  # ``SummarizationNode(model=...)`` builds a summarizer; running it compacts
            if last not in _GENERIC_COMPACTION:
                return True
            return view.compaction_named or any(
                self._conversation(a.value, view) or self._instruction(a.value, view) for a in call.args
            )
        callee = self.project.resolve(func, view.fn) if depth < 3 else None
        if callee is not None and self.returns_summary(callee, depth + 1):
            return True
        if not self._llm_call(func, name, last, qualified) or self._prompt_receiver(func, view):
            return False
        inputs = [a.value for a in call.args]
        if any(self._instruction(x, view) for x in inputs):
            return True
        return view.compaction_named and any(self._conversation(x, view) for x in inputs)

    @staticmethod
    def _llm_call(func: cst.BaseExpression, name: str, last: str, qualified: str) -> bool:
        if any(qualified == m or qualified.startswith(m + ".") for m in _LLM_MODULES):
            # ``HumanMessage(...)``, ``Summary(text=...)``, ``OpenAI()``: building a message, a
            # response type or a client runs no model.
            return not _is_class_name(last)
        if isinstance(func, cst.Name):
            return bool(_LLM_CALLABLE.match(func.value))
        if last in _LLM_ANY:
            return True
        if last in _LLM_ON_RECEIVER and isinstance(func, cst.Attribute):
            receiver = [s for s in name.split(".")[:-1] if s not in ("()", "[]")]
            return any(_LLM_RECEIVER.search(s) for s in receiver)
        return False

    def _prompt_receiver(self, func: cst.BaseExpression, view: _Fn) -> bool:
        """``summary_prompt.invoke({...})``: the receiver is a prompt template (by its
        type, or by its name when its type is unknown), so the call only renders text."""
        if not isinstance(func, cst.Attribute):
            return False
        kind = last_segment(self.type_of(func.value, view))
        if kind:
            return bool(_PROMPT_TYPE.search(kind))
        receiver = last_segment(dotted(func.value) or "")
        return bool(receiver) and bool(_PROMPT_NAME.search(receiver)) and not _LLM_RECEIVER.search(receiver)

    def _instruction(self, expr: cst.CSTNode, view: _Fn, depth: int = 0) -> bool:
        """A summarization instruction flows into ``expr`` (a string, a prompt constant)."""
        if any(_INSTRUCTION.search(s) and not _TOKEN.fullmatch(s) for s in _strings(expr)):
            return True
        if depth >= 3:
            return False
        constants = self.constants(view.fn.module)
        for n in iter_exprs(expr):
            if isinstance(n, cst.Name):
                if _SUMMARY_WORD.search(n.value) and _PROMPT_NAME.search(n.value):
                    return True
                for value in view.assigned.get(n.value, []) or constants.get(n.value, []):
                    if value is not expr and self._instruction(value, view, depth + 1):
                        return True
        return False

    def _conversation(self, expr: cst.CSTNode, view: _Fn, depth: int = 0) -> bool:
        """The conversation being compacted flows into ``expr``."""
        for n in iter_exprs(expr):
            word = n.value if isinstance(n, cst.Name) else n.attr.value if isinstance(n, cst.Attribute) else None
            if word is None and isinstance(n, cst.SimpleString):
                value = n.evaluated_value
                word = value if isinstance(value, str) and value.isidentifier() else None
            if word is None:
                continue
            if _CONVERSATION.search(word):
                return True
            if isinstance(n, cst.Name) and depth < 2:
                for value in view.assigned.get(n.value, []):
                    if value is not expr and self._conversation(value, view, depth + 1):
                        return True
        return False

    def returns_summary(self, fn: FunctionInfo, depth: int = 0) -> bool:
        """Does ``fn`` return summarizer output (a user summarizer)?"""
        if fn in self._returns_summary:
            return self._returns_summary[fn]
        self._returns_summary[fn] = False  # cycles
        view = self.view(fn)
        found = any(
            isinstance(stmt, cst.Return) and stmt.value is not None and self.carries(stmt.value, view, depth)
            for stmt in walk_statements(fn.body)
        )
        self._returns_summary[fn] = found
        return found

    def carries(self, expr: cst.BaseExpression, view: _Fn, depth: int = 0) -> bool:
        """Is ``expr`` summary text itself (not a length, not a log line)?"""
        if isinstance(expr, cst.Name):
            return expr.value in view.tainted
        if isinstance(expr, cst.Call):
            if self.is_summarizer(expr, view, depth):
                return True
            if isinstance(expr.func, cst.Attribute):
                return self.carries(expr.func.value, view, depth)
            return dotted(expr.func) in ("str", "dedent", "textwrap.dedent") and bool(expr.args) and self.carries(
                expr.args[0].value, view, depth
            )
        if isinstance(expr, (cst.Attribute, cst.Subscript)):
            return self.carries(expr.value, view, depth)
        if isinstance(expr, cst.Await):
            return self.carries(expr.expression, view, depth)
        if isinstance(expr, cst.FormattedString):
            return any(
                isinstance(p, cst.FormattedStringExpression) and self.carries(p.expression, view, depth)
                for p in expr.parts
            )
        if isinstance(expr, cst.BinaryOperation):
            return self.carries(expr.left, view, depth) or self.carries(expr.right, view, depth)
        if isinstance(expr, cst.IfExp):
            return self.carries(expr.body, view, depth) or self.carries(expr.orelse, view, depth)
        if isinstance(expr, cst.BooleanOperation):
            return self.carries(expr.left, view, depth) or self.carries(expr.right, view, depth)
        return False

    # -- SG301 / SG302 ------------------------------------------------------------------

    def summarizers(self, fn: FunctionInfo) -> list[cst.Call]:
        view = self.view(fn)
        return [c for c, _, _, _ in self.calls_with_locks(fn).calls if self.is_summarizer(c, view)]

    def records(self, fn: FunctionInfo) -> Iterator[Fact]:
        view = self.view(fn)
        if not view.tainted and not self.summarizers(fn):
            return
        for stmt in walk_statements(fn.body):
            for expr in expressions_of(stmt):
                for record in self._outermost_records(expr, view):
                    yield from self._judge_record(record, stmt, view)

    def _outermost_records(self, expr: cst.CSTNode, view: _Fn) -> Iterator[cst.CSTNode]:
        stack: list[cst.CSTNode] = [expr]
        while stack:
            node = stack.pop()
            if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue
            if isinstance(node, cst.Call) and (
                last_segment(dotted(node.func)) in _LOG_CALLS
                or self.is_summarizer(node, view)
                or self._llm_call(node.func, dotted(node.func) or "", last_segment(dotted(node.func)),
                                  view.fn.module.imports.qualify(node.func) or "")
            ):
                continue  # a log line, or the prompt going *into* a model
            if self._is_record(node) and self._holds_summary(node, view):
                yield node
                continue
            stack.extend(children(node))

    @staticmethod
    def _is_record(node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Dict):
            return True
        if isinstance(node, cst.Call):
            name = last_segment(dotted(node.func))
            if name == "dict":
                return True
            return bool(name) and name[0].isupper() and not _NOT_RECORD_CLASS.search(name)
        return False

    def _holds_summary(self, record: cst.CSTNode, view: _Fn) -> bool:
        for n in iter_exprs(record):
            if isinstance(n, cst.BaseExpression) and not isinstance(n, (cst.Dict, cst.Call)) and self.carries(n, view):
                return True
            if isinstance(n, cst.Call) and n is not record and self.carries(n, view):
                return True
        return False

    def _judge_record(self, record: cst.CSTNode, stmt: Stmt, view: _Fn) -> Iterator[Fact]:
        keys, opaque = _key_names(record)
        if isinstance(record, cst.Dict) and "role" in keys:
            return  # a chat message
        class_name = last_segment(dotted(record.func)) if isinstance(record, cst.Call) else ""
        if not (view.compaction_named or _SUMMARY_WORD.search(class_name) or any(_SUMMARY_WORD.search(k) for k in keys)):
            return
        if opaque:
            return
        if isinstance(record, cst.Call):
            keys |= self._class_keys(record, view)
        keys |= self._later_keys(record, stmt, view)
        if not any(_GENERATION_KEY.search(k) for k in keys):
            yield SummaryRecord(node=record, path=view.fn.module.path, missing="generation")
        if not any(_DROP_KEY.search(k) for k in keys):
            yield SummaryRecord(node=record, path=view.fn.module.path, missing="drops")

    def _class_keys(self, call: cst.Call, view: _Fn) -> set[str]:
        """Fields a positional argument fills, and fields the class stamps itself."""
        module = view.fn.module
        qualified = module.imports.qualify(call.func) or ""
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if qualified in _GUARD_SUMMARY:
            return set(_GUARD_SUMMARY_FIELDS[: len(positional)])
        node = self.classes(module).get(last_segment(qualified))
        if node is None:
            return set()
        fields: list[str] = []
        stamped: set[str] = set()
        init_params: list[str] | None = None
        for stmt in statements(node.body):
            if isinstance(stmt, cst.AnnAssign) and isinstance(stmt.target, cst.Name):
                fields.append(stmt.target.value)
                if isinstance(stmt.value, cst.Call) and any(
                    a.keyword is not None and a.keyword.value == "default_factory"
                    and dotted(a.value) not in ("list", "dict", "set", "tuple", "frozenset")
                    for a in stmt.value.args
                ):
                    stamped.add(stmt.target.value)  # ``field(default_factory=next_generation)``
            elif isinstance(stmt, cst.FunctionDef):
                params = [p.name.value for p in stmt.params.params]
                if stmt.name.value == "__init__":
                    init_params = params[1:]
                if stmt.name.value in ("__init__", "__post_init__"):
                    for inner in walk_statements(statements(stmt.body)):
                        if isinstance(inner, cst.Assign):
                            for target in inner.targets:
                                t = target.target
                                if isinstance(t, cst.Attribute) and not (
                                    isinstance(inner.value, cst.Name) and inner.value.value in params
                                ):
                                    stamped.add(t.attr.value)
        order = init_params if init_params is not None else fields
        return stamped | set(order[: len(positional)])

    @staticmethod
    def _later_keys(record: cst.CSTNode, stmt: Stmt, view: _Fn) -> set[str]:
        """Keys set on the record's name after it is built (``record["generation"] = g``)."""
        if not (isinstance(stmt, (cst.Assign, cst.AnnAssign)) and stmt.value is record):
            return set()
        target = stmt.targets[0].target if isinstance(stmt, cst.Assign) else stmt.target
        if not isinstance(target, cst.Name):
            return set()
        name = target.value
        keys: set[str] = set()
        for other in walk_statements(view.fn.body):
            if isinstance(other, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                targets = [t.target for t in other.targets] if isinstance(other, cst.Assign) else [other.target]
                for t in targets:
                    if isinstance(t, cst.Attribute) and dotted(t.value) == name:
                        keys.add(t.attr.value)
                    elif isinstance(t, cst.Subscript) and dotted(t.value) == name:
                        keys.update(s for e in t.slice for s in _strings(e) if s.isidentifier())
            for expr in expressions_of(other):
                for call in calls_in(expr):
                    func = call.func
                    if isinstance(func, cst.Attribute) and dotted(func.value) == name and func.attr.value in (
                        "update", "setdefault", "__setitem__"
                    ):
                        keys |= _key_names(call)[0]
                        keys.update(s for a in call.args for s in _strings(a.value) if s.isidentifier())
                    elif dotted(func) == "setattr" and call.args and dotted(call.args[0].value) == name:
                        keys.update(s for a in call.args[1:2] for s in _strings(a.value))
        return keys

    # -- SG303 ----------------------------------------------------------------------------

    def earlier_summary(self, expr: cst.CSTNode, view: _Fn, depth: int = 0) -> str | None:
        """Whether ``expr`` carries an earlier summary: "state" (read back from state,
        a checkpoint or a record), "param" (only through a parameter), or None."""
        found: str | None = None
        for n in iter_exprs(expr):
            if isinstance(n, cst.Attribute) and _summary_value(n.attr.value):
                if not self.is_compactor(n.value, view):
                    return "state"
            elif isinstance(n, cst.Subscript):
                keys = [s for e in n.slice for s in _strings(e)]
                if any(_summary_value(k) for k in keys):
                    return "state"
            elif isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "get":
                if any(_summary_value(s) for a in n.args[:1] for s in _strings(a.value)):
                    return "state"
            elif isinstance(n, cst.Name):
                if n.value in view.tainted and n.value not in view.fn.params:
                    values = view.assigned.get(n.value, [])
                    if depth < 3 and any(self.earlier_summary(v, view, depth + 1) == "state" for v in values):
                        return "state"
                    continue  # this compaction's own output
                if n.value in view.fn.params:
                    if _summary_value(n.value):
                        found = "param"
                    continue
                if depth < 3:
                    for value in view.assigned.get(n.value, []):
                        if value is expr:
                            continue
                        inner = self.earlier_summary(value, view, depth + 1)
                        if inner == "state":
                            return "state"
                        found = found or inner
                    if not view.assigned.get(n.value) and _summary_value(n.value):
                        scope = view.fn.parent
                        while scope is not None:
                            if n.value in scope.params or n.value in self.view(scope).assigned:
                                return "state"
                            scope = scope.parent
        return found

    def recompactions(self, fn: FunctionInfo) -> list[tuple[cst.Call, str]]:
        """Summarizer calls of ``fn`` fed an earlier summary, with where it came from."""
        view = self.view(fn)
        found = []
        for call in self.summarizers(fn):
            origin = None
            for arg in call.args:
                origin = self.earlier_summary(arg.value, view) or origin
                if origin == "state":
                    break
            if origin is not None:
                found.append((call, origin))
        return found

    def unchecked(self, fn: FunctionInfo, calls: Iterable[cst.Call]) -> set[cst.Call]:
        """The calls of ``calls`` that no generation check dominates in ``fn``."""
        targets = set(calls)
        if not targets:
            return set()
        flow = _RecompactionFlow(Evidence(fn, self.project, self.summaries), targets, self, self.view(fn))
        flow.run()
        return {c for c in targets if GENERATION not in flow.at.get(c, frozenset())}

    # -- SG304 ----------------------------------------------------------------------------

    def lock_key(self, expr: cst.BaseExpression, view: _Fn) -> str | None:
        """A key naming the lock ``expr`` is, if it is one."""
        fn = view.fn
        if isinstance(expr, cst.Call):
            qualified = fn.module.imports.qualify(expr.func) or ""
            if last_segment(qualified) in _LOCK_TYPES:
                return "new:" + _code(expr)
            if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in ("acquire", "acquire_async", "lock"):
                return self.lock_key(expr.func.value, view)
            return None
        name = dotted(expr)
        if name is None or "()" in name or "[]" in name:
            return None
        last = last_segment(name)
        parts = {p.lower() for p in last.split("_") if p}
        lockish = bool(parts & _LOCK_PARTS) or last.endswith("Lock") or last_segment(self.type_of(expr, view)) in (
            _LOCK_TYPES
        )
        if not lockish:
            return None
        head = name.partition(".")[0]
        if head in ("self", "cls"):
            return f"{fn.class_name}:{name}"
        scope: FunctionInfo | None = fn
        while scope is not None and not scope.is_module:
            if head in self.view(scope).assigned and head not in scope.params:
                return f"{scope.qualname}:{name}"
            scope = scope.parent
        return name

    def calls_with_locks(self, fn: FunctionInfo) -> _Calls:
        """Every call of ``fn`` with the locks held around it, its statement index and
        the loops it sits in; and where ``fn`` waits for what it dispatched."""
        found = self._calls.get(fn)
        if found is not None:
            return found
        view = self.view(fn)
        found = self._calls[fn] = _Calls()
        acquired: set[str] = set()
        counter = [0]

        def visit(stmts: list[Stmt], held: frozenset[str], loops: tuple[int, ...]) -> None:
            for stmt in stmts:
                if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                    continue
                counter[0] += 1
                index = counter[0]
                inner = held
                exprs = expressions_of(stmt)
                pool = False
                if isinstance(stmt, cst.With):
                    keys = set(held)
                    for item in stmt.items:
                        key = self.lock_key(item.item, view)
                        if key:
                            keys.add(key)
                        pool = pool or last_segment(self.type_of(item.item, view)) in _WAITS_ON_EXIT
                    inner = frozenset(keys)
                for expr in exprs:
                    calls: list[cst.Call] = []
                    for node in iter_exprs(expr):
                        if isinstance(node, cst.Call):
                            calls.append(node)
                        elif isinstance(node, cst.Await):
                            if isinstance(node.expression, cst.Call):
                                found.awaited.add(node.expression)
                            else:
                                found.syncs.append((index, loops))
                    calls.reverse()  # innermost (first evaluated) first
                    for call in calls:
                        found.calls.append((call, frozenset(held | acquired), index, loops))
                        if not isinstance(stmt, cst.With):
                            self._track_acquire(call, view, acquired)
                        if last_segment(dotted(call.func)) in _SYNC_METHODS:
                            found.syncs.append((index, loops))
                nested = (*loops, id(stmt)) if isinstance(stmt, (cst.For, cst.While)) else loops
                for block in child_blocks(stmt):
                    visit(block, inner, nested)
                if pool:  # leaving ``with ThreadPoolExecutor() as pool:`` waits for its work
                    counter[0] += 1
                    found.syncs.append((counter[0], loops))

        visit(fn.body, frozenset(), ())
        return found

    def _track_acquire(self, call: cst.Call, view: _Fn, acquired: set[str]) -> None:
        func = call.func
        name = dotted(func) or ""
        if last_segment(name) == "flock" or last_segment(name) == "lockf":
            flags = " ".join(_code(a.value) for a in call.args[1:])
            (acquired.discard if "LOCK_UN" in flags else acquired.add)("fcntl.flock")
            return
        if isinstance(func, cst.Attribute) and func.attr.value in ("acquire", "release"):
            key = self.lock_key(func.value, view)
            if key:
                (acquired.add if func.attr.value == "acquire" else acquired.discard)(key)

    def compaction_locks(self, fn: FunctionInfo, depth: int = 0) -> frozenset[str] | None:
        """Locks held at every compaction ``fn`` performs (directly or through project
        functions it calls); None when it performs none."""
        if fn in self._compaction_locks:
            return self._compaction_locks[fn]
        self._compaction_locks[fn] = None  # cycles
        view = self.view(fn)
        result: frozenset[str] | None = None
        for call, held, _, _ in self.calls_with_locks(fn).calls:
            locks: frozenset[str] | None = None
            if self.guarded_compaction(call, view):
                key = self.lock_key(cst.Attribute(call.func.value, cst.Name("lock")), view)  # type: ignore[attr-defined]
                locks = held | {key or "compactor.lock"}
            elif self.is_summarizer(call, view):
                locks = held
            elif depth < 3:
                callee = self.project.resolve(call.func, fn)
                if callee is not None and callee is not fn:
                    inner = self.compaction_locks(callee, depth + 1)
                    locks = None if inner is None else held | inner
            if locks is not None:
                result = locks if result is None else result & locks
        self._compaction_locks[fn] = result
        return result

    def dispatches(self, fn: FunctionInfo) -> Iterator[tuple[cst.Call, str, list[cst.BaseExpression]]]:
        """Calls of ``fn`` that run a callable concurrently: (call, label, targets)."""
        view = self.view(fn)
        for call, _, _, _ in self.calls_with_locks(fn).calls:
            found = self._dispatch(call, view)
            if found is not None:
                yield call, found[0], found[1]

    def _dispatch(self, call: cst.Call, view: _Fn) -> tuple[str, list[cst.BaseExpression]] | None:
        name = dotted(call.func) or ""
        last = last_segment(name)
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}

        def at(index: int, keyword: str | None = None) -> list[cst.BaseExpression]:
            if keyword is not None and keyword in keywords:
                return [keywords[keyword]]
            return [positional[index]] if len(positional) > index else []

        qualified = view.fn.module.imports.qualify(call.func) or ""
        if last in ("Thread", "Process") and (qualified.startswith(("threading.", "multiprocessing.")) or "." not in name):
            return qualified or last, at(99, "target")
        if last == "Timer" and qualified.startswith("threading."):
            return qualified, at(1, "function")
        if last in ("create_task", "ensure_future", "start_soon", "run_coroutine_threadsafe", "to_thread"):
            return f"{last}()", at(0)
        if last == "gather":
            return "asyncio.gather()", positional
        if last == "run_in_executor":
            return "run_in_executor()", at(1)
        if last in ("call_soon", "call_soon_threadsafe", "add_done_callback"):
            return f"{last}()", at(0)
        if last in ("call_later", "call_at"):
            return f"{last}()", at(1)
        if last in ("submit", "map", "apply_async", "map_async", "starmap") and isinstance(call.func, cst.Attribute):
            receiver = call.func.value
            words = (dotted(receiver) or "").lower()
            typed = last_segment(self.type_of(receiver, view)) in _EXECUTOR_TYPES
            if typed or "executor" in words or "pool" in words:
                return f"executor.{last}()", at(0)
        return None

    def target_functions(self, target: cst.BaseExpression, fn: FunctionInfo) -> tuple[list[FunctionInfo], bool, frozenset[str]]:
        """What a dispatched callable runs: project functions, whether it compacts
        right there (a compaction call or callable), and the locks held there."""
        view = self.view(fn)
        if isinstance(target, cst.Call):
            func_name = last_segment(dotted(target.func))
            if func_name == "partial" and target.args:
                return self.target_functions(target.args[0].value, fn)
            if self.guarded_compaction(target, view):
                key = self.lock_key(cst.Attribute(target.func.value, cst.Name("lock")), view)  # type: ignore[attr-defined]
                return [], True, frozenset({key or "compactor.lock"})
            if self.is_summarizer(target, view):
                return [], True, frozenset()
            callee = self.project.resolve(target.func, fn)
            return ([callee] if callee is not None else []), False, frozenset()
        if isinstance(target, cst.Lambda):
            fns: list[FunctionInfo] = []
            compacts = False
            locks: frozenset[str] = frozenset()
            for call in calls_in(target.body):
                inner, direct, held = self.target_functions(call, fn)
                fns.extend(inner)
                if direct:
                    compacts, locks = True, held
            return fns, compacts, locks
        if isinstance(target, (cst.Name, cst.Attribute)):
            callee = self.project.resolve(target, fn)
            if callee is not None:
                return [callee], False, frozenset()
            if isinstance(target, cst.Attribute) and target.attr.value == "compact" and self.is_compactor(target.value, view):
                key = self.lock_key(cst.Attribute(target.value, cst.Name("lock")), view)
                return [], True, frozenset({key or "compactor.lock"})
            qualified = fn.module.imports.qualify(target) or ""
            if self.vocab.matches("compaction-calls", qualified) and last_segment(qualified) not in _GENERIC_COMPACTION:
                return [], True, frozenset()
        return [], False, frozenset()

    def checkpoint_write(self, call: cst.Call, view: _Fn) -> bool:
        """A call that writes a checkpoint, and is not summaryguard's serialized store."""
        func = call.func
        name = dotted(func) or ""
        last = last_segment(name)
        imports = view.fn.module.imports
        qualified = imports.qualify(func) or ""
        receiver = func.value if isinstance(func, cst.Attribute) else None
        receiver_type = self.type_of(receiver, view) if receiver is not None else ""
        if receiver_type in _STORE:
            return False
        if receiver_type and self.vocab.matches("checkpoint-writes", f"{receiver_type}.{last}"):
            return True
        if self.vocab.matches("checkpoint-writes", qualified) and not qualified.startswith(_GUARD):
            return True
        if last not in _SERIALIZERS or receiver is None:
            return False
        words = [s for s in name.split(".")[:-1] if s not in ("()", "[]")]
        evidence = _is_checkpoint_word(view.fn.name) or any(
            _is_checkpoint_word(w) or w in ("saver", "checkpointer") for w in words
        )
        for arg in call.args:
            evidence = evidence or self._checkpoint_value(arg.value, view)
        if isinstance(receiver, cst.Name):
            for value in view.assigned.get(receiver.value, []):
                evidence = evidence or self._checkpoint_value(value, view)
        return evidence

    def _checkpoint_value(self, expr: cst.BaseExpression, view: _Fn, depth: int = 0) -> bool:
        for n in iter_exprs(expr):
            words: list[str] = []
            if isinstance(n, cst.Name):
                words = [n.value]
                if depth < 2:
                    for value in view.assigned.get(n.value, []):
                        if value is not expr and self._checkpoint_value(value, view, depth + 1):
                            return True
            elif isinstance(n, cst.Attribute):
                words = [n.attr.value]
            else:
                words = list(_strings(n)) if isinstance(n, (cst.SimpleString, cst.FormattedStringText)) else []
            if any(_is_checkpoint_word(w) for w in words):
                return True
        return False


def _is_class_name(name: str) -> bool:
    """``SummarizationNode``, ``HumanMessage``: a class, by the convention every framework follows."""
    return name[:1].isupper() and not name.isupper()


def _is_checkpoint_word(word: str) -> bool:
    lowered = word.lower()
    return "checkpoint" in lowered or "ckpt" in lowered


class _RecompactionFlow(FlowAnalysis):
    """The resume rules' dominance analysis, recording the checks in force at compaction calls."""

    def __init__(self, evidence: Evidence, targets: set[cst.Call], analysis: _Analysis, view: _Fn) -> None:
        super().__init__(evidence)
        self.targets = targets
        self.analysis = analysis
        self.view = view
        self.at: dict[cst.Call, frozenset[str]] = {}

    def expr(self, node: cst.CSTNode | None, state: State) -> tuple[State, bool]:
        if node is None:
            return state, False
        gained: set[str] = set()
        for call in calls_in(node):
            if call in self.targets:
                previous = self.at.get(call)
                self.at[call] = state.hard | gained if previous is None else previous & (state.hard | gained)
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == "adopt" and (
                self.analysis.is_compactor(func.value, self.view) or "compactor" in (dotted(func.value) or "").lower()
            ):
                gained |= ALL_KINDS
            gained |= self.ev.validator_kinds(call)
        after, raises = super().expr(node, state)
        return after.add(gained), raises


# -- entry point ----------------------------------------------------------------------------


def compaction_facts(project: Project, summaries: Mapping[FunctionInfo, Summary]) -> list[Fact]:
    """SG301-SG304 facts of every module of ``project``."""
    analysis = _Analysis(project, summaries)
    facts: list[Fact] = []
    pending_callers: dict[FunctionInfo, list[cst.Call]] = {}
    modules = [m for m in project.modules if m.mentions_summary or _mentions_compaction(m)]
    for module in modules:
        for fn in module.functions:
            facts.extend(analysis.records(fn))
            found = analysis.recompactions(fn)
            if not found:
                continue
            for call in analysis.unchecked(fn, [c for c, _ in found]):
                origin = next(o for c, o in found if c is call)
                if origin == "param" and not fn.is_module:
                    pending_callers.setdefault(fn, []).append(call)
                else:
                    facts.append(_recompaction_fact(call, None, module.path))
    if pending_callers:
        facts.extend(_at_callers(analysis, project, pending_callers))
    for module in modules:
        facts.extend(_concurrent_writes(analysis, module))
    return facts


def _mentions_compaction(module: ModuleInfo) -> bool:
    return any(_COMPACTION_FN.search(fn.name) for fn in module.functions) or any(
        q.rpartition(".")[0] in _COMPACTOR or q in _COMPACTOR for q in module.imports.aliases.values()
    )


def _recompaction_fact(call: cst.Call, through: str | None, path: str) -> Recompaction:
    return Recompaction(node=call, path=path, through=through)


def _at_callers(analysis: _Analysis, project: Project, pending: dict[FunctionInfo, list[cst.Call]]) -> list[Fact]:
    """A function that compacts a summary it was given: its callers must check."""
    callers: dict[FunctionInfo, list[cst.Call]] = {}
    for caller in project.functions:
        for stmt in walk_statements(caller.body):
            for expr in expressions_of(stmt):
                for call in calls_in(expr):
                    callee = project.resolve(call.func, caller)
                    if callee is not None and callee in pending and callee is not caller:
                        callers.setdefault(caller, []).append(call)
    facts = []
    called = set()
    for caller, calls in callers.items():
        for call in analysis.unchecked(caller, calls):
            callee = project.resolve(call.func, caller)
            assert callee is not None
            facts.append(_recompaction_fact(call, callee.name, caller.module.path))
        called.update(project.resolve(c.func, caller) for c in calls)  # type: ignore[misc]
    for fn, calls in pending.items():
        if fn not in called:
            facts.extend(_recompaction_fact(call, None, fn.module.path) for call in calls)
    return facts


def _concurrent_writes(analysis: _Analysis, module: ModuleInfo) -> list[Fact]:
    """SG304 in one module: writes that can overlap a dispatched compaction."""
    dispatched: list[tuple[FunctionInfo, cst.Call, str, frozenset[str], set[FunctionInfo]]] = []
    for fn in module.functions:
        for call, label, targets in analysis.dispatches(fn):
            for target in targets:
                fns, direct, locks = analysis.target_functions(target, fn)
                held: frozenset[str] | None = locks if direct else None
                closure: set[FunctionInfo] = set()
                for callee in fns:
                    inner = analysis.compaction_locks(callee)
                    if inner is not None:
                        held = inner if held is None else held & inner
                        closure |= _reachable(analysis, callee)
                if held is not None:
                    dispatched.append((fn, call, label, held, closure))
    for stmt in statements(module.tree):
        if isinstance(stmt, cst.ClassDef) and any(last_segment(dotted(b.value)) == "Thread" for b in stmt.bases):
            run = module.classes.get(stmt.name.value, {}).get("run")
            if run is not None:
                held = analysis.compaction_locks(run)
                if held is not None:
                    dispatched.append((run, stmt, f"a `{stmt.name.value}` thread", held, _reachable(analysis, run)))
    if not dispatched:
        return []
    facts = []
    for fn in module.functions:
        view = analysis.view(fn)
        calls = analysis.calls_with_locks(fn)
        for call, held, index, loops in calls.calls:
            if not analysis.checkpoint_write(call, view):
                continue
            for owner, dispatch, label, locks, closure in dispatched:
                scope = None if isinstance(dispatch, cst.ClassDef) else _class_of(owner)
                if fn in closure or held & locks or (scope is not None and _class_of(fn) != scope):
                    continue
                if owner is fn:
                    if not _overlaps(calls, dispatch, index, loops):
                        continue
                elif _confined(analysis.calls_with_locks(owner), dispatch):
                    continue  # the dispatching function waits for it: only its own writes overlap
                facts.append(UnserializedWrite(node=call, path=module.path, detail=label))
                break
    return facts


def _class_of(fn: FunctionInfo) -> str | None:
    """The class a function (or the function it is nested in) belongs to."""
    while fn.parent is not None:
        fn = fn.parent
    return fn.class_name


def _reachable(analysis: _Analysis, fn: FunctionInfo) -> set[FunctionInfo]:
    seen = {fn}
    stack = [fn]
    while stack and len(seen) < 64:
        current = stack.pop()
        for stmt in walk_statements(current.body):
            for expr in expressions_of(stmt):
                for call in calls_in(expr):
                    callee = analysis.project.resolve(call.func, current)
                    if callee is not None and callee not in seen:
                        seen.add(callee)
                        stack.append(callee)
    return seen


def _confined(calls: _Calls, dispatch: cst.CSTNode) -> bool:
    """The dispatching function waits for the work before it returns (outside any loop
    it was dispatched in): nothing outside it runs concurrently with it."""
    first = next((i for c, _, i, _ in calls.calls if c is dispatch), None)
    if first is None:
        return False
    return dispatch in calls.awaited or any(i >= first for i, _ in calls.syncs)


def _overlaps(calls: _Calls, dispatch: cst.CSTNode, index: int, loops: tuple[int, ...]) -> bool:
    """In the dispatching function itself: a write after the dispatch and before
    anything waits for it, or in the same loop as the dispatch."""
    start = next(((i, lp) for c, _, i, lp in calls.calls if c is dispatch), None)
    if start is None:
        return True
    first, start_loops = start
    if dispatch in calls.awaited:
        return False  # ``await asyncio.gather(...)``: done before the next statement
    if index > first:
        return not any(first < i <= index for i, _ in calls.syncs)
    shared = set(loops) & set(start_loops)
    return bool(shared) and not any(i >= first and set(lp) & shared for i, lp in calls.syncs)
