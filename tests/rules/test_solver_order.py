"""The solver's worklist analyzes callees before their callers (``solver.callees_first``).

The order is a matter of cost, never of result: these tests pin both halves, that a
chain written caller-first is analyzed once per function, and that the summaries
are the same whatever order the modules and functions come in.
"""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from summaryguard.rules.engine import solver
from summaryguard.rules.engine.project import FunctionInfo, Project
from summaryguard.rules.engine.vocabulary import Vocabulary

#: A validator reached through a chain written caller-first: ``step0`` is only known to
#: enforce the invariant once ``step1`` ... ``step5`` and ``verify`` are.
CHAIN = textwrap.dedent(
    """
    from summaryguard.guard import SummaryReconciliationError

    def recover(store, agent, deps):
        checkpoint = store.load()
        step0(checkpoint, deps)
        return agent.resume(checkpoint.summary)

    def step0(checkpoint, deps):
        step1(checkpoint, deps)

    def step1(checkpoint, deps):
        step2(checkpoint, deps)

    def step2(checkpoint, deps):
        step3(checkpoint, deps)

    def step3(checkpoint, deps):
        step4(checkpoint, deps)

    def step4(checkpoint, deps):
        step5(checkpoint, deps)

    def step5(checkpoint, deps):
        verify(checkpoint, deps)

    def verify(checkpoint, deps):
        summary = checkpoint.summary
        if summary is None or summary.generation != checkpoint.summary_generation:
            raise SummaryReconciliationError("generation")
        if summary.partial:
            raise SummaryReconciliationError("partial")
        for dep in deps:
            if dep not in summary.verbatim_refs:
                raise SummaryReconciliationError("missing")
    """
)

#: Two modules that call each other, and a cycle inside one of them.
LOOP = textwrap.dedent(
    """
    from app.helpers import check

    def hub(checkpoint, agent):
        check(checkpoint)
        ping(checkpoint, 3)
        return agent.resume(checkpoint.summary)

    def ping(checkpoint, n):
        if n:
            pong(checkpoint, n - 1)

    def pong(checkpoint, n):
        ping(checkpoint, n)
    """
)
HELPERS = textwrap.dedent(
    """
    from summaryguard.guard import SummaryReconciliationError

    def check(checkpoint):
        if checkpoint.summary.partial:
            raise SummaryReconciliationError("partial")
        from app.loop import ping
        ping(checkpoint, 0)
    """
)


def _project(modules: list[tuple[str, str]]) -> Project:
    project = Project(Vocabulary.build())
    for path, text in modules:
        project.add_module(path, cst.parse_module(text), text)
    project.finish()
    return project


def _by_name(project: Project) -> dict[str, FunctionInfo]:
    return {fn.name: fn for fn in project.functions if not fn.is_module}


def test_callees_come_before_their_callers() -> None:
    project = _project([("app/chain.py", CHAIN)])
    order = solver.callees_first(project.functions, project)
    assert sorted(order, key=project.functions.index) == project.functions  # each exactly once
    position = {fn.name: i for i, fn in enumerate(order)}
    chain = ["verify", "step5", "step4", "step3", "step2", "step1", "step0", "recover"]
    assert [position[name] for name in chain] == sorted(position[name] for name in chain)


def test_a_cycle_keeps_the_order_given_and_follows_what_it_calls() -> None:
    project = _project([("app/loop.py", LOOP), ("app/helpers.py", HELPERS)])
    order = [fn.name for fn in solver.callees_first(project.functions, project)]
    # check -> ping -> pong -> ping: one cycle {ping, pong, check}, in the order given,
    # before hub, which calls into it
    cycle = [name for name in order if name in ("ping", "pong", "check")]
    assert cycle == ["ping", "pong", "check"]
    assert order.index("hub") > max(order.index(name) for name in cycle)


def test_a_chain_written_caller_first_is_analyzed_once_per_function(monkeypatch: pytest.MonkeyPatch) -> None:
    visits: dict[str, int] = {}
    analyze = solver._analyze

    def counted(fn, project, summaries):  # type: ignore[no-untyped-def]
        visits[fn.qualname] = visits.get(fn.qualname, 0) + 1
        return analyze(fn, project, summaries)

    monkeypatch.setattr(solver, "_analyze", counted)
    project = _project([("app/chain.py", CHAIN)])
    results = solver.solve(project)
    assert set(visits.values()) == {1}
    assert len(visits) == len(project.functions)
    step0 = _by_name(project)["step0"]
    assert results[step0].summary.establishes == results[_by_name(project)["verify"]].summary.establishes != frozenset()


def _outcome(project: Project) -> dict[str, tuple[object, ...]]:
    """What the solve says of each function, in terms that do not depend on its nodes."""
    results = solver.solve(project)
    return {
        fn.qualname: (
            result.summary.establishes, result.summary.resumes, result.summary.needs,
            result.summary.always_raises, result.summary.calls_tool, result.summary.predicate,
            sorted((fn.qualname, *sorted(site.missing)) for site in result.sites.values()),
        )
        for fn, result in results.items()
    }


@pytest.mark.parametrize(
    "modules",
    [
        [("app/chain.py", CHAIN)],
        [("app/loop.py", LOOP), ("app/helpers.py", HELPERS)],
    ],
    ids=["chain", "loop"],
)
def test_the_summaries_do_not_depend_on_the_order_of_the_functions(modules: list[tuple[str, str]]) -> None:
    forward = _outcome(_project(modules))
    backward_project = _project(list(reversed(modules)))
    backward_project.functions.reverse()
    assert _outcome(backward_project) == forward
    assert any(outcome[0] for outcome in forward.values())  # something was established


def test_a_function_whose_calls_cannot_be_resolved_is_still_ordered(monkeypatch: pytest.MonkeyPatch) -> None:
    project = _project([("app/chain.py", CHAIN)])
    resolve = project.resolve

    def failing(func, caller):  # type: ignore[no-untyped-def]
        if caller.name == "step3":
            raise RecursionError("deep")
        return resolve(func, caller)

    monkeypatch.setattr(project, "resolve", failing)
    order = solver.callees_first(project.functions, project)
    assert sorted(order, key=project.functions.index) == project.functions
