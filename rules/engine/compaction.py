"""The compaction side of the invariant: SG301-SG304.

Compaction must stamp every summary with a generation and a drop manifest,
must not re-summarize a summary nobody reconciled, and must not overlap a
checkpoint write. This module finds, per parsed module:

* **summarizer calls**: a call of the ``compaction-calls`` vocabulary
  (langmem's ``summarize_messages``, a configured name; the generic
  ``*.summarize`` / ``*.compact`` globs only with a second vote), an LLM call
  (``llm.invoke``, ``client.chat.completions.create``, ...) whose input
  carries a summarization instruction, or the conversation inside a function
  named for compaction, or a project function that returns such output, or
  one that hands an instruction it is given, unchanged, to a model call whose
  answer it returns. A model call is known by value: a model library's
  function, a method of an instance of a model library's class, or a method
  of a project object whose class (from a constructor or a factory's return,
  overrides included: :mod:`.classes`) reaches one, or a callable the caller
  injects declared to answer with text (``Callable[[str], Awaitable[str]]``: a
  parameter, or ``self.<attr>`` declared so or assigned from one). Whether a
  string asks for a summary is :mod:`.instructions`' to say.
  ``summaryguard.guard.Compactor`` is recognized and is compliant by
  construction (it stamps, records drops, vouches for its input, holds its
  lock);
* **summary records** (SG301/SG302): the outermost dict literal, ``dict(...)``
  or class instantiation holding summarizer output, when it is summary-like
  (a ``summary`` key, field or class, or built in a compaction function), or,
  where the compaction builds no such record, the chat message holding its
  output that takes the place of the conversation it folded; and
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
  ``Compactor.compact`` holds ``<compactor>.lock``); and across modules, the
  writes of callers of a function that leaves a compaction running
  (:mod:`.inflight`).

Everything is decided from syntax and the project index, one module at a
time, after the function summaries are solved.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import libcst as cst

from .annotations import annotated_class, class_expression, class_field, field_annotation, parameter, returns_text
from .arguments import bound_arguments
from .conditions import ALL_KINDS, GENERATION
from .evidence import Evidence
from .facts import NAME, VALUE, Fact, Recompaction, Step, SummaryRecord, UnserializedWrite
from .flow import FlowAnalysis, State
from .inflight import Inflight, writes_after_inflight
from .instructions import asks_for_summary
from .names import dotted, last_segment
from .project import FunctionInfo, ModuleInfo, Project
from .solver import call_graph
from .behaviour import FunctionSummary
from .classes import ClassIndex, ProjectClass
from .syntax import (
    Stmt,
    calls_in,
    child_blocks,
    children,
    expressions_of,
    iter_exprs,
    statements,
    string_value,
    walk_statements,
)

__all__ = ["compaction_facts"]

_GUARD = "summaryguard.guard"
_COMPACTOR = frozenset({f"{_GUARD}.Compactor", f"{_GUARD}.compactor.Compactor"})
_STORE = frozenset({f"{_GUARD}.CheckpointStore", f"{_GUARD}.store.CheckpointStore"})
_GUARD_SUMMARY = frozenset({f"{_GUARD}.Summary", f"{_GUARD}.model.Summary"})
_GUARD_SUMMARY_FIELDS = ("generation", "content", "verbatim_refs", "drop_manifest", "parent_generation")

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
#: An outside class that is a model client by its own (the library's) name: ``ChatOpenAI``,
#: ``AsyncAnthropic``, ``llama_index.llms.openai.OpenAI``. Not ``client``: ``SandboxClient`` is none.
_LLM_CLASS = re.compile(
    r"llm|model|chat|openai|anthropic|completion|gpt|claude|gemini|mistral|ollama|cohere|groq|"
    r"summari[sz]er",
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
#: Keyword arguments of a model call that describe the answer's shape or the tools the model
#: may call (the parameters of the model APIs, not the user's names): their text documents a
#: field ("a brief summary of the plan"), it does not ask the model to summarize its input.
_SCHEMA_KEYWORDS = frozenset({
    "tools", "functions", "tool_choice", "function_call", "response_format", "response_model", "response_schema",
    "output_schema", "output_type", "json_schema", "schema", "text_format",
})
#: The calls that put an element into a list (``turns.append(note)``, ``turns.insert(0, note)``).
_LIST_WRITES = frozenset({"append", "appendleft", "extend", "insert"})
#: A chat message's class, by the libraries' own names (``SystemMessage``, ``ChatMessage``).
_MESSAGE_CLASS = re.compile(r"Message(Chunk)?$")
_NOT_RECORD_CLASS = re.compile(r"(Message|MessageChunk|Prompt|PromptTemplate|Error|Exception|Warning)$")
_LOG_CALLS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "log", "print"})
#: The summary protocol: reading one of these makes a value a summary, whatever it is called.
_PROTOCOL = frozenset({"generation", "partial", "verbatim_refs", "dropped"})
#: Frameworks' own names for an earlier summary (langmem's ``running_summary``).
_FRAMEWORK_SUMMARY = frozenset({"running_summary"})
#: The summary protocol's own attribute (summaryguard's ``Checkpoint.summary``): a value, not a name.
_PROTOCOL_SUMMARY = frozenset({"summary"})
#: Attributes of a model response that are not its text (token usage, ids, metadata, and what
#: names a tool call: its id and the tool's name; its ``arguments`` and ``input`` are text).
_NOT_TEXT = frozenset(
    {"usage", "usage_metadata", "response_metadata", "id", "model", "model_name", "created", "finish_reason",
     "stop_reason", "system_fingerprint", "prompt_tokens", "completion_tokens", "total_tokens",
     "name", "call_id", "tool_call_id", "type", "role", "index"}
)
#: Calls that return their first argument's text, transformed.
_TEXT_FNS = frozenset({"str", "dedent", "textwrap.dedent", "json.dumps", "repr"})
#: The expressions :meth:`_Analysis.carries` looks into besides a name: any other is no summary text.
_MAY_CARRY = frozenset({
    cst.Call, cst.Attribute, cst.Subscript, cst.Await, cst.FormattedString, cst.BinaryOperation,
    cst.BooleanOperation, cst.IfExp, cst.List, cst.Tuple, cst.Set,
})
#: Methods that put a value into the container they are called on.
_PUT_METHODS = frozenset({"append", "extend", "insert", "appendleft", "add", "update", "setdefault"})
#: A role that marks a chat message as the summary itself (letta's ``MessageRole.summary``).
_SUMMARY_ROLE = frozenset({"summary", "SUMMARY", "summarization"})
#: An outside library's builder of a response body for a client, by the library's own name
#: (``JSONResponse``, ``JsonResponse``, ``web.json_response``, ``jsonify``): what goes in is
#: sent, not kept, so it is no summary record and does not leave as one.
#: Decorators of a web application or router that register a route handler.
_ROUTE_VERBS = frozenset({"get", "post", "put", "patch", "delete", "route", "api_route", "websocket"})
#: Web frameworks' application and router classes, by their qualified names.
_WEB_APP = re.compile(r"(fastapi|flask|starlette|quart|sanic|litestar|aiohttp|ninja|bottle|falcon)\.")
_RESPONSE_BUILDER = re.compile(r"Response$|^(json_response|jsonify|make_response)$")

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
#: Methods of a model library's client object that run the model and stream its answer.
_MODEL_STREAMS = frozenset({"stream", "astream"})


# -- per-function view ----------------------------------------------------------------------


@dataclass(eq=False)
class _Fn:
    """Bindings and summarizer output of one function."""

    fn: FunctionInfo
    assigned: dict[str, list[cst.BaseExpression]] = field(default_factory=dict)
    types: dict[str, str] = field(default_factory=dict)
    tainted: set[str] = field(default_factory=set)
    #: Names holding summarizer output that no record has been built from yet (a
    #: function that builds its own record returns a record, not raw text).
    raw: set[str] = field(default_factory=set)
    #: Names whose summary-protocol attributes or keys the function reads.
    protocol: set[str] = field(default_factory=set)
    #: Names whose value leaves the function: returned, yielded, passed to a call, stored.
    escapes: set[str] = field(default_factory=set)
    compaction_named: bool = False


def _bind(table: dict[str, list[cst.BaseExpression]], target: cst.BaseExpression, value: cst.BaseExpression) -> None:
    kind = type(target)  # type tests, as in _bindings
    if kind is cst.Name:
        table.setdefault(target.value, []).append(value)
    elif kind is cst.Tuple or kind is cst.List:
        for element in target.elements:
            _bind(table, element.value, value)


def _bindings(body: Iterable[Stmt]) -> dict[str, list[cst.BaseExpression]]:
    table: dict[str, list[cst.BaseExpression]] = {}
    for stmt in walk_statements(list(body)):
        kind = type(stmt)  # type tests: libcst's isinstance goes through ABCMeta (every statement)
        if kind is cst.Assign:
            for target in stmt.targets:
                _bind(table, target.target, stmt.value)
        elif kind is cst.AnnAssign and stmt.value is not None:
            _bind(table, stmt.target, stmt.value)
        elif kind is cst.AugAssign and type(stmt.operator) is cst.AddAssign:
            # ``prompt += f"Earlier summary: {previous}"``, ``text += chunk``: the name now
            # holds what it held and what is added (a prompt built piece by piece, a
            # streamed answer gathered)
            _bind(table, stmt.target, stmt.value)
        elif kind is cst.With:
            for item in stmt.items:
                if item.asname is not None:
                    _bind(table, item.asname.name, item.item)
        elif kind is cst.For:
            _bind(table, stmt.target, stmt.iter)
    return table


#: Field declarations of the libraries that declare fields in a class body: what such a call
#: binds is its ``default`` (its ``description=``, ``metadata=`` and the rest document the field).
_FIELD_DECLARATIONS = frozenset({
    "pydantic.Field", "pydantic.fields.Field", "dataclasses.field", "attr.ib", "attr.attrib", "attr.field",
    "attrs.field", "sqlmodel.Field",
})


def _declared_default(
    value: cst.BaseExpression, qualify: Callable[[cst.BaseExpression], str | None]
) -> list[cst.BaseExpression]:
    """``value``, or the default a field declaration gives (none: the caller sets it)."""
    if not isinstance(value, cst.Call) or qualify(value.func) not in _FIELD_DECLARATIONS:
        return [value]
    for index, arg in enumerate(value.args):
        if (arg.keyword is None and index == 0 and not arg.star) or (
            arg.keyword is not None and arg.keyword.value == "default"
        ):
            return [arg.value]
    return []


def _injected_text_function(declared: cst.Param | cst.AnnAssign | None) -> bool:
    """A parameter or class field declared to answer with text, whose default is nothing or
    None: a model its caller hands in (see :meth:`_Analysis._text_function`)."""
    if declared is None or declared.annotation is None or not returns_text(declared.annotation.annotation):
        return False
    default = declared.default if isinstance(declared, cst.Param) else declared.value
    return default is None or (isinstance(default, cst.Name) and default.value == "None")


def _part_of(expr: cst.CSTNode, folded: set[str]) -> bool:
    """``expr`` is a subscript of a folded conversation (``turns[-2:]``, ``turns[0]``, also
    of its copy: ``list(turns)[-2:]``)."""
    return type(expr) is cst.Subscript and _conversation_key(_copied(expr.value)) in folded


def _forces(tool_choice: cst.BaseExpression) -> bool:
    """A ``tool_choice`` that makes the model call a tool: anything but "auto", "none" or None."""
    if isinstance(tool_choice, cst.SimpleString):
        return string_value(tool_choice) not in ("auto", "none")
    return not (isinstance(tool_choice, cst.Name) and tool_choice.value == "None")


def _strings(node: cst.CSTNode) -> Iterator[str]:
    # type tests: libcst's isinstance goes through ABCMeta, and this runs per node (neither
    # class has subclasses)
    simple, text = cst.SimpleString, cst.FormattedStringText
    for n in iter_exprs(node):
        kind = type(n)
        if kind is simple:
            value = string_value(n)
            if isinstance(value, str):
                yield value
        elif kind is text:
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
            value = string_value(n.key)
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


def _has_key(node: cst.Dict, key: str) -> bool:
    return any(
        isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString) and string_value(e.key) == key
        for e in node.elements
    )


def _message_shaped(value: cst.BaseExpression) -> bool:
    """A chat message by its shape alone: a dict with a ``role``, or a message class's
    instance or factory result (``ChatMessage(...)``, ``ChatMessage.from_user(...)``)."""
    if type(value) is cst.Dict:
        return _has_key(value, "role")
    if type(value) is not cst.Call:
        return False
    func = value.func
    name = last_segment(dotted(func)) or ""
    if _MESSAGE_CLASS.search(name):
        return True
    return type(func) is cst.Attribute and _MESSAGE_CLASS.search(last_segment(dotted(func.value)) or "") is not None


#: Builtins that measure a value: a message holding ``len(text)`` holds none of ``text``.
_MEASURES = frozenset({"len", "hash", "id", "bool", "int", "float", "type", "isinstance"})


def _text_names(expr: cst.BaseExpression, names: set[str]) -> set[str]:
    """Which of ``names`` ``expr`` is made of, not counting what a measuring builtin
    (:data:`_MEASURES`) only measures."""
    found: set[str] = set()
    stack: list[cst.CSTNode] = [expr]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is cst.Name:
            if node.value in names:  # type: ignore[attr-defined]
                found.add(node.value)  # type: ignore[attr-defined]
            continue
        if kind is cst.Call and type(node.func) is cst.Name and node.func.value in _MEASURES:  # type: ignore[attr-defined]
            continue
        stack.extend(children(node))
    return found


def _keys_set_on(name: str, body: Sequence[Stmt]) -> set[str]:
    """Keys and attributes set on the local ``name`` anywhere in ``body`` (``name["generation"] = g``,
    ``name.update(drop_manifest=d)``, ``setattr(name, "partial", False)``)."""
    keys: set[str] = set()
    for other in walk_statements(body):
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


@dataclass(frozen=True)
class _HelperMessage:
    """What the chat messages a project function returns are made of (see
    :meth:`_Analysis._returned_message`): the parameters they hold, their keys, and whether
    a ``**`` splat hides some of them."""

    params: frozenset[str]
    keys: frozenset[str]
    opaque: bool


def _instance_name(fn: FunctionInfo) -> str | None:
    """The name a method calls its instance by (its first parameter: ``self``, or any
    other), or None outside a class."""
    return fn.params[0] if fn.class_name and not fn.is_module and fn.params else None


def _copied(expr: cst.BaseExpression) -> cst.BaseExpression:
    """What ``list(x)``, ``tuple(x)`` or ``x.copy()`` copies; ``expr`` itself otherwise."""
    if type(expr) is cst.Call:
        func = expr.func
        if type(func) is cst.Name and func.value in ("list", "tuple") and len(expr.args) == 1:
            return expr.args[0].value
        if type(func) is cst.Attribute and func.attr.value == "copy" and not expr.args:
            return func.value
    return expr


def _early_exits(body: Sequence[Stmt]) -> dict[int, int]:
    """The statements of every nested block that ends by leaving the function (``return``,
    ``raise``), each with its block: a cut there (``if reset: turns.clear(); return``)
    does not lie on the way to a write after the block."""
    found: dict[int, int] = {}
    _add_early_exits(statements(list(body)), False, found)
    return found


def _add_early_exits(block: list[Stmt], nested: bool, found: dict[int, int]) -> None:
    """:func:`_early_exits` of one block, added to ``found`` (a function, not a recursive
    closure: see :meth:`_Analysis._messages_in`)."""
    if nested and block and type(block[-1]) in (cst.Return, cst.Raise):
        number = len(found) + 1  # any number no other block has
        found.update((id(stmt), number) for stmt in block)
    for stmt in block:
        for inner in child_blocks(stmt):
            _add_early_exits(inner, True, found)


def _holds_whole(value: cst.BaseExpression, key: str) -> bool:
    """Whether ``value`` holds the whole conversation ``key`` (``self.turns + [turn]``): an
    assignment of it cuts nothing."""
    nodes = list(iter_exprs(value))
    sliced = {id(n.value) for n in nodes if type(n) is cst.Subscript}  # ``self.turns[-4:]`` keeps a part
    return any(
        (type(n) is cst.Name or type(n) is cst.Attribute) and id(n) not in sliced and _conversation_key(n) == key
        for n in nodes
    )


def _within(key: str | None, holder: str) -> bool:
    """``key`` is the conversation ``holder`` or one held by it (``history.messages``
    within ``history``: ``history.clear()`` empties it)."""
    return key is not None and (key == holder or key.startswith((holder + ".", holder + "[")))


def _conversation_key(expr: cst.BaseExpression) -> str | None:
    """The conversation an expression is, or a slice of (``self.turns`` for
    ``self.turns[-2:]`` and ``self.turns[:]``), as code: one element
    (``self.inboxes[target]``) is a conversation of its own. None when it is no
    variable, attribute chain or subscript of one."""
    while type(expr) is cst.Subscript and any(type(e.slice) is cst.Slice for e in expr.slice):
        expr = expr.value
    kind = type(expr)
    if kind is cst.Subscript:
        inner = _conversation_key(expr.value)
        return f"{inner}[{_code(expr.slice[0].slice)}]" if inner and len(expr.slice) == 1 else None
    return dotted(expr) if kind is cst.Name or kind is cst.Attribute else None


def _summary_role(node: cst.CSTNode) -> bool:
    """A message whose ``role`` is the summary role (``role=MessageRole.summary``)."""
    values: list[cst.BaseExpression] = []
    if isinstance(node, cst.Dict):
        values = [e.value for e in node.elements if isinstance(e, cst.DictElement)
                  and isinstance(e.key, cst.SimpleString) and string_value(e.key) == "role"]
    elif isinstance(node, cst.Call):
        values = [a.value for a in node.args if a.keyword is not None and a.keyword.value == "role"]
    return any(_is_summary_role(value) for value in values)


def _is_summary_role(value: cst.BaseExpression) -> bool:
    """``"summary"`` or ``MessageRole.summary``: the role a summary message is given."""
    if isinstance(value, cst.SimpleString):
        return string_value(value) in _SUMMARY_ROLE
    return isinstance(value, cst.Attribute) and value.attr.value in _SUMMARY_ROLE


def _param_default(fn: FunctionInfo, name: str) -> cst.BaseExpression | None:
    """The default value of ``fn``'s parameter ``name``, if it has one."""
    node = fn.header
    if not isinstance(node, cst.FunctionDef):
        return None
    params = node.params
    for param in (*params.params, *params.kwonly_params, *params.posonly_params):
        if param.name.value == name:
            return param.default
    return None


#: Types whose values are numbers or truth values: what a function annotated so returns is never text.
_NUMBER_TYPES = frozenset({"int", "float", "bool", "complex", "None"})


def _annotated_none(returns: cst.Annotation | None) -> bool:
    """``-> None`` (or ``-> "None"``)."""
    if returns is None:
        return False
    expr = returns.annotation
    if isinstance(expr, cst.SimpleString):
        return string_value(expr) == "None"
    return isinstance(expr, cst.Name) and expr.value == "None"


def _returns_number(returns: cst.Annotation | None) -> bool:
    """Whether a return annotation says number (``-> int``, ``-> Optional[int]``, ``-> int | None``)."""
    if returns is None:
        return False
    expr: cst.BaseExpression = returns.annotation
    if isinstance(expr, cst.SimpleString):  # ``-> "int"``
        text = string_value(expr)
        return isinstance(text, str) and all(part.strip() in _NUMBER_TYPES for part in text.split("|"))
    return _number_type(expr)


def _number_type(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.Name):
        return expr.value in _NUMBER_TYPES
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.BitOr):
        return _number_type(expr.left) and _number_type(expr.right)
    if isinstance(expr, cst.Subscript) and last_segment(dotted(expr.value)) in ("Optional", "Union"):
        return all(
            isinstance(e.slice, cst.Index) and _number_type(e.slice.value) for e in expr.slice
        )
    return False


def _tested_only(expr: cst.CSTNode) -> set[int]:
    """The nodes of ``expr`` that are only tested, never folded: the operands of a comparison
    (its value is a truth value) and the filters of a comprehension (they choose elements)."""
    found: set[int] = set()
    for node in iter_exprs(expr):
        if isinstance(node, cst.Comparison):
            found.update(id(inner) for inner in iter_exprs(node))
        elif isinstance(node, (cst.CompFor,)):
            for test in node.ifs:
                found.update(id(inner) for inner in iter_exprs(test.test))
    return found


def _names(expr: cst.CSTNode, sent: Callable[[cst.Call], bool] | None = None) -> set[str]:
    """The variables an expression reads (not attribute names, not keywords), leaving out
    what goes into a call ``sent`` accepts (a response body: sent, not kept)."""
    found: set[str] = set()
    skip: set[int] = set()
    for n in iter_exprs(expr):
        if id(n) in skip:
            skip.update(id(c) for c in children(n))
            continue
        kind = type(n)  # type tests (see _strings)
        if sent is not None and kind is cst.Call and sent(n):
            skip.update(id(a) for a in n.args)
        elif kind is cst.Attribute:
            skip.add(id(n.attr))
        elif kind is cst.Arg and n.keyword is not None:
            skip.add(id(n.keyword))
        elif kind is cst.Name:
            found.add(n.value)
    return found


def _uses(body: list[Stmt], view: _Fn, sent: Callable[[cst.Call], bool]) -> None:
    """One walk of a function: names read through the summary protocol, and names
    whose value leaves the function (returned, yielded, passed on, stored). What goes
    into a response body (``sent``) does not leave as a summary."""
    for stmt in walk_statements(body):
        stmt_kind = type(stmt)  # type tests: libcst's isinstance goes through ABCMeta (a hot loop)
        if stmt_kind is cst.Return and stmt.value is not None:
            view.escapes |= _names(stmt.value, sent)
        elif (stmt_kind is cst.Assign or stmt_kind is cst.AnnAssign) and stmt.value is not None:
            targets = [t.target for t in stmt.targets] if stmt_kind is cst.Assign else [stmt.target]
            if any(isinstance(t, (cst.Attribute, cst.Subscript)) for t in targets):
                view.escapes |= _names(stmt.value)
        for expr in expressions_of(stmt):
            for n in iter_exprs(expr):
                kind = type(n)  # type tests: libcst's isinstance goes through ABCMeta (a hot loop)
                if kind is cst.Attribute:
                    if n.attr.value in _PROTOCOL and type(n.value) is cst.Name:  # type: ignore[attr-defined]
                        if n.value.value not in ("self", "cls"):  # type: ignore[attr-defined]
                            view.protocol.add(n.value.value)  # an object's counter is not its summary
                elif kind is cst.Subscript:
                    if type(n.value) is cst.Name and any(  # type: ignore[attr-defined]
                        k in _PROTOCOL for e in n.slice for k in _strings(e)  # type: ignore[attr-defined]
                    ):
                        view.protocol.add(n.value.value)  # type: ignore[attr-defined]
                elif kind is cst.Yield or kind is cst.Await:
                    if isinstance(getattr(n, "value", None), cst.CSTNode):
                        view.escapes |= _names(n.value)  # type: ignore[attr-defined]
                elif kind is cst.Call:
                    last = last_segment(dotted(n.func))
                    if last not in _LOG_CALLS and not sent(n):
                        for arg in n.args:
                            if type(arg.value) is cst.Name:
                                view.escapes.add(arg.value.value)
                    if type(n.func) is cst.Attribute and last in _PUT_METHODS:
                        for arg in n.args:
                            view.escapes |= _names(arg.value)


@dataclass(eq=False)
class _Calls:
    """A function's calls in source order: (call, locks held, statement index, loops)."""

    calls: list[tuple[cst.Call, frozenset[str], int, tuple[int, ...]]] = field(default_factory=list)
    #: (statement index, loops) of the points where the function waits for dispatched work.
    syncs: list[tuple[int, tuple[int, ...]]] = field(default_factory=list)
    #: Calls the function awaits in place (``await asyncio.gather(...)``).
    awaited: set[cst.Call] = field(default_factory=set)

    def waits_for(self, dispatch: cst.CSTNode) -> bool:
        """The function waits for the work ``dispatch`` started before it returns (outside
        any loop it was dispatched in): nothing outside it runs concurrently with that work."""
        first = next((i for c, _, i, _ in self.calls if c is dispatch), None)
        if first is None:
            return False
        return dispatch in self.awaited or any(i >= first for i, _ in self.syncs)


# -- the analysis ---------------------------------------------------------------------------


class _Analysis:
    def __init__(self, project: Project, summaries: Mapping[FunctionInfo, FunctionSummary]) -> None:
        self.project = project
        self.vocab = project.vocabulary
        self.summaries = summaries
        self._fns: dict[FunctionInfo, _Fn] = {}
        #: :meth:`_role_enums` by module id.
        self._roles: dict[int, frozenset[str]] = {}
        self._returns_summary: dict[FunctionInfo, bool] = {}
        self._summarizer: dict[cst.Call, bool] = {}
        self._passes: dict[FunctionInfo, frozenset[str]] = {}
        self._instr: dict[tuple[int, str], bool] = {}
        #: :meth:`_instruction` questions being answered, and whether an answer was cut short.
        self._instr_active: set[tuple[int, str]] = set()
        self._instr_cut = False
        self._recorded: dict[FunctionInfo, bool] = {}
        self._dispatching: dict[FunctionInfo, frozenset[str]] = {}
        #: The compaction each function leaves running when it returns (see :mod:`.inflight`).
        self.inflight: dict[FunctionInfo, Inflight | None] = {}
        #: The names a call must have to leave work running (see :mod:`.inflight`).
        self.candidate_names: frozenset[str] | None = None
        self._channels: dict[FunctionInfo, dict[tuple[str, str], cst.CSTNode]] = {}
        self._own: dict[FunctionInfo, dict[tuple[str, str], cst.CSTNode]] = {}
        self._records: dict[FunctionInfo, list[tuple[cst.CSTNode, Stmt, str]]] = {}
        self._messages: dict[FunctionInfo, list[tuple[cst.CSTNode, Stmt, str, str | None]]] = {}
        self._helper_messages: dict[FunctionInfo, _HelperMessage] = {}
        self._modules_by_name: dict[str, ModuleInfo] | None = None
        self._calls: dict[FunctionInfo, _Calls] = {}
        self._compaction_locks: dict[FunctionInfo, frozenset[str] | None] = {}
        self._constants: dict[str, dict[str, list[cst.BaseExpression]]] = {}
        self._classes: dict[str, dict[str, cst.ClassDef]] = {}
        self._class_constants: dict[tuple[str, str], dict[str, list[cst.BaseExpression]]] = {}
        self.hierarchy = ClassIndex(project)
        self._instances: dict[tuple[object, ...], frozenset[ProjectClass | str] | None] = {}
        self._model_runs: dict[tuple[object, ...], bool] = {}
        self._forwards: dict[FunctionInfo, tuple[_Forward, ...]] = {}
        self._grows: dict[FunctionInfo, dict[str, list[tuple[cst.BaseExpression, bool]]]] = {}
        #: Summarizer calls that are summarizers because they hand an instruction on: the model call.
        self.forwarded: dict[cst.Call, Step] = {}

    # -- module facts -------------------------------------------------------------------

    def constants(self, module: ModuleInfo) -> dict[str, list[cst.BaseExpression]]:
        found = self._constants.get(module.path)
        if found is None:
            found = self._constants[module.path] = _bindings(statements(module.tree))
        return found

    def class_constants(self, fn: FunctionInfo) -> dict[str, list[cst.BaseExpression]]:
        """What the body of the class of method ``fn`` binds (``DEFAULT_PROMPT = "..."``):
        ``self.DEFAULT_PROMPT`` may read it, as it may read what a method assigns to it. Only
        for a class at the module's top level (a nested class of the same name is another
        class). A field declaration (``x: dict = Field(default=None, description=...)``)
        binds its default: the words that document the field are no value of it."""
        module, class_name = fn.module, fn.class_name
        if not class_name or fn.qualname != f"{module.name}.{class_name}.{fn.name}":
            return {}
        key = (module.path, class_name)
        found = self._class_constants.get(key)
        if found is None:
            node = self.classes(module).get(class_name)
            bound = _bindings(statements(node.body)) if node is not None else {}
            qualify = module.imports.qualify
            found = self._class_constants[key] = {
                name: [default for value in values for default in _declared_default(value, qualify)]
                for name, values in bound.items()
            }
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
        _uses(fn.body, view, lambda call: self.response_body(call, view))
        # Raw text is summarizer output first (``carries(raw=True)`` implies ``carries()``),
        # so once the tainted names settle, only they can be raw: most functions carry no
        # summary at all, and their raw pass, half of this loop's cost, is skipped.
        candidates: Iterable[str] = view.assigned
        for raw, table in ((False, view.tainted), (True, view.raw)):
            settled = False
            for _ in range(4):  # summarizer output, followed through assignments
                grown = {
                    name for name in candidates
                    if name not in table and any(self.carries(v, view, raw=raw) for v in view.assigned[name])
                }
                if not grown:
                    settled = True
                    break
                table |= grown
            if settled and not raw:
                candidates = [name for name in view.assigned if name in view.tainted]
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
            assigned = self.project.attribute_assignments(module, view.fn.class_name, attr)
            for method in module.classes.get(view.fn.class_name, {}).values():
                for value, by, receiver in assigned:
                    if by is method and receiver == "self" and isinstance(value, cst.Call):
                        return module.imports.qualify(value.func) or ""
                annotation = method.annotations.get(attr)
                if annotation and method.name == "__init__":
                    return module.imports.qualify_name(annotation)
            declared = field_annotation(module, view.fn.class_name, attr)  # ``lock: Lock`` in a dataclass
            return annotated_class(declared, module.imports) or ""
        return ""

    # -- summarizers --------------------------------------------------------------------

    def response_body(self, call: cst.Call, view: _Fn) -> bool:
        """``call`` builds a response body for a client with an outside library's builder
        (:data:`_RESPONSE_BUILDER`, matched on the library's name as imported, never on a
        project class or function of that name)."""
        if isinstance(call.func, cst.Name) and call.func.value in self.classes(view.fn.module):
            return False
        qualified = view.fn.module.imports.qualify(call.func)
        if not qualified or "." not in qualified or self.project.resolve(call.func, view.fn) is not None:
            return False
        return bool(_RESPONSE_BUILDER.search(last_segment(qualified))) and not self._project_module(qualified)

    def _project_module(self, qualified: str) -> bool:
        """Whether ``qualified`` names something in a module of this project."""
        if self._modules_by_name is None:
            self._modules_by_name = {m.name: m for m in self.project.modules if getattr(m, "name", None)}
        module = qualified
        while "." in module:
            module = module.rpartition(".")[0]
            if module in self._modules_by_name:
                return True
        return False

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
            # ``x.summarize(...)`` / ``x.compact(...)`` is any object's method: only an
            # instruction in its input says it summarizes (what it is called says nothing).
            return self._asks_to_summarize(call, view)
        callee = self.project.resolve(func, view.fn) if depth < 3 else None
        if callee is not None and self.returns_summary(callee, depth + 1):
            return True
        forwarded = self._forwarded_instruction(call, view) if depth < 3 and call.args else None
        if forwarded is not None:
            self.forwarded[call] = forwarded
            return True
        if self._prompt_receiver(func, view):
            return False
        if callee is None and depth < 3 and call.args and self._text_function(func, view):
            return self._asks_to_summarize(call, view)
        if self._llm_call(func, name, last, qualified):
            if last in _LLM_ON_RECEIVER and not self._receiver_runs_model(func, view):
                return False
        elif not call.args or not (
            (last in _LLM_ON_RECEIVER or last in _LLM_ANY) and self._receiver_is_model(func, view)
        ) and not self._object_runs_model(call, view.fn):
            return False  # (no arguments: no instruction to carry)
        return self._asks_to_summarize(call, view)

    def _asks_to_summarize(self, call: cst.Call, view: _Fn) -> bool:
        """A summarization instruction reaches the model as its input: an argument other
        than a schema of its answer or of its tools (:data:`_SCHEMA_KEYWORDS`), unless the
        call forces the model to use a tool (``tool_choice`` other than "auto" or "none"):
        then the tool's description is the task (Anthropic's way to ask for a structured
        answer)."""
        forced = any(a.keyword is not None and a.keyword.value == "tool_choice" and _forces(a.value) for a in call.args)
        return any(
            self._instruction(a.value, view) for a in call.args
            if forced or a.keyword is None or a.keyword.value not in _SCHEMA_KEYWORDS
        )

    def _receiver_root(self, func: cst.BaseExpression) -> cst.BaseExpression | None:
        """The object a method call's receiver chain starts from: ``client`` in
        ``client.chat.completions.create``, ``self.x`` in ``self.x.run``; None for a plain call."""
        root = func
        while isinstance(root, cst.Attribute) and not (
            isinstance(root.value, cst.Name) and root.value.value in ("self", "cls")
        ):
            root = root.value
        if root is func or not isinstance(root, (cst.Name, cst.Attribute)):
            return None
        return root

    def _receiver_classes(
        self, func: cst.BaseExpression, view: _Fn
    ) -> tuple[frozenset[ProjectClass | str], str | None] | None:
        """The classes the root of a method call's receiver is an instance of
        (``client = SandboxClient()``, ``self.x = ChatOpenAI()``, ``c = Client.create(kind)``
        returning project subclasses), with the method's name when it is called on the
        root itself; None when some source of the value is unknown (a parameter, an
        outside function's result). See :meth:`instances`."""
        root = self._receiver_root(func)
        if root is None:
            return None
        classes = self.instances(root, view.fn)
        if not classes:
            return None
        method = func.attr.value if isinstance(func, cst.Attribute) and func.value is root else None
        return classes, method

    def _text_function(self, func: cst.BaseExpression, view: _Fn) -> bool:
        """``func`` is a callable its caller injects, declared to answer with text
        (:func:`.annotations.returns_text`): a parameter of this function or an enclosing
        one, or ``self.<attr>`` declared so as a class field or assigned from a parameter
        declared so. A library that leaves the model to its user takes it in this shape;
        fed a summarization request, its call is the summarizer, whatever it is called.
        A parameter or field with a default other than None is a hook with a behaviour of its own
        (``render: Callable[[str], str] = str.strip``), not a model left to the caller."""
        fn = view.fn
        if isinstance(func, cst.Name):
            scope: FunctionInfo | None = fn
            while scope is not None:
                if func.value in scope.params:
                    return _injected_text_function(parameter(scope, func.value))
                scope = scope.parent
            return False
        if not (
            isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
            and func.value.value in ("self", "cls") and fn.class_name
        ):
            return False
        attr = func.attr.value
        if _injected_text_function(class_field(fn.module, fn.class_name, attr)):
            return True
        return any(
            isinstance(value, cst.Name) and value.value in method.params
            and _injected_text_function(parameter(method, value.value))
            for value, method, _ in self.project.attribute_assignments(fn.module, fn.class_name, attr)
        )

    def _receiver_is_model(self, func: cst.BaseExpression, view: _Fn) -> bool:
        """The receiver is an instance of a model library's class, whatever it is called."""
        found = self._receiver_classes(func, view)
        return found is not None and all(isinstance(c, str) and _model_library(c) for c in found[0])

    def _receiver_runs_model(self, func: cst.BaseExpression, view: _Fn) -> bool:
        """``client.create(...)``: when the receiver is bound to an instance of a class
        (``client = SandboxClient()``), the class decides, not what the variable is
        called: a class of a model library, a project class whose method runs a model,
        or an outside class whose own name says it is one. An unknown receiver keeps
        the receiver-name vote of :meth:`_llm_call`."""
        found = self._receiver_classes(func, view)
        if found is None:
            return True
        classes, method = found
        return any(self._class_runs_model(c, method) for c in classes)

    def _constructs(self, call: cst.Call, view: _Fn) -> bool:
        """``C(...)`` instantiates a class: one the module defines, whatever it is called,
        or an outside one by the naming convention every library follows."""
        name = dotted(call.func) or ""
        if isinstance(call.func, cst.Name) and call.func.value in self.classes(view.fn.module):
            return True
        return _is_class_name(last_segment(name))

    def _bound_values(self, name: str, view: _Fn) -> list[cst.BaseExpression]:
        """What ``name`` is bound to in ``view``'s function, its enclosing ones or its module."""
        scope: FunctionInfo | None = view.fn
        while scope is not None:
            if name in scope.params and not scope.is_module:
                return []
            found = self.view(scope).assigned.get(name)
            if found:
                return found
            scope = scope.parent
        return self.constants(view.fn.module).get(name, [])

    def _class_runs_model(self, cls: ProjectClass | str, method: str | None) -> bool:
        """An instance of ``cls`` runs a model on ``method``: a model library's class; a project
        class whose method (its own or inherited, with ``self`` bound to ``cls`` so that the
        overrides of ``cls`` run) reaches a model; or, when no method says, a class named so."""
        if isinstance(cls, str):
            return _model_library(cls) or bool(_LLM_CLASS.search(last_segment(cls)))
        if method is not None:
            found = self.hierarchy.method(cls, method)
            if found is not None:
                return self._runs_model(found, 0, cls)
        return bool(_LLM_CLASS.search(cls.name))

    def _runs_model(self, fn: FunctionInfo, depth: int, self_cls: ProjectClass | None = None) -> bool:
        """Does ``fn``'s body call a model (directly, or through project functions and the
        methods of the objects it calls, bounded)? ``self_cls`` is the class ``self`` is an
        instance of: ``self.request(...)`` in a base class runs that class's override."""
        key = (fn, self_cls, depth)
        known = self._model_runs.get(key)
        if known is not None:
            return known
        self._model_runs[key] = False  # cycles
        found = False
        for stmt in walk_statements(fn.body):
            for expr in expressions_of(stmt):
                for call in calls_in(expr):
                    if self._calls_model(call, fn, self_cls):
                        found = True
                    elif depth < 3:
                        found = any(
                            (target is not fn or cls != self_cls) and self._runs_model(target, depth + 1, cls)
                            for target, cls in self._targets(call, fn, self_cls)
                        )
                    if found:
                        break
                if found:
                    break
            if found:
                break
        self._model_runs[key] = found
        return found

    def _calls_model(
        self, call: cst.Call, fn: FunctionInfo, self_cls: ProjectClass | None = None, strict: bool = False
    ) -> bool:
        """``call`` itself runs a model: a model library's function, a model method by the
        library's own attribute names (``x.chat.completions.create``, ``x.invoke``), or a
        model method of an object that is an instance of a model library's class (by the
        value it is bound to, whatever it is called). ``strict``: a model library's function
        only when it is one of the model-running verbs (``litellm.completion``, not
        ``trim_messages``), and never a prompt template's ``invoke`` (it only renders text)."""
        name = dotted(call.func) or ""
        last = last_segment(name)
        qualified = fn.module.imports.qualify(call.func) or ""
        if strict and self._prompt_receiver(call.func, self.view(fn)):
            return False
        if _model_library(qualified):
            if strict and last not in _LLM_ANY and last not in _LLM_ON_RECEIVER and last not in _MODEL_STREAMS:
                return False
            return not _is_class_name(last)
        if last in _LLM_ANY or last in _LLM_ON_RECEIVER and any(
            _LLM_CLASS.search(part) for part in name.split(".")[:-1]
        ):
            return True  # a model's method; a ``client`` alone (an HTTP or Docker client) is none
        if last in _LLM_ON_RECEIVER or last in _MODEL_STREAMS:
            root = self._receiver_root(call.func)
            if root is not None:
                classes = self.instances(root, fn, self_cls)
                return bool(classes) and any(isinstance(c, str) and _model_class(c) for c in classes)
        return False

    def _targets(
        self, call: cst.Call, fn: FunctionInfo, self_cls: ProjectClass | None = None
    ) -> list[tuple[FunctionInfo, ProjectClass | None]]:
        """The project functions ``call`` may run, each with the class ``self`` is an instance
        of inside it: ``self.m()`` runs ``m`` of ``self``'s class (an override when that class
        is a subclass), ``Cls.m()`` the method ``Cls`` has or inherits, ``obj.m()`` the method of
        each class ``obj`` may be an instance of (polymorphic dispatch, see :meth:`instances`),
        anything else what call resolution says."""
        func = call.func
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            base = func.value
            if isinstance(base, cst.Name) and base.value in ("self", "cls"):
                cls = self_cls or self.hierarchy.owner(fn)
                if cls is not None:
                    found = self.hierarchy.method(cls, method)
                    return [(found, cls)] if found is not None else []
            else:
                cls = self.hierarchy.referenced(base, fn.module)
                if cls is not None:
                    found = self.hierarchy.method(cls, method)
                    return [(found, cls)] if found is not None else []
                classes = self.instances(base, fn, self_cls)
                if classes:
                    targets = []
                    for c in classes:
                        found = self.hierarchy.method(c, method) if isinstance(c, ProjectClass) else None
                        if found is not None:
                            targets.append((found, c))
                    return targets
        callee = self.project.resolve(func, fn)
        return [(callee, None)] if callee is not None else []

    def instances(
        self, expr: cst.BaseExpression, fn: FunctionInfo, self_cls: ProjectClass | None = None, depth: int = 0
    ) -> frozenset[ProjectClass | str] | None:
        """The classes the value of ``expr`` (evaluated in ``fn``) may be an instance of:
        project classes, and outside classes by qualified name. Followed through local and
        module bindings, ``self`` attributes, awaits, ``a or b``, and the returns of project
        factories (``Client.create(kind)`` returning ``OpenAIClient(...)`` or
        ``AnthropicClient(...)``, ``self._client()``, ``cls(...)``); None when some source is
        unknown (a parameter, an outside function's result): then nothing is decided by class."""
        key = (expr, fn, self_cls, depth)
        if key in self._instances:
            return self._instances[key]
        self._instances[key] = None  # cycles
        found = self._find_instances(expr, fn, self_cls, depth) if depth <= 6 else None
        self._instances[key] = found
        return found

    def _find_instances(
        self, expr: cst.BaseExpression, fn: FunctionInfo, self_cls: ProjectClass | None, depth: int
    ) -> frozenset[ProjectClass | str] | None:
        def union(values: Iterable[tuple[cst.BaseExpression, FunctionInfo, ProjectClass | None]]):
            found: set[ProjectClass | str] = set()
            for value, where, cls in values:
                if isinstance(value, cst.Name) and value.value == "None":
                    continue  # ``Optional[...]``: no instance, no method run
                inner = self.instances(value, where, cls, depth + 1)
                if not inner:
                    return None
                found |= inner
            return frozenset(found) or None

        module = fn.module
        if isinstance(expr, cst.Await):
            return self.instances(expr.expression, fn, self_cls, depth + 1)
        if isinstance(expr, cst.IfExp):
            return union([(expr.body, fn, self_cls), (expr.orelse, fn, self_cls)])
        if isinstance(expr, cst.BooleanOperation):
            return union([(expr.left, fn, self_cls), (expr.right, fn, self_cls)])
        if isinstance(expr, cst.Name):
            if expr.value in ("self", "cls"):
                cls = self_cls or self.hierarchy.owner(fn)
                return frozenset({cls}) if cls is not None else None
            bound = self._bound_values(expr.value, self.view(fn))
            return union((v, fn, self_cls) for v in bound) if bound else None
        if isinstance(expr, cst.Attribute):
            if isinstance(expr.value, cst.Name) and expr.value.value in ("self", "cls") and fn.class_name:
                values = self.attribute_values(fn, expr.attr.value)
                found = union((v, owner, self_cls) for v, owner in values) if values else None
                return found or self._declared_instances(fn, expr.attr.value)
            return None
        if not isinstance(expr, cst.Call):
            return None
        func = expr.func
        if isinstance(func, cst.Name) and func.value == "cls" and self_cls is not None:
            return frozenset({self_cls})
        cls = self.hierarchy.referenced(func, module)
        if cls is not None:
            return frozenset({cls})
        name = dotted(func) or ""
        if _is_class_name(last_segment(name)) and "()" not in name and "[]" not in name:
            return frozenset({module.imports.qualify_name(name)})
        returns: list[tuple[cst.BaseExpression, FunctionInfo, ProjectClass | None]] = []
        for target, cls in self._targets(expr, fn, self_cls):
            values = [s.value for s in walk_statements(target.body) if isinstance(s, cst.Return) and s.value]
            if not values:
                return None
            returns += [(v, target, cls) for v in values]
        return union(returns) if returns else None

    def _declared_instances(self, fn: FunctionInfo, attr: str) -> frozenset[ProjectClass | str] | None:
        """The class a field declaration of ``fn``'s class (or a project base's) gives ``attr``
        (``llm: LLM`` in a pydantic model): what the value is where no assignment says it."""
        owner = self.hierarchy.owner(fn)
        classes = [owner, *self.hierarchy.bases(owner)] if owner is not None else []
        for cls in classes:
            expr = class_expression(field_annotation(cls.module, cls.node.name.value, attr))
            if expr is None:
                continue
            project = self.hierarchy.referenced(expr, cls.module)
            if project is not None:
                return frozenset({project})
            qualified = annotated_class(expr, cls.module.imports)
            return frozenset({qualified}) if qualified else None
        return None

    # -- instructions handed on -----------------------------------------------------------

    def forwards(self, fn: FunctionInfo) -> tuple[_Forward, ...]:
        """The parameters ``fn`` hands, unchanged, to a model call whose answer it returns
        (see :class:`_Forward`): directly, or through the project functions it calls with
        that parameter (bounded). Computed once per function."""
        found = self._forwards.get(fn)
        if found is not None:
            return found
        self._forwards[fn] = ()  # cycles
        if fn.is_module:
            return ()
        found = self._forwards[fn] = tuple(self._find_forwards(fn))
        return found

    def _find_forwards(self, fn: FunctionInfo) -> Iterator[_Forward]:
        view = self.view(fn)
        params = {p for p in fn.params if p not in ("self", "cls") and p not in view.assigned}
        if not params:
            return
        path = fn.module.path
        for call in _returned_calls(fn, view):
            handed = sorted({p for a in call.args for p in _handed(a.value, params)})
            if not handed:
                continue
            if self._calls_model(call, fn, strict=True) or self._object_runs_model(call, fn):
                yield from (_Forward(p, None, None, call, path) for p in handed)
                continue
            func = call.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in params:
                receiver = func.value.value
                yield from (_Forward(p, receiver, func.attr.value, call, path) for p in handed if p != receiver)
                continue
            for callee, _ in self._targets(call, fn):
                if callee is fn:
                    continue
                bound = bound_arguments(call, callee)
                for inner in self.forwards(callee):
                    arg = bound.get(inner.param)
                    if not (isinstance(arg, cst.Name) and arg.value in params):
                        continue
                    if inner.receiver is None:
                        yield _Forward(arg.value, None, None, inner.call, inner.path)
                        continue
                    receiver = bound.get(inner.receiver)
                    if isinstance(receiver, cst.Name) and receiver.value in params:
                        yield _Forward(arg.value, receiver.value, inner.method, inner.call, inner.path)
                    elif receiver is not None and self._instance_runs(receiver, fn, inner.method):
                        yield _Forward(arg.value, None, None, inner.call, inner.path)

    def _object_runs_model(self, call: cst.Call, fn: FunctionInfo) -> bool:
        """``obj.m(...)`` on an object whose class (known from the value ``obj`` is bound to,
        never from ``self``) has a method ``m`` that reaches a model (polymorphic dispatch)."""
        func = call.func
        if not isinstance(func, cst.Attribute) or (
            isinstance(func.value, cst.Name) and func.value.value in ("self", "cls")
        ):
            return False
        return self._instance_runs(func.value, fn, func.attr.value)

    def _instance_runs(self, expr: cst.BaseExpression, fn: FunctionInfo, method: str | None) -> bool:
        """The value of ``expr`` is an instance of a class whose ``method`` runs a model."""
        classes = self.instances(expr, fn)
        if not classes or method is None:
            return False
        for cls in classes:
            if isinstance(cls, str):
                if _model_class(cls):
                    return True
            else:
                found = self.hierarchy.method(cls, method)
                if found is not None and self._runs_model(found, 0, cls):
                    return True
        return False

    def _forwarded_instruction(self, call: cst.Call, view: _Fn) -> Step | None:
        """A project function called with a summarization instruction in an argument it
        hands, unchanged, to a model call whose answer it returns: the call is a summarizer.
        The evidence step (the model call) when it is, else None."""
        for callee, _ in self._targets(call, view.fn):
            if callee is view.fn:
                continue
            forwards = self.forwards(callee)
            if not forwards:
                continue
            bound = bound_arguments(call, callee)
            for forward in forwards:
                arg = bound.get(forward.param)
                if arg is None or not self._instruction(arg, view):
                    continue
                if forward.receiver is not None:
                    receiver = bound.get(forward.receiver)
                    if receiver is None or not self._instance_runs(receiver, view.fn, forward.method):
                        continue
                return Step(forward.path, forward.call,
                            f"`{callee.name}()` hands the instruction (`{forward.param}`), unchanged, to this "
                            "model call and returns its answer")
        return None

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

    def instruction(self, expr: cst.CSTNode, view: _Fn) -> bool:
        """A summarization instruction flows into ``expr`` (see :meth:`_instruction`)."""
        return self._instruction(expr, view)

    def _instruction(self, expr: cst.CSTNode, view: _Fn, depth: int = 0) -> bool:
        """A summarization instruction flows into ``expr``: a string literal asking for a
        summary, reached through locals, module constants (also imported from the
        project), parameter defaults, ``self`` attributes and project functions that
        return a prompt. String contents are data, not the user's names."""
        key = (id(expr), view.fn.qualname)
        known = self._instr.get(key)
        if known is not None:
            return known
        if key in self._instr_active:
            self._instr_cut = True  # a cycle: no answer here, and none to remember above
            return False
        self._instr_active.add(key)
        outer_cut, self._instr_cut = self._instr_cut, False
        try:
            found = self._find_instruction(expr, view, depth)
        finally:
            self._instr_active.discard(key)
        if found or not self._instr_cut:
            # A "no" reached through a cycle or the depth bound depends on where the
            # question was first asked: it is not remembered, so the answer never
            # depends on the order calls are judged in (nor on the other files of a run).
            self._instr[key] = found
        self._instr_cut = outer_cut or self._instr_cut
        return found

    def _find_instruction(self, expr: cst.CSTNode, view: _Fn, depth: int) -> bool:
        if any(asks_for_summary(s) for s in _strings(expr)):
            return True
        if depth >= 5:
            self._instr_cut = True
            return False
        for value, where in self._sources(expr, view):
            if value is not expr and self._instruction(value, where, depth + 1):
                return True
        return False

    def _grown(self, fn: FunctionInfo) -> dict[str, list[tuple[cst.BaseExpression, bool]]]:
        """The lists ``fn`` adds to, each with what it adds and whether that is a sequence
        of elements (``turns.extend(kept)``, ``turns += kept``) or one element
        (``turns.append(t)``, ``.insert(0, t)``): a local or parameter by its name, a
        ``self`` attribute as ``self.<attr>``."""
        found = self._grows.get(fn)
        if found is None:
            found = self._grows[fn] = {}
            for stmt in walk_statements(fn.body):
                kind = type(stmt)
                if kind is cst.Expr and type(stmt.value) is cst.Call and type(stmt.value.func) is cst.Attribute:
                    call = stmt.value
                    if call.func.attr.value not in _LIST_WRITES or not call.args:
                        continue
                    target, added, whole = call.func.value, call.args[-1].value, call.func.attr.value == "extend"
                elif kind is cst.AugAssign and type(stmt.operator) is cst.AddAssign:
                    target, added, whole = stmt.target, stmt.value, True
                else:
                    continue
                if type(target) is cst.Name:
                    found.setdefault(target.value, []).append((added, whole))
                elif type(target) is cst.Attribute and type(target.value) is cst.Name \
                        and target.value.value in ("self", "cls"):
                    found.setdefault(f"self.{target.attr.value}", []).append((added, whole))
        return found

    def _sources(self, expr: cst.CSTNode, view: _Fn) -> Iterator[tuple[cst.CSTNode, _Fn]]:
        """Where the values an expression reads come from, each with the function it
        is evaluated in: bindings, parameter defaults, module and imported constants,
        ``self`` attributes set by the class or bound in its body, and the returns of
        project functions."""
        fn = view.fn
        module = fn.module
        skip: set[int] = set()
        for n in iter_exprs(expr):
            kind = type(n)  # type tests: libcst's isinstance goes through ABCMeta (per node here)
            if kind is cst.Attribute:
                skip.add(id(n.attr))
                if type(n.value) is cst.Name and n.value.value in ("self", "cls") and fn.class_name:
                    for value, owner in self.attribute_values(fn, n.attr.value):
                        yield value, self.view(owner)
                    for value, _ in self._grown(fn).get(f"self.{n.attr.value}", ()):
                        yield value, view  # what it adds there itself: ``self.turns.append(ask)``
                    constants = self.class_constants(fn).get(n.attr.value)
                    if constants and module.functions:
                        top = self.view(module.functions[0])  # a class body runs in the module's scope
                        for value in constants:
                            yield value, top
                elif type(n.value) is cst.Name and id(n.value) not in skip:
                    fields = self._field_values(n.value.value, n.attr.value, view)
                    if fields is not None:
                        skip.add(id(n.value))  # ``helper.layout`` reads one field, not the whole object
                        yield from fields
            elif kind is cst.Arg and n.keyword is not None:
                skip.add(id(n.keyword))
            elif kind is cst.Call:
                callee = self.project.resolve(n.func, fn)
                if callee is not None and callee is not fn:
                    callee_view = self.view(callee)
                    for stmt in walk_statements(callee.body):
                        if type(stmt) is cst.Return and stmt.value is not None:
                            yield stmt.value, callee_view
            elif kind is cst.Name and id(n) not in skip:
                name = n.value
                values = view.assigned.get(name)
                if values:
                    for value in values:
                        yield value, view
                    continue
                default = _param_default(fn, name)
                if default is not None:
                    yield default, view
                    continue
                constants = self.constants(module).get(name)
                if constants:
                    for value in constants:
                        yield value, self.view(module.functions[0]) if module.functions else view
                    continue
                imported = self._imported_constant(module, name)
                if imported is not None:
                    yield imported

    def _field_values(self, name: str, attr: str, view: _Fn) -> list[tuple[cst.CSTNode, _Fn]] | None:
        """``x.attr`` where every value ``x`` is bound to is a constructor call with keyword
        arguments (``Helper(instructions=..., layout=...)``), here or as a project
        function's return: only the ``attr=`` arguments flow into the read, the rest of
        the object's fields do not. None when some binding is not such a call (then the
        whole value is followed, as before)."""
        found: list[tuple[cst.CSTNode, _Fn]] = []
        pending: list[tuple[cst.BaseExpression, _Fn, int]] = [(v, view, 0) for v in view.assigned.get(name, [])]
        if not pending:
            return None
        while pending:
            value, where, depth = pending.pop()
            if isinstance(value, cst.Await):
                value = value.expression
            if not isinstance(value, cst.Call):
                return None
            if self._constructs(value, where):
                keywords = [a for a in value.args if a.keyword is not None]
                if not keywords or any(a.star for a in value.args) or any(a.keyword is None for a in value.args):
                    return None  # positional fields or a ``**`` splat: which one is ``attr`` is unknown
                found += [(a.value, where) for a in keywords if a.keyword.value == attr]
                continue
            callee = self.project.resolve(value.func, where.fn)
            if callee is None or depth >= 2:
                return None
            returns = [st.value for st in walk_statements(callee.body) if isinstance(st, cst.Return) and st.value]
            if not returns:
                return None
            callee_view = self.view(callee)
            pending += [(r, callee_view, depth + 1) for r in returns]
        return found

    def _imported_constant(self, module: ModuleInfo, name: str) -> tuple[cst.CSTNode, _Fn] | None:
        """``from .prompts import SUMMARY_PROMPT``: the constant's value in its project module."""
        qualified = module.imports.aliases.get(name)
        if not qualified or "." not in qualified:
            return None
        if self._modules_by_name is None:
            self._modules_by_name = {m.name: m for m in self.project.modules if getattr(m, "name", None)}
        owner, _, attr = qualified.rpartition(".")
        target = self._modules_by_name.get(owner)
        if target is None or not target.functions:
            return None
        values = self.constants(target).get(attr)
        return (values[0], self.view(target.functions[0])) if values else None

    def attribute_values(self, fn: FunctionInfo, attr: str) -> list[tuple[cst.BaseExpression, FunctionInfo]]:
        """Values the class of ``fn`` assigns to ``self.<attr>``, with the method that does."""
        return [(value, method) for value, method, _ in self.project.attribute_assignments(fn.module, fn.class_name, attr)]

    def _conversation(self, expr: cst.CSTNode, view: _Fn, depth: int = 0) -> bool:
        """The conversation being compacted flows into ``expr``."""
        for n in iter_exprs(expr):
            word = n.value if isinstance(n, cst.Name) else n.attr.value if isinstance(n, cst.Attribute) else None
            if word is None and isinstance(n, cst.SimpleString):
                value = string_value(n)
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

    def carries(self, expr: cst.BaseExpression, view: _Fn, depth: int = 0, raw: bool = False) -> bool:
        """Is ``expr`` summary text itself (not a length, a token count or a log line)?
        With ``raw``, only text no record was built from yet (SG301/SG302)."""
        kind = type(expr)  # type tests: libcst's isinstance goes through ABCMeta (none of these has a subclass)
        if kind is cst.Name:
            return expr.value in (view.raw if raw else view.tainted)
        if kind not in _MAY_CARRY:
            return False
        if kind is cst.Call:
            if self.is_summarizer(expr, view, depth):
                if not raw:
                    return True
                callee = self.project.resolve(expr.func, view.fn)
                return callee is None or not self.recorded(callee)
            func = expr.func
            if isinstance(func, cst.Attribute):
                if func.attr.value in ("join", "format") and any(
                    self.carries(a.value, view, depth, raw) for a in expr.args
                ):
                    return True  # ``"\n".join([summary, ...])``, ``template.format(summary=summary)``
                if func.attr.value not in _NOT_TEXT and self.carries(func.value, view, depth, raw):
                    return True
            if dotted(func) in _TEXT_FNS:
                return bool(expr.args) and self.carries(expr.args[0].value, view, depth, raw)
            return depth < 3 and bool(expr.args) and self._passed_through(expr, view, depth, raw)
        if kind is cst.Attribute:
            return expr.attr.value not in _NOT_TEXT and self.carries(expr.value, view, depth, raw)
        if kind is cst.Subscript:
            return self.carries(expr.value, view, depth, raw)
        if kind is cst.Await:
            return self.carries(expr.expression, view, depth, raw)
        if kind is cst.FormattedString:
            return any(
                type(p) is cst.FormattedStringExpression and self.carries(p.expression, view, depth, raw)
                for p in expr.parts
            )
        if kind is cst.BinaryOperation or kind is cst.BooleanOperation:
            return self.carries(expr.left, view, depth, raw) or self.carries(expr.right, view, depth, raw)
        if kind is cst.IfExp:
            return self.carries(expr.body, view, depth, raw) or self.carries(expr.orelse, view, depth, raw)
        return any(self.carries(e.value, view, depth, raw) for e in expr.elements)  # a list, tuple or set

    def passes_text(self, fn: FunctionInfo) -> frozenset[str]:
        """The parameters of ``fn`` whose value reaches a ``return`` (``package(summary)``
        wrapping the summary in a note returns it), computed once per function."""
        found = self._passes.get(fn)
        if found is not None:
            return found
        self._passes[fn] = frozenset()  # cycles
        if isinstance(fn.header, cst.FunctionDef) and _returns_number(fn.header.returns):
            return self._passes[fn]  # ``-> int``: a count of the text it is given, never the text
        view = self.view(fn)
        seeds = frozenset(fn.params) - {"self", "cls"}
        origin: dict[str, frozenset[str]] = {p: frozenset({p}) for p in seeds}
        for _ in range(4):
            grown = False
            for name, values in view.assigned.items():
                if name in seeds:
                    continue
                derived = frozenset().union(*(origin.get(n, frozenset()) for v in values for n in _names(v)))
                if derived - origin.get(name, frozenset()):
                    origin[name] = origin.get(name, frozenset()) | derived
                    grown = True
            if not grown:
                break
        result: set[str] = set()
        for stmt in walk_statements(fn.body):
            if isinstance(stmt, cst.Return) and stmt.value is not None:
                for n in _names(stmt.value):
                    result |= origin.get(n, frozenset())
        found = self._passes[fn] = frozenset(result)
        return found

    def _passed_through(self, call: cst.Call, view: _Fn, depth: int, raw: bool) -> bool:
        """A project function called with summary text in a parameter it returns."""
        callee = self.project.resolve(call.func, view.fn)
        if callee is None:
            return False
        params = self.passes_text(callee)
        if not params:
            return False
        for name, value in bound_arguments(call, callee).items():
            if name in params and self.carries(value, view, depth + 1, raw):
                return True
        return False

    # -- SG301 / SG302 ------------------------------------------------------------------

    def summarizers(self, fn: FunctionInfo) -> list[cst.Call]:
        view = self.view(fn)
        return [c for c, _, _, _ in self.calls_with_locks(fn).calls if self.is_summarizer(c, view)]

    def recorded(self, fn: FunctionInfo) -> bool:
        """Does ``fn`` build a summary record itself? Its callers then get a record (or a
        wrapper of one), not raw text to build another from."""
        known = self._recorded.get(fn)
        if known is None:
            self._recorded[fn] = False  # cycles
            known = self._recorded[fn] = bool(self._candidates(fn))
        return known

    def _candidates(self, fn: FunctionInfo) -> list[tuple[cst.CSTNode, Stmt, str]]:
        """The records of ``fn``: built from raw summarizer output and leaving the
        function (returned, persisted through a call, stored into state or an
        attribute), with how they leave. A record that wraps another one built here
        (a result object holding the summary message) is not a second record."""
        found = self._records.get(fn)
        if found is not None:
            return found
        self._records[fn] = []
        view = self.view(fn)
        if not view.raw and not self.summarizers(fn):
            return []
        built: list[tuple[cst.CSTNode, Stmt, str]] = []
        bound: dict[str, cst.CSTNode] = {}
        for stmt in walk_statements(fn.body):
            if isinstance(stmt, cst.Raise):
                continue  # an exception message, not a record
            for expr in expressions_of(stmt):
                for record, passed in self._outermost_records(expr, view):
                    how = "passed to a call" if passed else self._leaves(record, stmt, view)
                    if isinstance(stmt, (cst.Assign, cst.AnnAssign)) and stmt.value is record:
                        targets = [t.target for t in stmt.targets] if isinstance(stmt, cst.Assign) else [stmt.target]
                        for t in targets:
                            if isinstance(t, cst.Name):
                                bound[t.value] = record
                    if how:
                        built.append((record, stmt, how))
                    elif isinstance(stmt, (cst.Assign, cst.AnnAssign)) and stmt.value is record:
                        built.append((record, stmt, ""))  # judged below: a wrapper may carry it out
        records = [r for r, _, _ in built]
        kept = []
        for record, stmt, how in built:
            inner = [bound[n] for n in _names(record) if n in bound and bound[n] is not record]
            if any(r in records for r in inner):
                continue  # wraps a record built here
            if not how:
                wrappers = [b for b in built if b[0] is not record and any(
                    bound.get(n) is record for n in _names(b[0]))]
                if not any(h for _, _, h in wrappers):
                    continue
                how = "inside a wrapper"
            kept.append((record, stmt, how))
        if not kept:
            kept = [(record, stmt, how) for record, stmt, how, _ in self._conversation_messages(fn, view)]
        self._records[fn] = kept
        return kept

    def _messages_in(
        self, value: cst.CSTNode, view: _Fn, bound: dict[str, list[cst.CSTNode]], helpers: bool = False
    ) -> list[cst.CSTNode]:
        """The summary messages :meth:`_conversation_messages` finds in ``value``: built
        there, or held by a local name of ``bound``; through a helper's result only where
        ``helpers`` (an assignment over the conversation). A method, not a recursive
        closure: such a closure is a reference cycle that would hold this analysis, and
        with it every tree of the run, until the cyclic collector found it (agno: 1.9 M
        objects walked after its analysis)."""
        kind = type(value)
        if kind is cst.Name:
            return bound.get(value.value, [])
        if kind is cst.List or kind is cst.Tuple:
            return [m for e in value.elements for m in self._messages_in(e.value, view, bound, helpers)]
        if kind is cst.BinaryOperation:
            left = self._messages_in(value.left, view, bound, helpers)
            return left + self._messages_in(value.right, view, bound, helpers)
        if (kind is cst.Dict or kind is cst.Call) and self._summary_message(value, view):
            return [value]
        if kind is cst.Dict:  # a state update: ``{"messages": [note, *kept]}``
            return [
                m for e in value.elements if type(e) is cst.DictElement
                for m in self._messages_in(e.value, view, bound, helpers)
            ]
        if helpers and kind is cst.Call and not self._consumes(value, view):
            # ``splice(turns, note)``: the conversation rebuilt around the message
            held = [m for a in value.args for m in self._messages_in(a.value, view, bound, helpers)]
            given = {_conversation_key(a.value) for a in value.args}
            return [m for m in held if given & self._folded_by(m, view)]
        return []

    def _conversation_messages(
        self, fn: FunctionInfo, view: _Fn
    ) -> list[tuple[cst.CSTNode, Stmt, str, str | None]]:
        """The chat messages holding raw summarizer output that take the place of the
        conversation the summarizer folded: assigned over it (``self.turns = [note,
        *self.turns[-2:]]``, ``turns[:] = [note]``, or a helper's result that was handed
        both), put into it by a function that also cuts it in bulk (``turns.clear()``,
        ``del turns[:k]``), not on a branch that returns or raises first, or returned
        with part of it (``return [note, *turns[-2:]]``). A compaction that folds the
        turns into one message keeps its summary *as* that message. Only where ``fn``
        builds no other record (one compaction, one record, the first message per
        summarizer call). A summary added to a conversation that keeps every turn (a
        chat's reply), returned alone (a tool's result), or put into another list is no
        compaction's record.

        Where the values go decides, not what anything is called: a message is a dict
        with a ``role``, a class's factory result (``ChatMessage.from_user(...)``), or
        an instance :meth:`_is_record` leaves to its role (``SystemMessage(...)``).

        Each comes with the conversation it is written into (None when returned): a
        channel of the next fold (:meth:`channels`)."""
        known = self._messages.get(fn)
        if known is not None:
            return known
        self._messages[fn] = []  # cycles
        local = {name for name in view.assigned if name not in fn.params}
        bound: dict[str, list[cst.CSTNode]] = {}  # local names holding such messages, or lists of them
        #: where the function empties or cuts a conversation in bulk: (statement, conversation,
        #: whether what it holds goes too: ``history.clear()`` empties ``history.messages``).
        #: Taking one turn out (``pop``, ``remove``) trims a window; it replaces nothing.
        cuts: list[tuple[Stmt, str, bool]] = []
        #: (message, statement, how, conversation written, needs a cut, returned value)
        found: list[tuple[cst.CSTNode, Stmt, str, str | None, bool, cst.BaseExpression | None]] = []

        def messages(value: cst.CSTNode, helpers: bool = False) -> list[cst.CSTNode]:
            return self._messages_in(value, view, bound, helpers)

        for stmt in walk_statements(fn.body):
            kind = type(stmt)
            if kind is cst.Return or (kind is cst.Expr and type(stmt.value) is cst.Yield):
                value = stmt.value if kind is cst.Return else stmt.value.value
                if value is not None and not self._route_handler(fn):
                    how = "returned as the new conversation" if kind is cst.Return else "yielded as the new conversation"
                    found.extend((m, stmt, how, None, False, value) for m in messages(value))
            elif kind is cst.Assign or kind is cst.AnnAssign or kind is cst.AugAssign:
                if stmt.value is None:
                    continue
                targets = [t.target for t in stmt.targets] if kind is cst.Assign else [stmt.target]
                for target in targets:
                    if type(target) is cst.Name:  # a parameter rebound too: judged where it goes
                        held = messages(stmt.value)
                        bound[target.value] = bound.get(target.value, []) + held if kind is cst.AugAssign else held
                        continue
                    key = _conversation_key(target)
                    how = f"stored into `{_code(target)}`"
                    held = messages(stmt.value, helpers=kind is not cst.AugAssign)
                    found.extend((m, stmt, how, key, kind is cst.AugAssign, None) for m in held)
                    if key and not held and kind is not cst.AugAssign and not _holds_whole(stmt.value, key):
                        cuts.append((stmt, key, True))  # ``self.turns = []``, not ``self.turns + [turn]``
            elif kind is cst.Del:
                for element in stmt.target.elements if type(stmt.target) is cst.Tuple else [stmt]:
                    target = element.target if type(element) is cst.Del else element.value
                    if type(target) is cst.Subscript:
                        key = _conversation_key(target)  # ``del turns[:-4]``: turns; ``del state["x"]``: that key
                        if key:
                            cuts.append((stmt, key, False))
            elif kind is cst.Expr and type(stmt.value) is cst.Call:
                call = stmt.value
                func = call.func
                if type(func) is not cst.Attribute:
                    continue
                key = _conversation_key(func.value)
                if func.attr.value == "clear" and key:
                    cuts.append((stmt, key, True))
                if func.attr.value not in _LIST_WRITES or not call.args:
                    continue
                held = messages(call.args[-1].value)
                if type(func.value) is cst.Name and (func.value.value in local or func.value.value in bound):
                    name = func.value.value  # a local list, or a parameter rebound here
                    bound[name] = bound.get(name, []) + held  # judged where the list goes
                else:
                    found.extend((m, stmt, f"written into `{_code(func.value)}`", key, True, None) for m in held)
        first: list[tuple[cst.CSTNode, Stmt, str, str | None]] = []
        sources: set[int] = set()
        exits = _early_exits(fn.body) if cuts else {}
        for record, stmt, how, target, needs_cut, returned in found:
            source = self.source_call(record, view)
            if source is None or id(source) in sources:
                continue
            folded = self._folded_by(record, view)
            if returned is not None:
                if not self._keeps_part(returned, folded, view):
                    continue  # a tool's result, a reply: the conversation is not rebuilt with it
            elif target not in folded:
                continue  # some other list: a log, a ledger, another agent's inbox
            elif needs_cut and not any(
                (c == target or (holder and _within(target, c))) and exits.get(id(at)) in (None, exits.get(id(stmt)))
                for at, c, holder in cuts
            ):
                continue  # a conversation that keeps its turns: nothing cut in bulk on the way to the write
            sources.add(id(source))
            first.append((record, stmt, how, target))
        self._messages[fn] = first
        return first

    def _folded_by(self, message: cst.CSTNode, view: _Fn) -> set[str]:
        """The conversations (:func:`_conversation_key`: ``turns``, ``self.turns``,
        ``state["turns"]``) whose values flow into the input of the summarizer call whose
        output ``message`` holds, through the function's own bindings: what it folds.
        Values only: a keyword's name or an attribute's does not count, nor a bare
        receiver (``self`` of ``self.model``)."""
        call = self.source_call(message, view)
        found: set[str] = set()
        seen: set[str] = set()
        for arg in call.args if call is not None else ():
            self._fold_values(arg.value, view, found, seen)
        return found

    def _fold_values(self, expr: cst.CSTNode, view: _Fn, found: set[str], seen: set[str]) -> None:
        """Add to ``found`` the conversations whose values ``expr`` is made of (see
        :meth:`_folded_by`), following at most 16 of the function's local names
        (``seen``). A method, not a recursive closure (see :meth:`_messages_in`)."""
        kind = type(expr)
        if kind is cst.Name or kind is cst.Attribute or kind is cst.Subscript:
            key = _conversation_key(expr)  # type: ignore[arg-type]
            if key is not None:
                found.add(key)
                if key.isidentifier() and key not in seen and len(seen) < 16:  # ``turns``, ``turns[1:]``
                    seen.add(key)
                    for value in view.assigned.get(key, ()):
                        self._fold_values(value, view, found, seen)
                return
            # ``reply.choices[0].text``: its root
            self._fold_values(expr.value, view, found, seen)  # type: ignore[attr-defined]
        elif kind is cst.Call:
            for arg in expr.args:  # type: ignore[attr-defined]
                self._fold_values(arg.value, view, found, seen)
            if type(expr.func) is cst.Attribute:  # type: ignore[attr-defined]
                # ``turns.copy()``, ``"\n".join(turns)``
                self._fold_values(expr.func.value, view, found, seen)  # type: ignore[attr-defined]
        elif kind is not cst.Lambda:
            for child in children(expr):
                self._fold_values(child, view, found, seen)

    def _keeps_part(self, returned: cst.BaseExpression, folded: set[str], view: _Fn, depth: int = 0) -> bool:
        """Whether ``returned`` holds part of a folded conversation (``turns[-2:]``,
        ``*turns[-2:]``, ``self.turns[0]``), directly or through a list built from it here
        (the conversation's own name rebound included, and what is added to such a list).
        Not through the summarizer's output: its input was a slice of the conversation,
        its answer is none."""
        for n in iter_exprs(returned):
            kind = type(n)
            if _part_of(n, folded):
                return True  # ``turns[-2:]``, ``list(turns)[-2:]``, ``turns.copy()[-2:]``
            if (kind is cst.ListComp or kind is cst.GeneratorExp) and _conversation_key(n.for_in.iter) in folded:
                return True  # ``[t for t in turns if t["pinned"]]``
            if kind is cst.Name and depth < 3 and n.value not in view.tainted:
                for value in view.assigned.get(n.value, ()):
                    if value is not returned and self._keeps_part(value, folded, view, depth + 1):
                        return True
                for value, whole in self._grown(view.fn).get(n.value, ()):
                    # kept turns added whole (``out.extend(turns[-2:])``), or one turn as it is
                    # (``out.append(turns[0])``), not a value made of some (a tool's result)
                    if whole and self._keeps_part(value, folded, view, depth + 1) or _part_of(value, folded):
                        return True
        return False

    def _summary_message(self, node: cst.CSTNode, view: _Fn) -> bool:
        """A chat message (see :meth:`_conversation_messages`) one of whose fields is raw
        summarizer output."""
        if isinstance(node, cst.Dict):
            shaped = _has_key(node, "role")
        else:
            func = node.func  # type: ignore[attr-defined]
            name = last_segment(dotted(func)) or ""
            owner = (last_segment(dotted(func.value)) or "") if isinstance(func, cst.Attribute) else ""
            if owner[:1].isupper() and not name[:1].isupper():
                shaped = True  # a class's factory: ``ChatMessage.from_user(...)``
            elif not name[:1].isupper():
                return self._helper_message(node, view)  # type: ignore[arg-type]
            else:
                role = self._role_argument(node, view)  # type: ignore[arg-type]
                shaped = _MESSAGE_CLASS.search(name) is not None or role is not None
        return shaped and self._holds_summary(node, view)

    def _helper_message(self, call: cst.Call, view: _Fn) -> bool:
        """A project helper's call that builds a chat message around raw summarizer output
        (``note = as_message(text)``, where ``as_message`` returns ``{"role": role,
        "content": text}``): the message is built here, by the helper's hands. Only an
        argument whose parameter the helper puts into the message it returns counts; any
        other function's result is not a message built here."""
        if not any(not a.star and self.carries(a.value, view, raw=True) for a in call.args):
            return False  # nothing of a summary handed to it: no need to read the callee
        found = self._message_of(call, view)
        if found is None or not found[1].params:
            return False
        callee, shape = found
        given = bound_arguments(call, callee)
        return any(name in given and self.carries(given[name], view, raw=True) for name in shape.params)

    def _message_of(self, call: cst.Call, view: _Fn) -> tuple[FunctionInfo, _HelperMessage] | None:
        """The project function ``call`` runs and what the messages it returns are made of."""
        callee = self.project.resolve(call.func, view.fn)
        if callee is None or callee.is_module:
            return None
        shape = self._helper_messages.get(callee)
        if shape is None:
            shape = self._helper_messages[callee] = self._returned_message(callee)
        return callee, shape

    def _returned_message(self, fn: FunctionInfo) -> _HelperMessage:
        """What the chat messages ``fn`` returns are made of: a ``return`` of a dict with a
        ``role``, or of a message class's instance or factory result (either branch of a
        conditional; directly, or through a local name bound to it, with the keys set on
        that name afterwards). Their parameters (a parameter only measured, ``len(text)``,
        is none of their text), and their keys."""
        params = set(fn.params) - {"self", "cls"}
        found: set[str] = set()
        keys: set[str] = set()
        opaque = False
        for stmt in walk_statements(fn.body):
            if type(stmt) is not cst.Return or stmt.value is None:
                continue
            returned = [stmt.value]
            if type(stmt.value) is cst.IfExp:
                returned = [stmt.value.body, stmt.value.orelse]
            for value in returned:
                local = value.value if type(value) is cst.Name and value.value not in params else None
                built = [value] if local is None else self.view(fn).assigned.get(local, [])
                for message in built:
                    if not _message_shaped(message):
                        continue
                    found.update(_text_names(message, params))
                    named, unknown = _key_names(message)
                    keys |= named
                    if local is not None:
                        keys |= _keys_set_on(local, fn.body)
                    opaque = opaque or unknown
        return _HelperMessage(frozenset(found), frozenset(keys), opaque)

    def records(self, fn: FunctionInfo) -> Iterator[Fact]:
        view = self.view(fn)
        for record, stmt, how in self._candidates(fn):
            yield from self._judge_record(record, stmt, view, how)

    def _leaves(self, record: cst.CSTNode, stmt: Stmt, view: _Fn) -> str:
        """How a record built as ``stmt``'s value leaves the function ('' if it does not).
        What a web route handler returns is the response body its client receives, not a
        record the compaction keeps (the same as :meth:`response_body`)."""
        if isinstance(stmt, cst.Return):
            return "" if self._route_handler(view.fn) else "returned"
        if isinstance(stmt, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
            targets = [t.target for t in stmt.targets] if isinstance(stmt, cst.Assign) else [stmt.target]
            for t in targets:
                if isinstance(t, (cst.Attribute, cst.Subscript)):
                    return f"stored into `{_code(t)}`"
                if isinstance(t, cst.Name) and t.value in view.escapes:
                    return f"as `{t.value}`"
            return ""
        if isinstance(stmt, cst.Expr) and isinstance(stmt.value, (cst.Yield, cst.Await)):
            return "yielded"
        return ""

    def _route_handler(self, fn: FunctionInfo) -> bool:
        """``@app.post("/compact")`` where ``app`` is built at the module's top level by a web
        framework's application or router class (``FastAPI()``, ``APIRouter()``, ``Flask()``):
        known by the class the receiver is an instance of, never by the handler's name."""
        if not isinstance(fn.header, cst.FunctionDef) or not fn.header.decorators:
            return False
        for decorator in fn.header.decorators:
            expr = decorator.decorator
            if isinstance(expr, cst.Call):
                expr = expr.func
            if not (isinstance(expr, cst.Attribute) and expr.attr.value in _ROUTE_VERBS):
                continue
            if isinstance(expr.value, cst.Name) and _WEB_APP.match(self._module_class(fn.module, expr.value.value)):
                return True
        return False

    def _module_class(self, module: ModuleInfo, name: str) -> str:
        """The qualified class a top-level ``name = Class(...)`` of ``module`` builds ('' if none)."""
        for stmt in module.functions[0].body if module.functions else ():
            if isinstance(stmt, cst.Assign) and isinstance(stmt.value, cst.Call) and any(
                isinstance(t.target, cst.Name) and t.target.value == name for t in stmt.targets
            ):
                return module.imports.qualify(stmt.value.func) or ""
        return ""

    def _outermost_records(self, expr: cst.CSTNode, view: _Fn) -> Iterator[tuple[cst.CSTNode, bool]]:
        """Records holding raw summarizer output, outermost first, with whether each is
        an argument of a call (persisted or handed on)."""
        stack: list[tuple[cst.CSTNode, bool]] = [(expr, False)]
        while stack:
            node, passed = stack.pop()
            if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue
            if isinstance(node, cst.Call) and self._consumes(node, view):
                continue  # a log line, the prompt going *into* a model, or a measure of the text
            if self._is_record(node, view) and self._holds_summary(node, view):
                yield node, passed
                continue
            inside = passed or (isinstance(node, cst.Call) and not self._is_record(node, view))
            stack.extend((c, inside) for c in children(node))

    def _consumes(self, call: cst.Call, view: _Fn) -> bool:
        """What goes into ``call`` is used up there, not kept: a log line, a response body,
        a prompt going into a model, or a text being measured."""
        name = dotted(call.func) or ""
        return (
            last_segment(name) in _LOG_CALLS
            or self.response_body(call, view)
            or self.is_summarizer(call, view)
            or self._llm_call(call.func, name, last_segment(name), view.fn.module.imports.qualify(call.func) or "")
            or self._measures(call, view)
        )

    def _measures(self, call: cst.Call, view: _Fn) -> bool:
        """``call`` only measures what it is given: ``len(...)``, or a project function
        annotated to return a number (``def count_tokens(messages) -> int``). A summary
        handed to it to be counted is not kept, so what wraps it there is no record."""
        if isinstance(call.func, cst.Name) and call.func.value == "len" and "len" not in view.assigned:
            return self.project.resolve(call.func, view.fn) is None
        callee = self.project.resolve(call.func, view.fn)
        if callee is None or not isinstance(callee.header, cst.FunctionDef):
            return False
        returns = callee.header.returns
        # ``-> None`` returns no text either, but a function that returns nothing is how a
        # record is written away (``def save(record) -> None``): only a number measures
        return _returns_number(returns) and not _annotated_none(returns)

    def _is_record(self, node: cst.CSTNode, view: _Fn) -> bool:
        if isinstance(node, cst.Dict):
            return not _has_key(node, "role") or _summary_role(node)
        if isinstance(node, cst.Call):
            name = last_segment(dotted(node.func))
            if name == "dict":
                return True
            if not name or not name[0].isupper():
                return False
            # A chat message holding a summary is context, unless its role says it is the summary:
            # a message by its class name, or by the role it is built with
            role = self._role_argument(node, view)
            if role is not None:
                return _is_summary_role(role)
            return not _NOT_RECORD_CLASS.search(name)
        return False

    def _role_argument(self, call: cst.Call, view: _Fn) -> cst.BaseExpression | None:
        """The role a call builds a message with: its ``role=``, else a member of the module's
        role enumeration (one whose summary member the module reads) in any argument, which
        survives renaming the field it fills; None when it is built with neither."""
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "role":
                return arg.value
        roles = self._role_enums(view.fn.module)
        for arg in call.args:
            value = arg.value
            if isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name) and value.value.value in roles:
                return value
        return None

    def _role_enums(self, module: ModuleInfo) -> frozenset[str]:
        """Names ``X`` whose summary role ``X.summary`` the module reads (``MessageRole``):
        a class the module defines or imports, so not an instance's own attribute
        (``self.summary``, ``session.summary``, a module-level ``STATE.summary``)."""
        found = self._roles.get(id(module))
        if found is None:
            names = set()
            defined = self.classes(module)
            for fn in module.functions:
                for stmt in walk_statements(fn.body):
                    for expr in expressions_of(stmt):
                        for n in iter_exprs(expr):
                            if isinstance(n, cst.Attribute) and n.attr.value in _SUMMARY_ROLE \
                                    and isinstance(n.value, cst.Name) \
                                    and (n.value.value in defined or n.value.value in module.imports.aliases):
                                names.add(n.value.value)
            found = self._roles[id(module)] = frozenset(names)
        return found

    def _holds_summary(self, record: cst.CSTNode, view: _Fn) -> bool:
        """A field of the record *is* summary text (``summary=text``, ``{"summary": text}``,
        ``content=[Text(text=packed)]``); a list of chat messages that merely contains one
        (a state update ``{"messages": [*kept, note]}``) does not make a record."""
        if isinstance(record, cst.Dict):
            values = [e.value for e in record.elements if isinstance(e, cst.DictElement)]
        elif isinstance(record, cst.Call):
            values = [a.value for a in record.args if not a.star]
        else:
            return False
        for value in values:
            if isinstance(value, (cst.List, cst.Tuple, cst.Set)):
                for element in value.elements:
                    if isinstance(element, cst.StarredElement):
                        continue
                    inner = element.value
                    if isinstance(inner, (cst.Call, cst.Dict)) and self._is_record(inner, view):
                        if self._holds_summary(inner, view):
                            return True
                    elif self.carries(inner, view, raw=True):
                        return True
            elif isinstance(value, (cst.Call, cst.Dict)) and self._is_record(value, view):
                continue  # a record of its own, judged on its own
            elif self.carries(value, view, raw=True):
                return True
        return False

    def source_call(self, expr: cst.CSTNode, view: _Fn, depth: int = 0) -> cst.Call | None:
        """The summarizer call whose output ``expr`` holds, followed through bindings."""
        for n in iter_exprs(expr):
            if isinstance(n, cst.Call) and self.is_summarizer(n, view):
                return n
            if isinstance(n, cst.Name) and n.value in view.tainted and depth < 4:
                for value in view.assigned.get(n.value, ()):
                    if value is not expr:
                        found = self.source_call(value, view, depth + 1)
                        if found is not None:
                            return found
        return None

    def _judge_record(self, record: cst.CSTNode, stmt: Stmt, view: _Fn, how: str) -> Iterator[Fact]:
        keys, opaque = _key_names(record)
        helper = self._message_of(record, view) if isinstance(record, cst.Call) else None
        if helper is not None and helper[1].params:  # a message a helper builds: its keys are the helper's
            keys |= helper[1].keys
            opaque = opaque or helper[1].opaque
        if opaque:
            return
        class_name = last_segment(dotted(record.func)) if isinstance(record, cst.Call) else ""
        path = view.fn.module.path
        steps = []
        source = self.source_call(record, view)
        if source is not None:
            steps.append(Step(path, source, f"summarizer output: `{dotted(source.func) or 'call'}()`"))
            handed = self.forwarded.get(source)
            if handed is not None:
                steps.insert(-1, handed)  # where the instruction it was given reaches the model
        steps.append(Step(path, record, f"the record holding it leaves the function: {how}"))
        if view.compaction_named or _SUMMARY_WORD.search(class_name) or any(_SUMMARY_WORD.search(k) for k in keys):
            steps.append(Step(path, record, "named like a summary", NAME))
        trace = tuple(steps)
        if isinstance(record, cst.Call):
            keys |= self._class_keys(record, view)
        keys |= self._later_keys(record, stmt, view)
        if not any(_GENERATION_KEY.search(k) for k in keys):
            yield SummaryRecord(node=record, path=path, trace=trace, missing="generation")
        if not any(_DROP_KEY.search(k) for k in keys):
            yield SummaryRecord(node=record, path=path, trace=trace, missing="drops")

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
        return _keys_set_on(target.value, view.fn.body)

    # -- SG303 ----------------------------------------------------------------------------

    def channels(self, fn: FunctionInfo) -> dict[tuple[str, str], cst.CSTNode]:
        """Where ``fn`` writes its summary for the next turn: the keys of the state update
        it returns (``{"messages": [summary_message, *kept]}``), keys and attributes it
        assigns or appends summary output to (``state["summary"] = ...``,
        ``self.history.append(...)``), and the attributes the rest of its class writes
        summary output to; and the conversation attribute of ``self`` a summary message
        took the place of (:meth:`_conversation_messages`), read again only through
        ``self``. Keyed ("key", k), ("attr", a) or ("self", a), with the writing node."""
        found = self._channels.get(fn)
        if found is not None:
            return found
        found = self._channels[fn] = {}
        if fn.class_name and not fn.is_module:
            for method in fn.module.classes.get(fn.class_name, {}).values():
                if method is not fn:
                    found.update({k: v for k, v in self._own_channels(method).items() if k[0] in ("attr", "self")})
        found.update(self._own_channels(fn))
        return found

    def _own_channels(self, fn: FunctionInfo) -> dict[tuple[str, str], cst.CSTNode]:
        found = self._own.get(fn)
        if found is not None:
            return found
        found = self._own[fn] = {}
        view = self.view(fn)
        if not view.tainted and not self.summarizers(fn):
            return found

        def channel(target: cst.BaseExpression) -> tuple[str, str] | None:
            if isinstance(target, cst.Attribute):
                return ("attr", target.attr.value)
            if isinstance(target, cst.Subscript):
                keys = [k for e in target.slice for k in _strings(e)]
                return ("key", keys[0]) if keys else None
            return None

        # the conversation of the instance a summary message took the place of: its next fold reads it again
        receiver = _instance_name(fn)
        for record, _, _, target in self._conversation_messages(fn, view):
            head, _, attr = (target or "").partition(".")
            if receiver is not None and head == receiver and attr.isidentifier():
                found.setdefault(("self", attr), record)

        for stmt in walk_statements(fn.body):
            if isinstance(stmt, cst.Return) and isinstance(stmt.value, cst.Dict):
                for element in stmt.value.elements:
                    if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString):
                        key = string_value(element.key)
                        if isinstance(key, str) and self.carries(element.value, view):
                            found.setdefault(("key", key), element)
            elif isinstance(stmt, (cst.Assign, cst.AnnAssign, cst.AugAssign)) and stmt.value is not None:
                if self.carries(stmt.value, view):
                    targets = [t.target for t in stmt.targets] if isinstance(stmt, cst.Assign) else [stmt.target]
                    for t in targets:
                        key = channel(t)
                        if key is not None:
                            found.setdefault(key, stmt)
            for expr in expressions_of(stmt):
                for call in calls_in(expr):
                    func = call.func
                    if isinstance(func, cst.Attribute) and func.attr.value in _PUT_METHODS and _discarded(
                        call, stmt
                    ) and any(self.carries(a.value, view) for a in call.args):
                        key = channel(func.value)
                        if key is not None:
                            found.setdefault(key, call)
        return found

    def earlier_summary(
        self, expr: cst.CSTNode, view: _Fn, steps: list[Step], params: set[str], depth: int = 0
    ) -> str | None:
        """Whether ``expr`` carries an earlier summary, by value: "state" (a state key
        holding a summary, a value read through the summary protocol, a framework's
        running summary, or a channel this code wrote its summary into), "param" (only
        through parameters, collected in ``params``: the callers decide), or None.
        ``steps`` receives the evidence, name votes (basis "name") included; a name
        vote alone never makes an earlier summary."""
        path = view.fn.module.path
        fn = view.fn
        channels = self.channels(fn)
        found: str | None = None
        tested = _tested_only(expr)
        for n in iter_exprs(expr):
            if id(n) in tested:
                continue  # ``m.compressed is None``: a test of the value decides, it folds nothing
            held = self.summary_view(n, view)
            if held:
                steps.append(Step(path, n, f"`{_code(n)}` is a summary view (`{held}`): the framework puts each "
                                           "earlier compaction's summary back among its events"))
                return "state"
            if isinstance(n, cst.Attribute):
                attr = n.attr.value
                base = n.value
                if (attr in _FRAMEWORK_SUMMARY or attr in _PROTOCOL_SUMMARY) and not self.is_compactor(base, view) \
                        and not (isinstance(base, cst.Name) and base.value in view.tainted):
                    steps.append(Step(path, n, f"an earlier summary: `{_code(n)}`"))
                    return "state"
                written = channels.get(("attr", attr))
                if written is None and type(base) is cst.Name and base.value == _instance_name(fn):
                    written = channels.get(("self", attr))  # the instance's own conversation
                if written is not None and not (isinstance(base, cst.Name) and base.value in view.tainted):
                    steps.append(Step(path, written, f"the summary is written into `.{attr}`"))
                    steps.append(Step(path, n, f"`{_code(n)}`, holding an earlier summary, is folded again"))
                    return "state"
                if _summary_value(attr) and not self.is_compactor(base, view):
                    steps.append(Step(path, n, f"`{_code(n)}` is named like a summary", NAME))
            elif isinstance(n, (cst.Subscript, cst.Call)):
                read = None
                if isinstance(n, cst.Subscript):
                    keys = [k for e in n.slice for k in _strings(e)]
                    read = keys[0] if keys else None
                elif isinstance(n.func, cst.Attribute) and n.func.attr.value == "get" and n.args:
                    keys = list(_strings(n.args[0].value))
                    read = keys[0] if keys else None
                if read is None:
                    continue
                if _summary_value(read) or read in _FRAMEWORK_SUMMARY:
                    steps.append(Step(path, n, f"an earlier summary read from state: `{_code(n)}`"))
                    return "state"
                written = channels.get(("key", read))
                if written is not None:
                    steps.append(Step(path, written, f"the summary is written into the `{read}` channel"))
                    steps.append(Step(path, n, f"`{_code(n)}`, holding the earlier summary, is folded again"))
                    return "state"
            elif isinstance(n, cst.Name):
                name = n.value
                if name in view.protocol:
                    steps.append(Step(path, n, f"`{name}` is read as a summary (its generation, partial or refs)"))
                    return "state"
                if name in view.tainted and name not in fn.params:
                    if depth < 3:
                        for value in view.assigned.get(name, []):
                            if value is not expr and self.earlier_summary(value, view, steps, set(), depth + 1) == "state":
                                return "state"
                    continue  # this compaction's own output
                if name in fn.params:
                    params.add(name)
                    found = found or "param"
                    if _summary_value(name):
                        steps.append(Step(path, n, f"parameter `{name}` is named like a summary", NAME))
                    continue
                if depth < 3:
                    values = view.assigned.get(name, [])
                    for value in values:
                        if value is expr:
                            continue
                        inner = self.earlier_summary(value, view, steps, params, depth + 1)
                        if inner == "state":
                            return "state"
                        found = found or inner
                    if not values:
                        scope = fn.parent
                        while scope is not None:
                            outer = self.view(scope)
                            if name in outer.protocol:
                                steps.append(Step(path, n, f"`{name}` is read as a summary in `{scope.name}`"))
                                return "state"
                            for value in outer.assigned.get(name, []):
                                if self.earlier_summary(value, outer, steps, set(), depth + 1) == "state":
                                    return "state"
                            scope = scope.parent
        return found

    def summary_view(self, node: cst.CSTNode, view: _Fn) -> str | None:
        """The class of ``node`` when it is a framework's summary view (a model's
        ``summary_views``: its events hold every earlier summary, re-inserted by the
        framework), by its type: a parameter's annotation, a constructor or factory it is
        bound to, or the call itself. None otherwise."""
        if not isinstance(node, (cst.Name, cst.Attribute, cst.Call)):
            return None
        qualified = self.type_of(node, view)
        return qualified if self.vocab.is_summary_view(qualified) else None

    def recompactions(self, fn: FunctionInfo) -> list[tuple[cst.Call, str, tuple[Step, ...], frozenset[str]]]:
        """Summarizer calls of ``fn`` fed an earlier summary: (call, origin, evidence,
        the parameters it arrives through when the callers decide)."""
        view = self.view(fn)
        found = []
        for call in self.summarizers(fn):
            origin = None
            steps: list[Step] = []
            params: set[str] = set()
            for arg in call.args:
                origin = self.earlier_summary(arg.value, view, steps, params) or origin
                if origin == "state":
                    break
            if origin is not None:
                found.append((call, origin, tuple(steps), frozenset(params)))
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
        self._locked_calls(fn.body, frozenset(), (), view, found, set(), [0])
        return found

    def _locked_calls(
        self, stmts: list[Stmt], held: frozenset[str], loops: tuple[int, ...],
        view: _Fn, found: _Calls, acquired: set[str], counter: list[int],
    ) -> None:
        """:meth:`calls_with_locks` of ``stmts``, recursively (a method, not a closure: a
        recursive closure is a reference cycle, which kept each analysis alive until the
        collector came)."""
        for stmt in stmts:
            kind = type(stmt)  # type tests: libcst's isinstance goes through ABCMeta (per node here)
            if kind is cst.FunctionDef or kind is cst.ClassDef:
                continue
            counter[0] += 1
            index = counter[0]
            inner = held
            exprs = expressions_of(stmt)
            pool = False
            if kind is cst.With:
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
                    node_kind = type(node)
                    if node_kind is cst.Call:
                        calls.append(node)
                    elif node_kind is cst.Await:
                        if type(node.expression) is cst.Call:
                            found.awaited.add(node.expression)
                        else:
                            found.syncs.append((index, loops))
                calls.reverse()  # innermost (first evaluated) first
                for call in calls:
                    found.calls.append((call, frozenset(held | acquired), index, loops))
                    if kind is not cst.With:
                        self._track_acquire(call, view, acquired)
                    if last_segment(dotted(call.func)) in _SYNC_METHODS:
                        found.syncs.append((index, loops))
            nested = (*loops, id(stmt)) if kind is cst.For or kind is cst.While else loops
            for block in child_blocks(stmt):
                self._locked_calls(block, inner, nested, view, found, acquired, counter)
            if pool:  # leaving ``with ThreadPoolExecutor() as pool:`` waits for its work
                counter[0] += 1
                found.syncs.append((counter[0], loops))

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
                continue
            callee = self.project.resolve(call.func, fn)
            if callee is None or callee is fn:
                continue
            params = self.dispatched_params(callee)
            if params:  # a fire-and-forget helper: ``self.spawn(self.model.ainvoke(...))``
                targets = [value for name, value in bound_arguments(call, callee).items() if name in params]
                if targets:
                    yield call, f"`{callee.name}()`, which dispatches its argument", targets

    def dispatched_params(self, fn: FunctionInfo) -> frozenset[str]:
        """Parameters ``fn`` hands to a thread, task, executor or callback and does not
        wait for: calling ``fn`` dispatches what they bring."""
        found = self._dispatching.get(fn)
        if found is not None:
            return found
        self._dispatching[fn] = frozenset()
        view = self.view(fn)
        params = set(fn.params) - {"self", "cls"}
        result: set[str] = set()
        calls = self.calls_with_locks(fn)
        for call, _, _, _ in calls.calls:
            if calls.waits_for(call):
                continue
            dispatch = self._dispatch(call, view)
            if dispatch is not None:
                targets = dispatch[1]
            else:  # a helper of the project that dispatches what it is given
                callee = self.project.resolve(call.func, fn)
                if callee is None or callee is fn:
                    continue
                inner = self.dispatched_params(callee)
                targets = [v for name, v in bound_arguments(call, callee).items() if name in inner] if inner else []
            for target in targets:
                result |= self._params_run_by(target, fn, params)
        found = self._dispatching[fn] = frozenset(result)
        return found

    def _params_run_by(self, target: cst.BaseExpression, fn: FunctionInfo, params: set[str]) -> set[str]:
        """The parameters of ``fn`` that a dispatched ``target`` runs: the parameter itself,
        or a closure of ``fn`` (``create_task(runner())``) that awaits or calls one."""
        if isinstance(target, cst.Name):
            if target.value in params:
                return {target.value}
        elif not (isinstance(target, cst.Call) and isinstance(target.func, cst.Name)):
            return set()
        name = target.value if isinstance(target, cst.Name) else target.func.value  # type: ignore[union-attr]
        closure = fn.nested.get(name)
        if closure is None:
            return set()
        own = set(closure.params)
        found: set[str] = set()
        for stmt in walk_statements(closure.body):
            for expr in expressions_of(stmt):
                for node in iter_exprs(expr):
                    run = node.expression if isinstance(node, cst.Await) else node.func if isinstance(node, cst.Call) else None
                    if isinstance(run, cst.Name) and run.value in params and run.value not in own:
                        found.add(run.value)
        return found

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
        return self.write_basis(call, view) is not None

    def write_basis(self, call: cst.Call, view: _Fn) -> str | None:
        """How ``call`` is known to write a checkpoint: :data:`VALUE` (its receiver's type or
        the vocabulary says so), :data:`NAME` (a serializer method next to checkpoint words
        only), or None (not a checkpoint write)."""
        func = call.func
        name = dotted(func) or ""
        last = last_segment(name)
        imports = view.fn.module.imports
        qualified = imports.qualify(func) or ""
        receiver = func.value if isinstance(func, cst.Attribute) else None
        receiver_type = self.type_of(receiver, view) if receiver is not None else ""
        if receiver_type in _STORE:
            return None
        if receiver_type and self.vocab.matches("checkpoint-writes", f"{receiver_type}.{last}"):
            return VALUE
        if self.vocab.matches("checkpoint-writes", qualified) and not qualified.startswith(_GUARD):
            return VALUE
        if last not in _SERIALIZERS or receiver is None:
            return None
        words = [s for s in name.split(".")[:-1] if s not in ("()", "[]")]
        evidence = _is_checkpoint_word(view.fn.name) or any(
            _is_checkpoint_word(w) or w in ("saver", "checkpointer") for w in words
        )
        for arg in call.args:
            evidence = evidence or self._checkpoint_value(arg.value, view)
        if isinstance(receiver, cst.Name):
            for value in view.assigned.get(receiver.value, []):
                evidence = evidence or self._checkpoint_value(value, view)
        return NAME if evidence else None

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


@dataclass(frozen=True, eq=False)
class _Forward:
    """A function hands its parameter ``param``, unchanged, to the model call ``call`` (in the
    module at ``path``) whose answer it returns. With ``receiver``, that call is
    ``<receiver>.<method>(...)`` on another of its parameters: a model call only when the value
    its caller passes for ``receiver`` is an instance whose ``method`` runs a model."""

    param: str
    receiver: str | None
    method: str | None
    call: cst.Call
    path: str


def _model_library(qualified: str) -> bool:
    """``qualified`` names something of a model library (``openai.OpenAI``, ``anthropic...``)."""
    return any(qualified == m or qualified.startswith(m + ".") for m in _LLM_MODULES)


def _model_class(qualified: str) -> bool:
    """A model library's class whose instances run a model: not its prompt templates
    (``ChatPromptTemplate.invoke`` renders text)."""
    return _model_library(qualified) and not _PROMPT_TYPE.search(last_segment(qualified))


def _returned_calls(fn: FunctionInfo, view: _Fn) -> list[cst.Call]:
    """The calls whose result reaches a ``return`` of ``fn``, through local bindings."""
    pending: list[cst.CSTNode] = [
        stmt.value for stmt in walk_statements(fn.body) if isinstance(stmt, cst.Return) and stmt.value is not None
    ]
    names: set[str] = set()
    calls: list[cst.Call] = []
    seen: set[int] = set()
    while pending:
        skip: set[int] = set()
        for n in iter_exprs(pending.pop()):  # one walk: the calls, and the variables read (as _names)
            kind = type(n)  # type tests: libcst's isinstance goes through ABCMeta
            if kind is cst.Call:
                if id(n) not in seen:
                    seen.add(id(n))
                    calls.append(n)
            elif kind is cst.Attribute:
                skip.add(id(n.attr))
            elif kind is cst.Arg and n.keyword is not None:
                skip.add(id(n.keyword))
            elif kind is cst.Name and id(n) not in skip and n.value not in names:
                names.add(n.value)
                pending.extend(view.assigned.get(n.value, ()))
    return calls


def _handed(expr: cst.BaseExpression, params: set[str]) -> set[str]:
    """The parameters an argument hands on as they are: the parameter itself, a field or
    item of it (``payload["messages"]``), or an element of a literal list, tuple or dict
    built around it. Not through a call: what a call returns is not the parameter."""
    if isinstance(expr, cst.Name):
        return {expr.value} & params
    if isinstance(expr, (cst.Attribute, cst.Subscript)):
        return _handed(expr.value, params)
    if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
        return {p for e in expr.elements for p in _handed(e.value, params)}
    if isinstance(expr, cst.Dict):
        return {p for e in expr.elements for p in _handed(e.value, params)}
    return set()


def _discarded(call: cst.Call, stmt: Stmt) -> bool:
    """``box.append(x)`` as a statement writes into ``box``; ``y = box.insert(x)`` uses what
    the method computes (a container's put returns None), so ``box`` is a helper, not a
    channel. ``setdefault`` both stores and returns."""
    if isinstance(call.func, cst.Attribute) and call.func.attr.value == "setdefault":
        return True
    if not isinstance(stmt, cst.Expr):
        return False
    value = stmt.value.expression if isinstance(stmt.value, cst.Await) else stmt.value
    return value is call


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


def compaction_facts(project: Project, summaries: Mapping[FunctionInfo, FunctionSummary]) -> list[Fact]:
    """SG301-SG304 facts of the checked modules of ``project``.

    A context module (analyzed, never reported) is read here only for what reaches a
    checked one: a function that compacts what its parameters bring, whose callers
    must check it, when a call of a checked module resolves to it (:func:`_at_callers`
    reports at such calls only; the solver analyzed exactly what these calls reach).
    Its records, its own re-compactions and its writes would be facts at its own
    lines, which nothing reports: 8% of a file's cold check in a package whose 150
    imported modules mention summaries."""
    analysis = _Analysis(project, summaries)
    facts: list[Fact] = []
    #: summarizer calls fed only through parameters: (call, parameters, evidence) per function.
    pending: dict[FunctionInfo, list[tuple[cst.Call, frozenset[str], tuple[Step, ...]]]] = {}
    modules = [m for m in project.modules if m.mentions_summary or _mentions_compaction(m)]
    called = _called_by_checked_code(project)
    for module in modules:
        for fn in module.functions:
            if not module.context:
                facts.extend(analysis.records(fn))
            elif fn not in called:
                continue
            found = analysis.recompactions(fn)
            if not found:
                continue
            unchecked = analysis.unchecked(fn, [c for c, _, _, _ in found])
            for call, origin, steps, params in found:
                if call not in unchecked:
                    continue
                if origin == "param":
                    if not fn.is_module:
                        pending.setdefault(fn, []).append((call, params, steps))
                elif not module.context:
                    facts.append(Recompaction(node=call, path=module.path, trace=steps))
    if pending:
        facts.extend(_at_callers(analysis, project, pending, {id(f.node) for f in facts}))
    for module in modules:
        if not module.context:
            facts.extend(_concurrent_writes(analysis, module))
    reported = {id(f.node) for f in facts if isinstance(f, UnserializedWrite)}
    for module in project.modules:
        if not module.context:
            facts.extend(writes_after_inflight(analysis, module, reported))
    return facts


def _called_by_checked_code(project: Project) -> set[FunctionInfo]:
    """The functions the checked modules' calls resolve to (empty when no module is context)."""
    if not any(module.context for module in project.modules):
        return set()
    checked = [fn for fn in project.functions if not fn.module.context]
    edges = project.call_edges  # the solver's, where it ran: each function's calls are read once
    graph = call_graph(checked, project) if edges is None else {fn: edges.get(fn, ()) for fn in checked}
    return {callee for callees in graph.values() for callee in callees}


def _mentions_compaction(module: ModuleInfo) -> bool:
    return any(_COMPACTION_FN.search(fn.name) for fn in module.functions) or any(
        q.rpartition(".")[0] in _COMPACTOR or q in _COMPACTOR for q in module.imports.aliases.values()
    )


def _at_callers(
    analysis: _Analysis,
    project: Project,
    pending: dict[FunctionInfo, list[tuple[cst.Call, frozenset[str], tuple[Step, ...]]]],
    reported: set[int],
) -> list[Fact]:
    """A function that compacts what its parameters bring: a caller that passes an
    earlier summary (by value, in the caller) must check it before the call."""
    names = {fn.name for fn in pending}
    facts: list[Fact] = []
    for caller in project.functions:
        if caller.module.context:
            continue  # its facts would be at its own lines, which nothing reports
        calls: list[tuple[cst.Call, FunctionInfo, tuple[Step, ...]]] = []
        view = None
        for stmt in walk_statements(caller.body):
            for expr in expressions_of(stmt):
                for call in calls_in(expr):
                    if last_segment(dotted(call.func)) not in names or id(call) in reported:
                        continue
                    callee = project.resolve(call.func, caller)
                    if callee is None or callee not in pending or callee is caller:
                        continue
                    view = view or analysis.view(caller)
                    wanted = frozenset().union(*(p for _, p, _ in pending[callee]))
                    steps: list[Step] = []
                    if _argument_summary(analysis, call, callee, wanted, view, steps):
                        inner = pending[callee][0]
                        steps.append(Step(callee.module.path, inner[0], f"`{callee.name}()` compacts it here"))
                        calls.append((call, callee, tuple(steps)))
        if calls:
            unchecked = analysis.unchecked(caller, [c for c, _, _ in calls])
            for call, callee, steps in calls:
                if call in unchecked:
                    reported.add(id(call))
                    facts.append(Recompaction(node=call, path=caller.module.path, trace=steps, through=callee.name))
    return facts


def _argument_summary(
    analysis: _Analysis, call: cst.Call, callee: FunctionInfo, wanted: frozenset[str], view: _Fn, steps: list[Step]
) -> bool:
    """Does ``call`` pass an earlier summary (by value) to one of ``wanted`` parameters?"""
    for name, value in bound_arguments(call, callee).items():
        if name in wanted and analysis.earlier_summary(value, view, steps, set()) == "state":
            return True
    return False


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
    written = [_state_written(c) for _, _, _, _, c in dispatched]
    for fn in module.functions:
        view = analysis.view(fn)
        calls = analysis.calls_with_locks(fn)
        for call, held, index, loops in calls.calls:
            basis = analysis.write_basis(call, view)
            if basis is None and last_segment(dotted(call.func)) not in _SERIALIZERS:
                continue
            for (owner, dispatch, label, locks, closure), attributes in zip(dispatched, written):
                scope = None if isinstance(dispatch, cst.ClassDef) else _class_of(owner)
                if fn in closure or held & locks or (scope is not None and _class_of(fn) != scope):
                    continue
                if owner is fn:
                    if not _overlaps(calls, dispatch, index, loops):
                        continue
                elif analysis.calls_with_locks(owner).waits_for(dispatch):
                    continue  # the dispatching function waits for it: only its own writes overlap
                stored = _stored_state(call, attributes, dispatch if owner is fn else None)
                if basis is None and stored is None:
                    continue
                if stored is not None:
                    how, why = stored, VALUE
                elif basis == VALUE:
                    how, why = "a checkpoint write", VALUE
                else:
                    how, why = "named like a checkpoint write", NAME
                trace = (
                    Step(owner.module.path, dispatch, f"compaction dispatched through {label}"),
                    Step(module.path, call, how, why),
                )
                facts.append(UnserializedWrite(node=call, path=module.path, trace=trace, detail=label))
                break
    return facts


def _state_written(closure: set[FunctionInfo]) -> frozenset[str]:
    """The ``self`` attributes the functions of a dispatched compaction assign: the state
    it is rewriting while it runs (``self.summary = ...``)."""
    found: set[str] = set()
    for fn in closure:
        for stmt in walk_statements(fn.body):
            if isinstance(stmt, cst.Assign):
                targets = [t.target for t in stmt.targets]
            elif isinstance(stmt, (cst.AugAssign, cst.AnnAssign)):
                targets = [stmt.target]
            else:
                continue
            for target in targets:
                for node in iter_exprs(target):
                    if type(node) is cst.Attribute and dotted(node.value) == "self":  # type: ignore[attr-defined]
                        found.add(node.attr.value)  # type: ignore[attr-defined]
                        break
    return frozenset(found)


def _stored_state(call: cst.Call, attributes: frozenset[str], dispatch: cst.CSTNode | None) -> str | None:
    """How a serializer call (``json.dump``, ``store.save``, ``fh.write``) stores what a running
    compaction works on, by value: a ``self`` attribute the compaction assigns, or a value
    the dispatching function hands the compaction (``dispatch``); None when it stores neither."""
    if last_segment(dotted(call.func)) not in _SERIALIZERS or not isinstance(call.func, cst.Attribute):
        return None
    handed: set[str] = set()
    if isinstance(dispatch, cst.Call):
        for arg in dispatch.args:
            handed.update(n.value for n in iter_exprs(arg.value) if type(n) is cst.Name)  # type: ignore[attr-defined]
    for arg in call.args:
        for node in iter_exprs(arg.value):
            kind = type(node)
            if kind is cst.Attribute and node.attr.value in attributes and dotted(node.value) == "self":  # type: ignore[attr-defined]
                return f"stores `self.{node.attr.value}`, which the compaction assigns"  # type: ignore[attr-defined]
            if kind is cst.Name and node.value in handed:  # type: ignore[attr-defined]
                return f"stores `{node.value}`, which the compaction is handed"  # type: ignore[attr-defined]
    return None


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
