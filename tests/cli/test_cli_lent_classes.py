"""Modules that lend their classes (Prefilter.may_lend, Analyzer.lent_facts) through the command line.

A factory module and a provider module that never mention a summary are screened
out, but they define classes, and one imports a model library while the other returns
instances of the classes it imports (a factory; their names say nothing): the compaction
that imports them is checked with them as context. The same findings whether the
importer is checked alone (pre-commit: the dependency finder loads them) or with
the whole tree (CI: they are files of the run, screened out, and context all the
same), with or without the result cache, and none at all when the classes call
no model (SPEC §3.1.1, locality). Real files, real runs of ``check_files``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from summaryguard.rules.cli.batch import check_files
from summaryguard.rules.cli.cache import CACHE_FOLDER, ResultCache
from summaryguard.rules.engine import Analyzer, Vocabulary, all_rules, expected_findings

FIXTURES = Path(__file__).parents[1] / "rules" / "fixtures"
ANALYZER = Analyzer(Vocabulary.build(), all_rules())


def _project(tmp_path: Path, folder: str) -> Path:
    root = tmp_path / "proj"
    shutil.copytree(FIXTURES / folder, root / "app")
    (root / "app" / "__init__.py").write_text("")
    return root


def _found(root: Path, files: list[str], cached: bool) -> tuple[set[tuple[str, int, str]], list[str]]:
    cache = ResultCache(root / CACHE_FOLDER, "settings") if cached else None
    batch = check_files([str(root / f) for f in files], ANALYZER, cache, jobs=1, root=root)
    assert batch.errors == []
    found = {(Path(f.path).name, f.line, f.code) for f in batch.findings}
    return found, sorted(Path(p).name for p in batch.context)


def _count_lenders_read(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the files whose lent facts this process reads from now on (in order)."""
    asked: list[str] = []
    lent_facts = ANALYZER.lent_facts

    def counting(path: str, text: str):  # type: ignore[no-untyped-def]
        asked.append(Path(path).name)
        return lent_facts(path, text)

    monkeypatch.setattr(ANALYZER, "lent_facts", counting)
    return asked


@pytest.mark.parametrize("cached", [False, True])
def test_the_importer_alone_and_the_whole_tree_see_the_lent_classes(tmp_path: Path, cached: bool) -> None:
    root = _project(tmp_path, "lent_factory")
    compaction = root / "app" / "compaction.py"
    expected = {("compaction.py", line, code) for line, code in expected_findings(compaction.read_text())}
    assert expected  # the fixture means what it says
    tree = sorted(str(p.relative_to(root)) for p in (root / "app").glob("*.py"))
    whole, whole_context = _found(root, tree, cached)
    alone, alone_context = _found(root, ["app/compaction.py"], cached)
    again, _ = _found(root, tree, cached)  # warm when cached: from the module records
    assert whole == alone == again == expected
    # the lenders are context in both runs, never reported
    assert whole_context == alone_context == ["clients.py", "providers.py"]


def test_a_warm_run_asks_no_lender_again_and_a_miss_still_sees_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whether a screened-out module lends is stored with the screen verdicts: a warm run
    parses no lender with CPython again (it did for every one, every run: 55% of a warm
    run over the real-code corpus). A run that must analyze again still finds their facts,
    from the cache as well."""
    root = _project(tmp_path, "lent_factory")
    compaction = root / "app" / "compaction.py"
    expected = {("compaction.py", line, code) for line, code in expected_findings(compaction.read_text())}
    cold, cold_context = _found(root, ["app/compaction.py"], cached=True)
    asked = _count_lenders_read(monkeypatch)
    warm, warm_context = _found(root, ["app/compaction.py"], cached=True)
    assert (warm, warm_context, asked) == (cold, cold_context, []) and warm == expected
    compaction.write_text(compaction.read_text() + "\n\n# edited\n")  # a miss: analyzed again
    edited, edited_context = _found(root, ["app/compaction.py"], cached=True)
    assert (edited, edited_context) == (expected, cold_context)
    assert asked == []  # their facts come from the cache too (facts.json): still seen, never parsed again


def test_a_warm_run_of_the_whole_tree_scans_no_text_and_still_sees_the_lenders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the run asks of a checked file's text besides its verdict (may it lend, may it
    hold a suppression comment: batch.scan_marks) is stored with the verdict: a warm run of
    the whole tree asks neither again, and the lenders are still its context. A file edited
    is asked again, alone."""
    from summaryguard.rules.cli import batch as batch_module
    from summaryguard.rules.engine.prefilter import Prefilter

    root = _project(tmp_path, "lent_factory")
    tree = sorted(str(p.relative_to(root)) for p in (root / "app").glob("*.py"))
    cold, cold_context = _found(root, tree, cached=True)
    scanned: list[str] = []
    scan_marks = batch_module.scan_marks

    def counting(text: str, screened_in: bool) -> int:
        scanned.append(text)
        return scan_marks(text, screened_in)

    monkeypatch.setattr(batch_module, "scan_marks", counting)
    lends = Prefilter.lends_by_text
    monkeypatch.setattr(Prefilter, "lends_by_text", staticmethod(lambda text: scanned.append(text) or lends(text)))
    warm, warm_context = _found(root, tree, cached=True)
    assert (warm, warm_context, scanned) == (cold, cold_context, [])
    assert cold_context == ["clients.py", "providers.py"] and cold
    providers = root / "app" / "providers.py"
    providers.write_text(providers.read_text() + "\n# edited\n")
    edited, edited_context = _found(root, tree, cached=True)
    assert (edited, edited_context) == (cold, cold_context)
    assert scanned and set(scanned) == {providers.read_text()}  # the edited text alone


def test_classes_that_call_no_model_lend_no_summarizer(tmp_path: Path) -> None:
    root = _project(tmp_path, "lent_factory_no_model")
    tree = sorted(str(p.relative_to(root)) for p in (root / "app").glob("*.py"))
    whole, context = _found(root, tree, cached=False)
    alone, _ = _found(root, ["app/compaction.py"], cached=False)
    assert whole == alone == set()
    # the factory returns instances of classes it imports; client_kinds.py imports no model library
    assert context == ["client_factory.py"]


def test_a_factory_lends_by_what_it_returns_not_by_its_name(tmp_path: Path) -> None:
    root = _project(tmp_path, "lent_factory")
    clients = root / "app" / "clients.py"
    clients.write_text(clients.read_text().replace("LLMClients", "Makers").replace("llm_config", "settings"))
    compaction = root / "app" / "compaction.py"
    compaction.write_text(compaction.read_text().replace("LLMClients", "Makers"))
    found, context = _found(root, ["app/compaction.py"], cached=False)
    assert context == ["clients.py", "providers.py"]
    assert found == {("compaction.py", line, code) for line, code in expected_findings(compaction.read_text())}


def test_a_module_screened_out_that_builds_nothing_it_imports_and_names_no_model_is_not_context(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path, "lent_factory")
    providers = root / "app" / "providers.py"
    providers.write_text(providers.read_text().replace("import openai", "import json").replace("openai.OpenAI", "json.JSONEncoder"))
    clients = root / "app" / "clients.py"
    # the factory now returns what a call of its own hands back, not an imported class's instance
    clients.write_text(
        clients.read_text()
        .replace("return HostedClient(llm_config)", "return _made(HostedClient, llm_config)")
        .replace("return LocalClient(llm_config)", "return _made(LocalClient, llm_config)")
        + "\n\ndef _made(kind, config):\n    return kind.__new__(kind)\n"
    )
    _, context = _found(root, ["app/compaction.py"], cached=False)
    assert context == []


def test_a_package_init_that_re_exports_a_client_is_context(tmp_path: Path) -> None:
    """``from .clients import Engine`` names the class through the package's ``__init__``, which
    mentions no model: it is context all the same, and the module it re-exports from lends
    its class (it imports a model library), so the declared field's calls run a model."""
    root = tmp_path / "proj"
    clients = root / "app" / "clients"
    clients.mkdir(parents=True)
    (root / "app" / "__init__.py").write_text("")
    (clients / "__init__.py").write_text('from .engine import Engine\n\n__all__ = ["Engine"]\n')
    (clients / "engine.py").write_text(
        "import openai\n\n\nclass Engine:\n    def ask(self, messages):\n"
        "        reply = openai.OpenAI().chat.completions.create(model='small', messages=messages)\n"
        "        return reply.choices[0].message.content\n"
    )
    compaction = root / "app" / "condense.py"
    compaction.write_text(
        "from dataclasses import dataclass\n\nfrom .clients import Engine\n\n\n@dataclass\nclass Condenser:\n"
        "    engine: Engine\n\n    def condense(self, history, store):\n"
        "        text = self.engine.ask([{'role': 'system', 'content': 'Condense the history below.'}, *history])\n"
        "        note = {'summary': text, 'kept': history[-1:]}  # expect: SG301, SG302\n"
        "        store.put(note)\n        return note\n"
    )
    expected = {("condense.py", line, code) for line, code in expected_findings(compaction.read_text())}
    tree = sorted(str(p.relative_to(root)) for p in (root / "app").rglob("*.py"))
    alone, alone_context = _found(root, ["app/condense.py"], cached=False)
    whole, whole_context = _found(root, tree, cached=False)
    assert alone == whole == expected
    assert alone_context == whole_context == ["__init__.py", "engine.py"]


@pytest.mark.parametrize("cached", [False, True])
def test_what_the_lenders_lend_is_read_in_the_pool_when_there_is_much_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cached: bool
) -> None:
    """Past ``SERIAL_SCREEN_CHARS`` of lenders to read (here: any), ``--jobs 2`` reads them
    in worker processes, not in this one, and finds what one process finds."""
    from summaryguard.rules.cli import batch as batch_module

    root = _project(tmp_path, "lent_factory")
    compaction = root / "app" / "compaction.py"
    expected = {("compaction.py", line, code) for line, code in expected_findings(compaction.read_text())}
    asked = _count_lenders_read(monkeypatch)
    monkeypatch.setattr(batch_module, "SERIAL_SCREEN_CHARS", 0)
    cache = ResultCache(root / CACHE_FOLDER, "settings") if cached else None
    pooled = check_files([str(compaction)], ANALYZER, cache, jobs=2, root=root)
    assert pooled.warnings == [] and asked == []  # none read here: the workers read them
    assert {(Path(f.path).name, f.line, f.code) for f in pooled.findings} == expected
    assert sorted(Path(p).name for p in pooled.context) == ["clients.py", "providers.py"]
    serial = check_files([str(compaction)], ANALYZER, None, jobs=1, root=root)
    assert sorted(asked) == ["clients.py", "providers.py"]  # one process: read here
    assert (serial.findings, serial.errors, serial.context) == (pooled.findings, pooled.errors, pooled.context)


def test_lenders_read_where_no_pool_can_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from summaryguard.rules.cli import batch as batch_module
    from summaryguard.rules.cli import workers as workers_module

    def no_pool() -> object:
        raise OSError("no semaphores here")

    root = _project(tmp_path, "lent_factory")
    compaction = root / "app" / "compaction.py"
    monkeypatch.setattr(batch_module, "SERIAL_SCREEN_CHARS", 0)
    monkeypatch.setattr(workers_module, "_context", no_pool)
    found = check_files([str(compaction)], ANALYZER, None, jobs=2, root=root)
    assert any("could not start (OSError: no semaphores here)" in w for w in found.warnings)
    assert {(Path(f.path).name, f.line, f.code) for f in found.findings} == {
        ("compaction.py", line, code) for line, code in expected_findings(compaction.read_text())
    }
