"""A context module's function bodies are parsed only when the analysis reads them (``engine.bodies``)."""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from pathlib import Path

import libcst as cst
import pytest

from summaryguard.rules.engine import Analyzer, Vocabulary, all_rules, bodies
from summaryguard.rules.engine.analyzer import _skeleton_from_json
from summaryguard.rules.engine.positions import tree_positions
from summaryguard.rules.engine.names import module_name_for
from summaryguard.rules.engine.outline import outline_skeleton, skeleton
from summaryguard.rules.engine.project import FunctionInfo, Project
from summaryguard.rules.engine.relevance import scan

#: A context module: a loader the checked file reaches, one it never does, and shapes
#: whose bodies add to the module's index (never deferred).
RECOVERY = '''\
from summaryguard.guard import CheckpointStore


def load_latest(folder):
    """The newest checkpoint."""
    store = CheckpointStore(folder)
    if store is None:
        from summaryguard.guard import SummaryReconciliationError as Refused

        raise Refused("no store")
    checkpoint = store.latest()
    return checkpoint


def never_called(checkpoint):
    summary = checkpoint.summary
    return summary.generation


def with_closure(checkpoint):
    def inner():
        return checkpoint.summary

    return inner


def with_lambda(checkpoint):
    pick = lambda: checkpoint.summary
    return pick


def guarded_import(checkpoint):
    if checkpoint: import json
    return checkpoint.summary


def shared_line(checkpoint):
    import json; checkpoint.seen = True
    return checkpoint.summary


def ｆetch(checkpoint):
    return checkpoint.summary


class Store:
    def __init__(self, checkpoint):
        self.checkpoint = checkpoint

    def summary(self):
        return self.checkpoint.summary
'''

AGENT = """\
from app.recovery import load_latest


def main(agent):
    checkpoint = load_latest("ckpt")
    return agent.resume(checkpoint.summary)
"""


def _deferred(text: str, name: str = "app.recovery") -> dict[str, tuple[int, int, str]]:
    tree = ast.parse(text)
    everything = set(scan(tree, name).functions)
    deferred: dict[str, tuple[int, int, str]] = {}
    outline_skeleton(text, skeleton(text, tree), scan(tree, name), name, everything, lambda w: True, set(), None, deferred)
    return deferred


def _project(text: str, defer: bool) -> Project:
    tree = ast.parse(text)
    name = module_name_for("app/recovery.py")[0]
    file_scan = scan(tree, name)
    args = (text, skeleton(text, tree), file_scan, name, set(file_scan.functions), lambda w: True, set())
    spans: dict[str, tuple[int, int, str]] = {}
    outlined = outline_skeleton(*args, None, spans if defer else None)
    project = Project(Vocabulary.build())
    module = project.add_module("app/recovery.py", cst.parse_module(outlined), text, context=True)
    bodies.defer_bodies(module, text, spans, None)
    # what CPython's screening saw, as the analyzer sets it before the project is finished
    project.calls = {q: fw.calls for q, fw in file_scan.functions.items()}
    project.words = {q: fw.words for q, fw in file_scan.functions.items()}
    project.finish()
    return project


def _functions(project: Project) -> dict[str, FunctionInfo]:
    return {fn.qualname: fn for fn in project.functions}


def test_only_bodies_that_add_nothing_to_the_index_are_deferred() -> None:
    deferred = _deferred(RECOVERY)
    # named as CPython spells them (NFKC: the fullwidth ``ｆetch`` is ``fetch``)
    assert set(deferred) == {
        "app.recovery.load_latest", "app.recovery.never_called", "app.recovery.fetch", "app.recovery.Store.summary"
    }
    lines = RECOVERY.split("\n")
    first, last, indent = deferred["app.recovery.load_latest"]
    assert (lines[first], lines[last], indent) == ('    """The newest checkpoint."""', "    return checkpoint", "    ")


def test_a_deferred_body_is_parsed_when_first_read_and_equals_the_whole_parse() -> None:
    whole = _functions(_project(RECOVERY, defer=False))
    lazy = _functions(_project(RECOVERY, defer=True))
    assert set(whole) == set(lazy)
    fn = next(f for q, f in lazy.items() if q.endswith("load_latest"))
    assert "node" not in vars(fn)  # not parsed yet
    header = fn.header
    assert isinstance(header, cst.FunctionDef) and header.name.value == "load_latest"
    assert [p.name.value for p in header.params.params] == ["folder"]
    assert "node" not in vars(fn)  # the header does not parse the body
    full = next(f for q, f in whole.items() if q.endswith("load_latest"))
    assert _statements(fn) == _statements(full)
    assert "node" in vars(fn) and fn.node is vars(fn)["node"]  # parsed once, then an attribute like any other
    assert not hasattr(fn, "no_such_field")
    assert not fn.is_module and fn.header is fn.node


def test_imports_in_a_deferred_body_count_for_the_module_at_once() -> None:
    whole = _project(RECOVERY, defer=False).modules[0]
    lazy = _project(RECOVERY, defer=True).modules[0]
    assert "Refused" in lazy.imports.aliases
    assert lazy.imports.aliases == whole.imports.aliases
    assert all("node" not in vars(fn) for fn in lazy.functions if fn.name in ("load_latest", "never_called"))


def test_a_body_read_later_has_the_lines_of_the_file() -> None:
    lazy = _project(RECOVERY, defer=True)
    module = lazy.modules[0]
    fn = next(f for f in module.functions if f.name == "load_latest")
    calls = [n for stmt in fn.body for n in _walk(stmt) if isinstance(n, cst.Call)]
    found = bodies.positions(module, tree_positions(module.tree, None), None)
    lines = RECOVERY.split("\n")
    shown = [lines[found[call].start.line - 1].strip() for call in calls]
    assert shown == [
        "store = CheckpointStore(folder)",
        'raise Refused("no store")',
        "checkpoint = store.latest()",
    ]
    assert lines[found[fn.node].start.line - 1] == "def load_latest(folder):"


def _walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    yield node
    for child in node.children:
        yield from _walk(child)


def test_a_body_libcst_refuses_keeps_its_blank() -> None:
    project = _project(RECOVERY, defer=True)
    module = project.modules[0]
    fn = next(f for f in module.functions if f.name == "never_called")
    stub = fn.header
    assert bodies._parse_body(module, stub, ["    return (", ""], (0, 1, "    "), None) is stub


def test_the_analysis_parses_only_what_the_checked_file_reaches(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[str] = []
    real = bodies._parse_body

    def recording(module, stub, lines, span, target):  # type: ignore[no-untyped-def]
        parsed.append(stub.name.value)
        return real(module, stub, lines, span, target)

    monkeypatch.setattr(bodies, "_parse_body", recording)
    analyzer = Analyzer(Vocabulary.build(), all_rules())
    found = analyzer.analyze([("app/agent.py", AGENT)], context=[("app/recovery.py", RECOVERY)])
    assert "load_latest" in parsed and "never_called" not in parsed
    analyzer.defer_context_bodies = False
    parsed.clear()
    assert analyzer.analyze([("app/agent.py", AGENT)], context=[("app/recovery.py", RECOVERY)]) == found
    assert parsed == []
    assert {f.code for f in found[0]} == {"SG101", "SG102", "SG103"}


def test_cached_import_lines_come_back_or_the_entry_is_a_miss() -> None:
    tree = ast.parse(RECOVERY)
    outline_of = skeleton(RECOVERY, tree)
    lines = RECOVERY.count("\n") + 1
    assert _skeleton_from_json(outline_of, lines) == outline_of  # as stored in this run
    data = json.loads(json.dumps(outline_of))  # as read back from the cache's file
    assert _skeleton_from_json(data, lines) == outline_of
    by_name = {item[1]: item for item in outline_of}
    assert by_name["load_latest"][5] and by_name["guarded_import"][5] is None and by_name["shared_line"][5] is None
    assert by_name["never_called"][5] == ()
    damaged = [list(item) for item in data]
    index = next(i for i, item in enumerate(data) if item[1] == "load_latest")
    for broken in ([[5]], [[9, 8]], [[0, lines]], "x", [["a", 1]]):
        damaged[index][5] = broken
        assert _skeleton_from_json(damaged, lines) is None


_REPO = Path(__file__).resolve().parents[2]
#: Modules of every shape this project writes itself: classes, closures, lazy imports,
#: ``try``/``except`` and ``match`` blocks, decorators, named lambdas.
_OWN_MODULES = sorted(p for folder in ("rules", "guard", "plugins") for p in (_REPO / folder).rglob("*.py"))


def _index(project: Project) -> tuple[object, ...]:
    module = project.modules[0]
    return (
        sorted((fn.qualname, fn.params, fn.decorators, fn.is_tool, fn.is_guarded) for fn in project.functions),
        module.imports.aliases,
        sorted(module.classes),
    )


@pytest.mark.parametrize("path", _OWN_MODULES, ids=lambda p: str(p.relative_to(_REPO)))
def test_deferring_changes_nothing_the_analysis_can_see(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    whole, lazy = _project(text, defer=False), _project(text, defer=True)
    assert _index(lazy) == _index(whole)
    for fn, full in zip(lazy.functions, whole.functions):
        if not fn.is_module:  # the same statements (comments before the first are not parsed again)
            assert _statements(fn) == _statements(full), fn.qualname


def _statements(fn: FunctionInfo) -> str:
    node = fn.node
    return ast.dump(ast.parse(cst.Module(body=[node]).code)) if isinstance(node, cst.FunctionDef) else ""


def test_a_name_cpython_normalizes_still_finds_its_body() -> None:
    fn = next(f for f in _project(RECOVERY, defer=True).functions if f.name == "ｆetch")
    # deferred under CPython's spelling (its module's tree holds the blank), found under libcst's
    stub = next(s for s in fn.module.tree.body if isinstance(s, cst.FunctionDef) and s.name.value == "ｆetch")
    assert "return" not in cst.Module(body=[stub]).code
    assert "return checkpoint.summary" in cst.Module(body=[fn.node]).code


RUNNER = """\
from summaryguard.guard import CheckpointStore


class Runner:
    def __init__(self, folder, agent):
        self.{attr} = CheckpointStore(folder)
        self.agent = agent

    def again(self):
        item = self.{attr}.latest()
        return self.agent.resume(item)
"""


@pytest.mark.parametrize("attr", ["box", "b" * 70, "ｂox"], ids=["plain", "longer-than-the-screening-keeps", "nfkc"])
def test_what_a_class_assigns_is_found_whatever_the_attribute_is_called(attr: str) -> None:
    analyzer = Analyzer(Vocabulary.build(), all_rules())
    findings, errors = analyzer.analyze([("app/runner.py", RUNNER.format(attr=attr))])
    assert not errors and {f.code for f in findings} == {"SG101", "SG102", "SG103"}


def test_two_modules_of_one_name_keep_both_functions_words() -> None:
    # folders without __init__.py: both modules are ``runner``, their functions share names
    other = "class Runner:\n    def __init__(self, checkpoint):\n        self.checkpoint = checkpoint\n\n\n" \
        "def describe(checkpoint):\n    return checkpoint.summary\n"
    checked = "from b.runner import describe\n" + RUNNER.format(attr="box").replace(
        "        return self.agent", "        describe(item)\n        return self.agent"
    )
    analyzer = Analyzer(Vocabulary.build(), all_rules())
    findings, errors = analyzer.analyze([("a/runner.py", checked)], context=[("b/runner.py", other)])
    assert not errors and {f.code for f in findings} == {"SG101", "SG102", "SG103"}
