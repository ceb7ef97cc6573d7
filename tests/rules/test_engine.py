"""The engine's contract: error paths, pre-filter, vocabulary, ordering."""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest

from summaryguard.plugins import hookimpl, register, unregister
from summaryguard.rules.engine import Analyzer, FileError, Finding, LintRule, Vocabulary, all_rules
from summaryguard.rules.engine.names import ImportTable, imported_modules, module_location, module_name_for
from summaryguard.rules.engine.vocabulary import NameMatcher

UNCHECKED = textwrap.dedent(
    """
    def recover(checkpoint):
        summary = checkpoint.summary
        return checkpoint.resume_context()
    """
)


@pytest.fixture(scope="module")
def analyzer() -> Analyzer:
    return Analyzer(Vocabulary.build(), all_rules())


def test_syntax_error_is_a_file_error_and_others_go_on(analyzer: Analyzer) -> None:
    findings, errors = analyzer.analyze([("bad.py", "checkpoint.resume(summary\n"), ("good.py", UNCHECKED)])
    assert [(e.path, e.line) for e in errors] == [("bad.py", 1)]
    assert errors[0].message.startswith("syntax error: ")
    assert {f.path for f in findings} == {"good.py"}


def test_deep_nesting_is_a_file_error(analyzer: Analyzer) -> None:
    deep = "summary = checkpoint.resume(" + "[" * 3000 + "]" * 3000 + ")\n"
    findings, errors = analyzer.analyze([("deep.py", deep), ("good.py", UNCHECKED)])
    assert [e.path for e in errors] == ["deep.py"]
    assert "nested" in errors[0].message or "syntax" in errors[0].message
    assert {f.path for f in findings} == {"good.py"}


def test_long_chains_are_a_file_error_not_a_stall(analyzer: Analyzer) -> None:
    chain = "summary = checkpoint.resume(" + " + ".join(["a"] * 600) + ")\n"
    findings, errors = analyzer.analyze([("chain.py", chain)])
    assert findings == []
    assert [(e.path, e.line) for e in errors] == [("chain.py", None)]
    assert "too deeply nested" in errors[0].message


def test_null_bytes_are_a_file_error(analyzer: Analyzer) -> None:
    _, errors = analyzer.analyze([("nul.py", "summary = 1\0\ncheckpoint.resume(summary)\n")])
    assert [e.path for e in errors] == ["nul.py"]


def test_recursion_in_metadata_is_a_file_error(monkeypatch: pytest.MonkeyPatch, analyzer: Analyzer) -> None:
    from summaryguard.rules.engine import analyzer as module
    from summaryguard.rules.engine import positions

    class Wrapper:
        def __init__(self, *args, **kwargs):
            pass

        def visit_batched(self, visitors):
            raise RecursionError("deep")

        def resolve(self, provider):  # the positions of facts' findings come from the same metadata
            raise RecursionError("deep")

    monkeypatch.setattr(module, "MetadataWrapper", Wrapper)
    monkeypatch.setattr(positions, "MetadataWrapper", Wrapper)  # positions, converted trees' too
    findings, errors = analyzer.analyze([("a.py", UNCHECKED)])
    assert findings == [] and [e.path for e in errors] == ["a.py"]
    assert "too deeply nested" in errors[0].message


def test_stdlib_pydoc_topics_never_crashes(analyzer: Analyzer) -> None:
    """Docs about resumes and summaries pass the text scan, not the code-word gate."""
    import pydoc_data.topics

    with open(pydoc_data.topics.__file__, encoding="utf-8") as handle:
        text = handle.read()
    assert analyzer.might_matter(text)
    assert analyzer.analyze([("topics.py", text)]) == ([], [])


_DEEP_CONCATENATION = "".join(f'        "s{i}"\n' for i in range(1200))


def test_long_implicit_concatenation_is_a_file_error(analyzer: Analyzer) -> None:
    """The shape that makes libcst's metadata recurse too deeply (as in pydoc_data/topics.py),
    in the statement a finding is placed in."""
    source = "def f(checkpoint):\n    summary = checkpoint.summary\n    return checkpoint.resume_context(\n" \
        f"{_DEEP_CONCATENATION}    )\n"
    findings, errors = analyzer.analyze([("concat.py", source), ("good.py", UNCHECKED)])
    assert [(e.path, e.message) for e in errors] == [("concat.py", "too deeply nested to analyze "
                                                      "(Python's recursion limit was reached)")]
    assert {f.path for f in findings} == {"good.py"}


def test_long_implicit_concatenation_elsewhere_in_the_function_leaves_its_findings(analyzer: Analyzer) -> None:
    """Positions are read from the finding's own statement: a statement libcst's metadata
    cannot walk, elsewhere in the same function, no longer costs the file its findings."""
    source = f"def f(checkpoint):\n    summary = checkpoint.summary\n    x = (\n{_DEEP_CONCATENATION}    )\n" \
        "    return checkpoint.resume_context()\n"
    findings, errors = analyzer.analyze([("concat.py", source)])
    assert errors == []
    assert {(f.code, f.line) for f in findings} == {("SG101", 1205), ("SG102", 1205), ("SG103", 1205)}


class _Exploding(LintRule):
    """## What it does"""

    code = "XT999"
    name = "always-explodes"
    USES_MODEL = False

    def visit_Call(self, node: cst.Call) -> None:
        raise ValueError("boom")


def test_a_failing_rule_is_reported_per_file_and_other_rules_go_on() -> None:
    analyzer = Analyzer(Vocabulary.build(), [*all_rules(), _Exploding])
    findings, errors = analyzer.analyze([("a.py", UNCHECKED), ("b.py", UNCHECKED)])
    assert [(e.path, e.line) for e in errors] == [("a.py", None), ("b.py", None)]
    assert errors[0].message == "internal error in XT999: ValueError: boom"
    assert sorted({(f.path, f.code) for f in findings}) == [
        (p, c) for p in ("a.py", "b.py") for c in ("SG101", "SG102", "SG103")
    ]


def test_a_failing_analysis_is_a_file_error(monkeypatch: pytest.MonkeyPatch, analyzer: Analyzer) -> None:
    from summaryguard.rules.engine import solver

    def explode(*args, **kwargs):
        raise KeyError("bad")

    monkeypatch.setattr(solver, "rederivations", explode)
    findings, errors = analyzer.analyze([("a.py", UNCHECKED)])
    assert findings == []
    assert errors and errors[0].path == "a.py" and "internal error in the analysis" in errors[0].message


def test_findings_are_sorted_and_positioned(analyzer: Analyzer) -> None:
    findings, _ = analyzer.analyze([("z.py", UNCHECKED), ("a.py", UNCHECKED)])
    assert findings == sorted(findings, key=lambda f: (f.path, f.line, f.column, f.code))
    first = findings[0]
    assert isinstance(first, Finding)
    assert (first.path, first.line, first.column, first.end_line, first.end_column) == ("a.py", 4, 12, 4, 39)
    assert first.name == "resume-without-generation-check"


def test_unparsed_and_irrelevant_files(analyzer: Analyzer) -> None:
    assert analyzer.analyze([("plain.py", "def f(x):\n    return x + 1\n")]) == ([], [])
    assert analyzer.analyze([]) == ([], [])
    assert FileError("a.py", None, "x").line is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("import os\nprint(os.getcwd())\n", False),
        ('"""A summary of this module."""\n', False),
        ("def resume(task): task.send(None)\n", False),
        ("except SummaryReconciliationError:\n", True),
        ("summary = x\ncheckpoint.resume_context()\n", True),
        ("ctx.resume(summary)\n", True),
        ("summary = load()\nCheckpoint.from_dict(x)\n", True),
        ("summary.generation\nckpt = 1\n", True),
        ("search_tool(x)\nrestored = 1\n", True),
        ("search_tool(x)\n", False),
        # a framework's own words next to one of its summarizers: its model says both
        ("from langgraph.graph import StateGraph\nx = RunningSummary()\n", True),
        ("from langgraph.graph import StateGraph\n", False),
        ("x = RunningSummary()\n", False),
    ],
)
def test_prefilter_needs_co_occurring_evidence(analyzer: Analyzer, text: str, expected: bool) -> None:
    assert analyzer.might_matter(text) is expected


def test_configured_names_reach_prefilter_and_analysis() -> None:
    vocabulary = Vocabulary.build(resume_calls=["myapp.agent.rehydrate_all"], validators=["myapp.recovery.vet"])
    analyzer = Analyzer(vocabulary, all_rules())
    source = "from myapp.agent import rehydrate_all\n\ndef go(state):\n    return rehydrate_all(state)\n"
    assert analyzer.might_matter(source) is False  # a resume word alone is not evidence
    source = "from myapp.agent import rehydrate_all\n\ndef go(summary):\n    return rehydrate_all(summary)\n"
    findings, _ = analyzer.analyze([("a.py", source)])
    assert {f.code for f in findings} == {"SG101", "SG102", "SG103"}
    checked = "from myapp.recovery import vet\n" + source.replace("    return", "    vet(summary)\n    return")
    assert analyzer.analyze([("a.py", checked)]) == ([], [])


def test_vocabulary_merges_plugins_and_reports_problems() -> None:
    class Plugin:
        @hookimpl
        def summaryguard_vocabulary(self):
            return {"tool-calls": "myapp.tools.*", "no-such-category": ["x"], "resume-calls": ["ok.resume", "bad\n", 3]}

    class Broken:
        @hookimpl
        def summaryguard_vocabulary(self):
            return ["not", "a", "mapping"]

    register(Plugin(), name="vocab-test")
    register(Broken(), name="vocab-broken")
    try:
        vocabulary = Vocabulary.build(tool_calls=["*.invoke"])
        assert vocabulary.matches("tool-calls", "myapp.tools.search")
        assert vocabulary.matches("tool-calls", "client.invoke")
        assert not vocabulary.matches("tool-calls", "myapp.other")
        assert any("no-such-category" in p for p in vocabulary.problems)
        assert any("mapping" in p for p in vocabulary.problems)
        # an entry that is not a name pattern (a line break, not a string) is left out and said
        assert "ok.resume" in vocabulary.entries["resume-calls"]
        assert not any("bad" in n or n == "3" for n in vocabulary.entries["resume-calls"])
        assert any("'bad\\n'" in p and "resume-calls" in p for p in vocabulary.problems)
        assert any(p.startswith("plugin vocabulary entry 3 ") for p in vocabulary.problems)
        assert not Vocabulary.build(use_plugins=False).matches("tool-calls", "myapp.tools.search")
        assert vocabulary.fingerprint() != Vocabulary.build(use_plugins=False).fingerprint()
    finally:
        unregister(name="vocab-test")
        unregister(name="vocab-broken")


def test_failing_vocabulary_plugin_costs_only_its_vocabulary() -> None:
    class Failing:
        @hookimpl
        def summaryguard_vocabulary(self):
            raise RuntimeError("nope")

    register(Failing(), name="vocab-failing")
    try:
        vocabulary = Vocabulary.build()
        assert any("nope" in p for p in vocabulary.problems)
        assert vocabulary.matches("validators", "summaryguard.guard.check_resume")
    finally:
        unregister(name="vocab-failing")


def test_name_matcher_globs() -> None:
    matcher = NameMatcher(["*.resume_context", "fetch_*"])
    assert matcher("a.b.resume_context") and matcher("x.fetch_one") and matcher("fetch_all")
    assert not matcher("resume_context") and not matcher(None) and not matcher("")
    assert bool(matcher) and not NameMatcher([])


@pytest.mark.parametrize(
    ("files", "path", "module", "package"),
    [
        (["src/app/__init__.py", "src/app/loop.py"], "src/app/loop.py", "app.loop", False),
        (["app/__init__.py"], "app/__init__.py", "app", True),
        (["app/__init__.py", "app/sub/__init__.py", "app/sub/x.pyi"], "app/sub/x.pyi", "app.sub.x", False),
        (["scripts/run.py"], "scripts/run.py", "run", False),  # a plain folder is not a package
        (["app/__init__.py", "app/plain/loop.py"], "app/plain/loop.py", "loop", False),
    ],
)
def test_module_names_come_from_the_packages_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: list[str], path: str, module: str, package: bool
) -> None:
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    monkeypatch.chdir(tmp_path)
    assert module_name_for(path) == (module, package)
    assert module_name_for("./" + path) == (module, package)
    assert module_name_for(str(tmp_path / path)) == (module, package)
    monkeypatch.chdir((tmp_path / path).parent)  # the folder a run starts from changes nothing
    assert module_name_for(Path(path).name) == (module, package)
    assert module_location(Path(path).name) == module_location(str(tmp_path / path))
    assert module_location(str(tmp_path / path)).endswith(path.rsplit(".", 1)[0].replace("/", ".").removesuffix(".__init__"))


def test_module_names_without_a_file() -> None:
    assert module_name_for("") == ("__main__", False)
    assert module_name_for("no/such/folder/mod.py") == ("mod", False)
    assert module_location("no/such/folder/mod.py").endswith(".no.such.folder.mod")


def test_relative_imports_resolve() -> None:
    table = ImportTable("pkg.sub.loop", False)
    table.add(cst.parse_statement("from ..recovery import verify as v").body[0])
    table.add(cst.parse_statement("from . import recovery").body[0])
    table.add(cst.parse_statement("import a.b.c").body[0])
    table.add(cst.parse_statement("import x.y as z").body[0])
    table.add(cst.parse_statement("from m import *").body[0])
    assert table.aliases["v"] == "pkg.recovery.verify"
    assert table.aliases["recovery"] == "pkg.sub.recovery"
    assert table.qualify_name("a.b.c.d") == "a.b.c.d"
    assert table.qualify_name("z.w") == "x.y.w"
    assert table.qualify(cst.parse_expression("f()")) == "f.()"  # a call in the chain: never a known name


RECOVERY = textwrap.dedent(
    """
    from summaryguard.guard import SummaryReconciliationError

    def verify(checkpoint, deps):
        summary = checkpoint.summary
        if summary is None or summary.generation != checkpoint.summary_generation:
            raise SummaryReconciliationError("generation")
        if summary.partial:
            raise SummaryReconciliationError("partial")
        for dep in deps:
            if dep not in summary.verbatim_refs:
                raise SummaryReconciliationError("missing")

    def careless(checkpoint, agent):
        return agent.resume(checkpoint.summary)
    """
)
IMPORTER = textwrap.dedent(
    """
    from app.recovery import verify

    def recover(store, agent, deps):
        checkpoint = store.load()
        verify(checkpoint, deps)
        return agent.resume(checkpoint.summary, checkpoint.turn)
    """
)


def test_context_modules_lend_their_facts_and_report_nothing(analyzer: Analyzer) -> None:
    alone = analyzer.analyze([("app/agent.py", IMPORTER)])
    assert {f.code for f in alone[0]} == {"SG101", "SG102", "SG103"}
    assert analyzer.analyze([("app/agent.py", IMPORTER)], context=[("app/recovery.py", RECOVERY)]) == ([], [])
    together = analyzer.analyze([("app/agent.py", IMPORTER), ("app/recovery.py", RECOVERY)])
    assert {(f.path, f.code) for f in together[0]} == {("app/recovery.py", c) for c in ("SG101", "SG102", "SG103")}
    broken = [
        ("app/recovery.py", "def verify(checkpoint:\n    summary = 1\n"),
        ("app/deep.py", "summary = checkpoint\n" + "(" * 300 + ")" * 300),
    ]
    assert analyzer.analyze([("app/agent.py", IMPORTER)], context=broken) == alone


def test_namespace_packages_resolve_from_any_folder(
    analyzer: Analyzer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = tmp_path / "app"  # no __init__.py: a namespace package, imported as ``app.recovery``
    app.mkdir()
    (app / "recovery.py").write_text(RECOVERY)
    (app / "agent.py").write_text(IMPORTER)
    for cwd, prefix in ((tmp_path, "app/"), (app, "")):
        monkeypatch.chdir(cwd)
        findings, errors = analyzer.analyze([(f"{prefix}agent.py", IMPORTER), (f"{prefix}recovery.py", RECOVERY)])
        assert errors == [] and {(f.path, f.code) for f in findings} == {
            (f"{prefix}recovery.py", c) for c in ("SG101", "SG102", "SG103")
        }


def test_imported_modules_lists_what_an_import_may_load() -> None:
    import ast

    tree = ast.parse(
        "import a.b, c as d\nfrom e import f, g as h\nfrom . import i\nfrom ..j import k\nfrom l import *\n"
        "def fn():\n    try:\n        import m\n    except ImportError:\n        from n import o\n"
    )
    assert set(imported_modules(tree)) == {".", ".i", "..j", "..j.k", "a.b", "c", "e", "e.f", "e.g", "l", "m", "n", "n.o"}


def test_a_soft_validator_of_another_module_is_reported_at_its_call() -> None:
    """SG104 belongs to the file that relies on the soft check (locality); the trace
    points at the check inside the validator."""
    validator = textwrap.dedent(
        """
        def lenient(checkpoint):
            assert checkpoint.summary.generation == checkpoint.summary_generation
        """
    ).lstrip("\n")
    caller = textwrap.dedent(
        """
        from checks import lenient


        def go(checkpoint, agent, deps):
            lenient(checkpoint)
            if checkpoint.summary.partial:
                raise RuntimeError("partial")
            for ref in deps:
                if ref not in checkpoint.summary.verbatim_refs:
                    raise RuntimeError(ref)
            return agent.resume(checkpoint.summary)
        """
    ).lstrip("\n")
    analyzer = Analyzer(Vocabulary.build(), all_rules())
    findings, errors = analyzer.analyze([("checks.py", validator), ("agent.py", caller)])
    assert errors == []
    assert [(f.path, f.line, f.code) for f in findings] == [("agent.py", 5, "SG104")]
    (finding,) = findings
    assert "`lenient()` checks it softly" in finding.message
    assert ("checks.py", 2) in [(s.path, s.line) for s in finding.trace]
    alone, _ = analyzer.analyze([("checks.py", validator)])
    assert alone == []
