"""Typed facts: what the analysis found about values, with no rule code and no message.

The engine computes facts; a rule module turns the facts of its kind into its
own findings, with its own code and message (``FACT`` and ``message`` on
:class:`~summaryguard.rules.engine.base.LintRule`). So the engine names no rule,
and a newcomer who reads one rule module knows what it decides.

Every fact carries its evidence chain, Pysa/CodeQL style: the *source* of the
value (where summary state came from), what was or was not checked about it,
and the *sink* that consumed it (the node reported). Each link says whether it
rests on a value's flow or use (``basis="value"``: an attribute of the summary
protocol read, a framework API, a load, a data-flow edge) or only on a name
pattern (``basis="name"``): names corroborate, they never decide on their own
(SPEC §3.1.1), and the metamorphic tests read this basis through
:attr:`~.findings.Finding.rests_on_flow`.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

__all__ = [
    "Fact",
    "Recompaction",
    "Rederivation",
    "RerunBeforePause",
    "SoftCheck",
    "Step",
    "SummaryRecord",
    "SwallowedError",
    "UncheckedResume",
    "UnserializedWrite",
    "VALUE",
    "NAME",
]

#: A link established by a value's flow or use.
VALUE = "value"
#: A link established by a name pattern alone (corroborating evidence).
NAME = "name"


@dataclass(frozen=True, eq=False)
class Step:
    """One link of an evidence chain: a node in a module, and what it shows."""

    path: str
    node: cst.CSTNode
    note: str
    basis: str = VALUE


@dataclass(frozen=True, eq=False, kw_only=True)
class Fact:
    """Something wrong at ``node`` of the module at ``path``.

    ``trace`` runs from the source to the sink; the sink step is the reported
    node itself and is added by the engine when it is missing."""

    node: cst.CSTNode
    path: str
    trace: tuple[Step, ...] = ()

    @property
    def key(self) -> tuple[object, ...]:
        """What makes two facts the same defect (one defect, one finding)."""
        return (type(self), id(self.node))


@dataclass(frozen=True, eq=False, kw_only=True)
class UncheckedResume(Fact):
    """A resume from summary state that no fail-closed check of ``kind`` dominates.

    ``kind`` is one of :data:`~.conditions.GENERATION`, :data:`~.conditions.PARTIAL`,
    :data:`~.conditions.DEPS`; ``description`` names the call (``agent.resume()``)."""

    kind: str
    description: str

    @property
    def key(self) -> tuple[object, ...]:
        return (type(self), id(self.node), self.kind)


@dataclass(frozen=True, eq=False, kw_only=True)
class SoftCheck(Fact):
    """A resume check that cannot stop the resume (it logs, warns, sets a flag, or
    is an ``assert``), reported because a resume relied on it. ``kinds`` are the
    checks it was meant to make; ``detail`` says why it is soft."""

    kinds: tuple[str, ...]
    detail: str


@dataclass(frozen=True, eq=False, kw_only=True)
class SwallowedError(Fact):
    """A handler that catches the failure of a resume check (or a reconciliation
    error) and resumes, re-derives or passes instead of failing closed.

    ``shape`` says how: ``"catches-reconciliation"`` (an ``except`` of the
    reconciliation error that carries on), ``"broad-except"`` (a broad ``except``
    around a resume; ``detail`` says what it does instead: "resumes anyway",
    "re-derives", "passes"), ``"suppress-reconciliation"`` / ``"suppress-broad"``
    (``contextlib.suppress``), ``"stored"`` (the error stored in ``name`` and not
    raised on some path ``where``; ``detail`` is what was caught), or
    ``"defeats-check"`` (a handler a resume relied on; ``kinds`` are the checks
    it defeats, ``detail`` says why)."""

    shape: str
    kinds: tuple[str, ...] = ()
    detail: str = ""
    name: str = ""
    where: str = ""


@dataclass(frozen=True, eq=False, kw_only=True)
class Rederivation(Fact):
    """A tool call that obtains again a reference found missing in resumed state;
    ``why`` says how the reference was looked up and found missing."""

    why: str


@dataclass(frozen=True, eq=False, kw_only=True)
class RerunBeforePause(Fact):
    """A tool call that runs before a pause of a graph node (``interrupt()``): the
    node re-executes from its start on resume and the tool runs again. ``pause``
    names the pausing call."""

    pause: str


@dataclass(frozen=True, eq=False, kw_only=True)
class SummaryRecord(Fact):
    """The record a compaction persists, returns or writes into state as its
    summary, built without ``missing`` (``"generation"`` or ``"drops"``)."""

    missing: str

    @property
    def key(self) -> tuple[object, ...]:
        return (type(self), id(self.node), self.missing)


@dataclass(frozen=True, eq=False, kw_only=True)
class Recompaction(Fact):
    """A summarizer call whose input carries an earlier summary that no check
    reconciled; ``through`` names the function it arrives through, if any."""

    through: str | None = None


@dataclass(frozen=True, eq=False, kw_only=True)
class UnserializedWrite(Fact):
    """A checkpoint write that can run while a dispatched compaction runs, with no
    lock both hold; ``detail`` names the dispatch."""

    detail: str
