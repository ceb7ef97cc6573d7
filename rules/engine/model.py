"""The per-file fact table the rules read: typed facts of one file.

The analysis (flow, function summaries, rederivations, compaction) decides
*what* is wrong; this module collects its results as :mod:`.facts` of the file
they are reported in, applying the project-wide decisions on the way: a resume
inside a function is reported at its callers in the same module that do not check
(a function that resumes is itself a resume call), or at the resume itself when it
has no caller there (callers in other modules report their own unchecked calls);
soft checks are reported only where a resume relied on them (one defect, one
finding). It holds no rule code and no message: rules own those.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from .compaction import compaction_facts
from .facts import Fact, Rederivation, RerunBeforePause, SoftCheck, SwallowedError, UncheckedResume
from .names import dotted
from .project import ModuleInfo, Project
from .solver import FunctionResult, callers_of
from .behaviour import SOFT_CHECK, Soft

__all__ = ["FileModel", "build_models"]


@dataclass(eq=False)
class FileModel:
    """What the analysis found in one file: its facts, one per defect."""

    module: ModuleInfo
    facts: list[Fact] = field(default_factory=list)
    _keys: set[tuple[object, ...]] = field(default_factory=set)

    @property
    def path(self) -> str:
        return self.module.path

    def add(self, fact: Fact) -> None:
        if fact.key in self._keys:
            return
        self._keys.add(fact.key)
        self.facts.append(fact)

    def of(self, kind: type[Fact]) -> Iterator[Fact]:
        """The facts of one kind, in the order they were found."""
        return (f for f in self.facts if isinstance(f, kind))


def build_models(project: Project, results: dict) -> dict[str, FileModel]:
    """One :class:`FileModel` per module, from the final function analyses."""
    models = {m.path: FileModel(m) for m in project.modules}
    callers = callers_of(results)
    consumed: dict[tuple[int, str], list[Soft]] = {}
    for fn, result in results.items():
        model = models[fn.module.path]
        # Only callers in the same module take over the report: a file's findings never
        # depend on which other files are in the run (locality). A caller in another
        # module is itself a resume call of the function's summary and reports there.
        local = any(c.module is fn.module for c in callers.get(fn, ()))
        _resume_facts(model, result, delegated=local and not fn.is_module)
        for soft in result.consumed:
            consumed.setdefault((id(soft.node), soft.role), []).append(soft)
        for direct in result.direct:
            model.add(direct)
        for call, why in result.rederive:
            model.add(Rederivation(node=call, path=model.path, why=why))
        rederived = {call for call, _ in result.rederive}
        for call, interrupt in result.reruns:
            if call in rederived:
                continue  # one defect, one finding: the re-derivation already reports this call
            pause = dotted(interrupt.func) or "interrupt"
            model.add(RerunBeforePause(node=call, path=model.path, pause=pause))
    for softs in consumed.values():
        first = softs[0]
        model = models.get(first.path)
        if model is not None:
            kinds = tuple(sorted({s.kind for s in softs}))
            kind = SoftCheck if first.role == SOFT_CHECK else SwallowedError
            if kind is SoftCheck:
                model.add(SoftCheck(node=first.node, path=first.path, kinds=kinds, detail=first.detail))
            else:
                model.add(
                    SwallowedError(node=first.node, path=first.path, shape="defeats-check", kinds=kinds,
                                   detail=first.detail)
                )
    summaries = {fn: results[fn].summary if fn in results else project.unknown for fn in project.functions}
    for fact in compaction_facts(project, summaries):
        model = models.get(fact.path)
        if model is not None:
            model.add(fact)
    return models


def _resume_facts(model: FileModel, result: FunctionResult, delegated: bool) -> None:
    if delegated:
        return
    for site in result.sites.values():
        for kind in sorted(site.missing):
            model.add(
                UncheckedResume(node=site.call, path=model.path, trace=site.trace, kind=kind, description=site.description)
            )
