"""The result cache and parallel screening of ``summaryguard check`` (rules/cache.py, rules/batch.py).

Behaviour only, no timings (speed is measured by tests/benchmarks/bench_check_corpus.py).
A cache hit is proven by what the run reports: an entry rewritten on disk is
what a hit prints, and what a miss never prints.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from summaryguard.rules.cli import cache as cache_module
from summaryguard.rules.cli.batch import check_files
from summaryguard.rules.cli.cache import CACHE_DIR_ENV, CACHE_FOLDER, ResultCache, settings_key
from summaryguard.rules.cli import main
from summaryguard.rules.engine import Analyzer, Vocabulary, all_rules

FIXTURES = Path(__file__).parents[1] / "rules" / "fixtures"

AGENT = """\
def next_turn(checkpoint):
    ctx = checkpoint.resume_context()
    handle = ctx.get("handle") or search("latest")
    return handle


from summaryguard.guard import tool_guard  # noqa: E402  (below, so the lines above keep their numbers)


@tool_guard
def search(query):
    return query
"""
PLAIN = "def add(a, b):\n    return a + b\n"


@pytest.fixture
def project(cached_project: Path) -> Path:
    return cached_project


def copy_multimodule(root: Path) -> Path:
    target = root / "app"
    shutil.copytree(FIXTURES / "multimodule", target)
    return target


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    status = main(["check", "--format", "json", *argv])
    report = json.loads(capsys.readouterr().out)
    report["stats"].pop("seconds")
    return status, report


def project_entries(root: Path) -> list[Path]:
    """The module records' documents (one per settings folder, see rules/cli/records.py)."""
    return sorted((root / CACHE_FOLDER).glob("*/modules.json"))


def poison(root: Path, message: str) -> None:
    """Rewrite every module record so that each finding carries ``message``."""
    entries = project_entries(root)
    assert entries
    for entry in entries:
        document = json.loads(entry.read_text())
        assert document["entries"]
        for record in document["entries"].values():
            for row in record[0]:
                row[7] = message
        entry.write_text(json.dumps(document))


def messages(report: dict) -> set[str]:  # type: ignore[type-arg]
    return {f["message"] for f in report["findings"]}


# -- hits, misses, invalidation -----------------------------------------------------------


def test_a_second_run_is_served_from_the_cache(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "agent.py").write_text(AGENT)
    first = run(capsys)
    assert first[0] == 1
    assert (project / CACHE_FOLDER / "CACHEDIR.TAG").is_file()
    assert (project / CACHE_FOLDER / ".gitignore").read_text().strip().endswith("*")
    assert run(capsys) == first
    poison(project, "from the cache")
    assert messages(run(capsys)[1]) == {"from the cache"}


def test_no_cache_neither_reads_nor_writes(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "agent.py").write_text(AGENT)
    first = run(capsys, "--no-cache")
    assert not (project / CACHE_FOLDER).exists()
    run(capsys)
    poison(project, "from the cache")
    assert run(capsys, "--no-cache") == first


def test_a_changed_file_is_analyzed_again(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    agent = project / "agent.py"
    agent.write_text(AGENT)
    run(capsys)
    poison(project, "stale")
    agent.write_text(AGENT.replace('"latest"', '"newest"'))
    status, report = run(capsys)
    assert status == 1 and "stale" not in messages(report)
    agent.write_text(PLAIN)
    assert run(capsys)[0] == 0


def test_a_changed_configuration_is_never_served_stale(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "agent.py").write_text(AGENT)
    run(capsys)
    poison(project, "stale")
    (project / "pyproject.toml").write_text('[tool.summaryguard]\nvalidators = ["myapp.verify"]\n')
    assert "stale" not in messages(run(capsys)[1])
    (project / "pyproject.toml").write_text('[tool.summaryguard]\nselect = ["SG201"]\n')
    status, report = run(capsys)
    assert [f["code"] for f in report["findings"]] == ["SG201"]


def test_a_changed_rule_selection_is_never_served_stale(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "agent.py").write_text(AGENT)
    everything = run(capsys)
    assert {f["code"] for f in everything[1]["findings"]} == {"SG101", "SG102", "SG103", "SG201"}
    assert [f["code"] for f in run(capsys, "--select", "SG201")[1]["findings"]] == ["SG201"]
    assert [f["code"] for f in run(capsys, "--ignore", "SG2")[1]["findings"]] == ["SG101", "SG102", "SG103"]
    assert run(capsys) == everything


def test_the_settings_key_covers_version_rules_vocabulary_and_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    rules = all_rules()
    base = dict(rules=rules, vocabulary_fingerprint="v", config_text="", config_path="")
    key = settings_key(**base)
    assert settings_key(**base) == key
    assert settings_key(**{**base, "rules": rules[1:]}) != key
    assert settings_key(**{**base, "vocabulary_fingerprint": "w"}) != key
    assert settings_key(**{**base, "config_text": "[tool.summaryguard]\nselect=['SG1']"}) != key
    assert settings_key(**{**base, "config_path": "/elsewhere/pyproject.toml"}) != key

    class Revised(rules[0]):  # type: ignore[misc, valid-type]
        VERSION = "2"

    assert settings_key(**{**base, "rules": [Revised, *rules[1:]]}) != key
    monkeypatch.setattr(cache_module, "_package_version", lambda package: "__version__ = '999.0'")
    assert settings_key(**base) != key  # another libcst


def test_the_settings_key_names_shipped_rules_by_their_codes_and_needs_one_naming() -> None:
    """Where every rule ships with summaryguard, the key names the selected codes (their
    modules are stamped with every file of the package); the classes otherwise. One of the
    two, never both or neither."""
    base = dict(vocabulary_fingerprint="v", config_text="", config_path="")
    key = settings_key(rule_codes={"SG101", "SG201"}, **base)
    assert settings_key(rule_codes=["SG201", "SG101"], **base) == key
    assert settings_key(rule_codes={"SG101"}, **base) != key
    assert settings_key(rules=[r for r in all_rules() if r.code in ("SG101", "SG201")], **base) != key
    for neither_or_both in ({}, {"rules": all_rules(), "rule_codes": {"SG101"}}):
        with pytest.raises(TypeError, match="exactly one"):
            settings_key(**neither_or_both, **base)


def test_an_edit_anywhere_in_the_rules_or_a_room_is_never_served_stale(tmp_path: Path) -> None:
    """What a run's rules are is decided beyond the files of their classes: a room's
    ``rules()`` lists them. A copy of summaryguard whose LangGraph room stops listing SG203:
    the cached findings of SG203 are not served again."""
    import os
    import subprocess
    import sys

    import summaryguard.rules

    source = tmp_path / "src" / "summaryguard"
    for part in ("guard", "plugins", "rules"):
        original = Path(summaryguard.rules.__path__[0]).parent / part
        shutil.copytree(original, source / part, ignore=shutil.ignore_patterns("__pycache__"))
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.summaryguard]\n")
    shutil.copy(FIXTURES / "langgraph_interrupts.py", project / "graph.py")
    env = {**os.environ, "PYTHONPATH": str(source.parent), CACHE_DIR_ENV: str(tmp_path / "cache")}
    script = (
        "import sys, summaryguard.rules as r\n"
        "from summaryguard.rules.cli import main\n"
        "status = main(['check', '--format', 'json', '--select', 'SG203', *sys.argv[1:], '.'])\n"
        "print(r.__path__[0])\n"
    )

    def codes(*options: str) -> list[str]:
        proc = subprocess.run(
            [sys.executable, "-c", script, *options], cwd=project, env=env, capture_output=True, text=True, timeout=120
        )
        report, where = proc.stdout.rsplit("\n", 2)[:2]
        assert where == str(source / "rules"), proc.stderr  # the copy runs, not the installed package
        return [f["code"] for f in json.loads(report)["findings"]]

    assert codes() == codes() and "SG203" in codes()  # cold, then warm
    rules_list = source / "plugins" / "langgraph" / "rules" / "__init__.py"
    rules_list.write_text(rules_list.read_text().replace("return [ToolCallBeforeInterrupt]", "return []"))
    assert codes() == codes("--no-cache") == []


def test_the_stamp_of_a_package_tree_follows_links_once_and_says_where_it_is(tmp_path: Path) -> None:
    """Every .py file below the folder, a linked folder's included (a room kept in a checkout
    of its own), a link cycle walked once, dot folders and __pycache__ left out; the folder
    itself heads the list, so two installs whose files share sizes and dates differ."""
    import os

    def tree(root: Path) -> Path:
        (root / "room" / "rules").mkdir(parents=True)
        (root / "room" / "rules" / "__init__.py").write_text("RULES = 1\n")
        (root / "__init__.py").write_text("")
        for skipped in ("__pycache__", ".hidden"):
            (root / skipped).mkdir()
            (root / skipped / "stale.py").write_text("")
        return root

    top = tree(tmp_path / "a")
    elsewhere = tmp_path / "checkout" / "linked"
    elsewhere.mkdir(parents=True)
    (elsewhere / "model.py").write_text("X = 1\n")
    os.symlink(elsewhere, top / "linked")
    os.symlink(top, top / "room" / "loop")  # a cycle
    stamp = cache_module._tree_stamp("pkg", str(top))
    assert stamp[0] == ["pkg", os.path.realpath(top)]
    assert [entry[1] for entry in stamp[1:]] == ["__init__.py", "linked/model.py", "room/rules/__init__.py"]
    before = stamp
    (elsewhere / "model.py").write_text("X = 2\n")
    assert cache_module._tree_stamp("pkg", str(top)) != before  # an edit behind the link is seen
    twin = tree(tmp_path / "b")
    os.symlink(elsewhere, twin / "linked")
    for folder in (top, twin):  # same sizes, same dates: only the folder tells them apart
        for path in folder.rglob("*.py"):
            os.utime(path, ns=(1, 1), follow_symlinks=True)
    assert cache_module._tree_stamp("pkg", str(top))[1:] == cache_module._tree_stamp("pkg", str(twin))[1:]
    assert cache_module._tree_stamp("pkg", str(top)) != cache_module._tree_stamp("pkg", str(twin))
    assert cache_module._tree_stamp("pkg", str(tmp_path / "missing.zip")) == []  # no files: the version is keyed


def test_a_plugin_rule_is_keyed_by_its_bases_modules_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rule from outside summaryguard may inherit what it decides: the key stamps the module
    of every class it derives from, so an edit there is never served stale."""
    import sys
    import types

    base_file, rule_file = tmp_path / "plugin_base.py", tmp_path / "plugin_rule.py"
    base_file.write_text("class Base:\n    pass\n")
    rule_file.write_text("class Rule:\n    pass\n")
    for name, file in (("plugin_base", base_file), ("plugin_rule", rule_file)):
        module = types.ModuleType(name)
        module.__file__ = str(file)
        monkeypatch.setitem(sys.modules, name, module)
    Base = type("Base", (), {"__module__": "plugin_base"})
    Rule = type("Rule", (Base,), {"__module__": "plugin_rule", "code": "SG909"})
    base = dict(rules=[Rule], vocabulary_fingerprint="v", config_text="", config_path="")
    key = settings_key(**base)
    base_file.write_text("class Base:\n    decided = 'otherwise'\n")
    assert settings_key(**base) != key


def test_the_settings_key_stamps_the_command_line_and_reads_libcst_s_version_without_metadata(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The command line keys and reads the records, so its modules are stamped like the
    engine's (an upgrade rewrites them). libcst's release is read from its version file;
    importlib.metadata only answers for a package without one."""
    from importlib import metadata

    stamped = {(entry[0], entry[1]) for entry in cache_module._engine_stamp()}  # type: ignore[index]
    assert ("summaryguard.rules", "cli/records.py") in stamped
    assert ("summaryguard.rules", "engine/solver.py") in stamped
    assert ("summaryguard.plugins", "langgraph/rules/__init__.py") in stamped  # the room's list of its rules
    asked: list[str] = []
    monkeypatch.setattr(cache_module, "_version", lambda distribution: asked.append(distribution) or "?")
    assert metadata.version("libcst") in cache_module._package_version("libcst")
    assert asked == []
    assert cache_module._package_version("json") == "?" and asked == ["json"]  # no _version.py: the metadata
    assert cache_module._package_version("no_such_package_here") == "?"
    monkeypatch.undo()
    assert cache_module._version("no_such_distribution_here") == "unknown"


def test_an_analyzer_imported_from_a_zip_keys_its_version(monkeypatch: pytest.MonkeyPatch) -> None:
    """Modules that are not files (a zip on sys.path) have no size or date to stamp: the
    key then names summaryguard's version, so an upgrade is still never served stale."""
    base = dict(rules=all_rules(), vocabulary_fingerprint="v", config_text="", config_path="")
    asked: list[str] = []
    monkeypatch.setattr(cache_module, "_version", lambda distribution: asked.append(distribution) or "1.0")
    stamped = settings_key(**base)
    assert asked == []  # files stamped: no version asked
    monkeypatch.setattr(cache_module, "_engine_stamp", lambda: [])
    zipped = settings_key(**base)
    assert asked == ["summaryguard"] and zipped != stamped
    monkeypatch.setattr(cache_module, "_version", lambda distribution: "2.0")
    assert settings_key(**base) != zipped


def test_a_changed_validator_invalidates_the_findings_of_its_callers(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = copy_multimodule(project)
    before = run(capsys, "app")
    protected = [f for f in before[1]["findings"] if f["path"] == "app/loop.py" and f["line"] == 9]
    assert protected == []  # verify() in recovery.py dominates the resume in loop.py
    recovery = app / "recovery.py"
    recovery.write_text(recovery.read_text().replace("    if summary.partial:\n        raise", "    if summary.partial:\n        print"))
    after = run(capsys, "app")
    assert after == run(capsys, "--no-cache", "app")
    assert ("app/loop.py", 9, "SG102") in {(f["path"], f["line"], f["code"]) for f in after[1]["findings"]}


def test_a_file_outside_the_analysis_changes_nothing_else(project: Path) -> None:
    app = copy_multimodule(project)
    (app / "plain.py").write_text(PLAIN)
    analyzer = Analyzer(Vocabulary.build(), all_rules())
    files = [str(p) for p in sorted(app.glob("*.py"))]
    store = ResultCache(project / CACHE_FOLDER, "settings")
    cold = check_files(files, analyzer, store, jobs=1)
    assert cold.analyzed == 2 and not cold.cached_analysis
    (app / "plain.py").write_text(PLAIN + "\n\ndef sub(a, b):\n    return a - b\n")
    warm = check_files(files, analyzer, ResultCache(project / CACHE_FOLDER, "settings"), jobs=1)
    # only the changed file is screened again (its text dismisses it); nothing is analyzed
    assert warm.cached_analysis and warm.analyzed == 0 and warm.screened == 1
    assert warm.findings == cold.findings and warm.errors == cold.errors


# -- corrupt or unusable caches -----------------------------------------------------------


@pytest.mark.parametrize(
    "garbage",
    [
        b"\x00\xff not json",
        b"",
        b"[]",
        b'{"settings": "x", "entries": []}',
        b'{"key": "k", "findings": "nope", "errors": []}',
        json.dumps({"key": None, "findings": [[1, 2]], "errors": [["a", "b", "c"]]}).encode(),
    ],
)
def test_a_corrupt_entry_is_a_miss(project: Path, capsys: pytest.CaptureFixture[str], garbage: bytes) -> None:
    (project / "agent.py").write_text(AGENT)
    (project / "syntax.py").write_text("def broken(:\n")
    first = run(capsys)
    screens = list((project / CACHE_FOLDER).glob("*/screen/*.json"))  # one per digest's first two digits
    assert 1 <= len(screens) <= 2
    entries = [*project_entries(project), *screens]
    for entry in entries:
        entry.write_bytes(garbage)
    assert run(capsys) == first
    assert run(capsys) == first


def test_malformed_rows_are_misses(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "agent.py").write_text(AGENT)
    (project / "syntax.py").write_text("def broken(:\n")
    first = run(capsys)
    (entry,) = project_entries(project)
    screens = {path: json.loads(path.read_text()) for path in (project / CACHE_FOLDER).glob("*/screen/*.json")}
    good_entry = json.loads(entry.read_text())

    def with_records(record: object) -> str:
        return json.dumps({**good_entry, "entries": {key: record for key in good_entry["entries"]}})

    for bad_finding in ([], ["agent.py", "2", 1, 2, 3, "SG101", "n", "m"], ["agent.py", True, 1, 2, 3, "SG101", "n", "m"]):
        entry.write_text(with_records([[bad_finding], [], 0]))
        assert run(capsys) == first
    for bad_error in (["p"], ["p", "1", "m"]):
        entry.write_text(with_records([[], [bad_error], 0]))
        assert run(capsys) == first
    for bad_record in ("x", [], [[], []], [{}, [], 0], [[], "e", 0]):
        entry.write_text(with_records(bad_record))
        assert run(capsys) == first
    entry.write_text(json.dumps({**good_entry, "run": "1"}))
    assert run(capsys) == first
    for bad_verdict in ("x", [True], ["yes", []], [True, "no"], [True, [["1", "m"]]], [True, [[1]]], [False, [[True, "m"]]]):
        for screen, good_screen in screens.items():
            entries = {digest: bad_verdict for digest in good_screen["entries"]}
            screen.write_text(json.dumps({**good_screen, "entries": entries}))
        assert run(capsys) == first


def test_an_unwritable_cache_never_fails_a_check(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "agent.py").write_text(AGENT)
    blocker = project / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv(CACHE_DIR_ENV, str(blocker / "cache"))
    first = run(capsys)
    assert first[0] == 1
    assert run(capsys) == first
    assert blocker.is_file()


def test_the_cache_folder_can_be_chosen(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "agent.py").write_text(AGENT)
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "elsewhere"))
    run(capsys)
    assert not (project / CACHE_FOLDER).exists()
    assert list((tmp_path / "elsewhere" / "summaryguard").glob("*/modules.json"))
    assert sorted(p.name for p in (tmp_path / "elsewhere").iterdir()) == ["summaryguard"]


def test_old_entries_are_pruned(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache_module, "KEEP_MODULES", 4)
    for number in range(8):  # one run each; every run also uses k0's record
        store = ResultCache(project / CACHE_FOLDER, "s")
        if number:
            assert store.record("k0") == ([], [])
        store.store_record(f"k{number}", [], [])
        store.flush()
    document = json.loads((project / CACHE_FOLDER / "s" / "modules.json").read_text())
    assert sorted(document["entries"]) == ["k0", "k5", "k6", "k7"]  # the least recently used went
    for number in range(cache_module.KEEP_SETTINGS + 3):
        other = ResultCache(project / CACHE_FOLDER, f"settings{number}")
        other.store_screen("d", (False, ()))
        other.flush()
    folders = [p for p in (project / CACHE_FOLDER).iterdir() if p.is_dir()]
    assert len(folders) == cache_module.KEEP_SETTINGS


# -- parallel screening -------------------------------------------------------------------


def test_jobs_1_and_jobs_2_give_identical_output(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy_multimodule(project)
    for number in range(6):
        (project / f"agent{number}.py").write_text(AGENT)
    (project / "plain.py").write_text(PLAIN)
    (project / "syntax.py").write_text("def resume_from_summary(checkpoint:\n")
    serial = run(capsys, "--no-cache", "--jobs", "1")
    parallel = run(capsys, "--no-cache", "--jobs", "2")
    assert serial == parallel
    assert serial[1]["findings"] and serial[1]["errors"]
    text_serial = main(["check", "--no-cache", "--jobs", "1"]), capsys.readouterr().out
    text_parallel = main(["check", "--no-cache", "--jobs", "2"]), capsys.readouterr().out
    assert text_serial[0] == text_parallel[0]
    assert text_serial[1].splitlines()[:-1] == text_parallel[1].splitlines()[:-1]


def test_the_pool_screens_files_and_agrees_with_the_serial_run(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from summaryguard.rules.cli import batch as batch_module

    monkeypatch.setattr(batch_module, "SERIAL_SCREEN_FILES", 0)  # a pool for any number of files
    app = copy_multimodule(project)
    (app / "syntax.py").write_text("def resume_from_summary(checkpoint:\n")
    (app / "plain.py").write_text(PLAIN)  # dismissed by the text scan, in the pool
    (app / "broken.py").write_text("def add(a, b:\n    return a + b\n")  # dismissed, and a syntax error
    files = [str(p) for p in sorted(app.glob("*.py"))]
    analyzer = Analyzer(Vocabulary.build(), all_rules())
    serial = check_files(files, analyzer, None, jobs=1)
    parallel = check_files(files, analyzer, None, jobs=2)
    assert serial.workers == 0 and parallel.workers == 2
    assert parallel.screened == serial.screened == len(files)
    assert (parallel.findings, parallel.errors, parallel.sources) == (serial.findings, serial.errors, serial.sources)
    assert {(e.path, e.line) for e in parallel.errors} == {(str(app / "syntax.py"), 1), (str(app / "broken.py"), 1)}


def test_no_pool_for_a_few_files(project: Path) -> None:
    """A pre-commit hook's few staged files are screened here: a pool would start slower."""
    (project / "agent.py").write_text(AGENT)
    (project / "plain.py").write_text(PLAIN)  # dismissed by the text scan: only its syntax is checked
    analyzer = Analyzer(Vocabulary.build(), all_rules())
    batch = check_files([str(project / "agent.py"), str(project / "plain.py")], analyzer, None, jobs=8)
    assert batch.screened == 2 and batch.workers == 0
    assert {f.code for f in batch.findings} == {"SG101", "SG102", "SG103", "SG201"}


def test_many_files_are_screened_in_the_pool_text_scan_and_syntax_check_included(project: Path) -> None:
    from summaryguard.rules.cli.batch import SERIAL_SCREEN_FILES

    (project / "agent.py").write_text(AGENT)
    files = [str(project / "agent.py")]
    for number in range(SERIAL_SCREEN_FILES):  # dismissed by the text scan
        path = project / f"plain{number:03}.py"
        path.write_text(PLAIN if number % 10 else "def add(a, b:\n    return a + b\n")
        files.append(str(path))
    analyzer = Analyzer(Vocabulary.build(), all_rules())
    serial = check_files(files, analyzer, None, jobs=1)
    parallel = check_files(files, analyzer, None, jobs=2)
    few = check_files(files[:-1], analyzer, None, jobs=2)
    assert serial.workers == 0 and parallel.workers == 2 and few.workers == 0
    assert parallel.screened == serial.screened == len(files)
    assert (parallel.findings, parallel.errors) == (serial.findings, serial.errors)
    assert {f.code for f in parallel.findings} == {"SG101", "SG102", "SG103", "SG201"}
    broken = [(e.path, e.line) for e in serial.errors]
    assert broken == [(str(project / f"plain{n:03}.py"), 1) for n in range(0, SERIAL_SCREEN_FILES, 10)]
    assert all(e.message.startswith("syntax error: ") for e in serial.errors)


def test_unreadable_and_undecodable_files_are_errors(project: Path) -> None:
    (project / "latin.py").write_bytes(b"x = '\xff'\n")
    analyzer = Analyzer(Vocabulary.build(), all_rules())
    batch = check_files([str(project / "latin.py"), str(project / "missing.py"), str(project)], analyzer, None, jobs=2)
    assert [e.path for e in batch.errors] == [str(project / "latin.py"), str(project / "missing.py"), str(project)]
    assert batch.sources == []


def test_what_a_screened_out_module_lends_survives_the_run_and_a_malformed_entry_is_a_miss(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path / "cache", "settings")
    assert cache.lent("d1") is None
    cache.store_lent("d1", None)
    cache.store_lent("d2", ("app.clients", "openai"))
    cache.store_screen("d2", (False, ()))
    cache.flush()
    again = ResultCache(tmp_path / "cache", "settings")
    assert again.lent("d1") == (False, ())
    assert again.lent("d2") == (True, ("app.clients", "openai"))
    assert again.screen("d2") == (False, ())  # the verdict of the same text is its own entry
    for malformed in ([True], [True, [1]], [False, []], "x", None):
        again._screen["lent:d3"] = malformed
        assert again.lent("d3") is None


def test_the_marks_of_a_text_are_kept_with_its_verdict_and_a_malformed_mark_is_a_miss(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path / "cache", "settings")
    cache.store_screen("in", (True, ()), ("os",), 1)
    cache.store_screen("out", (False, ((3, "syntax error"),)), None, 2)
    cache.store_screen("bare", (True, ()), ("json",))
    cache.flush()
    again = ResultCache(tmp_path / "cache", "settings")
    assert (again.screen("in"), again.imports("in"), again.text_marks("in")) == ((True, ()), ("os",), 1)
    assert (again.screen("out"), again.imports("out"), again.text_marks("out")) == (
        (False, ((3, "syntax error"),)), None, 2
    )
    assert (again.imports("bare"), again.text_marks("bare")) == (("json",), None)  # stored without marks
    for malformed in (True, "1", -1, 1 << 8, None, 1.0):
        again._screen_entries("bad")["bad"] = [False, [], None, malformed]
        assert again.text_marks("bad") is None and again.screen("bad") == (False, ())
    again._screen_entries("long")["long"] = [False, [], None, 1, 5]
    assert (again.screen("long"), again.text_marks("long")) == (None, None)


def test_a_warm_run_asks_no_text_whether_it_may_hold_a_suppression(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whether a text may hold a suppression comment is kept with its verdict: a warm run
    reports the same unused suppressions (SG001) without scanning a text for one."""
    from summaryguard.rules.cli import batch as batch_module, markers, runner

    (project / "agent.py").write_text(AGENT)
    (project / "quiet.py").write_text("import os  # noqa: SG201\n")  # silences nothing: SG001
    (project / "plain.py").write_text(PLAIN)
    cold = run(capsys)
    assert {(f["path"], f["code"]) for f in cold[1]["findings"]} >= {("quiet.py", "SG001"), ("agent.py", "SG201")}
    asked: list[str] = []

    def counting(text: str) -> bool:
        asked.append(text)
        return markers.may_hold_suppressions(text)

    with monkeypatch.context() as patched:
        patched.setattr(runner, "may_hold_suppressions", counting)
        patched.setattr(batch_module, "scan_marks", lambda text, screened_in: pytest.fail("scanned"))
        assert run(capsys) == cold and asked == []
    assert run(capsys, "--no-cache") == cold  # and the same without the cache


def test_a_run_of_one_file_reads_and_writes_the_screen_verdicts_of_its_digest_only(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pre-commit run's cache work follows the files it checks, not the size of the cache:
    the verdicts of a tree's other files stay unread and unwritten."""
    for number in range(60):
        (project / f"agent{number}.py").write_text(f"{AGENT}# {number}\n")
    run(capsys)
    folder = next((project / CACHE_FOLDER).glob("*/screen"))
    documents = {path.name: path.stat().st_mtime_ns for path in folder.iterdir()}
    assert len(documents) > 20  # 60 digests spread over the documents
    read: list[Path] = []
    original = cache_module._read_json

    def reading(path: Path) -> object:
        read.append(path.resolve())
        return original(path)

    monkeypatch.setattr(cache_module, "_read_json", reading)
    (project / "agent7.py").write_text(f"{AGENT}# edited\n")
    edited = run(capsys, "agent7.py")
    shown = [path for path in read if path.parent == folder.resolve()]
    assert len(shown) == 1  # the document of the edited text's digest
    changed = {path.name for path in folder.iterdir() if documents.get(path.name) != path.stat().st_mtime_ns}
    assert changed == {shown[0].name}
    assert edited[0] == 1 and edited == run(capsys, "--no-cache", "agent7.py")
