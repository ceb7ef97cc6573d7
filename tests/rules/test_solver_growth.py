"""Which functions the solver analyzes: the words bound them, the analysis picks within.

``solver.solve`` analyzes the seeds (own words are evidence) and the functions of the
bound that call a name the analysis knows as a source or a sink; then the callers of the
functions whose summaries tell their callers something; and every function of the bound
that an analyzed function calls (its summary is read there). A caller of functions that
tell nothing, with nothing of its own, is left out: it could report nothing.
"""

from __future__ import annotations

import dataclasses
import textwrap

import pytest

from summaryguard.rules.engine import Analyzer, Vocabulary, all_rules, solver
from summaryguard.rules.engine.behaviour import FunctionSummary, Soft

ANALYZER = Analyzer(Vocabulary.build(), all_rules())

RECOVERY = textwrap.dedent(
    """
    from summaryguard.guard import SummaryReconciliationError


    def verify(checkpoint, deps):
        summary = checkpoint.summary
        if summary is None or summary.generation != checkpoint.summary_generation:
            raise SummaryReconciliationError("stale summary")
        if summary.partial:
            raise SummaryReconciliationError("partial summary")
        if any(d not in summary.verbatim_refs for d in deps):
            raise SummaryReconciliationError("missing dependency")


    def describe(checkpoint):
        return f"summary of turn {checkpoint.turn}"
    """
)
LOOP = textwrap.dedent(
    '''
    """Helpers around the recovery of an agent from its checkpoint summary."""
    from app.recovery import describe, verify


    def relay(cp, deps):
        verify(cp, deps)


    def show(cp):
        print(describe(cp))
    '''
)


def _analyzed(monkeypatch: pytest.MonkeyPatch, sources: list[tuple[str, str]]) -> tuple[set[str], list[str]]:
    """The names of the functions analyzed, and the findings as ``path:line:code``."""
    seen: set[str] = set()
    analyze = solver._analyze

    def recording(fn, project, summaries):  # type: ignore[no-untyped-def]
        seen.add(fn.name)
        return analyze(fn, project, summaries)

    monkeypatch.setattr(solver, "_analyze", recording)
    found, errors = ANALYZER.analyze(sources)
    assert errors == []
    return seen, sorted(f"{f.path}:{f.line}:{f.code}" for f in found)


def test_callers_of_functions_that_tell_nothing_are_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    analyzed, findings = _analyzed(monkeypatch, [("app/recovery.py", RECOVERY), ("app/loop.py", LOOP)])
    # both are seeds; ``relay`` calls a validator (its summary establishes every kind) ...
    assert {"verify", "describe", "relay"} <= analyzed
    # ... ``show`` calls only ``describe``, which tells its callers nothing: ``show`` could
    # report nothing, and is not analyzed
    assert "show" not in analyzed
    assert findings == []


CALLS_A_HELPER = textwrap.dedent(
    """
    from summaryguard.guard import SummaryReconciliationError


    def note(checkpoint):
        print(checkpoint.summary.generation)


    def stop(cp, why):
        note(cp)
        raise RuntimeError(why)


    def recover(store, agent, deps):
        cp = store.load()
        summary = cp.summary
        if summary is None or summary.generation != cp.summary_generation:
            stop(cp, "stale summary")
        if summary.partial:
            raise SummaryReconciliationError("partial summary")
        if any(d not in summary.verbatim_refs for d in deps):
            raise SummaryReconciliationError("missing dependency")
        return agent.resume(summary)
    """
)


def test_a_function_an_analyzed_function_calls_is_analyzed(monkeypatch: pytest.MonkeyPatch) -> None:
    """``stop`` is no seed and calls only ``note``, which tells nothing; but ``recover`` fails
    closed through it: its summary (it always raises) is read there, so it is analyzed."""
    analyzed, findings = _analyzed(monkeypatch, [("app/agent.py", CALLS_A_HELPER)])
    assert {"recover", "stop", "note"} <= analyzed
    assert findings == []  # the generation check's failing branch stops the resume


def test_without_the_helper_the_check_would_not_stop_the_resume(monkeypatch: pytest.MonkeyPatch) -> None:
    """The previous test's control: without ``stop`` the generation check is gone and the
    resume is a finding, so the previous test's silence is ``stop``'s summary at work."""
    check = '    if summary is None or summary.generation != cp.summary_generation:\n        stop(cp, "stale summary")\n'
    assert check in CALLS_A_HELPER
    text = CALLS_A_HELPER.replace(check, "")
    line = next(n for n, row in enumerate(text.splitlines(), 1) if "agent.resume" in row)
    _, findings = _analyzed(monkeypatch, [("app/agent.py", text)])
    assert findings == [f"app/agent.py:{line}:SG101"]


def test_a_call_a_framework_model_knows_makes_a_function_worth_analyzing(monkeypatch: pytest.MonkeyPatch) -> None:
    """``after_crash`` is no seed, and ``build`` (a seed) tells its callers nothing in its
    summary: what it gives them is a value, a graph built with a summarizing node. The resume
    of that value (``stream(None, ...)``, a method the LangGraph model names) is in
    ``after_crash`` itself, which nothing analyzed calls: the call's name makes it analyzed."""
    text = textwrap.dedent(
        """
        from langgraph.checkpoint.memory import InMemorySaver
        from langgraph.graph import START, MessagesState, StateGraph
        from langmem.short_term import SummarizationNode


        def build(model):
            builder = StateGraph(MessagesState)
            builder.add_node("summarize", SummarizationNode(model=model, max_tokens=256))
            builder.add_edge(START, "summarize")
            return builder.compile(checkpointer=InMemorySaver())


        def after_crash(model, config):
            graph = build(model)
            return list(graph.stream(None, config))
        """
    )
    line = next(n for n, row in enumerate(text.splitlines(), 1) if "graph.stream" in row)
    analyzed, findings = _analyzed(monkeypatch, [("app/graph.py", text)])
    assert "after_crash" in analyzed
    assert findings == [f"app/graph.py:{line}:SG103"]


@pytest.mark.parametrize(
    "field", [f.name for f in dataclasses.fields(FunctionSummary) if f.name != "pure"]
)
def test_every_fact_but_purity_tells_callers(field: str) -> None:
    """A new field of :class:`FunctionSummary` is a fact callers read: forgetting it in
    ``tells_callers`` would leave its callers unanalyzed."""
    default = getattr(FunctionSummary(), field)
    if isinstance(default, bool):
        value: object = True
    elif field == "soft":
        value = frozenset({Soft("generation", "soft-check", None, "a.py", "assert")})  # type: ignore[arg-type]
    elif field == "resumes_through":
        value = frozenset({("x", frozenset({"generation"}))})
    else:
        value = frozenset({"generation"})
    assert FunctionSummary(**{field: value}).tells_callers()
    assert not FunctionSummary().tells_callers()
    assert not FunctionSummary(pure=False).tells_callers()


def test_a_callee_the_call_graph_missed_is_analyzed_and_its_caller_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """When the call graph does not show ``recover`` calling ``stop`` (here: it shows no call at
    all), ``recover``'s analysis finds the call, reads ``stop`` as unknown, and the solver
    analyzes ``stop`` then ``recover`` again with its summary: the same result as with the graph."""
    monkeypatch.setattr(solver, "call_graph", lambda functions, project: {})
    analyzed, findings = _analyzed(monkeypatch, [("app/agent.py", CALLS_A_HELPER)])
    assert {"recover", "stop"} <= analyzed
    assert findings == []
