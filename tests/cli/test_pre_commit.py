"""The pre-commit hook, run by the real ``pre-commit`` against a throw-away git repository.

This checkout is the hook repository. pre-commit clones it, builds its own
virtual environment and installs summaryguard there with pip (dependencies
from the package index; nothing else goes online), then runs the hook on the
files it is given. The environment is built once for the module (shared
``PRE_COMMIT_HOME``); expect a minute on a cold machine, hence ``slow``: it
still runs in CI, where the whole suite runs.

pre-commit installs a hook repository at a commit, so the hook tested is
this checkout's ``HEAD`` (``try-repo --ref``): in CI, a fresh clone, that is
the code under test. Without ``--ref``, ``try-repo`` would add the tracked
files' uncommitted changes but not new untracked files, a mix that need not
even import.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from summaryguard.rules.cli.exitcodes import ExitCode

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 900

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
CLEAN = """\
from summaryguard.guard import check_resume


def next_turn(checkpoint, deps):
    check_resume(checkpoint, deps)
    return checkpoint.resume_context()
"""
STUB = "def next_turn(checkpoint: object) -> object: ...\n"


def _environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT")) and k != "SUMMARYGUARD_DEBUG"}
    env.update(
        PRE_COMMIT_HOME=str(home),
        PRE_COMMIT_COLOR="never",
        GIT_AUTHOR_NAME="test",
        GIT_AUTHOR_EMAIL="test@example.invalid",
        GIT_COMMITTER_NAME="test",
        GIT_COMMITTER_EMAIL="test@example.invalid",
        # The user's own git configuration (a global core.hooksPath, signing) stays out of it.
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
    )
    return env


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT)


def _git(cwd: Path, env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return _run(["git", *argv], cwd, env)


@pytest.fixture(scope="module")
def head() -> str:
    if not (ROOT / ".git").exists():
        pytest.skip(f"{ROOT} is not a git checkout: pre-commit needs one to use it as the hook repository")
    result = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
    return result.stdout.strip()


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return _environment(tmp_path_factory.mktemp("pre-commit-home"))


@pytest.fixture
def project(tmp_path: Path, env: dict[str, str]) -> Path:
    """A git repository with a configuration, one defect, one clean module and a stub."""
    work = tmp_path / "project"
    work.mkdir()
    (work / "pyproject.toml").write_text("[tool.summaryguard]\n", encoding="utf-8")
    (work / "agent.py").write_text(AGENT, encoding="utf-8")
    (work / "clean.py").write_text(CLEAN, encoding="utf-8")
    (work / "clean.pyi").write_text(STUB, encoding="utf-8")
    assert _git(work, env, "init", "-q").returncode == 0
    return work


def test_the_manifest_is_valid_for_pre_commit() -> None:
    from pre_commit.clientlib import load_manifest

    (hook,) = load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))
    assert (hook["id"], hook["entry"], hook["language"]) == ("summaryguard", "summaryguard check --force-exclude", "python")
    assert hook["types_or"] == ["python", "pyi"] and hook["require_serial"] is True


def test_try_repo_fails_on_a_finding_and_passes_a_clean_file(project: Path, env: dict[str, str], head: str) -> None:
    assert _git(project, env, "add", ".").returncode == 0
    try_repo = [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "summaryguard", "--ref", head]

    failing = _run([*try_repo, "--files", "agent.py", "clean.py"], project, env)
    assert failing.returncode == ExitCode.FINDINGS, failing.stdout + failing.stderr
    assert "summaryguard" in failing.stdout and "Failed" in failing.stdout
    assert "agent.py:3:35: SG201 [rederive-missing-ref]" in failing.stdout
    assert "clean.py" not in failing.stdout.split("SG201", 1)[1]

    passing = _run([*try_repo, "--files", "clean.py", "clean.pyi"], project, env)
    assert passing.returncode == ExitCode.OK, passing.stdout + passing.stderr
    assert "Passed" in passing.stdout


def test_the_configured_exclude_holds_for_staged_files(project: Path, env: dict[str, str], head: str) -> None:
    """pre-commit names every staged file; exclude must still keep generated code out."""
    (project / "pyproject.toml").write_text('[tool.summaryguard]\nexclude = ["generated"]\n', encoding="utf-8")
    (project / "generated").mkdir()
    (project / "generated" / "agent.py").write_text(AGENT, encoding="utf-8")
    assert _git(project, env, "add", ".").returncode == 0
    try_repo = [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "summaryguard", "--ref", head]
    result = _run([*try_repo, "--files", "generated/agent.py", "clean.py"], project, env)
    assert result.returncode == ExitCode.OK, result.stdout + result.stderr
    assert "SG201" not in result.stdout


def test_a_finding_fails_the_commit(project: Path, env: dict[str, str], head: str) -> None:
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {ROOT}\n    rev: {head}\n    hooks:\n      - id: summaryguard\n", encoding="utf-8"
    )
    install = _run([sys.executable, "-m", "pre_commit", "install"], project, env)
    assert install.returncode == 0, install.stdout + install.stderr

    assert _git(project, env, "add", "pyproject.toml", ".pre-commit-config.yaml", "clean.py", "clean.pyi").returncode == 0
    clean = _git(project, env, "commit", "-q", "-m", "clean")
    assert clean.returncode == 0, clean.stdout + clean.stderr

    assert _git(project, env, "add", "agent.py").returncode == 0
    refused = _git(project, env, "commit", "-q", "-m", "defect")
    assert refused.returncode != 0
    assert "SG201" in refused.stdout + refused.stderr
    log = _git(project, env, "log", "--format=%s")
    assert log.stdout.split() == ["clean"]  # the defect was not committed
