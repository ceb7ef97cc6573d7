"""Function summaries to a fixed point, over every module of a run.

A worklist: analyze every function once; whenever a function's summary
changes, re-analyze the functions that call it. Each analysis reads its
callees' current summaries, so the last analysis of every function reflects
the final summaries of everything it calls. Rounds are bounded: recursion
between a validator and a resume cannot loop forever. The worklist takes
callees before callers (:func:`callees_first`), so outside a cycle each
function is analyzed once.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import libcst as cst

from .evidence import Evidence
from .findings import describe
from .facts import SwallowedError
from .flow import FlowAnalysis
from .pauses import calls_pause, tools_before_pause
from .project import FunctionInfo, Project
from .rederive import Rederived, rederivations
from .syntax import calls_in, expressions_of, walk_statements
from .behaviour import BOTTOM, Site, Soft, FunctionSummary

#: The summary of a function not worth analyzing: it makes calls, nothing else is known.
UNKNOWN = FunctionSummary(pure=False)

__all__ = ["FunctionResult", "solve"]

#: How often one function may be re-analyzed before its summary is taken as is.
MAX_VISITS = 8


@dataclass
class FunctionResult:
    """The final analysis of one function."""

    fn: FunctionInfo
    summary: FunctionSummary
    sites: dict[cst.Call, Site] = field(default_factory=dict)
    consumed: set[Soft] = field(default_factory=set)
    direct: list[SwallowedError] = field(default_factory=list)
    rederive: list[Rederived] = field(default_factory=list)
    #: Tool calls that re-run when the node resumes after a pause (see :mod:`.pauses`).
    reruns: list[tuple[cst.Call, cst.Call]] = field(default_factory=list)
    callees: set[FunctionInfo] = field(default_factory=set)


def solve(
    project: Project, failed: dict[str, str] | None = None, roots: Iterable[FunctionInfo] | None = None
) -> dict[FunctionInfo, FunctionResult]:
    """Final analyses of every function, or with ``roots``, of the functions the roots
    reach through their calls (see :func:`demanded`): nothing else can change what
    the roots' analyses say. A function whose analysis fails marks its file in
    ``failed`` (path -> message) and counts as knowing nothing."""
    failed = {} if failed is None else failed
    summaries: dict[FunctionInfo, FunctionSummary] = {}
    results: dict[FunctionInfo, FunctionResult] = {}
    callers: dict[FunctionInfo, set[FunctionInfo]] = {}
    visits: dict[FunctionInfo, int] = {}
    relevant = project.relevant
    project.unknown = UNKNOWN
    for fn in project.functions:
        if relevant is not None and fn.qualname not in relevant:
            summaries[fn] = UNKNOWN
    if roots is None:
        wanted = None
        graph = call_graph(project.functions, project)
        order = callees_first([fn for fn in project.functions if fn not in summaries], graph)
    else:
        # only what the roots reach has its calls read: a context function's body that
        # nothing checked reaches is never walked (nor, where it is parsed lazily, parsed)
        graph = _CallsOnDemand(project)
        wanted = demanded(roots, graph)
        order = callees_first([fn for fn in project.functions if fn in wanted and fn not in summaries], graph)
    rank = {fn: i for i, fn in enumerate(order)}
    # a heap by rank: a caller queued again waits until every callee queued before it is done
    pending = [rank[fn] for fn in order if wanted is None or fn in wanted]
    queued = {order[i] for i in pending}
    seen = set(queued)
    while pending:
        fn = order[heapq.heappop(pending)]
        queued.discard(fn)
        visits[fn] = visits.get(fn, 0) + 1
        try:
            result = _analyze(fn, project, summaries)
        except RecursionError:
            failed.setdefault(fn.module.path, "too deeply nested to analyze (Python's recursion limit was reached)")
            result = FunctionResult(fn, BOTTOM)
        except Exception as exc:  # noqa: BLE001 - one function's failure is its file's error, not the run's
            failed.setdefault(fn.module.path, f"internal error in the analysis of {fn.qualname}: {describe(exc)}")
            result = FunctionResult(fn, BOTTOM)
        results[fn] = result
        for callee in result.callees:
            callers.setdefault(callee, set()).add(fn)
            if callee not in seen and callee not in summaries and (callee in rank or wanted is not None):
                # a callee the call graph missed, or one outside what it reached: analyzed now
                if callee not in rank:
                    rank[callee] = len(order)
                    order.append(callee)
                seen.add(callee)
                queued.add(callee)
                heapq.heappush(pending, rank[callee])
        if result.summary != summaries.get(fn, BOTTOM):
            summaries[fn] = result.summary
            for caller in callers.get(fn, ()):
                if caller not in queued and visits.get(caller, 0) < MAX_VISITS:
                    heapq.heappush(pending, rank[caller])
                    queued.add(caller)
    return results


def call_graph(functions: Iterable[FunctionInfo], project: Project) -> dict[FunctionInfo, tuple[FunctionInfo, ...]]:
    """For each function, the project functions its calls resolve to, as the evidence
    resolves them (:meth:`Project.resolve`, see :meth:`.evidence.Evidence.resolve`),
    in the order of the calls. Names alone (``run``, ``to_dict``) would tie a thousand
    functions of a package into one cycle. A function whose calls cannot be read
    has no edges: its own analysis reports what is wrong with it."""
    graph: dict[FunctionInfo, tuple[FunctionInfo, ...]] = {}
    for fn in functions:
        targets: dict[FunctionInfo, None] = {}
        try:
            for stmt in walk_statements(fn.body):
                for expression in expressions_of(stmt):
                    for call in calls_in(expression):
                        callee = project.resolve(call.func, fn)
                        if callee is not None and callee is not fn:
                            targets[callee] = None
        except Exception:  # noqa: BLE001 - see the docstring
            pass
        graph[fn] = tuple(targets)
    return graph


class _CallsOnDemand(dict):
    """A call graph whose edges are read (:func:`call_graph` of one function) when first
    asked for: what :func:`demanded` never reaches is never walked."""

    def __init__(self, project: Project) -> None:
        super().__init__()
        self.project = project

    def get(self, fn: FunctionInfo, default: object = None) -> tuple[FunctionInfo, ...]:  # type: ignore[override]
        found = super().get(fn)
        if found is None:
            found = self[fn] = tuple(call_graph((fn,), self.project).get(fn, ()))
        return found


def demanded(roots: Iterable[FunctionInfo], graph: Mapping[FunctionInfo, Sequence[FunctionInfo]]) -> set[FunctionInfo]:
    """``roots`` and every function they reach through ``graph``.

    Why: a file checked alone (a pre-commit hook) brings the project modules it
    imports as context, and in agno the 51 functions of ``agent/_run.py`` reach 352
    of the 1,761 functions worth analyzing there. A summary depends only on the
    function's own body and its callees' summaries, so the others cannot change
    what the roots' analyses say. The edges of functions not worth analyzing are
    followed too: their callees' summaries are read when the evidence looks into
    their bodies (:meth:`.evidence.Evidence._calls_tool_directly`)."""
    reached = set(roots)
    stack = list(reached)
    while stack:
        for callee in graph.get(stack.pop(), ()):
            if callee not in reached:
                reached.add(callee)
                stack.append(callee)
    return reached


def callees_first(
    functions: Sequence[FunctionInfo], graph: Mapping[FunctionInfo, Sequence[FunctionInfo]]
) -> list[FunctionInfo]:
    """``functions`` ordered so that each comes after the functions it calls (Tarjan's
    strongly connected components of ``graph``, which come out callees first; the
    functions of a cycle keep the order given).

    Why: a function analyzed before its callees is analyzed again each time one of
    their summaries changes, and the hub of a package (agno's ``_run``, hundreds of
    lines that call everything) then costs :data:`MAX_VISITS` analyses instead of one.
    The order never changes what the worklist computes, only how soon."""
    index = {fn: i for i, fn in enumerate(functions)}
    edges = [sorted(index[c] for c in graph.get(fn, ()) if c in index) for fn in functions]
    order: list[FunctionInfo] = []
    number = [-1] * len(functions)
    low = [0] * len(functions)
    on_stack = [False] * len(functions)
    stack: list[int] = []
    counter = 0
    for root in range(len(functions)):
        if number[root] >= 0:
            continue
        work = [(root, 0)]
        number[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        while work:
            node, position = work[-1]
            targets = edges[node]
            if position < len(targets):
                work[-1] = (node, position + 1)
                target = targets[position]
                if number[target] < 0:
                    number[target] = low[target] = counter
                    counter += 1
                    stack.append(target)
                    on_stack[target] = True
                    work.append((target, 0))
                elif on_stack[target]:
                    low[node] = min(low[node], number[target])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == number[node]:
                component: list[int] = []
                while True:
                    member = stack.pop()
                    on_stack[member] = False
                    component.append(member)
                    if member == node:
                        break
                order.extend(functions[i] for i in sorted(component))
    return order


def _analyze(fn: FunctionInfo, project: Project, summaries: dict[FunctionInfo, FunctionSummary]) -> FunctionResult:
    evidence = Evidence(fn, project, summaries)
    flow = FlowAnalysis(evidence).run()
    summary = flow.summary()
    pauses = calls_pause(evidence)
    if pauses:
        summary = replace(summary, pauses=True)
    found = rederivations(evidence)
    return FunctionResult(
        fn=fn,
        summary=summary,
        reruns=tools_before_pause(evidence) if pauses else [],
        sites=flow.sites,
        consumed=flow.consumed,
        direct=flow.direct,
        rederive=found,
        callees=set(evidence.callees),
    )
