"""What CPython's tree told the engine of a module, kept in the result cache (``facts/``, a file per module).

A pre-commit run after an edit of one file analyzes it with every project module it
imports; those did not change, so the run must not parse them with CPython again, and
must report exactly what a run without the cache reports. Behaviour only: which
modules a run parses is counted at :meth:`Analyzer._scan_tree`, the one place that
parses for the engine.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from summaryguard.rules.cli import cache as cache_module
from summaryguard.rules.cli import main
from summaryguard.rules.cli.cache import CACHE_FOLDER, ResultCache
from summaryguard.rules.engine import Analyzer, ScreenFacts, Vocabulary, all_rules

FIXTURES = Path(__file__).parents[1] / "rules" / "fixtures"


@pytest.fixture
def app(cached_project: Path) -> Path:
    """The multimodule fixture (a validator in recovery.py protects a resume in loop.py)."""
    shutil.copytree(FIXTURES / "multimodule", cached_project / "app")
    return cached_project / "app"


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths the engine parses with CPython during the test."""
    seen: list[str] = []
    original = Analyzer._scan_tree

    def counting(self: Analyzer, path: str, *args: object, **kwargs: object) -> object:
        seen.append(Path(path).name)
        return original(self, path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Analyzer, "_scan_tree", counting)
    return seen


def check(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, object]:
    status = main(["check", "--format", "json", "--jobs", "1", *argv])
    report = json.loads(capsys.readouterr().out)
    report["stats"].pop("seconds")
    return status, report


def edit(path: Path, round_number: int) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(f"\n# edited {round_number}\n")


def test_an_edited_file_is_analyzed_with_its_imports_facts_from_the_cache(
    app: Path, parsed: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    check(capsys, "app/loop.py")
    assert sorted(set(parsed)) == ["loop.py", "recovery.py"]  # the cold run parses what it analyzes
    assert len(list((app.parent / CACHE_FOLDER).glob("*/facts/*.json"))) == 2
    edit(app / "loop.py", 1)
    parsed.clear()
    warm = check(capsys, "app/loop.py")
    assert parsed == ["loop.py"]  # recovery.py did not change: its facts come from the cache
    assert warm == check(capsys, "--no-cache", "app/loop.py")


def test_damaged_facts_are_misses_and_the_findings_stay_the_same(
    app: Path, parsed: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    check(capsys, "app/loop.py")
    files = sorted((app.parent / CACHE_FOLDER).glob("*/facts/*.json"))
    good = {path: json.loads(path.read_text()) for path in files}
    assert len(good) == 2 and all(set(document) == {"key", "data"} for document in good.values())
    damages = [
        lambda document: {**document, "data": "x"},
        lambda document: {**document, "data": {"depth": "1"}},
        lambda document: {**document, "data": None},
        lambda document: {"key": document["key"]},  # no data
        lambda document: {**document, "key": document["key"] + " elsewhere"},  # another module's file
        lambda document: [document],
    ]
    for round_number, damage in enumerate(damages):
        for path, document in good.items():
            path.write_text(json.dumps(damage(document)))
        edit(app / "loop.py", round_number)
        parsed.clear()
        damaged = check(capsys, "app/loop.py")
        assert sorted(parsed) == ["loop.py", "recovery.py"]
        assert damaged == check(capsys, "--no-cache", "app/loop.py")
    for path in good:
        path.write_bytes(b"\x00 not json")
    edit(app / "loop.py", 9)
    assert check(capsys, "app/loop.py") == check(capsys, "--no-cache", "app/loop.py")


def test_the_same_text_under_another_module_name_is_another_entry(
    app: Path, parsed: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """The facts name functions by qualified name, which begins with the module's name."""
    check(capsys, "app/loop.py")
    copy = app.parent / "copy"
    shutil.copytree(app, copy)
    parsed.clear()
    moved = check(capsys, "copy/loop.py")
    assert sorted(parsed) == ["loop.py", "recovery.py"]
    expected = check(capsys, "--no-cache", "copy/loop.py")
    assert moved == expected
    assert {f["path"] for f in expected[1]["findings"]} <= {"copy/loop.py"}  # type: ignore[index]


def facts_of(path: Path) -> ScreenFacts:
    analyzer = Analyzer(Vocabulary.build(), all_rules())
    screened_in, _, found = analyzer.screen_facts(str(path), path.read_text())
    assert screened_in and found is not None
    return found


@pytest.mark.parametrize("name", ["loop.py", "recovery.py"])
def test_screen_facts_read_back_equal(name: str) -> None:
    path = FIXTURES / "multimodule" / name
    found = facts_of(path)
    assert found.skeleton and found.scan.functions
    data = json.loads(json.dumps(found.to_json()))
    assert ScreenFacts.from_json(data, path.read_text()) == found


def _broken(data: dict, how: str) -> object:  # type: ignore[type-arg]
    broken = json.loads(json.dumps(data))
    first = next(iter(broken["functions"]))
    item = broken["skeleton"][0]
    if how == "not a mapping":
        return [broken]
    if how == "depth":
        broken["depth"] = "3"
    elif how == "lends":
        broken["lends"] = 1
    elif how == "nodes":
        broken["nodes"] = [1]
    elif how == "imports":
        broken["imports"] = "app.recovery"
    elif how == "functions":
        broken["functions"] = []
    elif how == "words":
        broken["functions"][first] = [[1], []]
    elif how == "calls":
        broken["functions"][first] = [[], None]
    elif how == "function entry":
        broken["functions"][first] = [[]]
    elif how == "skeleton":
        broken["skeleton"] = {}
    elif how == "skeleton item":
        broken["skeleton"][0] = item[:4]
    elif how == "name":
        item[1] = None
    elif how == "is_def":
        item[0] = "yes"
    elif how == "span past the text":
        item[3] = [0, 10_000, "    "]
    elif how == "span backwards":
        item[3] = [5, 2, "    "]
    elif how == "span shape":
        item[3] = [1, 2]
    elif how == "children":
        item[4] = "none"
    return broken


@pytest.mark.parametrize(
    "how",
    [
        "not a mapping", "depth", "lends", "nodes", "imports", "functions", "words", "calls", "function entry",
        "skeleton", "skeleton item", "name", "is_def", "span past the text", "span backwards", "span shape",
        "children",
    ],
)
def test_malformed_facts_are_refused(how: str) -> None:
    path = FIXTURES / "multimodule" / "loop.py"
    data = facts_of(path).to_json()
    assert data["skeleton"] and data["skeleton"][0][3] is not None  # what the damage below edits
    assert ScreenFacts.from_json(_broken(data, how), path.read_text()) is None


def test_the_facts_kept_are_the_most_recently_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache_module, "KEEP_FACTS", 2)
    store = ResultCache(tmp_path / "cache", "settings")
    for key in ("a", "b", "c"):
        store.store_facts(key, {"key": key})
    assert store.facts("a") == {"key": "a"}  # used last: kept
    store.flush()
    again = ResultCache(tmp_path / "cache", "settings")
    assert again.facts("b") is None
    assert again.facts("c") == {"key": "c"} and again.facts("a") == {"key": "a"}
    assert ResultCache(tmp_path / "cache", "other settings").facts("a") is None
    # a file read is a use: "c" read after "a" here, so "a" goes when one more is stored
    folder = tmp_path / "cache" / "settings" / cache_module.FACTS_FOLDER
    for age, key in enumerate(("a", "c")):
        old = 1_600_000_000_000_000_000 - age
        os.utime(again._facts_file(key), ns=(old, old))  # both old, "c" the older ...
    ResultCache(tmp_path / "cache", "settings").facts("c")  # ... and "c" used now
    later = ResultCache(tmp_path / "cache", "settings")
    later.store_facts("d", {"key": "d"})
    later.flush()
    assert sorted(p.name for p in folder.iterdir()) == sorted(later._facts_file(k).name for k in ("c", "d"))


def test_a_run_reads_the_facts_of_its_modules_and_writes_only_new_ones(
    app: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pre-commit run's cost grows with the modules it analyzes, not with the cache: the
    facts of modules it does not import are neither read nor written again."""
    check(capsys, "app/loop.py")
    other = app.parent / "other"
    shutil.copytree(app, other)
    for path in other.glob("*.py"):  # other texts: other entries
        edit(path, 0)
    check(capsys, "other/loop.py")
    folder = next((app.parent / CACHE_FOLDER).glob("*/facts"))
    assert len(list(folder.iterdir())) == 4
    before = {path.name: path.stat().st_mtime_ns for path in folder.iterdir()}
    read: list[str] = []
    original = cache_module._read_json

    def reading(path: Path) -> object:
        read.append(path.parent.name)
        return original(path)

    monkeypatch.setattr(cache_module, "_read_json", reading)
    edit(app / "loop.py", 1)
    check(capsys, "app/loop.py")
    assert read.count(cache_module.FACTS_FOLDER) == 1  # recovery.py's facts: the edited file is screened
    after = {path.name: path.stat().st_mtime_ns for path in folder.iterdir()}
    assert len(after) == 5  # the edited loop.py's facts, new
    changed = {name for name in before if after[name] != before[name]}
    assert len(changed) == 1  # recovery.py's file, marked used; other/'s untouched


def test_two_runs_that_store_facts_keep_each_others(tmp_path: Path) -> None:
    """Two runs that overlap (both hold what they stored before either writes) each write
    their own files: neither loses what the other stored, as with one shared document,
    where the last to write won. (Screen documents are still rewritten whole: an overlap
    there costs a verdict, a miss the next run computes again.)"""
    first = ResultCache(tmp_path / "cache", "s")
    second = ResultCache(tmp_path / "cache", "s")
    first.store_facts("a", {"n": 1})
    second.store_facts("b", {"n": 2})
    first.flush()
    second.flush()
    third = ResultCache(tmp_path / "cache", "s")
    assert third.facts("a") == {"n": 1} and third.facts("b") == {"n": 2}


def test_pruning_leaves_a_margin_and_small_runs_count_the_files_now_and_then(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the limit, the least recently used go down to nine tenths of it, so the runs
    after do not read every file's date again; a run that wrote a few files lists the
    folder only when one of their names begins with ``00`` (about one in 256)."""
    monkeypatch.setattr(cache_module, "KEEP_FACTS", 20)
    store = ResultCache(tmp_path / "cache", "s")
    for number in range(25):
        store.store_facts(f"k{number}", {"n": number})
    store.flush()
    folder = tmp_path / "cache" / "s" / cache_module.FACTS_FOLDER
    assert len(list(folder.iterdir())) == 18
    listed: list[Path] = []
    monkeypatch.setattr(cache_module, "_prune_facts", lambda folder, limit: listed.append(folder))
    monkeypatch.setattr(cache_module, "KEEP_FACTS", 20_000)
    keys = (f"key {number}" for number in range(100_000))
    rare = next(k for k in keys if store._facts_file(k).name.startswith("00"))
    common = next(k for k in keys if not store._facts_file(k).name.startswith("00"))
    store.store_facts(common, {})
    store.flush()
    assert listed == []
    store.store_facts(rare, {})
    store.flush()
    assert listed == [folder]


@pytest.mark.parametrize("linked", [cache_module.FACTS_FOLDER, cache_module.SCREEN_FOLDER])
def test_a_linked_facts_or_screen_folder_is_neither_written_nor_pruned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, linked: str
) -> None:
    """The cache writes and deletes only in folders it made: a symbolic link put in place
    of one leads somewhere it did not make."""
    monkeypatch.setattr(cache_module, "KEEP_FACTS", 1)
    store = ResultCache(tmp_path / "cache", "s")
    store.store_screen("d", (False, ()))
    store.flush()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    keep = {name: "not the cache's" for name in ("0" * 32 + ".json", "1" * 32 + ".json", "ab.json")}
    for name, text in keep.items():
        (elsewhere / name).write_text(text)
    shutil.rmtree(tmp_path / "cache" / "s" / cache_module.SCREEN_FOLDER)
    (tmp_path / "cache" / "s" / linked).symlink_to(elsewhere, target_is_directory=True)
    later = ResultCache(tmp_path / "cache", "s")
    for key in ("a", "b", "c"):
        later.store_facts(key, {})
    later.store_screen("ab" + "0" * 30, (False, ()))
    later.flush()
    assert {p.name: p.read_text() for p in elsewhere.iterdir()} == keep


def test_a_flush_marks_its_settings_folder_used(tmp_path: Path) -> None:
    """Settings folders are pruned oldest first by their modification time, and screen
    verdicts and facts are written into folders below it: a run that writes only those
    still marks it used."""
    store = ResultCache(tmp_path / "cache", "s")
    store.store_screen("d", (False, ()))
    store.flush()
    here = tmp_path / "cache" / "s"
    os.utime(here, (1_600_000_000,) * 2)
    again = ResultCache(tmp_path / "cache", "s")
    again.store_screen("e", (False, ()))
    again.flush()
    assert here.stat().st_mtime > 1_600_000_000 + 86_400


def test_a_settings_folder_that_cannot_be_searched_is_a_cache_that_does_not_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another user's settings folder (mode 000): the check goes on uncached, never an
    internal error (pathlib's ``is_file`` raises ``PermissionError`` there on 3.10-3.11)."""
    store = ResultCache(tmp_path / "cache", "s")
    store.store_screen("d", (False, ()))
    store.flush()
    here = str(tmp_path / "cache" / "s")
    real_stat = os.stat

    def denied(path: object, *args: object, **kwargs: object) -> os.stat_result:
        if str(path).startswith(here + os.sep):
            raise PermissionError(13, "Permission denied", str(path))
        return real_stat(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "stat", denied)
    later = ResultCache(tmp_path / "cache", "s")
    later.store_screen("e", (False, ()))
    later.flush()  # no exception
