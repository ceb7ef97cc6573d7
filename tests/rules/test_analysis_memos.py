"""Shortcuts the analysis takes for speed give the answers of the long way.

* :meth:`Project.resolve` is memoized (a run asks about each call several times):
  each caller keeps its own answer, and adding a module forgets what was known.
* The compaction facts read the functions the checked code calls from the solver's
  call graph (each function's calls read once): the same functions as a call graph
  of their own.
* The compaction view's raw table (summarizer output no record was built from yet)
  is computed only over the names the tainted table settled on, since raw text is
  summarizer output first: checked here against the long way, over every function of
  the compaction fixtures and a few shapes written for it.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest

from summaryguard.rules.engine import Vocabulary
from summaryguard.rules.engine.compaction import _Analysis, _called_by_checked_code, _Fn
from summaryguard.rules.engine.solver import solve
from summaryguard.rules.engine.project import FunctionInfo, Project

FIXTURES = Path(__file__).parent / "fixtures"


def _project(*modules: tuple[str, str]) -> Project:
    project = Project(Vocabulary.build())
    for path, text in modules:
        project.add_module(path, cst.parse_module(text), text)
    project.finish()
    return project


def _calls(fn: FunctionInfo) -> dict[str, cst.Call]:
    """The calls of ``fn``'s body by their callee's code."""
    found: dict[str, cst.Call] = {}

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            found.setdefault(cst.Module([]).code_for_node(node.func), node)

    for stmt in fn.body:
        stmt.visit(Calls())
    return found


def test_each_caller_keeps_its_own_resolution() -> None:
    text = textwrap.dedent(
        """
        def helper():
            return 1

        def outer():
            def helper():
                return 2
            return helper()

        def plain():
            return helper()
        """
    )
    project = _project(("app/mod.py", text))
    fns = {fn.qualname.partition(".")[2]: fn for fn in project.functions}  # "mod.outer" -> "outer"
    outer, plain = fns["outer"], fns["plain"]
    inner_call = _calls(outer)["helper"]
    outer_call = _calls(plain)["helper"]
    for _ in range(2):  # asked again: the memo answers, the same
        assert project.resolve(inner_call.func, outer) is fns["outer.<locals>.helper"]
        assert project.resolve(outer_call.func, plain) is fns["helper"]
    # one expression asked about from two callers: each caller's scope answers
    assert project.resolve(outer_call.func, outer) is fns["outer.<locals>.helper"]
    assert project.resolve(outer_call.func, plain) is fns["helper"]


def test_a_module_added_later_is_seen_by_a_call_resolved_before() -> None:
    caller_text = "from app.checks import verify\n\ndef go(cp):\n    verify(cp)\n"
    project = _project(("app/loop.py", caller_text))
    go = next(fn for fn in project.functions if fn.name == "go")
    call = _calls(go)["verify"]
    assert project.resolve(call.func, go) is None  # app.checks is not known yet
    checks = "def verify(cp):\n    raise ValueError(cp)\n"
    project.add_module("app/checks.py", cst.parse_module(checks), checks)
    verify = next(fn for fn in project.functions if fn.name == "verify")
    assert project.resolve(call.func, go) is verify


def _long_way(analysis: _Analysis, fn: FunctionInfo) -> tuple[set[str], set[str]]:
    """The tainted and raw tables as the view computed them before the shortcut: every
    assigned name tried for both, four rounds at most each."""
    view = _Fn(fn, dict(analysis.view(fn).assigned))
    for raw, table in ((False, view.tainted), (True, view.raw)):
        for _ in range(4):
            grown = {
                name for name, values in view.assigned.items()
                if name not in table and any(analysis.carries(v, view, raw=raw) for v in values)
            }
            if not grown:
                break
            table |= grown
    return view.tainted, view.raw


SHAPES = textwrap.dedent(
    '''
    from openai import OpenAI

    client = OpenAI()
    PROMPT = "Summarize the conversation so far."


    def condense(history):
        reply = client.chat.completions.create(model="m", messages=[{"role": "system", "content": PROMPT}, *history])
        return reply.choices[0].message.content


    def keeps_raw(history):
        text = condense(history)
        copy = text
        note = f"summary: {copy}"
        return {"summary": note}


    def builds_record(history):
        text = condense(history)
        return {"summary": text, "generation": 1}


    def wraps_record(history):
        record = builds_record(history)
        body = record
        return body


    def nothing(history):
        size = len(history)
        label = str(size)
        return label
    '''
)


def _compaction_sources() -> list[tuple[str, str]]:
    sources = [("shapes.py", SHAPES)]
    for pattern in ("compaction_records.py", "recompaction.py", "sg30*.py", "trap_*summar*.py"):
        for path in sorted(FIXTURES.glob(pattern)):
            sources.append((path.name, path.read_text(encoding="utf-8")))
    return sources


@pytest.mark.parametrize("path, text", _compaction_sources(), ids=lambda v: v if v.endswith(".py") else "")
def test_raw_table_matches_the_long_way(path: str, text: str) -> None:
    project = _project((path, text))
    analysis = _Analysis(project, {})
    tainted = set()
    for fn in project.functions:
        view = analysis.view(fn)
        assert (view.tainted, view.raw) == _long_way(analysis, fn), fn.qualname
        assert view.raw <= view.tainted, fn.qualname
        tainted |= {f"{fn.name}.{name}" for name in view.tainted}
    if path == "shapes.py":  # summarizer output is there, raw or built into a record: a real test
        assert {"keeps_raw.text", "keeps_raw.copy", "keeps_raw.note", "builds_record.text"} <= tainted


def test_called_functions_come_from_the_solvers_graph() -> None:
    checked = textwrap.dedent(
        """
        from app.lib import compact_all, helper

        def run(store):
            state = store.load()
            return compact_all(helper(state))
        """
    )
    context = textwrap.dedent(
        """
        def helper(x):
            return inner(x)

        def inner(x):
            return x

        def compact_all(history):
            return history

        def unused():
            return 1
        """
    )
    project = Project(Vocabulary.build())
    project.add_module("app/main.py", cst.parse_module(checked), checked)
    project.add_module("app/lib.py", cst.parse_module(context), context, context=True)
    project.finish()
    alone = _called_by_checked_code(project)
    assert {fn.name for fn in alone} == {"compact_all", "helper"}
    solve(project, roots=project.demand_roots())
    assert project.call_edges is not None
    assert _called_by_checked_code(project) == alone
