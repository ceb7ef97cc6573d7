"""One pool of worker processes per run (``rules/cli/workers.py``): shared by the
screening, the context loading and the analysis, forked before the run reads its
files when every file will be screened, and given up for good, with one warning
per kind of work, when it cannot start or breaks."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from summaryguard.rules import engine
from summaryguard.rules.cli import batch as batch_module
from summaryguard.rules.cli import chunks as chunks_module
from summaryguard.rules.cli import workers as workers_module
from summaryguard.rules.cli.cache import ResultCache
from summaryguard.rules.cli.discovery import discover

FIXTURES = Path(__file__).parents[1] / "rules" / "fixtures"
ANALYZER = engine.Analyzer(engine.Vocabulary.build(use_plugins=True), list(engine.all_rules(use_plugins=True)))


def _project(root: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Modules that import each other (context) and a lender of classes, with findings;
    the working folder is ``root``."""
    (root / "pyproject.toml").write_text("[tool.summaryguard]\n", encoding="utf-8")
    for folder in ("multimodule", "sg303_callers", "lent_factory"):
        shutil.copytree(FIXTURES / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.chdir(root)
    return discover((), root=root).files


def _everything_in_the_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small fixtures take every pooled path: screening, lending and analysis."""
    monkeypatch.setattr(batch_module, "SERIAL_SCREEN_FILES", 0)
    monkeypatch.setattr(batch_module, "SERIAL_SCREEN_CHARS", 0)
    monkeypatch.setattr(batch_module, "SERIAL_ANALYSIS_CHARS", 0)
    monkeypatch.setattr(batch_module, "MIN_SPEEDUP", 0)
    monkeypatch.setattr(chunks_module, "WHOLE_GROUP_SLACK", 0.0)


def _record(monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], list[str]]:
    """(events: "fork" for each pool started, "read" for each file read; kinds of work
    the pool was handed)."""
    events: list[str] = []
    handed: list[str] = []
    launch = workers_module.Workers._launch
    pool = workers_module.Workers.pool
    read = batch_module._read_bytes

    def launched(self: workers_module.Workers) -> Any:
        events.append("fork")
        return launch(self)

    def wanted(self: workers_module.Workers, work: str, warnings: list[str]) -> Any:
        found = pool(self, work, warnings)
        if found is not None:
            handed.append(work)
        return found

    def reading(path: str) -> Any:
        events.append("read")
        return read(path)

    monkeypatch.setattr(workers_module.Workers, "_launch", launched)
    monkeypatch.setattr(workers_module.Workers, "pool", wanted)
    monkeypatch.setattr(batch_module, "_read_bytes", reading)
    return events, handed


def test_one_pool_serves_the_screening_the_context_and_the_analysis(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = _project(tmp_path, monkeypatch)
    serial = batch_module.check_files(files, ANALYZER, None, 1, root=tmp_path)
    _everything_in_the_pool(monkeypatch)
    events, handed = _record(monkeypatch)
    pooled = batch_module.check_files(files, ANALYZER, None, 2, root=tmp_path)
    assert events.count("fork") == 1, "the pool is started once per run"
    assert set(handed) == {"screening", "analysis"} and len(handed) > 2, handed
    assert pooled.workers == 2 and pooled.analysis_workers == 2 and pooled.warnings == []
    assert pooled.findings == serial.findings and pooled.errors == serial.errors
    assert [f.trace for f in pooled.findings] == [f.trace for f in serial.findings]


def test_a_run_that_screens_every_file_forks_before_it_reads_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a cache, or with one that holds no screening for these settings, every file
    is screened: the workers are forked before this process holds any of them."""
    files = _project(tmp_path, monkeypatch)
    monkeypatch.setattr(batch_module, "SERIAL_SCREEN_FILES", 0)
    events, _ = _record(monkeypatch)
    batch_module.check_files(files, ANALYZER, None, 2, root=tmp_path)
    assert events[0] == "fork" and events.count("fork") == 1 and events.count("read") >= len(files)
    events.clear()
    cache = ResultCache(tmp_path / "cache", "settings")
    assert not cache.holds_screenings()
    batch_module.check_files(files, ANALYZER, cache, 2, root=tmp_path)
    assert events[0] == "fork"
    assert cache.holds_screenings()


def test_a_cache_that_may_answer_leaves_the_pool_to_the_work_that_wants_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A warm run forks nothing; after an edit, the pool starts only when the work wants it."""
    files = _project(tmp_path, monkeypatch)
    _everything_in_the_pool(monkeypatch)
    cold = batch_module.check_files(files, ANALYZER, ResultCache(tmp_path / "cache", "s"), 2, root=tmp_path)
    events, _ = _record(monkeypatch)
    warm = batch_module.check_files(files, ANALYZER, ResultCache(tmp_path / "cache", "s"), 2, root=tmp_path)
    assert "fork" not in events and warm.cached_analysis
    assert (warm.findings, warm.errors) == (cold.findings, cold.errors)
    events.clear()
    for edited in (tmp_path / "multimodule" / "loop.py", tmp_path / "sg303_callers" / "entry.py"):
        edited.write_text(edited.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    again = batch_module.check_files(files, ANALYZER, ResultCache(tmp_path / "cache", "s"), 2, root=tmp_path)
    assert events.count("fork") == 1 and events.index("fork") > events.index("read")
    assert again.screened == 2 and again.workers == 2
    assert [(f.path, f.line, f.code) for f in again.findings] == [(f.path, f.line, f.code) for f in cold.findings]


def test_a_foreign_cache_folder_holds_no_screenings(tmp_path: Path) -> None:
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "notes.txt").write_text("somebody's\n", encoding="utf-8")
    assert not ResultCache(tmp_path / "cache", "settings").holds_screenings()


def _die(*_: object) -> None:  # pragma: no cover - runs in a worker, which it ends
    os._exit(3)


@pytest.mark.parametrize("broken", ["_screen_chunk", "_lent_chunk", "_analyze_chunk"])
def test_a_pool_that_breaks_leaves_the_rest_of_the_run_to_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, broken: str
) -> None:
    """A worker that dies (killed for memory, say): the work it was doing, and every later
    piece of work, runs here; each kind of work says so once; the findings are one process's."""
    files = _project(tmp_path, monkeypatch)
    serial = batch_module.check_files(files, ANALYZER, None, 1, root=tmp_path)
    _everything_in_the_pool(monkeypatch)
    monkeypatch.setattr(batch_module, broken, _die)
    events, handed = _record(monkeypatch)
    survived = batch_module.check_files(files, ANALYZER, None, 2, root=tmp_path)
    assert events.count("fork") == 1, "a broken pool is not started again"
    assert survived.findings == serial.findings and survived.errors == serial.errors
    said = {w.split(":")[0]: w for w in survived.warnings}
    assert len(said) == len(survived.warnings), "each kind of work says it once"
    assert survived.analysis_workers == 0
    if broken == "_analyze_chunk":  # the screening ran in the pool; the analysis broke it
        assert handed[-1] == "analysis" and survived.workers == 2
        assert set(said) == {"the analysis ran in one process"}
    else:  # the screening broke it (its files' verdicts, or what lenders lend): the analysis never had it
        assert "analysis" not in handed
        assert survived.workers == (0 if broken == "_screen_chunk" else 2)
        assert set(said) == {"the screening ran in one process", "the analysis ran in one process"}
    assert all("2 worker processes stopped during the run (BrokenProcessPool" in w for w in survived.warnings), (
        survived.warnings
    )


def _fail(*_: object) -> None:  # pragma: no cover - runs in a worker
    raise ValueError("a bug in one chunk")


def test_work_that_fails_in_a_worker_is_done_here_and_keeps_the_pool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An exception of the work itself (not a dead worker) sends that work to this process,
    says so, and leaves the pool to the work after it."""
    files = _project(tmp_path, monkeypatch)
    serial = batch_module.check_files(files, ANALYZER, None, 1, root=tmp_path)
    _everything_in_the_pool(monkeypatch)
    monkeypatch.setattr(batch_module, "_screen_chunk", _fail)
    events, handed = _record(monkeypatch)
    survived = batch_module.check_files(files, ANALYZER, None, 2, root=tmp_path)
    assert survived.findings == serial.findings and survived.errors == serial.errors
    assert survived.warnings == [
        "the screening ran in one process: it failed in the 2 worker processes (ValueError: a bug in one chunk)"
    ]
    assert events.count("fork") == 1 and handed[-1] == "analysis" and survived.analysis_workers == 2


def test_a_closed_pool_is_not_started_again() -> None:
    workers = workers_module.Workers(ANALYZER, 2)
    workers.start()
    warnings: list[str] = []
    assert workers.pool("screening", warnings) is not None
    workers.close()
    assert workers.pool("analysis", warnings) is None and warnings == []


def _refuse(*_: object) -> None:  # pragma: no cover - runs in a worker, whose start it fails
    raise RuntimeError("no analyzer here")


def test_workers_that_cannot_build_their_analyzer_leave_the_run_to_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workers fork, but each fails as it starts: the first work that wants them learns
    it from their first task, and the run goes on here, saying so."""
    files = _project(tmp_path, monkeypatch)
    serial = batch_module.check_files(files, ANALYZER, None, 1, root=tmp_path)
    _everything_in_the_pool(monkeypatch)
    monkeypatch.setattr(workers_module, "_start_worker", _refuse)
    alone = batch_module.check_files(files, ANALYZER, None, 2, root=tmp_path)
    assert alone.workers == 0 and alone.analysis_workers == 0
    assert [w.split(":")[0] for w in alone.warnings] == [
        "the screening ran in one process", "the analysis ran in one process"
    ]
    assert all("2 worker processes could not start (BrokenProcessPool" in w for w in alone.warnings), alone.warnings
    assert alone.findings == serial.findings and alone.errors == serial.errors


def test_one_job_starts_no_pool() -> None:
    workers = workers_module.Workers(ANALYZER, 1)
    workers.start()
    warnings: list[str] = []
    assert workers.pool("screening", warnings) is None and warnings == []
    workers.close()
