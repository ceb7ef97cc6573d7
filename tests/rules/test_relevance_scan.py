"""The screening's walk of CPython's tree (``engine.relevance.scan``) and the graph-node look-up.

The walk skips the nodes that carry no words (``ctx``, operators) and counts a ``ctx``
as the level it stands for: its depth (the too-deep refusal and its message) must be
the depth of the whole tree, which a plain walk of every child measures here.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings

from summaryguard.rules.engine.cpython_tree import child_fields, children, exact_fields
from summaryguard.rules.engine.relevance import _WORD_OF, scan

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


def test_a_function_that_reads_a_module_summary_prompt_asks_for_a_summary() -> None:
    """The prompt's text, not its name, is the evidence: a function reading ``FOLD`` (or a
    prompt passed through ``dedent`` or ``.strip()``) carries the word its body would have
    carried with the string inline; one that reads another constant does not."""
    source = textwrap.dedent(
        """\
        from textwrap import dedent

        FOLD = "Summarize the conversation so far without losing any identifier"
        BRIEF = dedent(\"\"\"
            Condense these turns into one paragraph.
        \"\"\")
        TRIMMED = "  Compress the history below.  ".strip()
        GREETING = "Say hello to the user"
        KEY = "summary_text"
        STYLE = "You are a support agent. Keep your answers compact and friendly."
        FAITHFUL = "Translate faithfully. Do not summarize or compress anything."


        def fold(llm, turns):
            return llm(FOLD.format(turns=turns))


        def brief(llm, turns):
            return llm(BRIEF + str(turns))


        def trimmed(llm, turns):
            return llm(TRIMMED + str(turns))


        def greet(llm):
            return llm(GREETING)


        def keyed(record):
            return record[KEY]


        def styled(llm, turns):
            return llm(STYLE + str(turns))


        def translated(llm, turns):
            return llm(FAITHFUL + str(turns))


        class Prompts:
            INNER = "Summarize the conversation"

            def run(self, llm):
                return llm(self.INNER)
        """
    )
    functions = scan(ast.parse(source), "m").functions
    assert {"m.fold", "m.brief", "m.trimmed"} == {q for q, f in functions.items() if "summarize" in f.words and q != "m.<module>"}
    assert "summarize" in functions["m.<module>"].words  # the prompt's own owner, as before
    assert "summarize" not in functions["m.greet"].words | functions["m.keyed"].words
    # asking for short answers, or forbidding a summary, asks for none
    assert "summarize" not in functions["m.styled"].words | functions["m.translated"].words
    # a class attribute is read as ``self.INNER``: no module-level name, no propagation
    assert "summarize" not in functions["m.Prompts.run"].words


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


# -- the fields walked: every child that can hold a word, none that cannot -----------------

_SHAPES = [
    "d = {**base, 'k': v}\n",  # a None among Dict.keys
    "def f(a, *, b, c=1, **kw):\n    global g\n    nonlocal h\n",  # None among kw_defaults
    "from ..pkg import (a as b, c)\nimport x.y as z\n",
    "match m:\n    case Point(1, x=0, y=[1, *rest]) | {'k': v, **others} if v:\n        pass\n    case None:\n        pass\n",
    "f'{x!r:>{width}}' + f'{y=}'\n",
    "async def g():\n    async with a as b, c:\n        async for i in j:\n            await k\n",
    "try:\n    pass\nexcept* (E, F) as e:\n    raise X from e\n",
    "x: int = (y := 1)\nz = a if b else c\n[p for q in r if s for p in q]\n",
]
_TREES = [ast.parse(source) for source in _SHAPES] + [ast.parse(p.read_text(encoding="utf-8")) for p in _OWN_MODULES]
_TREE_IDS = [f"shape{i}" for i in range(len(_SHAPES))] + [str(p.relative_to(_REPO)) for p in _OWN_MODULES]
_NO_WORDS = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)


@pytest.mark.parametrize("tree", _TREES, ids=_TREE_IDS)
def test_the_fields_walked_hold_every_child_with_words(tree: ast.AST) -> None:
    """``children`` is ``ast.iter_child_nodes`` without ``ctx`` and operators, and the
    fields a signature marks exact hold only nodes, Nones and lists of them."""
    for node in ast.walk(tree):
        assert children(node) == [c for c in ast.iter_child_nodes(node) if not isinstance(c, _NO_WORDS)]
        if exact_fields(type(node)):
            for name in child_fields(type(node)):
                value = getattr(node, name)
                items = value if isinstance(value, list) else [value]
                assert all(item is None or isinstance(item, ast.AST) for item in items), (type(node), name)


def test_every_node_type_of_this_python_has_a_readable_signature() -> None:
    """The fast path of the scan is every concrete node type's, on every Python the
    project supports (CPython writes the signatures from its grammar)."""
    concrete = [k for k in vars(ast).values() if isinstance(k, type) and issubclass(k, ast.AST) and k._fields]
    concrete = [k for k in concrete if k is ast.Constant or not issubclass(k, ast.Constant)]  # Num, Str: never parsed
    unread = [k.__name__ for k in concrete if not exact_fields(k) and k.__module__ == "ast"]
    assert unread == []
    assert child_fields(ast.Name) == ()
    assert child_fields(ast.ImportFrom) == ("names",)
    assert child_fields(ast.MatchClass) == ("cls", "patterns", "kwd_patterns")


def _reference_words(tree: ast.AST) -> list[str]:
    """Every word of every node, from ``ast.walk`` (no owner, no order)."""
    found: list[str] = []
    for node in ast.walk(tree):
        attr = _WORD_OF.get(type(node))
        value = getattr(node, attr) if attr else None
        if type(value) is str:
            if len(value) <= 64:
                found.extend(part for part in value.split(".") if part.isidentifier())
            if attr == "value" and " " in value and any(w in value.lower() for w in ("summar", "condens", "compact", "compress")):
                found.append("summarize")
    return sorted(found)


@pytest.mark.parametrize("tree", _TREES, ids=_TREE_IDS)
def test_the_scan_reads_every_word_of_the_tree(tree: ast.Module) -> None:
    words = scan(tree, "m").words
    assert (sorted(words.split("\n")) if words else []) == _reference_words(tree)


class _Unsigned(ast.expr):
    """A node type whose signature cannot be read: its fields are walked, each tested."""

    _fields = ("label", "operand")


class _Misdescribed(ast.expr):
    """Misdescribed(identifier label)"""

    _fields = ("label", "operand")


class _Fieldless(ast.stmt):
    """Fieldless()"""

    _fields = ()


def test_a_signature_is_read_only_when_it_names_every_field() -> None:
    assert not exact_fields(_Misdescribed)
    assert child_fields(_Misdescribed) == ("label", "operand")
    assert exact_fields(_Fieldless)
    assert child_fields(_Fieldless) == ()


def test_a_node_type_without_a_readable_signature_is_walked_field_by_field() -> None:
    assert not exact_fields(_Unsigned)
    assert child_fields(_Unsigned) == ("label", "operand")
    inner = _Unsigned(label="plain", operand=ast.Name(id="checkpoint", ctx=ast.Load()))
    tree = ast.Module(body=[ast.Expr(value=ast.Call(func=inner, args=[], keywords=[]))], type_ignores=[])
    found = scan(tree, "m")
    assert "checkpoint" in found.words.split("\n")
    assert found.depth == _reference_depth(tree)


@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # generated code's ("'int' object is not callable"), as in test_fuzz
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(hypothesmith.from_grammar())
def test_fields_and_words_of_generated_code(source: str) -> None:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return
    test_the_fields_walked_hold_every_child_with_words(tree)
    test_the_scan_reads_every_word_of_the_tree(tree)
    assert scan(tree, "m").depth == _reference_depth(tree)
