"""The analysis runs in chunks across worker processes (``--jobs``) with the findings of one process.

The engine is local (SPEC §3.1.1), so :mod:`summaryguard.rules.cli.chunks` splits
the checked files into chunks, each analyzed in its own worker with the modules
its files import. These tests run the real CLI (and :func:`check_files`, to see
that the pool really ran) on multi-module projects and on every whole-file
fixture at once, with ``--jobs 1`` and more, and compare the findings with
their evidence chains. The size floor below which the analysis stays in one
process is lowered to 0 so that small fixtures take the parallel path.
"""

from __future__ import annotations

import json
import pickle
import random
import shutil
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from summaryguard.rules.cli import batch as batch_module
from summaryguard.rules.cli import workers as workers_module
from summaryguard.rules.cli import main
from summaryguard.rules.cli.chunks import Chunk, Unit, closures, groups, partition

FIXTURES = Path(__file__).parents[1] / "rules" / "fixtures"

#: Fixture files whose findings depend today on other files of the run (the engine's
#: locality gaps, see NONLOCAL_TODAY in tests/rules/test_locality.py): a chunk holds
#: only what its files import, so these may differ between --jobs 1 and --jobs N.
NONLOCAL_TODAY = {
    "fixtures/multimodule/recovery.py",  # SG104 at 32 only with loop.py, its importer, in the run
}

#: A resume in a module, checked by one same-module caller and not by another; a validator
#: module that two otherwise independent modules import (so that, with two chunks, one of
#: them analyzes it as context: without it, its resume would look unchecked).
RESUMES = {
    "app/__init__.py": "",
    "app/validation.py": """
        from summaryguard.guard import SummaryReconciliationError


        def verify(checkpoint, deps):
            summary = checkpoint.summary
            if summary is None or summary.generation != checkpoint.summary_generation:
                raise SummaryReconciliationError(None, checkpoint.turn, "", "generation mismatch")
            if summary.partial:
                raise SummaryReconciliationError(summary.generation, checkpoint.turn, "", "partial")
            for ref in deps:
                if ref not in summary.verbatim_refs:
                    raise SummaryReconciliationError(summary.generation, checkpoint.turn, ref, "dropped")
        """,
    "app/resume.py": """
        from app.validation import verify


        def _continue(checkpoint, agent):
            return agent.resume(checkpoint.summary)


        def checked(checkpoint, agent, deps):
            verify(checkpoint, deps)
            return _continue(checkpoint, agent)


        def unchecked(checkpoint, agent):
            return _continue(checkpoint, agent)
        """,
    "app/second.py": """
        from app.validation import verify


        def protected(checkpoint, agent, deps):
            verify(checkpoint, deps)
            return agent.resume(checkpoint.summary)


        def exposed(checkpoint, agent):
            return agent.resume(checkpoint.summary)


        def also_protected(checkpoint, agent, deps):
            verify(checkpoint, deps)
            return agent.resume(checkpoint.summary)
        """,
    "app/other.py": """
        from app.resume import checked


        def entry(checkpoint, agent):
            return agent.resume(checkpoint.summary)


        def safe(checkpoint, agent):
            return checked(checkpoint, agent, ["vm"])
        """,
}


@pytest.fixture(autouse=True)
def _parallel_even_when_small(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch_module, "SERIAL_ANALYSIS_CHARS", 0)
    monkeypatch.setattr(batch_module, "MIN_SPEEDUP", 0)


def _project(root: Path, fixture_folders: list[str]) -> Path:
    (root / "pyproject.toml").write_text("[tool.summaryguard]\n", encoding="utf-8")
    for folder in fixture_folders:
        shutil.copytree(FIXTURES / folder, root / "fixtures" / folder, ignore=shutil.ignore_patterns("__pycache__"))
    for path, text in RESUMES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


def _check(root: Path, jobs: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> dict:
    monkeypatch.chdir(root)
    status = main(["check", "--no-cache", "--format", "json", "--show-trace", "--jobs", str(jobs)])
    report = json.loads(capsys.readouterr().out)
    # Everything but the statistics (they hold the run's duration).
    return {"status": status, "findings": report["findings"], "errors": report["errors"]}


def _batch(root: Path, jobs: int, monkeypatch: pytest.MonkeyPatch) -> batch_module.Batch:
    """:func:`check_files` as ``summaryguard check`` calls it (to see how many workers analyzed)."""
    from summaryguard.rules import engine
    from summaryguard.rules.cli.discovery import discover

    monkeypatch.chdir(root)
    vocabulary = engine.Vocabulary.build(use_plugins=True)
    analyzer = engine.Analyzer(vocabulary, list(engine.all_rules(use_plugins=True)))
    found = discover((), root=root)
    return batch_module.check_files(found.files, analyzer, None, jobs, root=root)


def test_multimodule_project_same_json_with_any_jobs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _project(tmp_path, ["multimodule", "langgraph_project", "sg303_callers", "recompaction_callers"])
    one = _check(root, 1, monkeypatch, capsys)
    assert one["findings"], "the project must report something, or the comparison proves nothing"
    resume = {(f["line"], f["code"]) for f in one["findings"] if f["path"] == "app/resume.py"}
    assert resume and {line for line, _ in resume} == {14}  # reported at the caller that does not check
    assert [f for f in one["findings"] if f["path"] == "app/other.py"]  # its own unchecked resume
    assert {f["line"] for f in one["findings"] if f["path"] == "app/second.py"} == {10}  # validated elsewhere
    for jobs in (2, 3):
        assert _check(root, jobs, monkeypatch, capsys) == one, f"--jobs {jobs} differs from --jobs 1"


def test_the_pool_really_analyzes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Files split across workers, each chunk analyzing its files' imports as context."""
    from summaryguard.rules import engine
    from summaryguard.rules.cli import chunks as chunks_module

    # every project split file by file (not placed whole): the context path is what is tested
    monkeypatch.setattr(chunks_module, "WHOLE_GROUP_SLACK", 0.0)
    root = _project(tmp_path, ["multimodule", "langgraph_project", "sg303_callers", "recompaction_callers"])
    serial = _batch(root, 1, monkeypatch)
    parallel = _batch(root, 3, monkeypatch)
    assert serial.analysis_workers == 0 and parallel.analysis_workers == 3
    analyzer = engine.Analyzer(engine.Vocabulary.build(use_plugins=True), [])
    screened = {p: analyzer.screen_facts(p, t) for p, t in parallel.sources}
    wanted = [(p, t) for p, t in parallel.sources if screened[p][0]]
    imports = {p: screened[p][2].imports for p, _ in wanted}
    chunks = batch_module.plan_chunks(wanted, [], imports, 3, str(root))
    validation = [c for c in chunks if any(u.path.endswith("validation.py") for u in c.context)]
    assert validation, "the shared validator must be context of some chunk, or context is not tested"
    assert parallel.findings == serial.findings
    assert [f.trace for f in parallel.findings] == [f.trace for f in serial.findings]  # trace: not part of ==
    assert parallel.errors == serial.errors


def test_the_screening_is_cached_while_the_pool_analyzes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the cache keeps of the screening (facts, verdicts) is written while the workers
    analyze, when this process would only wait, not after them; the analysis's own module
    records follow at the end. A second run finds all of it and changes no finding."""
    import inspect

    from summaryguard.rules import engine
    from summaryguard.rules.cli import cache as cache_module
    from summaryguard.rules.cli.discovery import discover

    (tmp_path / "project").mkdir()
    root = _project(tmp_path / "project", ["multimodule", "langgraph_project"])
    written: list[tuple[bool, int, int]] = []  # (in the pool's wait, facts, screen documents) per flush
    original = cache_module.ResultCache.flush

    def flush(self: cache_module.ResultCache) -> None:
        waiting = any(frame.function == "_analyze_in_pool" for frame in inspect.stack())
        written.append((waiting, len(self._facts), len(self._screen_dirty)))
        original(self)

    monkeypatch.setattr(cache_module.ResultCache, "flush", flush)
    monkeypatch.chdir(root)
    analyzer = engine.Analyzer(engine.Vocabulary.build(use_plugins=True), list(engine.all_rules(use_plugins=True)))
    files = discover((), root=root).files

    def run() -> batch_module.Batch:
        return batch_module.check_files(files, analyzer, cache_module.ResultCache(tmp_path / "cache", "s"), 2, root=root)

    cold = run()
    assert cold.analysis_workers == 2
    screened_in = len(list((tmp_path / "cache" / "s" / cache_module.FACTS_FOLDER).iterdir()))
    assert screened_in > 0
    assert written[0] == (True, screened_in, written[0][2]) and written[0][2] > 0  # all of it, while waiting
    assert [w[1:] for w in written[1:]] == [(0, 0)]  # left for the end: the module records only
    assert (tmp_path / "cache" / "s" / "modules.json").is_file()
    written.clear()
    warm = run()
    assert warm.screened == 0 and warm.cached_analysis  # verdicts, facts and records all found
    assert warm.findings == cold.findings and warm.errors == cold.errors
    assert written == [(False, 0, 0)]


def test_the_pool_analyzes_where_processes_are_spawned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows always, macOS and Python 3.14's Linux with threads alive: the workers' start-up
    arguments (the vocabulary with the framework models) are pickled, and a pool that cannot
    start falls back to one process without a word, so only the worker count shows it."""
    import multiprocessing

    from summaryguard.rules.cli import chunks as chunks_module

    monkeypatch.setattr(chunks_module, "WHOLE_GROUP_SLACK", 0.0)
    monkeypatch.setattr(workers_module, "_context", lambda: multiprocessing.get_context("spawn"))
    root = _project(tmp_path, ["multimodule", "sg303_callers"])
    serial = _batch(root, 1, monkeypatch)
    spawned = _batch(root, 2, monkeypatch)
    assert spawned.analysis_workers == 2
    assert spawned.findings == serial.findings and spawned.errors == serial.errors


def _whole_file_fixtures(root: Path) -> list[str]:
    shutil.copytree(FIXTURES, root / "fixtures", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "pyproject.toml").write_text("[tool.summaryguard]\n", encoding="utf-8")
    return sorted(p.relative_to(root).as_posix() for p in (root / "fixtures").rglob("*.py"))


def _by_file(report: dict) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for finding in report["findings"]:
        found.setdefault(finding["path"], []).append(finding)
    return found


def test_a_file_checked_alone_screens_its_context_in_a_pool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pre-commit in a package: the modules a file imports are screened on every core,
    with the findings of one core (an SG303 whose compaction sits in the context)."""
    from summaryguard.rules import engine

    root = _project(tmp_path, ["sg303_callers", "multimodule"])
    monkeypatch.chdir(root)
    monkeypatch.setattr(batch_module, "SERIAL_SCREEN_CHARS", 0)
    pooled: list[str] = []
    real = workers_module.Workers.map

    def counted(self, work, function, chunks, warnings):
        if function is batch_module._screen_chunk:
            pooled.extend(path for chunk in chunks for path, _ in chunk)
        return real(self, work, function, chunks, warnings)

    monkeypatch.setattr(workers_module.Workers, "map", counted)
    analyzer = engine.Analyzer(engine.Vocabulary.build(use_plugins=True), list(engine.all_rules(use_plugins=True)))
    files = ["fixtures/sg303_callers/entry.py", "fixtures/multimodule/loop.py"]
    serial = batch_module.check_files(files, analyzer, None, 1, root=root)
    assert pooled == []
    parallel = batch_module.check_files(files, analyzer, None, 2, root=root)
    assert set(serial.context) <= set(pooled), "the context was screened in this process"
    assert parallel.context == serial.context and serial.context
    assert ("fixtures/sg303_callers/entry.py", 9, "SG303") in {(f.path, f.line, f.code) for f in serial.findings}
    assert parallel.findings == serial.findings
    assert [f.trace for f in parallel.findings] == [f.trace for f in serial.findings]
    assert parallel.errors == serial.errors


def test_every_fixture_together_same_findings_with_any_jobs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    files = _whole_file_fixtures(tmp_path)
    one = _check(tmp_path, 1, monkeypatch, capsys)
    assert len(_by_file(one)) > 10
    for jobs in (2, 3):
        other = _check(tmp_path, jobs, monkeypatch, capsys)
        assert other["errors"] == one["errors"]
        for path in files:
            if path in NONLOCAL_TODAY:
                continue
            assert _by_file(other).get(path) == _by_file(one).get(path), f"{path} with --jobs {jobs}"


@pytest.fixture(scope="module")
def fixture_tree(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("fixtures")
    return root, [p for p in _whole_file_fixtures(root) if p not in NONLOCAL_TODAY]


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_subset_of_fixtures_any_jobs_same_findings(
    fixture_tree: tuple[Path, list[str]], monkeypatch: pytest.MonkeyPatch, data: st.DataObject
) -> None:
    """Property: whichever fixture files are checked together, and however many chunks,
    each file's findings (with their traces) are those of the one-process analysis."""
    root, files = fixture_tree
    monkeypatch.setattr(batch_module, "SERIAL_ANALYSIS_CHARS", 0)
    monkeypatch.setattr(batch_module, "MIN_SPEEDUP", 0)
    chosen = data.draw(st.lists(st.sampled_from(files), min_size=2, max_size=8, unique=True))
    jobs = data.draw(st.integers(2, 5))
    from summaryguard.rules import engine
    from summaryguard.rules.cli.discovery import discover

    analyzer = engine.Analyzer(engine.Vocabulary.build(use_plugins=True), list(engine.all_rules(use_plugins=True)))
    found = discover([str(root / p) for p in chosen], root=root)
    serial = batch_module.check_files(found.files, analyzer, None, 1, root=root)
    parallel = batch_module.check_files(found.files, analyzer, None, jobs, root=root)
    assert parallel.analysis_workers <= min(jobs, parallel.analyzed)  # 0: one chunk (files that import each other)
    assert [(f, f.trace) for f in parallel.findings] == [(f, f.trace) for f in serial.findings]
    assert parallel.errors == serial.errors


def test_results_cross_process_boundaries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Findings and errors come back from workers by pickle: nothing is lost on the way."""
    root = _project(tmp_path, ["multimodule", "langgraph_project"])
    serial = _batch(root, 1, monkeypatch)
    assert serial.findings and any(f.trace for f in serial.findings)
    for item in [*serial.findings, *serial.errors]:
        copy = pickle.loads(pickle.dumps(item))
        assert copy == item and getattr(copy, "trace", None) == getattr(item, "trace", None)


# -- the partition itself --------------------------------------------------------------

_KEYS = [f"/p/m{i}.py" for i in range(8)]


@settings(max_examples=200, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 5_000), min_size=8, max_size=8),
    checked=st.integers(1, 8),
    edges=st.sets(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=20),
    jobs=st.integers(1, 6),
)
def test_partition_covers_every_file_once_with_what_it_imports(
    sizes: list[int], checked: int, edges: set[tuple[int, int]], jobs: int
) -> None:
    units = [Unit(k, k, "x" * sizes[i], i < checked) for i, k in enumerate(_KEYS)]
    graph = {k: [_KEYS[b] for a, b in sorted(edges) if a == i and a != b] for i, k in enumerate(_KEYS)}
    chunks = partition(units, graph, jobs)
    assert 1 <= len(chunks) <= min(jobs, checked)
    owned = [u.key for c in chunks for u in c.sources]
    assert sorted(owned) == sorted(_KEYS[:checked])  # every checked file in exactly one chunk
    reach = closures(units, graph)
    for chunk in chunks:
        keys = [u.key for u in (*chunk.sources, *chunk.context)]
        assert len(keys) == len(set(keys))
        for unit in chunk.sources:  # transitive imports, cycles included, are all there
            assert reach[unit.key] <= set(keys)
        assert [u.key for u in chunk.context] == sorted((u.key for u in chunk.context), key=_KEYS.index)
    for i, key in enumerate(_KEYS[:checked]):  # the closure is the transitive one
        expected, frontier = set(), [key]
        while frontier:
            node = frontier.pop()
            for target in graph[node]:
                if target not in expected:
                    expected.add(target)
                    frontier.append(target)
        assert reach[key] == expected - {key}


def test_chunks_that_share_most_of_their_context_run_in_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two small importers of one large module: each chunk would analyze the large module
    again, so the analysis stays in one process."""
    from summaryguard.rules import engine

    monkeypatch.setattr(batch_module, "MIN_SPEEDUP", 1.5)
    (tmp_path / "pyproject.toml").write_text("[tool.summaryguard]\n", encoding="utf-8")
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text("")
    helpers = "".join(
        f"\n\ndef view_{n}(checkpoint):\n    summary = checkpoint.summary\n    return summary.generation, summary.partial\n"
        for n in range(300)
    )
    (tmp_path / "app" / "shared.py").write_text(f"import os\n{helpers}")
    for name in ("one", "two"):
        (tmp_path / "app" / f"{name}.py").write_text(
            f"from app.shared import view_1\n\n\ndef {name}(checkpoint, agent):\n"
            f"    view_1(checkpoint)\n    return agent.resume(checkpoint.summary)\n"
        )
    analyzer = engine.Analyzer(engine.Vocabulary.build(use_plugins=True), list(engine.all_rules(use_plugins=True)))
    monkeypatch.chdir(tmp_path)
    files = ["app/one.py", "app/two.py"]
    analyzed: list[str] = []  # every module each analysis was handed, checked or context
    analyze = analyzer.analyze

    def recording(sources, facts=None, context=()):  # type: ignore[no-untyped-def]
        analyzed.extend(path for path, _ in (*sources, *context))
        return analyze(sources, facts, context)

    monkeypatch.setattr(analyzer, "analyze", recording)
    shared_context = batch_module.check_files(files, analyzer, None, jobs=2, root=tmp_path)
    assert shared_context.analysis_workers == 0 and shared_context.analyzed == 2
    # in one process, the plan made for two workers is not followed: shared.py is analyzed once
    assert sorted(analyzed) == sorted({*analyzed}) and any(p.endswith("shared.py") for p in analyzed)
    serial = batch_module.check_files(files, analyzer, None, jobs=1, root=tmp_path)
    assert shared_context.findings == serial.findings and serial.findings


def test_unrelated_packages_are_placed_whole_and_nothing_is_analyzed_twice() -> None:
    """A package of ten importers of one large module, and an unrelated package of as much
    text in independent files: the first package goes whole to one chunk, so no chunk but
    one analyzes its large module (placing file by file, the largest first, gave each chunk
    an importer and so the module twice)."""
    units = [Unit(f"/a/m{n}.py", f"/a/m{n}.py", "x" * 10_000, True) for n in range(10)]
    units.append(Unit("/a/core.py", "/a/core.py", "x" * 50_000, False))
    units += [Unit(f"/b/m{n}.py", f"/b/m{n}.py", "x" * 10_000, True) for n in range(15)]
    graph = {u.key: ["/a/core.py"] if u.key.startswith("/a/m") else [] for u in units}
    chunks = partition(units, graph, 2)
    assert len(chunks) == 2
    assert sum("/a/core.py" in {u.key for u in c.context} for c in chunks) == 1
    assert batch_module.expected_speedup(chunks) > 1.9


def test_one_package_too_large_for_a_share_is_split_and_the_others_fill_in() -> None:
    """A package of most of the run is split file by file (each chunk with the module its
    files share); a small unrelated package goes whole to one chunk."""
    units = [Unit(f"/big/m{n}.py", f"/big/m{n}.py", "x" * 30_000, True) for n in range(6)]
    units.append(Unit("/big/core.py", "/big/core.py", "x" * 5_000, False))
    units += [Unit(f"/small/m{n}.py", f"/small/m{n}.py", "x" * 1_000, True) for n in range(2)]
    graph = {u.key: ["/big/core.py"] if u.key.startswith("/big/m") else [] for u in units}
    graph["/small/m0.py"] = ["/small/m1.py"]
    checked = [u for u in units if u.checked]
    reach = closures(units, graph)
    assert [len(g) for g in groups(checked, {k: v | {k} for k, v in reach.items()})] == [6, 2]
    chunks = partition(units, graph, 2)
    assert sorted(sum(u.key.startswith("/big/m") for u in c.sources) for c in chunks) == [3, 3]
    assert all("/big/core.py" in {u.key for u in c.context} for c in chunks)
    small = [c for c in chunks if any(u.key.startswith("/small") for u in c.sources)]
    assert len(small) == 1 and {u.key for u in small[0].sources} >= {"/small/m0.py", "/small/m1.py"}


def test_the_expected_speedup_counts_each_module_once() -> None:
    def unit(key: str, size: int, checked: bool = True) -> Unit:
        return Unit(key, key, "x" * size, checked)

    apart = [Chunk([unit("a", 10_000)]), Chunk([unit("b", 10_000)])]
    assert batch_module.expected_speedup(apart) == 2.0
    heavy = unit("h", 100_000, checked=False)
    sharing = [Chunk([unit("a", 1_000)], [heavy]), Chunk([unit("b", 1_000)], [heavy])]
    assert batch_module.expected_speedup(sharing) < 1.1


def test_a_pool_that_cannot_start_is_said_and_changes_no_finding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rule class the workers cannot import (defined in a function: pickle refuses it)
    stops a spawned pool from starting: the run goes on in one process, and says so."""
    import multiprocessing

    from summaryguard.rules import engine
    from summaryguard.rules.cli import chunks as chunks_module
    from summaryguard.rules.cli.discovery import discover

    class LocalRule(engine.LintRule):
        code = "XT903"
        name = "local-rule"
        USES_MODEL = False

    monkeypatch.setattr(chunks_module, "WHOLE_GROUP_SLACK", 0.0)
    monkeypatch.setattr(batch_module, "SERIAL_SCREEN_FILES", 0)  # the screening wants a pool too
    monkeypatch.setattr(workers_module, "_context", lambda: multiprocessing.get_context("spawn"))
    root = _project(tmp_path, ["multimodule", "sg303_callers"])
    monkeypatch.chdir(root)
    vocabulary = engine.Vocabulary.build(use_plugins=True)
    rules = [*engine.all_rules(use_plugins=True), LocalRule]
    files = discover((), root=root).files
    serial = batch_module.check_files(files, engine.Analyzer(vocabulary, rules), None, 1, root=root)
    fallback = batch_module.check_files(files, engine.Analyzer(vocabulary, rules), None, 2, root=root)
    assert serial.warnings == []
    assert fallback.analysis_workers == 0 and fallback.workers == 0
    assert fallback.warnings and all("worker processes could not start" in w for w in fallback.warnings)
    assert any("PicklingError" in w or "AttributeError" in w for w in fallback.warnings), fallback.warnings
    assert {w.split(":")[0] for w in fallback.warnings} == {"the screening ran in one process", "the analysis ran in one process"}
    assert fallback.findings == serial.findings and fallback.errors == serial.errors


def test_the_command_line_warns_once_of_a_pool_that_cannot_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Where processes cannot share a semaphore (no ``/dev/shm``: multiprocessing raises
    OSError), ``--jobs 2`` reports what ``--jobs 1`` reports, with one warning per kind of
    work on standard error, and the exit status of the findings."""
    root = _project(tmp_path, ["multimodule", "sg303_callers"])
    one = _check(root, 1, monkeypatch, capsys)

    def no_semaphores() -> None:
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(workers_module, "_context", no_semaphores)
    monkeypatch.setattr(batch_module, "SERIAL_SCREEN_FILES", 0)  # the screening wants a pool too
    status = main(["check", "--no-cache", "--format", "json", "--show-trace", "--jobs", "2"])
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert {"status": status, "findings": report["findings"], "errors": report["errors"]} == one
    warnings = [line for line in captured.err.splitlines() if line.startswith("summaryguard: warning:")]
    assert warnings == [
        "summaryguard: warning: the screening ran in one process: 2 worker processes could not start "
        "(OSError: [Errno 38] Function not implemented)",
        "summaryguard: warning: the analysis ran in one process: 2 worker processes could not start "
        "(OSError: [Errno 38] Function not implemented)",
    ]


def _finish_times(chunks: list[list[tuple[str, str]]], workers: int) -> list[int]:
    """When each worker of a pool ends, the chunks taken in order by whichever is free, a
    chunk costing its text's length."""
    ends = [0] * workers
    for chunk in chunks:
        free = ends.index(min(ends))
        ends[free] += sum(len(text) for _, text in chunk)
    return ends


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@example(files=300, largest=15_000, at=300, typical=20, workers=2, seed=0)  # one large file after many small
@given(
    files=st.integers(min_value=0, max_value=3_000),
    largest=st.integers(min_value=0, max_value=20_000),
    at=st.integers(min_value=0, max_value=3_000),
    typical=st.sampled_from([1, 20, 50, 600]),
    workers=st.integers(min_value=2, max_value=8),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_screening_chunks_keep_the_order_and_end_the_workers_together(
    monkeypatch: pytest.MonkeyPatch, files: int, largest: int, at: int, typical: int, workers: int, seed: int
) -> None:
    # a run's texts at a hundredth of their size, the floor too: the same chunks, cheaper strings
    monkeypatch.setattr(batch_module, "MIN_CHUNK_CHARS", 2_000)
    generator = random.Random(seed)
    sizes = [generator.randint(typical // 2, typical) for _ in range(files)]
    sizes.insert(min(at, files), largest)
    items = [(f"m{index}.py", "x" * size) for index, size in enumerate(sizes)]
    chunks = batch_module._chunks(items, workers)
    assert [item for chunk in chunks for item in chunk] == items
    assert all(chunks)
    ends = _finish_times(chunks, workers)
    # one worker never screens alone for longer than a small chunk and one file take
    assert max(ends) - min(ends) <= batch_module.MIN_CHUNK_CHARS + max(sizes)


def test_screening_chunks_end_the_workers_together_when_the_large_files_come_together() -> None:
    # one package of large modules, then many small ones: equal counts per chunk gave one
    # worker every large file while the other ran out of work
    items = [(f"big{index}.py", "x" * 60_000) for index in range(51)]
    items += [(f"small{index}.py", "x" * 500) for index in range(350)]
    ends = _finish_times(batch_module._chunks(items, 2), 2)
    assert max(ends) - min(ends) <= batch_module.MIN_CHUNK_CHARS + 60_000


def test_screening_chunks_of_little_text_still_spread_over_the_workers() -> None:
    items = [(f"m{index}.py", "x" * 100) for index in range(100)]
    assert len(batch_module._chunks(items, 2)) >= 4
