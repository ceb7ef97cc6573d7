"""A context module indexed from CPython's tree, its libcst tree built when first read
(``Project.add_outline``, ``Analyzer.build_context_on_demand``)."""

from __future__ import annotations

import ast
from pathlib import Path

import libcst as cst
import pytest

from summaryguard.rules.engine import Analyzer, Vocabulary, all_rules
from summaryguard.rules.engine.cpython_cst import names_as_written
from summaryguard.rules.engine.grammar import parse_module
from summaryguard.rules.engine.module_index import entries_from_json, index_entries, kept
from summaryguard.rules.engine.names import ImportTable, dotted, dotted_cpython
from summaryguard.rules.engine.project import ModuleInfo, Project

#: Every shape the index collects, in every block that stays in its scope.
SHAPES = '''\
import os, os.path as osp
import json as j
from . import sibling
from .. import parent as up
from ...far.away import thing as other, more
from pkg.sub import *
from pkg import (a, b as bee)

if os.environ:
    def in_if(x: int, /, y: "str" = None, *args: pkg.T[int], flag: None = None, **kw: a().b) -> None:
        pass
elif True:
    def in_elif(): ...
else:
    import glob
    def in_else(): ...

for item in []:
    def in_for(): ...
else:
    def in_for_else(): ...

while False:
    def in_while(): ...

try:
    def in_try(): ...
except ValueError:
    def in_except(): ...
else:
    def in_try_else(): ...
finally:
    def in_finally(): ...

try:
    pass
except* KeyError:
    def in_except_star(): ...

with open("x") as handle:
    def in_with(): ...

match os.name:
    case "nt":
        def in_case(): ...
    case _:
        pick = lambda value, *rest, key=None: value


@decorator
@pkg.deco(arg=1)
@registry[0].hook
@(lambda f: f)
async def decorated(self, *, only): ...


named = lambda: None
typed: object = lambda one, two=2: one
first = second = lambda: None  # two targets: no named function


class Outer(Base, metaclass=Meta):
    attribute = lambda self: self

    def method(self):
        def closure():
            import inner_module

            class Local:
                def local_method(self): ...

            return Local

        later = lambda: closure
        return later

    class Inner:
        async def nested_method(cls) -> pkg.Result: ...


def outer():
    async def coroutine(): ...

    for _ in ():
        def in_loop(): ...
    return coroutine
'''


def _index(module: ModuleInfo) -> tuple[object, ...]:
    return (
        [
            (fn.qualname, fn.name, fn.params, fn.annotations, fn.decorators, fn.class_name,
             fn.parent and fn.parent.qualname, sorted(fn.nested))
            for fn in module.functions
        ],
        sorted(module.toplevel),
        {name: list(methods) for name, methods in module.classes.items()},
        module.imports.aliases,
        module.mentions_summary,
        module.location,
    )


def _both(text: str, path: str = "app/pkg/recovery.py") -> tuple[ModuleInfo, ModuleInfo, cst.Module]:
    tree = parse_module(text, None)[0]
    vocabulary = Vocabulary.build()
    whole = Project(vocabulary).add_module(path, tree, text, context=True)
    on_demand = Project(vocabulary).add_outline(path, index_entries(ast.parse(text)), text, lambda: tree)
    return whole, on_demand, tree


_REPO = Path(__file__).resolve().parents[2]
_OWN_MODULES = sorted(p for folder in ("rules", "guard", "plugins") for p in (_REPO / folder).rglob("*.py"))


@pytest.mark.parametrize(
    "text", [SHAPES, *(p.read_text(encoding="utf-8") for p in _OWN_MODULES)],
    ids=["shapes", *(str(p.relative_to(_REPO)) for p in _OWN_MODULES)],
)
def test_the_index_from_cpythons_tree_is_the_one_from_libcsts(text: str) -> None:
    whole, on_demand, tree = _both(text)
    assert "tree" not in on_demand.__dict__  # nothing built yet
    assert _index(on_demand) == _index(whole)
    # built when read (here, through the last function's node), each function bound to
    # the node the whole path gives it
    assert on_demand.functions[-1].node is whole.functions[-1].node
    assert on_demand.tree is tree
    assert [fn.node for fn in on_demand.functions] == [fn.node for fn in whole.functions]


def test_the_shapes_cover_every_block_and_kind() -> None:
    whole, _, _ = _both(SHAPES)
    names = {fn.name for fn in whole.functions}
    assert {
        "in_if", "in_elif", "in_else", "in_for", "in_for_else", "in_while", "in_try", "in_except",
        "in_try_else", "in_finally", "in_except_star", "in_with", "in_case", "pick", "decorated",
        "named", "typed", "attribute", "closure", "local_method", "later", "nested_method", "coroutine", "in_loop",
    } <= names
    assert "first" not in names and "second" not in names


def test_reading_a_header_or_a_node_builds_the_module_once() -> None:
    built: list[int] = []
    text = "def f(a):\n    return a\n\n\ndef g():\n    return f(1)\n"
    tree = parse_module(text, None)[0]
    module = Project(Vocabulary.build()).add_outline("m.py", index_entries(ast.parse(text)), text, lambda: built.append(1) or tree)
    f, g = module.functions[1], module.functions[2]
    assert f.is_module is False and module.functions[0].is_module and built == []  # known from the index
    assert isinstance(g.header, cst.FunctionDef) and built == [1]
    assert f.node is tree.body[0] and module.tree is tree and built == [1]


def test_then_runs_once_the_tree_is_bound() -> None:
    text = "def f():\n    return 1\n"
    tree = parse_module(text, None)[0]
    seen: list[object] = []
    module = Project(Vocabulary.build()).add_outline(
        "m.py", index_entries(ast.parse(text)), text, lambda: tree, lambda m: seen.append(m.functions[1].node)
    )
    assert seen == []
    assert module.functions[1].node is tree.body[0] and seen == [tree.body[0]]


@pytest.mark.parametrize("broken", ["none", "another tree"])
def test_a_tree_that_cannot_be_built_or_bound_keeps_the_index_with_empty_bodies(broken: str) -> None:
    text = "import json\n\n\nclass C:\n    def m(self, x):\n        return x\n\n\nrun = lambda: 1\n"
    other = parse_module("def m(self, x):\n    return x\n", None)[0]
    module = Project(Vocabulary.build()).add_outline(
        "m.py", index_entries(ast.parse(text)), text, lambda: None if broken == "none" else other
    )
    before = _index(module)
    assert list(module.tree.body) == []
    method, lam = module.functions[1], module.functions[2]
    assert isinstance(method.node, cst.FunctionDef) and method.node.name.value == "m"
    assert [s for s in method.body if not isinstance(s, cst.Pass)] == []
    assert isinstance(lam.node, cst.Lambda) and module.functions[0].node is module.tree
    assert _index(module) == before and module.imports.aliases == {"json": "json"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("x = 1\n", True),
        ("x = '✅ done — it’s here'  # 🚀\n", True),  # no character that can name anything
        ("x = 'café'\n", True),  # in a literal
        ("x = 1  # café\n", True),  # in a comment
        ("x = f'{y} é'\n", True),
        ("café = 1\n", False),
        ("def ｆetch(): ...\n", False),  # CPython reads ``fetch``
        ("x = 1  # é\nnaïve = 2\n", False),
    ],
)
def test_names_as_written(text: str, expected: bool) -> None:
    assert names_as_written(text, ast.parse(text)) is expected


@pytest.mark.parametrize(
    "expression",
    ["a", "a.b.c", "a().b", "a.b[0].c", "(x + y).b", "'text'", "None", "True", "False", "1", "0", "...",
     "a[1]()", "lambda: 1", "await_it.x", "f(a)(b).c"],
)
def test_dotted_cpython_is_dotted(expression: str) -> None:
    expected = dotted(cst.parse_expression(expression))
    assert dotted_cpython(ast.parse(expression, mode="eval").body) == expected


@pytest.mark.parametrize(
    "statement",
    ["import a", "import a.b.c", "import a.b as c", "import a, b.c", "from a import b", "from a.b import c as d",
     "from . import x", "from .. import x as y", "from ...m.n import x, y as z", "from .m import *",
     "from . import (a, b)", "from .......deep import x"],
)
@pytest.mark.parametrize("package", [True, False])
def test_import_table_reads_cpythons_imports_as_libcsts(statement: str, package: bool) -> None:
    table, twin = ImportTable("app.pkg.mod", package), ImportTable("app.pkg.mod", package)
    node = cst.parse_statement(statement).body[0]  # type: ignore[attr-defined]
    table.add(node)
    for entry in index_entries(ast.parse(statement)):
        if entry[0] == "import":
            twin.add_import(entry[2])
        else:
            twin.add_from(entry[2], entry[3], entry[4])
    assert twin.aliases == table.aliases


RECOVERY = '''\
from summaryguard.guard import CheckpointStore


def load_latest(folder):
    store = CheckpointStore(folder)
    checkpoint = store.latest()
    return checkpoint


def never_called(checkpoint):
    summary = checkpoint.summary
    return summary.generation
'''

UNRELATED = '''\
def summarize_later(checkpoint):
    return checkpoint.summary
'''

AGENT = """\
from app.recovery import load_latest
import app.unrelated


def main(agent):
    checkpoint = load_latest("ckpt")
    return agent.resume(checkpoint.summary)
"""


def test_the_analysis_builds_only_the_context_it_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[str] = []
    real = Project._bind

    def recording(self: Project, module: ModuleInfo, tree: cst.Module | None) -> None:
        built.append(module.path)
        real(self, module, tree)

    monkeypatch.setattr(Project, "_bind", recording)
    analyzer = Analyzer(Vocabulary.build(), all_rules())
    context = [("app/recovery.py", RECOVERY), ("app/unrelated.py", UNRELATED)]
    found = analyzer.analyze([("app/agent.py", AGENT)], context=context)
    assert built == ["app/recovery.py"]
    assert {f.code for f in found[0]} == {"SG101", "SG102", "SG103"}
    analyzer.build_context_on_demand = False
    built.clear()
    assert analyzer.analyze([("app/agent.py", AGENT)], context=context) == found
    assert built == []


@pytest.mark.parametrize(
    "context_text",
    ["def load_latest(folder):\n\treturn folder\n", "def lοad_latest(folder):\n    return folder\n"],
    ids=["tabs", "a name beyond ASCII"],
)
def test_text_whose_names_or_indentation_libcst_reads_otherwise_takes_the_whole_path(
    context_text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    indexed: list[str] = []
    real = Project.add_outline

    def recording(self: Project, path: str, *args: object) -> ModuleInfo:
        indexed.append(path)
        return real(self, path, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(Project, "add_outline", recording)
    analyzer = Analyzer(Vocabulary.build(), all_rules())
    analyzer.analyze([("app/agent.py", AGENT)], context=[("app/recovery.py", context_text)])
    assert indexed == []
    analyzer.analyze([("app/agent.py", AGENT)], context=[("app/recovery.py", RECOVERY)])
    assert indexed == ["app/recovery.py"]


def _outline(text: str, keep: float, seed: int) -> tuple[str, list[tuple[int, int]]]:
    """An outline as a context module gets it, a share ``keep`` of its functions relevant."""
    import random

    from summaryguard.rules.engine.outline import outline_skeleton, skeleton
    from summaryguard.rules.engine.relevance import scan

    tree = ast.parse(text)
    file_scan = scan(tree, "app.mod")
    chosen = random.Random(seed)
    relevant = {q for q in file_scan.functions if chosen.random() < keep}
    blanked: list[tuple[int, int]] = []
    outlined = outline_skeleton(
        text, skeleton(text, tree), file_scan, "app.mod", relevant, lambda words: False, set(), None, {}, blanked
    )
    return outlined, blanked


@pytest.mark.parametrize(
    "text", [SHAPES, *(p.read_text(encoding="utf-8") for p in _OWN_MODULES)],
    ids=["shapes", *(str(p.relative_to(_REPO)) for p in _OWN_MODULES)],
)
@pytest.mark.parametrize("keep", [0.0, 0.3, 0.8])
def test_the_whole_files_entries_less_the_blanked_lines_are_the_outlines(text: str, keep: float) -> None:
    outlined, blanked = _outline(text, keep, seed=len(text))
    assert kept(index_entries(ast.parse(text)), blanked) == index_entries(ast.parse(outlined))


def test_a_blanked_body_takes_what_it_held_with_it() -> None:
    text = (
        "import a\n\n\ndef gone():\n    class Local:\n        import hidden\n\n        def m(self):\n            pass\n"
        "    inner = lambda: 1\n    return Local\n\n\ndef stays(x):\n    def nested(): ...\n    import b\n"
    )
    outlined, blanked = _outline(text, 0.0, seed=0)
    assert (4, 10) in blanked  # gone's body; stays keeps its import and so its nested function
    entries = kept(index_entries(ast.parse(text)), blanked)
    assert [e[2] for e in entries if e[0] in ("def", "lambda")] == ["gone", "stays", "stays.<locals>.nested"]
    assert [e for e in entries if e[0] != "def"] == [("import", 0, (("a", None),)), ("import", 15, (("b", None),))]
    assert entries[-2][5] == 1  # nested's parent, renumbered past gone's dropped functions
    assert entries == index_entries(ast.parse(outlined))


def test_entries_come_back_from_json_or_the_data_is_a_miss() -> None:
    import json

    entries = index_entries(ast.parse(SHAPES))
    assert entries_from_json(json.loads(json.dumps(entries))) == entries
    data = json.loads(json.dumps(entries))
    first_def = next(i for i, e in enumerate(data) if e[0] == "def")
    for damaged in (
        "x", [["import"]], [["import", 0, [["a"]]]], [["from", 0, 1, 0, []]], [["what", 0, []]],
        [[*data[first_def][:5], 3, *data[first_def][6:]]],  # a parent that is not there yet
        [[*data[first_def][:6], [1], *data[first_def][7:]]], [[*data[first_def][:7], [["a"]], []]],
        [[*data[first_def][:2], None, *data[first_def][3:]]], [["import", "0", []]],
    ):
        assert entries_from_json(damaged) is None, damaged


def test_screening_facts_keep_the_entries_in_the_cache() -> None:
    from summaryguard.rules.engine.analyzer import ScreenFacts

    analyzer = Analyzer(Vocabulary.build(), all_rules())
    _, _, facts = analyzer.screen_facts("app/recovery.py", RECOVERY)
    assert facts is not None and facts.index == index_entries(ast.parse(RECOVERY))
    data = facts.to_json()
    assert ScreenFacts.from_json(data, RECOVERY) == facts
    assert ScreenFacts.from_json({**data, "index": [["what"]]}, RECOVERY) is None
    assert ScreenFacts.from_json({**data, "index": None}, RECOVERY).index is None  # type: ignore[union-attr]
    tabbed = RECOVERY.replace("    ", "\t")
    assert analyzer.screen_facts("app/recovery.py", tabbed)[2].index is None  # type: ignore[union-attr]
