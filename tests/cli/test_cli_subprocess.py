"""The installed ``summaryguard`` console script, run as a user runs it: exit codes, formats, no tracebacks."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from summaryguard.rules.cli.exitcodes import ExitCode

SCRIPT = shutil.which("summaryguard")
if SCRIPT is None:  # pragma: no cover - the package is installed for the tests
    pytest.skip("the summaryguard console script is not installed", allow_module_level=True)

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


def run(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "SUMMARYGUARD_DEBUG"}
    return subprocess.run([SCRIPT, *argv], cwd=cwd, capture_output=True, text=True, timeout=120, env=env)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.summaryguard]\n", encoding="utf-8")
    return tmp_path


def test_version(project: Path) -> None:
    result = run(project, "--version")
    assert result.returncode == 0
    assert result.stdout.startswith("summaryguard ")


def test_exit_0_clean(project: Path) -> None:
    (project / "ok.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    result = run(project, "check")
    assert (result.returncode, result.stderr) == (ExitCode.OK, "")
    assert result.stdout.startswith("All clear: no findings in 1 file")


def test_exit_1_findings_json(project: Path) -> None:
    (project / "agent.py").write_text(AGENT, encoding="utf-8")
    result = run(project, "check", "--format", "json", "--select", "SG2")
    assert result.returncode == ExitCode.FINDINGS
    report = json.loads(result.stdout)
    assert [(f["path"], f["line"], f["code"]) for f in report["findings"]] == [("agent.py", 3, "SG201")]
    assert report["stats"]["files"] == 1


def test_exit_2_bad_file_but_the_rest_is_checked(project: Path) -> None:
    (project / "agent.py").write_text(AGENT, encoding="utf-8")
    (project / "broken.py").write_text("def resume_from_summary(checkpoint:\n", encoding="utf-8")
    result = run(project, "check", "--select", "SG201")
    assert result.returncode == ExitCode.ERROR
    assert result.stdout.splitlines()[0].startswith("agent.py:3:35: SG201 [rederive-missing-ref]")
    assert "broken.py:" in result.stdout and "error: syntax error" in result.stdout
    assert "Traceback" not in result.stderr


def test_exit_2_configuration(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.summaryguard]\nselekt = []\n", encoding="utf-8")
    result = run(project, "check")
    assert result.returncode == ExitCode.ERROR
    assert result.stderr.startswith(f"{project / 'pyproject.toml'}:2: error: [tool.summaryguard]: unknown key 'selekt'")
    assert result.stdout == ""


def test_exit_2_usage(project: Path) -> None:
    result = run(project, "check", "--jobs", "-1")
    assert result.returncode == ExitCode.ERROR
    assert "--jobs: must be at least 1" in result.stderr


NASTY: dict[str, bytes] = {
    "null_bytes.py": b"summary = 1\x00\nresume()\n",
    "deep.py": b"summary = resume(" + b"(" * 3000 + b"1" + b")" * 3000 + b")\n",
    "deep_blocks.py": b"".join(b"    " * i + b"if summary:\n" for i in range(120)) + b"    " * 120 + b"resume()\n",
    "lone_cr.py": b"summary = 1\rresume()\r",
    "tabs.py": b"def resume(summary):\n\tif summary:\n        return 1\n",
    "unterminated.py": b'summary = """resume\n',
    "binary.py": bytes(range(256)) * 4,
    "bom_only.py": b"\xef\xbb\xbf",
    "empty.py": b"",
    "form_feed.py": b"\x0csummary = checkpoint.resume_context()\n",
    "bad_cookie.py": b"# coding: klingon\nsummary = 1\n",
    "dedent.py": b"if summary:\n        resume()\n    resume()\n",
    "fstring.py": b'summary = f"{checkpoint.resume_context()!r:{width}}"  # noqa: SG101\n',
    "match.py": b"match summary:\n    case {'generation': g}:\n        checkpoint.resume_context()\n",
    "walrus.py": b"if (s := checkpoint.summary) is None:\n    s = search_tool()\n",
}


def test_no_input_produces_a_traceback(project: Path) -> None:
    for name, raw in NASTY.items():
        (project / name).write_bytes(raw)
    result = run(project, "check", "--format", "json")
    assert result.returncode in (ExitCode.OK, ExitCode.FINDINGS, ExitCode.ERROR)
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    report = json.loads(result.stdout)
    assert report["stats"]["files"] == len(NASTY)
    errored = {e["path"] for e in report["errors"]}
    assert {"binary.py", "bad_cookie.py"} <= errored


def test_broken_pipe_is_quiet(project: Path) -> None:
    for index in range(30):
        (project / f"agent{index}.py").write_text(AGENT, encoding="utf-8")
    process = subprocess.Popen([SCRIPT, "check"], cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # the reader goes away before the report is written
    stderr = process.stderr.read().decode()
    process.wait(timeout=120)
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr


def test_module_entry_point(project: Path) -> None:
    (project / "agent.py").write_text(AGENT, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "summaryguard.rules.cli", "check", "--select", "SG201"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == ExitCode.FINDINGS


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_file_names_that_are_not_utf8_give_valid_utf8_output(project: Path, fmt: str) -> None:
    try:
        (project / os.fsdecode(b"\xff\xfe_agent.py")).write_text(AGENT, encoding="utf-8")
        (project / os.fsdecode(b"\xfe_broken.py")).write_text("def f(:\n", encoding="utf-8")
    except (OSError, UnicodeError):  # pragma: no cover - a file system that only takes UTF-8 names
        pytest.skip("this file system refuses names that are not UTF-8")
    # A UTF-8 terminal: stdout refuses what UTF-8 cannot encode, as most locales do.
    env = {k: v for k, v in os.environ.items() if k != "SUMMARYGUARD_DEBUG"}
    env["PYTHONIOENCODING"] = "utf-8:strict"
    result = subprocess.run(
        [SCRIPT, "check", "--format", fmt, "--select", "SG101"], cwd=project, capture_output=True, timeout=120, env=env
    )
    assert result.returncode == ExitCode.ERROR and b"internal error" not in result.stderr
    out = result.stdout.decode("utf-8")  # strict: valid UTF-8 or this fails
    if fmt == "text":
        assert "\\xff\\xfe_agent.py:2:11: SG101" in out and "\\xfe_broken.py:1: error: syntax error" in out
    elif fmt == "json":
        report = json.loads(out)
        assert [f["path"] for f in report["findings"]] == ["\\xff\\xfe_agent.py"]
        assert [e["path"] for e in report["errors"]] == ["\\xfe_broken.py"]
    elif fmt == "sarif":
        run_ = json.loads(out)["runs"][0]
        # The URI names the file by its bytes; the message shows them as \xNN.
        assert run_["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "%FF%FE_agent.py"
        (notification,) = run_["invocations"][0]["toolExecutionNotifications"]
        assert notification["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "%FE_broken.py"
        assert notification["message"]["text"].startswith("\\xfe_broken.py: syntax error")
    else:
        assert "::error file=\\xff\\xfe_agent.py,line=2,col=11," in out


@pytest.mark.parametrize("encoding", ["cp1252", "ascii"])
@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_an_output_encoding_without_the_paths_characters_escapes_them(project: Path, fmt: str, encoding: str) -> None:
    # A cp1252 console (Windows) or PYTHONIOENCODING=ascii: the report stopped halfway on
    # a path beyond its encoding with an internal error. What it cannot spell is escaped;
    # JSON and SARIF stay valid, also for a character beyond the BMP.
    (project / "日本.py").write_text(AGENT, encoding="utf-8")
    (project / "bad_😀.py").write_text(AGENT, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "SUMMARYGUARD_DEBUG"}
    env["PYTHONIOENCODING"] = encoding
    result = subprocess.run(
        [SCRIPT, "check", "--format", fmt, "--select", "SG201"], cwd=project, capture_output=True, timeout=120, env=env
    )
    assert (result.returncode, result.stderr) == (ExitCode.FINDINGS, b"")
    out = result.stdout.decode("ascii")
    if fmt == "json":  # the escapes are JSON's own: the reader gets the names back
        assert sorted(f["path"] for f in json.loads(out)["findings"]) == ["bad_😀.py", "日本.py"]
    elif fmt == "sarif":
        assert len(json.loads(out)["runs"][0]["results"]) == 2
    else:
        assert "\\u65e5\\u672c.py" in out and "bad_\\U0001f600.py" in out


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_report_the_system_refuses_to_take_is_said_so(project: Path) -> None:
    (project / "agent.py").write_text(AGENT, encoding="utf-8")
    with open("/dev/full", "w") as full:
        result = subprocess.run([SCRIPT, "check"], cwd=project, stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert result.returncode == ExitCode.ERROR
    assert result.stderr == "summaryguard: error: cannot write to standard output: No space left on device\n"


def test_a_closed_standard_output_is_no_internal_error(project: Path) -> None:
    (project / "agent.py").write_text(AGENT, encoding="utf-8")
    result = subprocess.run([SCRIPT, "check"], cwd=project, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, timeout=120, preexec_fn=lambda: os.close(1))
    assert (result.returncode, result.stderr) == (ExitCode.FINDINGS, "")
