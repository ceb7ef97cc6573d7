"""Shapes of real code that once sent the engine into runaway recursion, and the limits it enforces.

Each alias shape below comes from a real file of the benchmark corpus that
was reported as "too deeply nested to analyze" even with a recursion limit of
20,000: SG201's lookup test followed ``a = b`` aliases recursively, once per
path, so a cycle never ended and a dense alias graph took exponential time.
A real file must never be an error: each shape is analyzed, and a lookup
reached through the cycle is still recognized.
"""

from __future__ import annotations

import sys
import textwrap
from typing import Any

import pytest

from summaryguard.rules.cli.deepstack import call_with_deep_stack
from summaryguard.rules.engine import Analyzer, FileError, Vocabulary, all_rules

HEADER = textwrap.dedent(
    """
    from langchain_core.tools import tool

    from summaryguard.guard import check_resume


    @tool
    def open_sandbox(name: str) -> str:
        return name


    """
)


@pytest.fixture(scope="module")
def analyzer() -> Analyzer:
    return Analyzer(Vocabulary.build(), all_rules())


def _codes(analyzer: Analyzer, body: str) -> list[tuple[int, str]]:
    # every resume is checked first: the only possible finding is SG201
    body = textwrap.dedent(body).replace(
        "ctx = checkpoint.resume_context()", "check_resume(checkpoint, [])\n    ctx = checkpoint.resume_context()"
    )
    source = HEADER + body
    # as the command line runs it: on the deep-stack worker
    findings, errors = call_with_deep_stack(lambda: analyzer.analyze([("shape.py", source)]))
    assert errors == []
    return [(f.line, f.code) for f in findings]


ALIAS_SHAPES = {
    # typing.ForwardRef._evaluate
    "mutual-alias": """
        def resume_turn(checkpoint, globalns, localns):
            ctx = checkpoint.resume_context()
            if globalns is None and localns is None:
                globalns = localns = {}
            elif globalns is None:
                globalns = localns
            elif localns is None:
                localns = globalns
            if localns is None:
                open_sandbox("x")
        """,
    # llama_index AgentWorkflow.__init__: ``root_agent = root_agent``
    "self-alias": """
        def resume_turn(checkpoint, root_agent):
            ctx = checkpoint.resume_context()
            root_agent = root_agent
            if root_agent is None:
                open_sandbox("x")
        """,
    # pickle._Unpickler.load_build, unittest.mock._check_signature
    "unpacking-self": """
        def resume_turn(checkpoint, state):
            ctx = checkpoint.resume_context()
            if isinstance(state, tuple) and len(state) == 2:
                state, slotstate = state
            if state is None:
                open_sandbox("x")
        """,
    # langgraph StateGraph.add_sequence
    "loop-unpacking": """
        def resume_turn(checkpoint, nodes):
            ctx = checkpoint.resume_context()
            for node in nodes:
                if isinstance(node, tuple):
                    name, node = node
                if node is None:
                    open_sandbox(name)
        """,
    # openai-agents tracing.processors.default_exporter, llama_index program.utils
    "swap-through-module-state": """
        def resume_turn(checkpoint):
            global _exporter
            ctx = checkpoint.resume_context()
            exporter = _exporter
            if exporter is None:
                exporter = open_sandbox("x")
                _exporter = exporter
            cur = exporter
            exporter = cur
            return exporter
        """,
}


@pytest.mark.parametrize("body", ALIAS_SHAPES.values(), ids=ALIAS_SHAPES.keys())
def test_alias_cycles_are_analyzed(analyzer: Analyzer, body: str) -> None:
    # These names are not resumed state: no finding, and above all no error.
    assert _codes(analyzer, body) == []


def test_a_lookup_reached_through_an_alias_cycle_is_still_found(analyzer: Analyzer) -> None:
    codes = _codes(
        analyzer,
        """
        def resume_turn(checkpoint):
            ctx = checkpoint.resume_context()
            handle = ctx.get("sandbox")
            a = handle
            b = a
            a = b
            if b is None:
                b = open_sandbox("main")  # the fact the summary dropped, derived again
            return b
        """,
    )
    assert [code for _, code in codes] == ["SG201"]


def test_a_dense_alias_graph_takes_linear_time(analyzer: Analyzer) -> None:
    """Every name aliases the next two: per-path search would visit n! paths."""
    n = 400
    lines = "".join(f"    v{i} = v{(i + 1) % n}\n    v{i} = v{(i + 2) % n}\n" for i in range(n))
    body = f"def resume_turn(checkpoint):\n    ctx = checkpoint.resume_context()\n{lines}" \
        "    if v0 is None:\n        open_sandbox('x')\n"
    assert _codes(analyzer, body) == []


def test_a_long_boolean_chain_in_a_lookup_test_does_not_recurse(
    analyzer: Analyzer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """libcst nests ``a or b or c`` left-deep: the missing-side test walks it iteratively.

    The analysis runs on the deep-stack worker, whose recursion limit is far above
    any chain that parses; so the test runs the missing-side walk itself under a
    limit the chain exceeds, where a recursive walk fails.
    """
    import inspect

    from summaryguard.rules.engine import rederive

    terms = 1500
    walk = rederive._missing_side

    def under_a_tight_limit(test: Any, ev: Any) -> Any:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(len(inspect.stack(0)) + 200)  # far below the chain's depth
        try:
            return walk(test, ev)
        finally:
            sys.setrecursionlimit(limit)

    monkeypatch.setattr(rederive, "_missing_side", under_a_tight_limit)
    chain = " or ".join(["flag"] * terms)
    codes = _codes(
        analyzer,
        f"""
        def resume_turn(checkpoint, flag):
            ctx = checkpoint.resume_context()
            if {chain} or ctx.get("sandbox") is None:
                sandbox = open_sandbox("main")
        """,
    )
    assert [code for _, code in codes] == ["SG201"]


@pytest.mark.parametrize(
    ("test", "expected"),
    [
        ('not ctx.get("h")', ["SG201"]),
        ('not not ctx.get("h")', []),
        ('not (ctx.get("h") is not None)', ["SG201"]),
        ('flag and ctx.get("h") is None', ["SG201"]),
        ('not (flag or ctx.get("h"))', ["SG201"]),
        ('a < ctx.get("h") < b', []),
    ],
)
def test_missing_side_through_not_and_boolean_operators(analyzer: Analyzer, test: str, expected: list[str]) -> None:
    codes = _codes(
        analyzer,
        f"""
        def resume_turn(checkpoint, flag, a, b):
            ctx = checkpoint.resume_context()
            if {test}:
                h = open_sandbox("main")
        """,
    )
    assert [code for _, code in codes] == expected


def test_too_deep_for_cpythons_own_parser(analyzer: Analyzer) -> None:
    """100,000 unary minus signs: CPython's parser itself gives up (RecursionError)."""
    findings, errors = analyzer.analyze([("minus.py", "summary = checkpoint.resume(" + "-" * 100_000 + "a)\n")])
    assert findings == []
    assert [(e.path, e.message) for e in errors] == [
        ("minus.py", "too deeply nested to analyze (Python's recursion limit was reached)")
    ]


@pytest.mark.parametrize(
    ("failure", "message"),
    [
        (RecursionError(), "too deeply nested to analyze (Python's recursion limit was reached)"),
        (OverflowError("stack"), "could not parse: OverflowError: stack"),
    ],
)
def test_libcst_failing_where_cpython_parsed_is_a_file_error(
    monkeypatch: pytest.MonkeyPatch, analyzer: Analyzer, failure: BaseException, message: str
) -> None:
    import libcst

    from summaryguard.rules.engine import grammar

    def parse_module(text: str, config: object = None) -> None:
        raise failure

    monkeypatch.setattr(libcst, "parse_module", parse_module)
    monkeypatch.setattr(grammar, "convert", lambda text: None)  # a text for libcst to parse
    source = "def recover(checkpoint):\n    summary = checkpoint.summary\n    return checkpoint.resume_context()\n"
    assert analyzer.analyze([("x.py", source)]) == ([], [FileError("x.py", None, message)])


def test_a_conversion_that_fails_leaves_the_text_to_libcst(monkeypatch: pytest.MonkeyPatch, analyzer: Analyzer) -> None:
    from summaryguard.rules.engine import cpython_cst

    def explode(self: object, tree: object) -> None:
        raise KeyError("a construct the conversion got wrong")

    source = "def recover(checkpoint):\n    summary = checkpoint.summary\n    return checkpoint.resume_context()\n"
    expected = analyzer.analyze([("x.py", source)])
    assert {f.code for f in expected[0]} == {"SG101", "SG102", "SG103"}
    monkeypatch.setattr(cpython_cst._Converter, "module", explode)
    assert cpython_cst.convert(source) is None
    assert analyzer.analyze([("x.py", source)]) == expected


def test_a_file_the_text_prefilter_dismisses_still_has_its_syntax_checked(analyzer: Analyzer) -> None:
    broken = "def add(a, b:\n    return a + b\n"  # no word any rule looks for
    assert not analyzer.might_matter(broken)
    expected = [FileError("plain.py", 1, "syntax error: '(' was never closed")]
    assert analyzer.screen("plain.py", broken) == (False, expected)
    assert analyzer.screen_facts("plain.py", broken) == (False, expected, None)
    assert analyzer.analyze([("plain.py", broken)]) == ([], expected)
    assert analyzer.syntax_errors("plain.py", "x = 1\ny = 2\0\n")[0].line == 2
    assert analyzer.screen("fine.py", "def add(a, b):\n    return a + b\n") == (False, [])
