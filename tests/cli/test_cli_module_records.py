"""Module records (rules/cli/records.py): one checked module's analysis, reused by key.

A record is keyed by the module's content and the keys of what it imports,
transitively, under the settings folder of the cache. Behaviour only, no timings
(speed: tests/benchmarks/bench_module_records.py). Real files, real runs of the
command (in process, and one real subprocess for the corrupt cache).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from summaryguard.rules.cli import main
from summaryguard.rules.cli.batch import check_files
from summaryguard.rules.cli.cache import CACHE_DIR_ENV, CACHE_FOLDER, ResultCache
from summaryguard.rules.cli.chunks import Unit
from summaryguard.rules.cli.records import record_keys
from summaryguard.rules.engine import Analyzer, Vocabulary, all_rules

FIXTURES = Path(__file__).parents[1] / "rules" / "fixtures"

#: A chain: agent.py imports wrapper.py, which imports checks.py (the validator).
CHAIN = {
    "app/__init__.py": "",
    "app/checks.py": """
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
    "app/wrapper.py": """
        from app.checks import verify


        def checked_resume(checkpoint, agent, deps):
            verify(checkpoint, deps)
            return agent.resume(checkpoint.summary, checkpoint.turn)
        """,
    "app/agent.py": """
        from app.wrapper import checked_resume


        def recover(store, agent, deps):
            checkpoint = store.load()
            return checked_resume(checkpoint, agent, deps)
        """,
    "app/other.py": """
        def next_turn(checkpoint, search_tool):
            ctx = checkpoint.resume_context()
            handle = ctx.get("handle") or search_tool("latest")
            return handle
        """,
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text("[tool.summaryguard]\n", encoding="utf-8")
    for path, text in CHAIN.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    monkeypatch.chdir(root)
    monkeypatch.delenv(CACHE_DIR_ENV, raising=False)
    return root


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[tuple[str, int, str, str]]]:
    status = main(["check", "--format", "json", *argv])
    report = json.loads(capsys.readouterr().out)
    return status, sorted((f["path"], f["line"], f["code"], f["message"]) for f in report["findings"])


def batch(files: list[str], root: Path, jobs: int = 1):  # type: ignore[no-untyped-def]
    analyzer = Analyzer(Vocabulary.build(), all_rules())
    return check_files(files, analyzer, ResultCache(root / CACHE_FOLDER, "settings"), jobs=jobs, root=root)


def app_files(root: Path) -> list[str]:
    return [str(p.relative_to(root)) for p in sorted((root / "app").glob("*.py"))]


#: checks.py no longer checks that the summary is complete.
WEAKENED = (
    '    if summary.partial:\n        raise SummaryReconciliationError(summary.generation, checkpoint.turn, "", "partial")\n',
    "",
)


# -- a hit is the same analysis ----------------------------------------------------------


def test_a_warm_run_analyzes_nothing_and_reports_the_same(project: Path) -> None:
    files = app_files(project)
    cold = batch(files, project)
    assert cold.analyzed == 4 and cold.records_hit == 0  # __init__.py is screened out
    warm = batch(files, project)
    assert warm.analyzed == 0 and warm.records_hit == 4 and warm.cached_analysis
    assert warm.findings == cold.findings and warm.errors == cold.errors
    assert {f.path for f in cold.findings} == {"app/other.py"}  # wrapper.py and agent.py are protected by checks.py


def test_findings_are_the_same_with_and_without_the_cache(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(FIXTURES / "multimodule", project / "multi")
    shutil.copytree(FIXTURES / "langgraph_project", project / "lg")
    uncached = run(capsys, "--no-cache")
    assert uncached[1]
    assert run(capsys) == uncached  # cold, records written
    assert run(capsys) == uncached  # warm, from the records
    assert run(capsys, "--jobs", "2") == uncached


def test_a_record_serves_every_way_of_naming_the_file(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, ".")
    for named in ("app/other.py", "./app/other.py", str(project / "app" / "other.py")):
        hit = run(capsys, named)
        assert hit == run(capsys, "--no-cache", named)
        assert {path for path, *_ in hit[1]} == {named}


# -- invalidation follows imports ---------------------------------------------------------


def test_editing_an_imported_module_changes_its_importers_findings(project: Path) -> None:
    files = app_files(project)
    before = batch(files, project)
    assert not [f for f in before.findings if f.path == "app/agent.py"]
    checks = project / "app" / "checks.py"
    checks.write_text(checks.read_text().replace(*WEAKENED))
    after = batch(files, project)
    # checks.py changed: it, wrapper.py (imports it) and agent.py (imports wrapper.py) miss; other.py hits.
    assert after.analyzed == 3 and after.records_hit == 1
    assert {f.code for f in after.findings if f.path == "app/wrapper.py"} == {"SG102"}
    uncached = check_files(files, Analyzer(Vocabulary.build(), all_rules()), None, jobs=1, root=project)
    assert after.findings == uncached.findings and after.errors == uncached.errors
    checks.write_text(textwrap.dedent(CHAIN["app/checks.py"]).lstrip("\n"))
    again = batch(files, project)
    assert again.analyzed == 0 and again.findings == before.findings  # the first records serve again


def test_a_pre_commit_run_sees_an_edit_to_a_module_it_does_not_check(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "app/wrapper.py")[1] == []
    checks = project / "app" / "checks.py"
    checks.write_text(checks.read_text().replace(*WEAKENED))
    after = run(capsys, "app/wrapper.py")
    assert after == run(capsys, "--no-cache", "app/wrapper.py")
    assert {code for _, _, code, _ in after[1]} == {"SG102"}


def test_an_imported_module_created_or_deleted_misses(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    checks = project / "app" / "checks.py"
    text = checks.read_text()
    protected = run(capsys, "app/agent.py")
    checks.unlink()
    unprotected = run(capsys, "app/agent.py")
    assert unprotected == run(capsys, "--no-cache", "app/agent.py") and unprotected != protected
    checks.write_text(text)
    assert run(capsys, "app/agent.py") == protected


# -- keys ----------------------------------------------------------------------------------


@st.composite
def graphs(draw: st.DrawFn) -> tuple[list[str], dict[str, list[str]]]:
    count = draw(st.integers(1, 8))
    keys = [f"/m{i}.py" for i in range(count)]
    edges = draw(st.lists(st.tuples(st.sampled_from(keys), st.sampled_from(keys)), max_size=16))
    graph: dict[str, list[str]] = {key: [] for key in keys}
    for source, target in edges:
        if source != target and target not in graph[source]:
            graph[source].append(target)
    return keys, graph


def _reaches(graph: dict[str, list[str]], start: str, goal: str) -> bool:
    seen, todo = {start}, [start]
    while todo:
        for successor in graph[todo.pop()]:
            if successor == goal:
                return True
            if successor not in seen:
                seen.add(successor)
                todo.append(successor)
    return start == goal


@settings(max_examples=200, deadline=None)
@given(graphs(), st.data())
def test_an_edit_changes_the_keys_of_exactly_the_modules_that_reach_it(
    drawn: tuple[list[str], dict[str, list[str]]], data: st.DataObject
) -> None:
    keys, graph = drawn
    units = [Unit(key, key, "", True) for key in keys]
    edited = data.draw(st.sampled_from(keys))
    before = record_keys(units, graph, lambda u: u.key + " v1")
    after = record_keys(units, graph, lambda u: u.key + (" v2" if u.key == edited else " v1"))
    assert len(set(before.values())) == len(keys)  # one record per module, cycles included
    for key in keys:
        assert (before[key] != after[key]) == _reaches(graph, key, edited), key


# -- a damaged cache ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "garbage",
    [
        b"\x00\xff not json",
        b'{"settings": 1}',
        None,  # every record's rows replaced by rows of the wrong shape
    ],
)
def test_a_corrupt_record_is_ignored_without_a_traceback(project: Path, garbage: bytes | None) -> None:
    command = [sys.executable, "-m", "summaryguard.rules.cli", "check", "--format", "json", "."]
    environment = {k: v for k, v in os.environ.items() if k != CACHE_DIR_ENV}
    first = subprocess.run(command, cwd=project, capture_output=True, text=True, env=environment, timeout=120)
    (document,) = (project / CACHE_FOLDER).glob("*/modules.json")
    if garbage is None:
        content = json.loads(document.read_text())
        content["entries"] = {key: [[["x"]], [[1, 2, 3]], 0] for key in content["entries"]}
        document.write_text(json.dumps(content))
    else:
        document.write_bytes(garbage)
    second = subprocess.run(command, cwd=project, capture_output=True, text=True, env=environment, timeout=120)
    assert "Traceback" not in second.stderr and second.returncode == first.returncode == 1
    strip = lambda out: {k: v for k, v in json.loads(out).items() if k != "stats"}  # noqa: E731
    assert strip(second.stdout) == strip(first.stdout)


# -- locality of records ---------------------------------------------------------------------


def test_a_record_made_with_importers_serves_the_module_alone(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(FIXTURES / "multimodule", project / "multi")
    run(capsys, "multi")
    alone = "multi/recovery.py"
    assert run(capsys, alone) == run(capsys, "--no-cache", alone)
