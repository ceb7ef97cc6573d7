"""Shared fixtures of the command-line tests."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from summaryguard.rules.cli import main
from summaryguard.rules.cli.cache import CACHE_DIR_ENV

#: ``lint(source)`` -> (exit status, sorted [(line, code)] findings) for one file checked by the real CLI.
Lint = Callable[[str], tuple[int, list[tuple[int, str]]]]


@pytest.fixture
def cached_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty project (its own pyproject.toml) as the working folder, its result cache in
    the default place (``$SUMMARYGUARD_CACHE_DIR`` unset)."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text("[tool.summaryguard]\n", encoding="utf-8")
    monkeypatch.chdir(root)
    monkeypatch.delenv(CACHE_DIR_ENV, raising=False)
    return root


@pytest.fixture
def lint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Lint:
    """Check one source file in an empty project (its own pyproject.toml) with ``--format json``."""
    (tmp_path / "pyproject.toml").write_text("[tool.summaryguard]\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)

    def run(source: str) -> tuple[int, list[tuple[int, str]]]:
        (tmp_path / "module.py").write_text(source, encoding="utf-8")
        status = main(["check", "--no-cache", "--format", "json", "module.py"])
        report = json.loads(capsys.readouterr().out)
        assert report["errors"] == []
        return status, sorted((f["line"], f["code"]) for f in report["findings"])

    return run
