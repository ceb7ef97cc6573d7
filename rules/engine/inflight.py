"""Compactions a function leaves running when it returns (SG304 across modules).

A function that hands a compaction to a task, thread or fire-and-forget helper
and returns without waiting for it *leaves the compaction running*: every
caller keeps going while it runs, in whatever module the caller sits. This is
a fact of the function, like the function summaries of :mod:`.behaviour`, and
it is followed into callers (through functions that return what such a call
returns, or make one and do not wait). The caller's checkpoint writes after
the call can then capture the state half-compacted: its findings depend only
on the modules it imports (§3.1.1 locality).

A compaction is known by value:

* the dispatched work compacts by the rules of :mod:`.compaction` (a
  summarizer call, a project function that runs one, ``Compactor.compact``);
* or the function *evicts in the background*: it returns one slice of a list
  (the window it keeps) and hands another slice of the same list, made into
  chat messages (``role`` keys) or a summarization instruction, to work it
  does not wait for: what falls out of the window is being condensed while
  the caller goes on with the window.

The caller's write is known by value too: a checkpoint write of the module's
own rules, or a method call made for its effect (a statement of its own, or
``return await ...``) that stores a value derived from the trimmed window the
call returned: it persists the window while the condensing of what left it
runs. Writes hold no lock the compaction holds, and nothing waits for the work
between the call and the write.

Performance: the facts are found once per run, bottom-up from the calls of a
dispatch API, and only functions calling what was found are looked at.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from .facts import Fact, Step, UnserializedWrite
from .names import dotted, last_segment
from .prefilter import DISPATCH_CALLS
from .project import FunctionInfo, ModuleInfo
from .syntax import Stmt, child_blocks, expressions_of, iter_exprs, string_value, walk_statements

if TYPE_CHECKING:
    from .compaction import _Analysis, _Fn

#: How many functions a "leaves it running" fact is passed on through, above the one that
#: dispatches (a longer chain is a guess about which paths run, not a value's flow).
_DEPTH = 3
#: Every name :meth:`~.compaction._Analysis._dispatch` takes for a dispatch.
_DISPATCH_SEEDS = DISPATCH_CALLS | {
    "Process", "Timer", "gather", "add_done_callback", "call_later", "call_at", "map", "apply_async",
    "map_async", "starmap",
}
#: How far a value is followed back through a function's assignments.
_BINDING_DEPTH = 6
#: Methods that keep a value in memory or report it, never persist it: the builtin
#: containers' and ``logging``'s own names (not the user's names).
_NOT_A_WRITE = frozenset({
    "append", "extend", "insert", "add", "update", "setdefault", "remove", "discard", "pop", "clear",
    "put_nowait", "appendleft", "extendleft", "copy", "index", "count", "join", "format", "encode",
    "debug", "info", "warning", "warn", "error", "exception", "critical", "log",
})


@dataclass(frozen=True)
class Inflight:
    """A compaction a function leaves running: where it is dispatched and the locks it holds.

    ``evicts`` says the work condenses what ``fn`` trimmed from the window it
    returns; ``through`` is the chain of calls from ``fn`` down to the dispatch."""

    dispatch: cst.CSTNode
    path: str
    label: str
    locks: frozenset[str]
    evicts: bool
    through: tuple[Step, ...] = ()
    #: The dispatch runs only when ``self.<attr>`` is set, and the constructor's parameter
    #: ``needs[0]`` (position ``needs[1]``) sets it: an instance built with ``None`` there
    #: never dispatches (``Summarizer(..., summarizer_agent=None)``).
    needs: tuple[str, int] | None = None


def left_running(analysis: _Analysis, fn: FunctionInfo) -> Inflight | None:
    """The compaction ``fn`` leaves running when it returns, if any (see :func:`_candidate_names`,
    which finds them all, bottom-up, once per run)."""
    _candidate_names(analysis)
    return analysis.inflight.get(fn)


def _judge(analysis: _Analysis, fn: FunctionInfo) -> Inflight | None:
    """``fn``'s own verdict, from what is known of its callees so far."""
    return _dispatched_here(analysis, fn) or _passed_on(analysis, fn)


def _dispatched_here(analysis: _Analysis, fn: FunctionInfo) -> Inflight | None:
    view = analysis.view(fn)
    calls = analysis.calls_with_locks(fn)
    for call, label, targets in analysis.dispatches(fn):
        if calls.waits_for(call):
            continue
        for target in targets:
            fns, direct, locks = analysis.target_functions(target, fn)
            held: frozenset[str] | None = locks if direct else None
            for callee in fns:
                inner = analysis.compaction_locks(callee)
                if inner is not None:
                    held = inner if held is None else held & inner
            if held is not None:
                return Inflight(call, fn.module.path, label, held, evicts=False, needs=_needs(fn, call))
            if _evicts(analysis, fn, view, target):
                return Inflight(call, fn.module.path, label, frozenset(), evicts=True, needs=_needs(fn, call))
    return None


def _needs(fn: FunctionInfo, call: cst.Call) -> tuple[str, int] | None:
    """The constructor parameter that must not be None for ``call`` to run: ``call`` sits
    under ``if self.x:`` (or ``if self.x is not None:``) and ``__init__`` sets ``self.x``
    from that parameter."""
    attr = _guarding_attribute(fn.body, call)
    if attr is None or fn.class_name is None:
        return None
    init = fn.module.classes.get(fn.class_name, {}).get("__init__")
    if init is None:
        return None
    params = [p for p in init.params if p not in ("self", "cls")]
    for stmt in walk_statements(init.body):
        if isinstance(stmt, cst.Assign) and isinstance(stmt.value, cst.Name) and stmt.value.value in params:
            for target in stmt.targets:
                if isinstance(target.target, cst.Attribute) and dotted(target.target) == f"self.{attr}":
                    return stmt.value.value, params.index(stmt.value.value)
    return None


def _guarding_attribute(stmts: list[Stmt], call: cst.Call) -> str | None:
    """``x`` when ``call`` is inside the body of an ``if self.x:`` / ``if self.x is not None:``."""
    for stmt in stmts:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            continue
        blocks = child_blocks(stmt)
        if isinstance(stmt, cst.If) and blocks and _contains(blocks[0], call):
            attr = _tested_attribute(stmt.test)
            return attr if attr is not None else _guarding_attribute(blocks[0], call)
        for block in blocks:
            if _contains(block, call):
                return _guarding_attribute(block, call)
    return None


def _tested_attribute(test: cst.BaseExpression) -> str | None:
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        comparison = test.comparisons[0]
        if isinstance(comparison.operator, cst.IsNot) and dotted(comparison.comparator) == "None":
            test = test.left
    name = dotted(test) if isinstance(test, cst.Attribute) else None
    if name is not None and name.startswith("self.") and name.count(".") == 1:
        return name[5:]
    return None


def _contains(stmts: list[Stmt], call: cst.Call) -> bool:
    return any(node is call for stmt in walk_statements(stmts) for e in expressions_of(stmt) for node in iter_exprs(e))


def _passed_on(analysis: _Analysis, fn: FunctionInfo) -> Inflight | None:
    """``fn`` calls a function that leaves a compaction running and does not wait after it."""
    calls = analysis.calls_with_locks(fn)
    for call, _, index, _ in calls.calls:
        callee = analysis.project.resolve(call.func, fn)
        if callee is None or callee is fn:
            continue
        inner = analysis.inflight.get(callee)
        if inner is None or len(inner.through) >= _DEPTH or any(i > index for i, _ in calls.syncs):
            continue
        if inner.evicts and not _returns_result_of(fn, analysis.view(fn), call):
            continue  # the trimmed window stays inside: callers never see it
        step = Step(fn.module.path, call, f"`{callee.name}()` returns while it runs")
        # what the instance was built with decides only when the call is on that same instance
        needs = inner.needs if _on_self(call) else None
        return Inflight(inner.dispatch, inner.path, inner.label, inner.locks, inner.evicts, (step, *inner.through), needs)
    return None


def _on_self(call: cst.Call) -> bool:
    return isinstance(call.func, cst.Attribute) and dotted(call.func.value) in ("self", "cls")


def _returns_result_of(fn: FunctionInfo, view: _Fn, call: cst.Call) -> bool:
    """``fn`` returns what ``call`` returned, or a value computed from it
    (``return g()``, ``kept, _ = g(); return kept``)."""
    derived = _derived_from(call, view)
    for stmt in walk_statements(fn.body):
        if isinstance(stmt, cst.Return) and stmt.value is not None and _mentions(stmt.value, derived, call):
            return True
    return False


def _evicts(analysis: _Analysis, fn: FunctionInfo, view: _Fn, target: cst.BaseExpression) -> bool:
    """``fn`` returns one slice of a list and hands another, as chat messages or under a
    summarization instruction, to the dispatched ``target``."""
    handed = _reads(target, view)
    if not any(_is_message(n) for n in handed) and not analysis.instruction(target, view):
        return False
    kept: dict[str, set[int]] = {}
    for stmt in walk_statements(fn.body):
        if isinstance(stmt, cst.Return) and stmt.value is not None:
            for node in _reads(stmt.value, view):
                base = _sliced(node)
                if base is not None:
                    kept.setdefault(base, set()).add(id(node))
    return any(
        (base := _sliced(node)) is not None and base in kept and id(node) not in kept[base] for node in handed
    )


def _reads(expr: cst.CSTNode, view: _Fn) -> list[cst.CSTNode]:
    """Every node ``expr`` evaluates, followed back through the function's assignments."""
    seen: set[int] = set()
    out: list[cst.CSTNode] = []
    frontier: list[tuple[cst.CSTNode, int]] = [(expr, 0)]
    while frontier:
        current, depth = frontier.pop()
        for node in iter_exprs(current):
            if id(node) in seen:
                continue
            seen.add(id(node))
            out.append(node)
            if isinstance(node, cst.Name) and depth < _BINDING_DEPTH:
                for value in view.assigned.get(node.value, ()):
                    frontier.append((value, depth + 1))
    return out


def _sliced(node: cst.CSTNode) -> str | None:
    """The list a slice ``xs[a:b]`` is taken of, by its spelling; None for anything else."""
    if isinstance(node, cst.Subscript) and any(isinstance(e.slice, cst.Slice) for e in node.slice):
        return dotted(node.value)
    return None


def _is_message(node: cst.CSTNode) -> bool:
    """A chat message: a dict with a ``"role"`` key, or a call with a ``role=`` argument."""
    if isinstance(node, cst.Dict):
        return any(
            isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString) and string_value(e.key) == "role"
            for e in node.elements
        )
    if isinstance(node, cst.Call):
        return any(a.keyword is not None and a.keyword.value == "role" for a in node.args)
    return False


# -- the callers' writes ---------------------------------------------------------------


def writes_after_inflight(analysis: _Analysis, module: ModuleInfo, reported: set[int]) -> list[Fact]:
    """SG304 at the writes a function of ``module`` makes after calling a project function
    that leaves a compaction running, before anything waits for it, with no lock both hold."""
    facts: list[Fact] = []
    wanted = _candidate_names(analysis)
    project = analysis.project
    for fn in module.functions:
        if not project.may_call(fn, wanted):
            continue  # calls nothing that could leave work running: no view, no walk
        calls = analysis.calls_with_locks(fn)
        starts = [
            (call, index, loops, inflight)
            for call, _, index, loops in calls.calls
            if (inflight := _inflight_call(analysis, fn, call)) is not None
        ]
        if not starts:
            continue
        view = analysis.view(fn)
        effects = _effect_calls(fn)
        for start, first, loops, inflight in starts:
            window = _derived_from(start, view) if inflight.evicts else set()
            for call, held, index, _ in calls.calls:
                if id(call) in reported or call is start or index <= first or held & inflight.locks:
                    continue
                if any(first < i <= index for i, _ in calls.syncs):
                    break
                how = _write(analysis, call, view, window, effects)
                if how is None:
                    continue
                callee = analysis.project.resolve(start.func, fn)
                what = "what it trims from the window it returns, condensed" if inflight.evicts else "compaction"
                trace = (
                    Step(inflight.path, inflight.dispatch, f"{what} in work dispatched through {inflight.label}"),
                    *reversed(inflight.through),
                    Step(module.path, start, f"`{callee.name if callee else '?'}()` returns while it runs"),
                    Step(module.path, call, how),
                )
                reported.add(id(call))
                facts.append(UnserializedWrite(node=call, path=module.path, trace=trace, detail=inflight.label))
    return facts


def _candidate_names(analysis: _Analysis) -> frozenset[str]:
    """The names of the functions that leave a compaction running, and the local names
    imports bind them to: a call of any other name cannot start a finding here. Found
    bottom-up from the calls of a dispatch API, judging only the functions that call a
    name found so far (each verdict is the values', memoized), so a run pays for the
    functions near a dispatch, not for every function of the project; with context modules
    (a file checked alone), only for those its functions reach: 26 functions judged
    instead of 155 when agno's ``agent/_run.py`` is checked in its package."""
    found = analysis.candidate_names
    if found is not None:
        return found
    analysis.candidate_names = frozenset()  # re-entry while judging: nothing known yet
    project = analysis.project
    # with context modules, only what the checked functions reach: a verdict depends on the
    # function's body and its resolved callees' verdicts, and the call graph the solver
    # followed holds every call the judgement resolves (and the nested scopes' calls too)
    reached = project.reached
    by_qualname = {fn.qualname: fn for fn in project.functions if reached is None or fn in reached}
    running: set[str] = set()
    dispatching: set[str] = set()
    frontier = set(_DISPATCH_SEEDS)
    for _ in range(2 * _DEPTH + 2):  # helpers of helpers, then the functions that pass it on (bounded)
        new: set[str] = set()
        for qualname, called in project.calls.items():
            fn = by_qualname.get(qualname)
            if fn is None or called.isdisjoint(frontier):
                continue
            if fn.name not in dispatching and analysis.dispatched_params(fn):
                dispatching.add(fn.name)
                new.add(fn.name)
            if fn not in analysis.inflight:
                verdict = _judge(analysis, fn)
                if verdict is not None:
                    analysis.inflight[fn] = verdict
                    running.add(fn.name)
                    new.add(fn.name)
        for module in project.modules:
            new |= {local for local, target in module.imports.aliases.items() if last_segment(target) in new}
        if not new:
            break
        frontier = new
    running |= {local for m in project.modules for local, t in m.imports.aliases.items() if last_segment(t) in running}
    found = analysis.candidate_names = frozenset(running)
    return found


def _inflight_call(analysis: _Analysis, fn: FunctionInfo, call: cst.Call) -> Inflight | None:
    callee = analysis.project.resolve(call.func, fn)
    if callee is None or callee is fn or callee.module is fn.module:
        return None  # one module's dispatches and writes are matched by the module's own rule
    found = analysis.inflight.get(callee)
    if found is not None and found.needs is not None and _built_without(analysis, fn, call, found.needs):
        return None
    return found


def _built_without(analysis: _Analysis, fn: FunctionInfo, call: cst.Call, needs: tuple[str, int]) -> bool:
    """Every construction of the receiver of ``call`` passes ``None`` for the parameter
    the dispatch needs (``self.summarizer = Summarizer(..., summarizer_agent=None)``)."""
    func = call.func
    if not isinstance(func, cst.Attribute):
        return False
    receiver = func.value
    if isinstance(receiver, cst.Attribute) and dotted(receiver.value) == "self" and fn.class_name is not None:
        values = [v for v, _ in analysis.attribute_values(fn, receiver.attr.value)]
    elif isinstance(receiver, cst.Name):
        values = list(analysis.view(fn).assigned.get(receiver.value, ()))
    else:
        return False
    return bool(values) and all(_passes_none(v, needs) for v in values)


def _passes_none(value: cst.BaseExpression, needs: tuple[str, int]) -> bool:
    if not isinstance(value, cst.Call):
        return False
    name, index = needs
    positional = [a.value for a in value.args if a.keyword is None and not a.star]
    chosen = next((a.value for a in value.args if a.keyword is not None and a.keyword.value == name), None)
    if chosen is None and len(positional) > index:
        chosen = positional[index]
    if chosen is None:
        return False  # the parameter's default: not known here
    return isinstance(chosen, cst.Name) and chosen.value == "None"


def _effect_calls(fn: FunctionInfo) -> set[cst.Call]:
    """Calls made for their effect: a statement of their own (awaited or not), or the
    awaited call a ``return`` hands back (``return await store.save(ids)``); never a call
    whose result the function binds and goes on with."""
    found: set[cst.Call] = set()
    for stmt in walk_statements(fn.body):
        if isinstance(stmt, cst.Expr):
            value = stmt.value.expression if isinstance(stmt.value, cst.Await) else stmt.value
        elif isinstance(stmt, cst.Return) and isinstance(stmt.value, cst.Await):
            value = stmt.value.expression
        else:
            continue
        if isinstance(value, cst.Call):
            found.add(value)
    return found


def _derived_from(start: cst.Call, view: _Fn) -> set[str]:
    """The function's names that hold ``start``'s result or a value computed from it."""
    derived: set[str] = set()
    for _ in range(_BINDING_DEPTH):
        grown = {
            name
            for name, values in view.assigned.items()
            if name not in derived and any(_mentions(v, derived, start) for v in values)
        }
        if not grown:
            break
        derived |= grown
    return derived


def _mentions(expr: cst.CSTNode, names: set[str], start: cst.Call | None = None) -> bool:
    """``expr`` reads one of ``names`` (or contains the call ``start``)."""
    return any(n is start or (type(n) is cst.Name and n.value in names) for n in iter_exprs(expr))  # type: ignore[attr-defined]


def _write(analysis: _Analysis, call: cst.Call, view: _Fn, window: set[str], effects: set[cst.Call]) -> str | None:
    """How ``call`` is a write that can capture the state half-compacted, or None."""
    if analysis.checkpoint_write(call, view):
        return "a checkpoint write"
    func = call.func
    if not window or call not in effects or not isinstance(func, cst.Attribute):
        return None
    if func.attr.value in _NOT_A_WRITE or _mentions(func.value, window):
        return None  # kept in memory, reported, or a method of the window itself
    if any(_mentions(arg.value, window) for arg in call.args):
        return "stores the trimmed window it returned"
    return None
