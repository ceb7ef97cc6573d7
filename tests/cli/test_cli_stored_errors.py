"""SG202 on real files: a handler that stores the reconciliation error and raises it after the ``try``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from summaryguard.rules.cli import main
from summaryguard.rules.exitcodes import ExitCode

HEAD = """\
from summaryguard.guard import SummaryReconciliationError, check_resume

def recover(checkpoint, deps, agent, strict=True):
    error = None
    try:
        check_resume(checkpoint, deps)
    except SummaryReconciliationError as exc:
        error = exc
"""
RESUME = "    return agent.resume(checkpoint.summary, checkpoint.turn)\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.summaryguard]\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def check(capsys: pytest.CaptureFixture[str], project: Path, text: str) -> tuple[int, list[tuple[int, str]]]:
    (project / "a.py").write_text(text, encoding="utf-8")
    status = main(["check", "--no-cache", "--format", "json", "a.py"])
    report = json.loads(capsys.readouterr().out)
    assert report["errors"] == []
    return status, [(f["line"], f["code"]) for f in report["findings"]]


@pytest.mark.parametrize(
    "after",
    [
        "    if error is not None:\n        raise error\n",
        "    if error:\n        raise RuntimeError('recovery refused') from error\n",
        "    if not error:\n        pass\n    else:\n        raise error\n",
    ],
    ids=["is-not-none", "truthy-wrapped", "negated-else"],
)
def test_stored_error_raised_before_the_resume_is_clean(
    capsys: pytest.CaptureFixture[str], project: Path, after: str
) -> None:
    assert check(capsys, project, HEAD + after + RESUME) == (ExitCode.OK, [])


@pytest.mark.parametrize(
    "after",
    [
        "",
        "    if error is not None and strict:\n        raise error\n",
        "    result = agent.resume(checkpoint.summary, checkpoint.turn)\n    if error:\n        raise error\n",
        "    error = None\n    if error is not None:\n        raise error\n",
    ],
    ids=["never-raised", "raised-on-some-paths", "raised-after-the-resume", "cleared-before-the-test"],
)
def test_stored_error_that_can_reach_the_resume_is_sg202(
    capsys: pytest.CaptureFixture[str], project: Path, after: str
) -> None:
    status, found = check(capsys, project, HEAD + after + RESUME)
    assert status == ExitCode.FINDINGS
    assert (7, "SG202") in found


def test_stored_error_never_raised_without_a_resume_is_sg202(
    capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    status, found = check(capsys, project, HEAD + "    return error is None\n")
    assert (status, found) == (ExitCode.FINDINGS, [(7, "SG202")])
