"""The per-file semantic model the rules read: facts keyed by the node they report at.

The analysis (flow, summaries, rederivations) decides *what* is wrong; this
module turns its results into facts attached to nodes of the file's libcst
tree, applying the project-wide decisions on the way: a resume inside a
function that has callers is reported at those callers (a function that
resumes is itself a resume call), and soft checks are reported only where a
resume relied on them. Rules then only look their node up.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import libcst as cst

from .compaction import compaction_facts
from .conditions import DEPS, GENERATION, PARTIAL
from .names import dotted
from .project import ModuleInfo, Project
from .solver import FunctionResult, callers_of
from .summaries import Soft

__all__ = ["Fact", "FileModel", "build_models"]

CODE_FOR_KIND = {GENERATION: "SG101", PARTIAL: "SG102", DEPS: "SG103"}
_WHAT = {
    GENERATION: "that the summary exists and its generation equals the checkpoint's recorded generation",
    PARTIAL: "that the summary is complete (not partial / half-written)",
    DEPS: "that every next-turn dependency is present verbatim in the summary",
}
_KIND_WORDS = {GENERATION: "generation", PARTIAL: "completeness", DEPS: "next-turn dependencies"}


@dataclass(frozen=True)
class Fact:
    code: str
    node: cst.CSTNode
    message: str


@dataclass(eq=False)
class FileModel:
    """What the analysis found in one file, by node."""

    module: ModuleInfo
    facts: dict[cst.CSTNode, list[Fact]] = field(default_factory=dict)
    codes: set[str] = field(default_factory=set)

    @property
    def path(self) -> str:
        return self.module.path

    def add(self, fact: Fact) -> None:
        existing = self.facts.setdefault(fact.node, [])
        if any(f.code == fact.code for f in existing):
            return
        existing.append(fact)
        self.codes.add(fact.code)

    def at(self, node: cst.CSTNode, code: str) -> list[Fact]:
        """The facts of ``code`` reported at ``node`` (usually zero or one)."""
        return [f for f in self.facts.get(node, ()) if f.code == code]


def build_models(project: Project, results: dict) -> dict[str, FileModel]:
    """One :class:`FileModel` per module, from the final function analyses."""
    models = {m.path: FileModel(m) for m in project.modules}
    callers = callers_of(results)
    consumed: dict[tuple[int, str], list[Soft]] = {}
    for fn, result in results.items():
        model = models[fn.module.path]
        _resume_facts(model, result, delegated=bool(callers.get(fn)) and not fn.is_module)
        for soft in result.consumed:
            consumed.setdefault((id(soft.node), soft.code), []).append(soft)
        for direct in result.direct:
            model.add(Fact(direct.code, direct.node, direct.message))
        for call, why in result.rederive:
            model.add(
                Fact(
                    "SG201",
                    call,
                    f"this tool call re-derives a reference {why}: a new fact with new provenance replaces the "
                    "one the summary dropped; raise SummaryReconciliationError instead (or guard the tool with "
                    "summaryguard.guard.tool_guard)",
                )
            )
        rederived = {call for call, _ in result.rederive}
        for call, interrupt in result.reruns:
            if call in rederived:
                continue  # one defect, one finding: SG201 already reports this call
            model.add(
                Fact(
                    "SG203",
                    call,
                    f"this tool call runs before `{dotted(interrupt.func) or 'interrupt'}()` in the same graph node: "
                    "when the graph resumes (Command(resume=...)) the node re-executes from its start and the tool "
                    "runs again, re-deriving its fact; move the call after the interrupt, into its own node, or "
                    "cache its result where the re-execution finds it",
                )
            )
    for softs in consumed.values():
        first = softs[0]
        model = models.get(first.path)
        if model is not None:
            model.add(Fact(first.code, first.node, _soft_message(first, softs)))
    _compaction(project, results, models)
    return models


def _compaction(project: Project, results: dict, models: dict[str, FileModel]) -> None:
    """SG301-SG304: see :mod:`.compaction`."""
    summaries = {fn: results[fn].summary if fn in results else project.unknown for fn in project.functions}
    for fact in compaction_facts(project, summaries):
        model = models.get(fact.path)
        if model is not None:
            model.add(Fact(fact.code, fact.node, fact.message))


def _resume_facts(model: FileModel, result: FunctionResult, delegated: bool) -> None:
    if delegated:
        return
    for site in result.sites.values():
        for kind in sorted(site.missing):
            model.add(
                Fact(
                    CODE_FOR_KIND[kind],
                    site.call,
                    f"{site.description} resumes from summary state, but no fail-closed check {_WHAT[kind]} "
                    "dominates it; check first (summaryguard.guard.check_resume or raise "
                    "SummaryReconciliationError) so recovery fails closed into reconciliation",
                )
            )


def _soft_message(first: Soft, softs: Iterable[Soft]) -> str:
    kinds = ", ".join(sorted({_KIND_WORDS.get(s.kind, s.kind) for s in softs}))
    if first.code == "SG104":
        return f"this resume check ({kinds}) cannot stop the resume: {first.detail}; raise SummaryReconciliationError"
    return f"this handler defeats the resume check ({kinds}): {first.detail}; re-raise or hand the error to a " \
        "reconciliation controller"
