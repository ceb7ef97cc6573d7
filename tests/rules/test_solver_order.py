"""The solver's worklist analyzes callees before their callers (``solver.callees_first``).

The order is a matter of cost, never of result: these tests pin both halves, that a
chain written caller-first is analyzed once per function, and that the summaries
are the same whatever order the modules and functions come in.
"""

from __future__ import annotations

import ast
import textwrap

import libcst as cst
import pytest

from summaryguard.rules.engine import solver
from summaryguard.rules.engine.project import FunctionInfo, Project
from summaryguard.rules.engine.relevance import scan
from summaryguard.rules.engine.vocabulary import Vocabulary

#: A validator reached through a chain written caller-first: ``step0`` is only known to
#: enforce the invariant once ``step1`` ... ``step5`` and ``verify`` are.
CHAIN = (
    textwrap.dedent(
        """
        from summaryguard.guard import SummaryReconciliationError

        def recover(store, agent, deps):
            checkpoint = store.load()
            step0(checkpoint, deps)
            return agent.resume(checkpoint.summary)
        """
    )
    + "".join(f"\ndef step{i}(checkpoint, deps):\n    step{i + 1}(checkpoint, deps)\n" for i in range(5))
    + textwrap.dedent(
        """
        def step5(checkpoint, deps):
            verify(checkpoint, deps)

        def verify(checkpoint, deps):
            summary = checkpoint.summary
            if summary.partial or summary.generation != checkpoint.summary_generation:
                raise SummaryReconciliationError("stale or partial")
        """
    )
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
    order = solver.callees_first(project.functions, solver.call_graph(project.functions, project))
    assert sorted(order, key=project.functions.index) == project.functions  # each exactly once
    position = {fn.name: i for i, fn in enumerate(order)}
    chain = ["verify", "step5", "step4", "step3", "step2", "step1", "step0", "recover"]
    assert [position[name] for name in chain] == sorted(position[name] for name in chain)


def test_a_cycle_keeps_the_order_given_and_follows_what_it_calls() -> None:
    project = _project([("app/loop.py", LOOP), ("app/helpers.py", HELPERS)])
    order = [fn.name for fn in solver.callees_first(project.functions, solver.call_graph(project.functions, project))]
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
    order = solver.callees_first(project.functions, solver.call_graph(project.functions, project))
    assert sorted(order, key=project.functions.index) == project.functions


#: A checked module that calls one function of a context module; the context module
#: has a second resume helper that nothing checked reaches.
CHECKED = textwrap.dedent(
    """
    from app.lib import safe_resume

    def recover(store, agent, deps):
        return safe_resume(store.load(), agent, deps)
    """
)
LIB = textwrap.dedent(
    """
    from summaryguard.guard import SummaryReconciliationError

    def safe_resume(checkpoint, agent, deps):
        verify(checkpoint, deps)
        return agent.resume(checkpoint.summary)

    def verify(checkpoint, deps):
        if checkpoint.summary.generation != checkpoint.summary_generation:
            raise SummaryReconciliationError("generation")

    def unreached(checkpoint, agent):
        return agent.resume(checkpoint.summary)
    """
)


def _with_context() -> Project:
    project = Project(Vocabulary.build())
    for path, text, context in (("app/main.py", CHECKED, False), ("app/lib.py", LIB, True)):
        module = project.add_module(path, cst.parse_module(text), text, context=context)
        # the names each function calls, from CPython's screening, as the analyzer sets them
        project.calls.update({q: fw.calls for q, fw in scan(ast.parse(text), module.imports.module_name).functions.items()})
    project.finish()
    return project


def test_demanded_follows_calls_through_functions_not_worth_analyzing() -> None:
    project = _with_context()
    fns = _by_name(project)
    graph = solver.call_graph(project.functions, project)
    assert set(graph[fns["safe_resume"]]) == {fns["verify"]}
    reached = solver.demanded([fns["recover"]], graph)
    assert {fn.name for fn in reached} == {"recover", "safe_resume", "verify"}
    # a middle function in the graph is followed whatever the solver thinks of it
    assert solver.demanded([fns["recover"]], {**graph, fns["recover"]: (fns["unreached"],)}) == {
        fns["recover"], fns["unreached"]
    }


def test_a_file_checked_with_context_solves_only_what_it_reaches() -> None:
    project = _with_context()
    roots = project.demand_roots()
    # the checked module's functions: a context function counts only through the calls that reach it
    assert roots is not None and {fn.name for fn in roots} == {"<module>", "recover"}
    demanded = solver.solve(project, roots=roots)
    assert {fn.name for fn in demanded} == {"<module>", "recover", "safe_resume", "verify"}
    everything = solver.solve(_with_context())
    assert "unreached" in {fn.name for fn in everything}
    wanted = {"main.<module>", "main.recover", "lib.safe_resume", "lib.verify"}
    assert {fn.qualname: result.summary for fn, result in demanded.items()} == {
        fn.qualname: result.summary for fn, result in everything.items() if fn.qualname in wanted
    }


def test_no_roots_without_context() -> None:
    assert _project([("app/chain.py", CHAIN)]).demand_roots() is None


def test_a_callee_the_call_graph_misses_is_still_analyzed(monkeypatch: pytest.MonkeyPatch) -> None:
    expected = {fn.qualname: r.summary.establishes for fn, r in solver.solve(_with_context()).items()}
    monkeypatch.setattr(solver, "call_graph", lambda functions, project: {})
    project = _with_context()
    found = {fn.qualname: r.summary.establishes for fn, r in solver.solve(project, roots=project.demand_roots()).items()}
    assert "lib.verify" in found
    assert found["main.recover"] == found["lib.safe_resume"] == expected["lib.safe_resume"] != frozenset()
