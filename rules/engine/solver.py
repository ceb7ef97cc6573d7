"""Function summaries to a fixed point, over every module of a run.

A worklist: analyze every function once; whenever a function's summary
changes, re-analyze the functions that call it. Each analysis reads its
callees' current summaries, so the last analysis of every function reflects
the final summaries of everything it calls. Rounds are bounded: recursion
between a validator and a resume cannot loop forever.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import libcst as cst

from .evidence import Evidence
from .findings import describe
from .facts import SwallowedError
from .flow import FlowAnalysis
from .pauses import calls_pause, tools_before_pause
from .project import FunctionInfo, Project
from .rederive import Rederived, rederivations
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


def solve(project: Project, failed: dict[str, str] | None = None) -> dict[FunctionInfo, FunctionResult]:
    """Final analyses of every function. A function whose analysis fails marks its
    file in ``failed`` (path -> message) and counts as knowing nothing."""
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
    pending = [fn for fn in reversed(project.functions) if fn not in summaries]
    queued = set(pending)
    while pending:
        fn = pending.pop()
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
        if result.summary != summaries.get(fn, BOTTOM):
            summaries[fn] = result.summary
            for caller in callers.get(fn, ()):
                if caller not in queued and visits.get(caller, 0) < MAX_VISITS:
                    pending.append(caller)
                    queued.add(caller)
    return results


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
