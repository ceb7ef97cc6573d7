"""The screening's walk of CPython's tree (``engine.relevance.scan``) and the graph-node look-up.

The walk skips the nodes that carry no words (``ctx``, operators) and counts a ``ctx``
as the level it stands for: its depth (the too-deep refusal and its message) must be
the depth of the whole tree, which a plain walk of every child measures here.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from summaryguard.rules.engine.relevance import scan

_REPO = Path(__file__).resolve().parents[2]
_OWN_MODULES = sorted(p for folder in ("rules", "guard", "plugins") for p in (_REPO / folder).rglob("*.py"))


def _reference_depth(tree: ast.AST) -> int:
    """Every child of every node, ``ctx`` and operators included; an ``elif`` at its ``if``'s depth."""
    deepest = 0
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        children = list(ast.iter_child_nodes(node))
        if isinstance(node, ast.If) and len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
            elif_node = node.orelse[0]
            stack.append((elif_node, depth))
            children = [c for c in children if c is not elif_node]
        stack.extend((c, depth + 1) for c in children)
    return deepest


@pytest.mark.parametrize(
    "source",
    [
        "x\n",  # Module > Expr > Name > Load
        "x = a.b[c]\n",
        "a + b * -c < d\n",  # operators beside their operands
        "f(*args, **{k: v for k, v in items})\n",
        "if a:\n    pass\nelif b:\n    if c:\n        (x, [y, *z]) = w\nelse:\n    del q.r\n",
        "run = lambda cp: cp.summary.generation\n",
        "def f(a: int = b) -> c.d:\n    return [x async for x in y]\n",
        "match m:\n    case Point(x=0, y=[1, *rest]):\n        pass\n",
    ],
)
def test_the_depth_counts_every_level_of_the_tree(source: str) -> None:
    tree = ast.parse(source)
    assert scan(tree, "m").depth == _reference_depth(tree)


@pytest.mark.parametrize("path", _OWN_MODULES, ids=lambda p: str(p.relative_to(_REPO)))
def test_the_depth_of_every_module_of_this_repository(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert scan(tree, "m").depth == _reference_depth(tree)


def test_words_calls_and_owners() -> None:
    source = textwrap.dedent(
        """\
        import json


        class Agent:
            def __init__(self, folder):
                self.store = CheckpointStore(folder)

            @tool_guard
            def fetch(self, ref):
                pick = lambda s: s.summary
                if ref is None:
                    return self.store.latest()
                elif ref == 1:
                    return "Summarize the conversation so far"
                return json.loads(ref)
        """
    )
    found = scan(ast.parse(source), "m")
    fetch = found.functions["m.Agent.fetch"]
    assert {"tool_guard", "ref", "latest", "json", "loads", "summarize", "summary", "CheckpointStore"} <= fetch.words
    assert fetch.calls == {"latest", "loads"}
    assert found.functions["m.Agent.__init__"].calls == {"CheckpointStore"}
    assert found.functions["m.Agent.fetch.<locals>.pick"].words >= {"s", "summary"}
    assert not {"Load", "Store", "Eq", "Is"} & set(found.words.split("\n"))  # no node of no words


def test_graph_nodes_by_name_and_attribute() -> None:
    tree = ast.parse("g.add_node('a', run)\ng.add_node(node=self.step)\nadd_node(x.y)\nother(z)\n")
    assert scan(tree, "m", frozenset({"add_node"})).nodes == {"run", "step", "y"}
    assert scan(tree, "m").nodes == set()


def test_graph_nodes_inside_functions_lambdas_and_decorators() -> None:
    source = textwrap.dedent(
        """\
        @register(g.add_node("deco", first))
        def build(g):
            make = lambda: g.add_node("n", second)
            if g:
                g.add_node(key="k", action=third.run)
        """
    )
    assert scan(ast.parse(source), "m", frozenset({"add_node"})).nodes == {"first", "second", "run"}


def test_a_registration_spelled_with_other_letters_is_the_same_name() -> None:
    """CPython reads the fullwidth letter as "a" (NFKC), as Python runs it."""
    tree = ast.parse("g.\uff41dd_node('a', run)\n")
    assert scan(tree, "m", frozenset({"add_node"})).nodes == {"run"}
