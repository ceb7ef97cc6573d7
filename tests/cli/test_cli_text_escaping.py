"""B7: the default text format cannot be made to inject a workflow command or a
terminal escape by a file name or a message (rules/formats/text.py).

Git allows newlines in file names, and GitHub Actions runs a ``::command::`` from any
line of a job's output. Real files with such names, checked by the real command.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from summaryguard.rules.cli.formats.text import escape, format_error, format_finding
from summaryguard.rules.cli.report import ReadError

pytestmark = pytest.mark.skipif(os.name == "nt", reason="file names with newlines are POSIX-only")

CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
INJECTED = "x\n::warning title=CI::all checks passed.py"


def check(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "summaryguard.rules.cli", "check", "--no-cache", *argv],
        cwd=cwd, capture_output=True, text=True, timeout=120,
    )


def test_a_file_name_with_a_newline_and_a_workflow_command_stays_on_one_line(tmp_path: Path) -> None:
    (tmp_path / INJECTED).write_text("def f(:\n")
    (tmp_path / "::error title=x::boom.py").write_text("def f(:\n")
    (tmp_path / "term\x1b[2J\x1b]0;pwned\x07.py").write_text("def f(:\n")
    result = check(tmp_path, ".")
    assert result.returncode == 2
    lines = result.stdout.splitlines()
    assert len(lines) == 4  # three errors and the summary, one line each
    assert not any(line.lstrip().startswith("::") for line in lines)
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "./x\\n::warning title=CI::all checks passed.py:1: error: syntax error:" in result.stdout
    assert "./term\\x1b[2J\\x1b]0;pwned\\x07.py:1: error:" in result.stdout


def test_the_trace_and_the_run_s_own_messages_escape_paths_too(tmp_path: Path) -> None:
    # --show-trace wrote its steps' paths raw: a file name with a newline started a line
    # with a workflow command under each finding. The folder named on the command line and
    # a --config path are escaped as well.
    (tmp_path / "pyproject.toml").write_text("[tool.summaryguard]\n")
    hostile = "x\n::error file=evil.py,line=1::injected\n\x1b[2Jy.py"
    (tmp_path / hostile).write_text("def resume_it(checkpoint):\n    return checkpoint.resume_context()\n")
    result = check(tmp_path, "--show-trace", hostile)
    assert result.returncode == 1
    assert not any(line.lstrip().startswith("::") for line in result.stdout.splitlines())
    assert "\x1b" not in result.stdout
    assert "    x\\n::error file=evil.py,line=1::injected\\n\\x1b[2Jy.py:2: " in result.stdout
    (tmp_path / "empty\n::warning::dir").mkdir()
    for argv in (["empty\n::warning::dir"], ["--config", "no\n::warning::such.toml", "."]):
        result = check(tmp_path, *argv)
        assert not any(line.lstrip().startswith("::") for line in result.stderr.splitlines()), argv
        assert "\\n::warning::" in result.stderr


def test_a_file_named_on_the_command_line_cannot_start_a_line_with_a_command(tmp_path: Path) -> None:
    name = "::error title=x::boom.py"
    (tmp_path / name).write_text("def f(:\n")
    result = check(tmp_path, name)
    assert result.returncode == 2
    assert result.stdout.splitlines()[0].startswith("\\x3a:error title=x::boom.py:1: error:")


class _Finding:
    def __init__(self, path: str, message: str) -> None:
        self.path, self.line, self.column, self.code, self.name, self.message = path, 1, 1, "SG101", "n", message


@given(st.text(), st.text())
@example(":", "")  # the path alone does not start with "::", the line it starts does
@example(" :", "x")
def test_no_path_or_message_makes_more_than_one_line_or_a_command(path: str, message: str) -> None:
    for line in (format_finding(_Finding(path, message)), format_error(ReadError(path, 3, message))):  # type: ignore[arg-type]
        assert not CONTROLS.search(line)
        assert len(line.splitlines()) == 1
        assert not line.lstrip().startswith("::")
        assert "\x1b" not in line


def test_ordinary_text_is_unchanged() -> None:
    assert escape("src/agent.py") == "src/agent.py"
    assert escape("café/naïve.py") == "café/naïve.py"
    assert escape("a::b.py") == "a::b.py"
