"""Unrelated packages checked as one tree: two modules of one name never meet (SPEC §3.1.1).

Two folders, each a top-level package of scripts with its own ``recovery`` module: in
``a`` it is a validator that fails closed, in ``b`` it checks nothing. Each file's
findings must be those it has when its own folder, or the file alone, is checked;
before each group of files was analyzed as a project of its own, the whole tree's
``recovery`` was whichever came first, and ``b/main.py``'s three findings vanished.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from summaryguard.rules.cli import main
from test_cli_imported_modules import VALIDATOR

A_RECOVERY = VALIDATOR  # fails closed on each part of the invariant
A_LOOP = '''\
from recovery import verify


def restart(agent, checkpoint, deps):
    verify(checkpoint, deps)
    return agent.resume(checkpoint.summary)
'''
B_RECOVERY = '''\
def verify(checkpoint, deps):
    summary = checkpoint.summary
    return summary
'''
B_MAIN = '''\
from recovery import verify


def go(agent, checkpoint):
    verify(checkpoint, [])
    return agent.resume(checkpoint.summary)
'''


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.summaryguard]\n", encoding="utf-8")
    for folder, files in {"a": {"recovery.py": A_RECOVERY, "loop.py": A_LOOP},
                          "b": {"recovery.py": B_RECOVERY, "main.py": B_MAIN}}.items():
        (tmp_path / folder).mkdir()
        for name, text in files.items():
            (tmp_path / folder / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _findings(capsys: pytest.CaptureFixture[str], *args: str) -> set[tuple[str, int, str]]:
    status = main(["check", "--no-cache", "--format", "json", *args])
    report = json.loads(capsys.readouterr().out)
    assert status in (0, 1) and report["errors"] == []
    return {(Path(f["path"]).as_posix(), f["line"], f["code"]) for f in report["findings"]}


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_each_file_keeps_the_findings_of_its_own_package(
    tree: Path, capsys: pytest.CaptureFixture[str], jobs: str
) -> None:
    whole = _findings(capsys, "--jobs", jobs, ".")
    b_alone = _findings(capsys, "--jobs", jobs, "b/main.py")
    assert b_alone == {("b/main.py", 6, code) for code in ("SG101", "SG102", "SG103")}
    assert whole == b_alone
    assert _findings(capsys, "--jobs", jobs, "a/loop.py") == set()
    assert _findings(capsys, "--jobs", jobs, "a", "b") == b_alone
