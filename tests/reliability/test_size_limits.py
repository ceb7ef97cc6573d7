"""B15 (analyzer): the size limits are checked before the text is parsed, so a huge file
is refused for its size at the cost of counting its lines, not of parsing it.

Behaviour only: a file over the limit whose last line is a syntax error is reported
as too large (before the fix, CPython parsed all of it first and reported the syntax
error). Time and memory are measured by tests/benchmarks/bench_size_limits.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from summaryguard.rules.cli import main
from summaryguard.rules.engine import analyzer as engine_analyzer

RESUME = "def go(checkpoint):\n    return checkpoint.resume_context()\n"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    status = main(["check", "--no-cache", "--format", "json", *argv])
    return status, json.loads(capsys.readouterr().out)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.summaryguard]\n")
    (tmp_path / "good.py").write_text(RESUME)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    "body, size",
    [
        ("x = checkpoint.summary\n" * engine_analyzer.MAX_LINES, f"{engine_analyzer.MAX_LINES + 4:,} lines"),
        ("x = '" + "a" * engine_analyzer.MAX_CHARS + "'\n", None),
    ],
    ids=["lines", "characters"],
)
def test_a_file_over_the_limits_is_refused_before_it_is_parsed(
    project: Path, capsys: pytest.CaptureFixture[str], body: str, size: str | None
) -> None:
    (project / "big.py").write_text(RESUME + body + "def broken(:\n")
    status, report = run(capsys, "big.py", "good.py")
    assert status == 2
    [error] = report["errors"]
    assert error["path"] == "big.py" and error["line"] is None
    assert error["message"].startswith("too large to analyze (")
    if size is not None:
        assert size in error["message"]
    assert {f["path"] for f in report["findings"]} == {"good.py"}


def test_a_file_at_the_limit_is_still_analyzed(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    filler = "\n" * (engine_analyzer.MAX_LINES - RESUME.count("\n") - 1)
    (project / "edge.py").write_text(RESUME + filler)
    assert (project / "edge.py").read_text().count("\n") + 1 == engine_analyzer.MAX_LINES
    status, report = run(capsys, "edge.py")
    assert report["errors"] == [] and status == 1
