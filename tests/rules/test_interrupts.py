"""SG203's path analysis, shape by shape: which tool calls can run before ``interrupt()``."""

from __future__ import annotations

import textwrap

import pytest

from summaryguard.rules.engine import Analyzer, Vocabulary, all_rules

ANALYZER = Analyzer(Vocabulary.build(), all_rules())

HEADER = """\
from langchain_core.tools import tool
from langgraph.types import interrupt

@tool
def probe(x: str) -> str:
    \"\"\"Probe the outside world.\"\"\"
    return x

"""

# Each body is the node function; `# hit` marks the lines SG203 must report.
CASES = {
    "while-loop-after-interrupt-precedes-next-iteration": """
        def node(state):
            while state["n"]:
                interrupt("again?")
                probe.invoke({"x": "a"})  # hit
            return {}
        """,
    "while-true-with-break": """
        def node(state):
            while True:
                found = probe.invoke({"x": "a"})  # hit
                if found:
                    break
                interrupt("retry?")
            return {}
        """,
    "for-else-and-continue": """
        def node(state):
            for item in state["items"]:
                if item:
                    probe.invoke({"x": item})  # hit
                    continue
            else:
                probe.invoke({"x": "done"})  # hit
            interrupt("ok?")
        """,
    "with-and-match": """
        def node(state, lock):
            with lock:
                probe.invoke({"x": "locked"})  # hit
            match state["mode"]:
                case "a":
                    probe.invoke({"x": "a"})  # hit
                case _:
                    pass
            interrupt("ok?")
        """,
    "try-finally-and-handlers": """
        def node(state):
            try:
                probe.invoke({"x": "body"})  # hit
            except* ValueError:
                pass
            finally:
                interrupt("ok?")
        """,
    "elif-chain-and-else-cache-in-state-is-not-a-cache": """
        def node(state):
            if state.get("a"):
                return {}
            elif state.get("b") is not None:
                vm = probe.invoke({"x": "b"})  # hit
                state["vm"] = vm
            else:
                pass
            interrupt("ok?")
        """,
    "cache-on-the-else-side": """
        def node(state, cache):
            if "vm" in cache:
                vm = cache["vm"]
            else:
                vm = probe.invoke({"x": "vm"})
                cache["vm"] = vm
            interrupt(vm)
        """,
    "cache-by-await-and-method": """
        async def node(state, store):
            if not await store.aget("vm"):
                vm = await probe.ainvoke({"x": "vm"})
                await store.aput("vm", vm)
            interrupt("ok?")
        """,
    "raise-and-nested-def": """
        def node(state):
            def later():
                return probe.invoke({"x": "later"})
            if not state:
                probe.invoke({"x": "gone"})
                raise ValueError("no state")
            interrupt(later)
        """,
    "method-node": """
        class Agent:
            def node(self, state):
                probe.invoke({"x": "m"})  # hit
                return interrupt("ok?")
        """,
    "tool-in-the-interrupt-argument": """
        def node(state):
            return interrupt(probe.invoke({"x": "inline"}))  # hit
        """,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_tool_calls_before_interrupt(name: str) -> None:
    source = HEADER + textwrap.dedent(CASES[name]).lstrip("\n")
    expected = [n for n, line in enumerate(source.splitlines(), 1) if line.rstrip().endswith("# hit")]
    findings, errors = ANALYZER.analyze([("node.py", source)])
    assert errors == []
    assert [f.line for f in findings if f.code == "SG203"] == expected
    assert [f for f in findings if f.code != "SG203"] == []


def test_a_file_without_langgraph_is_not_parsed_for_interrupts() -> None:
    assert not ANALYZER.might_matter("def interrupt():\n    pass\n")
    assert ANALYZER.might_matter("from langgraph.types import interrupt\n")


def test_the_message_names_the_interrupt() -> None:
    source = HEADER + "def node(state):\n    probe.invoke({})\n    interrupt('ok?')\n"
    [finding] = ANALYZER.analyze([("node.py", source)])[0]
    assert finding.code == "SG203" and "`interrupt()`" in finding.message and "re-executes" in finding.message
