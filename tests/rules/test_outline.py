"""The outline libcst parses: bodies of functions that cannot matter are blanked, lines kept."""

from __future__ import annotations

import ast
import textwrap

import libcst as cst

from summaryguard.rules.engine.outline import outline, skeleton
from summaryguard.rules.engine.relevance import scan

SOURCE = textwrap.dedent(
    '''\
    import functools


    def plain(a, b):
        """Nothing to see."""
        total = a + b
        return total


    def wrapper(method):
        @functools.wraps(method)
        def inner(*args):
            return method(*args)
        return inner


    class Store:
        def save(self, checkpoint):
            self.rows.append(checkpoint)

        def size(self):
            return len(self.rows)


    def lazy():
        import json
        return json


    def node(state):
        return state


    def helper(x):
        return x * 2


    def one_liner(): return 1


    def build(graph):
        graph.add_node("n", node)
    '''
)


def _outline(text: str, relevant: set[str] = frozenset(), nodes: set[str] | None = None) -> str:
    tree = ast.parse(text)
    names = scan(tree, "m", frozenset({"add_node"})).nodes if nodes is None else nodes
    return outline(text, tree, scan(tree, "m"), "m", set(relevant), lambda w: "checkpoint" in w, names)


def test_blanked_bodies_keep_lines_and_parse() -> None:
    result = _outline(SOURCE)
    assert result.count("\n") == SOURCE.count("\n")
    cst.parse_module(result)
    ast.parse(result)
    lines = result.split("\n")
    assert lines[4:7] == ['    """', "", '"""']  # plain: its three lines are one string
    assert lines[10:14] == ['    """', "", "", '"""']  # wrapper, from its inner decorator on
    assert lines[34] == "    ..."  # helper: one line
    assert "self.rows.append(checkpoint)" in result  # evidence keeps save
    assert "return len(self.rows)" not in result
    assert "import json" in result  # a local import counts module-wide
    assert "return state" in result  # passed to add_node
    assert "return x * 2" not in result
    assert "def one_liner(): return 1" in result  # body on the def line


def test_relevant_and_called_functions_are_kept() -> None:
    result = _outline(SOURCE, relevant={"m.helper"}, nodes={"plain"})
    assert "return x * 2" in result and "total = a + b" in result


def test_carriage_returns_are_not_outlined() -> None:
    text = SOURCE.replace("\n", "\r\n")
    assert _outline(text) == text


def test_nothing_to_blank() -> None:
    text = "x = 1\n\ndef f(checkpoint):\n    return checkpoint\n"
    assert _outline(text) == text


def _outline_lent(text: str) -> str:
    from summaryguard.rules.engine.outline import outline_skeleton, skeleton
    from summaryguard.rules.engine.prefilter import Prefilter

    tree = ast.parse(text)
    return outline_skeleton(
        text, skeleton(text, tree), scan(tree, "m"), "m", set(), lambda w: False, set(), Prefilter.lent_function_matters
    )


def test_a_kept_function_of_a_lending_module_keeps_its_closures() -> None:
    text = textwrap.dedent(
        """\
        import asyncio


        def later(job):
            async def runner():
                await job

            return asyncio.create_task(runner())


        def other(x):
            async def inner():
                return x

            return inner
        """
    )
    result = _outline_lent(text)
    assert "await job" in result  # the closure the helper dispatches
    assert "return x" not in result  # a function that dispatches nothing is blanked, closures too


def test_a_class_whose_methods_are_kept_keeps_its_constructor() -> None:
    """What a kept method reads of ``self`` comes from the constructor (a prompt template, the
    agent a method dispatches): a class with a kept method keeps it; a class without one does not."""
    text = textwrap.dedent(
        """\
        class Spawner:
            def __init__(self, agent):
                self.agent = agent

            def go(self, checkpoint):
                if self.agent:
                    self.pool.submit(self.agent.run)
                return checkpoint


        class Owner:
            def __init__(self, store):
                self.spawner = Spawner(None)

            def run(self, checkpoint):
                return checkpoint


        class Plain:
            def __init__(self, n):
                self.n = n

            def run(self, checkpoint):
                return checkpoint


        class Unrelated:
            def __init__(self, width):
                self.width = width

            def area(self, height):
                return self.width * height
        """
    )
    result = _outline(text)
    assert "self.agent = agent" in result  # a method submits work
    assert "self.spawner = Spawner(None)" in result  # the constructor builds an attribute
    assert "self.n = n" in result  # ``run`` is kept: its class's constructor is too
    assert "self.width = width" not in result  # nothing of the class is kept
    assert "return self.width * height" not in result


def test_imports_and_functions_in_except_and_case_blocks_are_seen() -> None:
    text = textwrap.dedent(
        """\
        def fallback():
            try:
                pass
            except ImportError:
                from json import loads
            return loads


        def pick(kind):
            match kind:
                case "a":
                    import csv
            return csv


        def nested(kind):
            try:
                pass
            except ValueError:
                def checkpoint_helper(checkpoint):
                    return checkpoint
            return 1
        """
    )
    result = _outline(text)
    # an import anywhere in a body counts for the module's names: its body is kept
    assert "from json import loads" in result and "import csv" in result
    # a function defined in an ``except`` block is a nested function of the one around it
    items = {item[1]: item for item in skeleton(text, ast.parse(text))}
    assert [child[1] for child in items["nested"][4]] == ["checkpoint_helper"]


def _blanked_statements(result: str, name: str) -> list[cst.BaseStatement | cst.BaseSmallStatement]:
    module = cst.parse_module(result)
    fn = next(s for s in module.body if isinstance(s, cst.FunctionDef) and s.name.value == name)
    return [small for stmt in fn.body.body for small in getattr(stmt, "body", [stmt])]


def test_a_blanked_body_is_one_string_token_of_line_breaks() -> None:
    """libcst makes nodes of every empty line; a run of them is one string (no words)."""
    result = _outline(SOURCE)
    (only,) = _blanked_statements(result, "plain")
    assert isinstance(only, cst.Expr) and isinstance(only.value, cst.SimpleString)
    assert only.value.evaluated_value == "\n\n"
    (one_line,) = _blanked_statements(result, "helper")
    assert isinstance(one_line, cst.Expr) and isinstance(one_line.value, cst.Ellipsis)


def test_nested_blanked_functions_fill_their_parent_once() -> None:
    """A closure's span lies inside its blanked parent's: filled twice, the parent's string
    would be cut by the closure's (the outline would not parse)."""
    text = textwrap.dedent(
        """\
        def outer(a):
            x = a + 1

            def middle(b):
                def inner(c):
                    return c * 2

                return inner(b)

            return middle(x)


        def after():
            return 3
        """
    )
    result = _outline(text)
    assert result.count("\n") == text.count("\n")
    cst.parse_module(result)
    ast.parse(result)
    assert result.split("\n")[:2] == ["def outer(a):", '    """'] and result.split("\n")[9] == '"""'
    assert "def after():" in result


def test_imports_a_deferred_body_keeps_split_its_blank_into_strings() -> None:
    """A deferred body keeps its imports on their lines: a blank run of two lines or more
    around one is a string of its own (a single blank line stays empty), and the import is
    code, not string content."""
    from summaryguard.rules.engine.outline import outline_skeleton

    text = textwrap.dedent(
        """\
        def load(folder):
            path = folder + "/ckpt"
            size = len(path)
            import json
            data = json.loads(path)
            from os import sep as separator
            return data, separator
        """
    )
    tree = ast.parse(text)
    everything = set(scan(tree, "m").functions)
    deferred: dict[str, tuple[int, int, str]] = {}
    result = outline_skeleton(text, skeleton(text, tree), scan(tree, "m"), "m", everything, lambda w: True, set(), None, deferred)
    assert deferred == {"m.load": (1, 6, "    ")}
    assert result.split("\n")[1:7] == ['    """', '"""', "    import json", "", "    from os import sep as separator", ""]
    kinds = [type(s).__name__ for s in _blanked_statements(result, "load")]
    assert kinds == ["Expr", "Import", "ImportFrom"]
    assert ast.parse(result) and cst.parse_module(result)
