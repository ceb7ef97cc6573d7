"""The per-file fact table the rules read: typed facts of one file.

The analysis (flow, function summaries, rederivations, compaction) decides
*what* is wrong; this module collects its results as :mod:`.facts` of the file
they are reported in, applying the project-wide decisions on the way: a resume
inside a function is reported at its callers in the same module that do not check
when some caller there checks (a function that resumes is itself a resume call),
and at the resume itself when no caller there checks (callers in other modules
report their own unchecked calls);
soft checks are reported only where a resume relied on them (one defect, one
finding). It holds no rule code and no message: rules own those.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from .compaction import compaction_facts
from .facts import Fact, Rederivation, RerunBeforePause, SoftCheck, SwallowedError, UncheckedResume
from .names import dotted
from .project import FunctionInfo, ModuleInfo, Project
from .solver import FunctionResult
from .behaviour import SOFT_CHECK, Site, Soft

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
    consumed: dict[tuple[int, str], list[Soft]] = {}
    placement = _Placement(results)
    for fn, result in results.items():
        model = models[fn.module.path]
        _resume_facts(model, result, placement)
        for soft in result.consumed:
            consumed.setdefault((id(soft.node), soft.role), []).append(soft)
        for direct in result.direct:
            model.add(direct)
        for call, why, trace in result.rederive:
            model.add(Rederivation(node=call, path=model.path, why=why, trace=trace))
        rederived = {call for call, _, _ in result.rederive}
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
                model.add(SoftCheck(node=first.node, path=first.path, kinds=kinds, detail=first.detail,
                                    trace=first.origin))
            else:
                model.add(
                    SwallowedError(node=first.node, path=first.path, shape="defeats-check", kinds=kinds,
                                   detail=first.detail, trace=first.origin)
                )
    summaries = {fn: results[fn].summary if fn in results else project.unknown for fn in project.functions}
    for fact in compaction_facts(project, summaries):
        model = models.get(fact.path)
        if model is not None:
            model.add(fact)
    return models


class _Placement:
    """Where each lacking check of a resume is reported: one defect, one finding.

    A function that resumes is a resume call for its callers. For each check it
    lacks: when some caller in its module (directly, or through callers that pass
    the lack on) performs that check, the callers that do not report it at their
    calls; when none does, it stays at the resume inside the function and its
    callers' calls do not report it again. Only callers in the same module count:
    a file's findings never depend on which other files are in the run (locality);
    a caller in another module reports its own unchecked call.
    """

    def __init__(self, results: dict[FunctionInfo, FunctionResult]) -> None:
        self._sites: dict[FunctionInfo, list[tuple[FunctionInfo, Site]]] = {}
        for caller, result in results.items():
            for site in result.sites.values():
                if site.callee is not None and site.through is None:
                    self._sites.setdefault(site.callee, []).append((caller, site))
        self._checked: dict[tuple[FunctionInfo, str], bool] = {}

    def _local_calls(self, fn: FunctionInfo) -> list[tuple[FunctionInfo, Site]]:
        if fn.is_module:
            return []
        return [(c, s) for c, s in self._sites.get(fn, ()) if c.module is fn.module and c is not fn]

    def checked_above(self, fn: FunctionInfo, kind: str, seen: frozenset[FunctionInfo] = frozenset()) -> bool:
        """Whether some same-module caller of ``fn`` checks ``kind`` before calling it."""
        key = (fn, kind)
        if key in self._checked:
            return self._checked[key]
        if fn in seen:
            return False
        answer = False
        for caller, site in self._local_calls(fn):
            if kind not in site.missing or self.checked_above(caller, kind, seen | {fn}):
                answer = True
                break
        if not seen:
            self._checked[key] = answer
        return answer

    def reported(self, fn: FunctionInfo, site: Site, kind: str) -> bool:
        """Whether ``site`` in ``fn`` reports its lack of ``kind``."""
        if self.checked_above(fn, kind):
            return False  # the callers that do not check report it
        callee = site.callee
        if callee is fn:
            # a recursive call (directly, or through the module importing itself) lacks
            # what the resume inside ``fn`` lacks: the same defect, reported there
            return False
        if callee is not None and callee.module is fn.module and self._local_calls(callee):
            return self.checked_above(callee, kind)  # else it is reported inside the callee
        return True


def _resume_facts(model: FileModel, result: FunctionResult, placement: _Placement) -> None:
    for site in result.sites.values():
        if site.through is not None:
            continue  # its callers report it, where they pass summary state
        for kind in sorted(site.missing):
            if placement.reported(result.fn, site, kind):
                model.add(
                    UncheckedResume(
                        node=site.call, path=model.path, trace=site.trace, kind=kind, description=site.description
                    )
                )
