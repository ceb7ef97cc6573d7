"""main(argv) in process: usage, configuration errors, dispatch and the last-resort handler."""

from __future__ import annotations

import subprocess
import sys

from importlib import metadata
from pathlib import Path

import pytest

from summaryguard.rules.cli import runner
from summaryguard.rules.cli import main
from summaryguard.rules.cli.exitcodes import ExitCode


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty project folder as the current directory, cut off from any configuration above."""
    (tmp_path / "pyproject.toml").write_text("[tool.summaryguard]\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == ExitCode.OK
    assert capsys.readouterr().out.strip() == f"summaryguard {metadata.version('summaryguard')}"


def test_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == ExitCode.OK
    out = capsys.readouterr().out
    for command in ("check", "rules", "explain", "demo"):
        assert command in out


def test_check_help_documents_suppression(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--help"]) == ExitCode.OK
    out = " ".join(capsys.readouterr().out.split())
    assert "# summaryguard: ignore[CODE]" in out and "bare '# noqa' does not silence" in out


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        ([], "a command is required"),
        (["lint"], "invalid choice: 'lint'"),
        (["check", "--jobs", "0"], "must be at least 1, not 0"),
        (["check", "--jobs", "many"], "'many' is not a whole number"),
        (["check", "--format", "xml"], "invalid choice: 'xml'"),
        (["check", "--frobnicate"], "unrecognized arguments: --frobnicate"),
        (["explain"], "the following arguments are required: CODE"),
    ],
)
def test_usage_errors(argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == ExitCode.ERROR
    assert fragment in capsys.readouterr().err


def test_configuration_syntax_error(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "pyproject.toml").write_text('[tool.summaryguard]\nselect = ["SG1",\nignore = 3\n', encoding="utf-8")
    assert main(["check"]) == ExitCode.ERROR
    err = capsys.readouterr().err
    assert err.startswith(f"{project / 'pyproject.toml'}:3: error: invalid TOML")


def test_configuration_named_but_missing(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--config", "nope.toml"]) == ExitCode.ERROR
    assert capsys.readouterr().err == "nope.toml: error: configuration file not found\n"


def test_an_empty_configuration_path_is_named_as_such(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``Path("")`` is the current folder: it was read as a configuration ("Is a directory")."""
    assert main(["check", "--config", ""]) == ExitCode.ERROR
    assert capsys.readouterr().err == "--config: error: an empty path names no configuration file\n"


def test_a_deleted_current_folder_is_a_usage_error(tmp_path: Path) -> None:
    """Run in a real process: a deleted working folder cannot be entered from pytest's own."""
    gone = tmp_path / "gone"
    gone.mkdir()
    code = (
        "import os, sys; os.chdir(sys.argv[1]); os.rmdir(sys.argv[1]);"
        "from summaryguard.rules.cli.command import main; sys.exit(main(['check', sys.argv[2]]))"
    )
    (tmp_path / "ok.py").write_text("x = 1\n", encoding="utf-8")
    result = subprocess.run([sys.executable, "-c", code, str(gone), str(tmp_path / "ok.py")], capture_output=True, text=True)
    assert result.returncode == ExitCode.ERROR
    assert result.stderr == (
        "summaryguard check: error: the current folder no longer exists (deleted?); run from an existing folder\n"
    )


def test_demo_is_dispatched_with_its_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--help"]) == ExitCode.OK
    assert "usage: summaryguard demo" in capsys.readouterr().out
    assert main(["demo", "--no-such-option"]) == ExitCode.ERROR


def raise_(exc: BaseException):  # type: ignore[no-untyped-def]
    def run(*args: object, **kwargs: object) -> None:
        raise exc

    return run


def test_internal_error_is_reported_without_traceback(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("SUMMARYGUARD_DEBUG", raising=False)
    monkeypatch.setattr(runner, "run_check", raise_(RuntimeError("boom")))
    assert main(["check"]) == ExitCode.ERROR
    err = capsys.readouterr().err
    assert err.startswith("summaryguard: internal error: RuntimeError: boom\n")
    assert "Traceback" not in err


def test_internal_error_traceback_on_request(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SUMMARYGUARD_DEBUG", "1")
    monkeypatch.setattr(runner, "run_check", raise_(ValueError("bad")))
    assert main(["check"]) == ExitCode.ERROR
    err = capsys.readouterr().err
    assert "Traceback" in err and "internal error: ValueError: bad" in err


def test_interrupt(project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(runner, "run_check", raise_(KeyboardInterrupt()))
    assert main(["check"]) == ExitCode.INTERRUPTED == 130
    assert capsys.readouterr().err == "summaryguard: interrupted\n"
