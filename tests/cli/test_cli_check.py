"""``summaryguard check`` end to end, in process, with the real engine and rules."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from summaryguard.rules.cli import main
from summaryguard.rules.cli.exitcodes import ExitCode

# One unchecked resume (SG101-103 at line 2) and one re-derivation (SG201 at line 3).
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
AGENT_FINDINGS = [(2, "SG101"), (2, "SG102"), (2, "SG103"), (3, "SG201")]

# Fail-closed: the library's own check dominates the resume.
CLEAN = """\
from summaryguard.guard import check_resume


def next_turn(checkpoint, deps):
    check_resume(checkpoint, deps)
    return checkpoint.resume_context()
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder as the current directory, with its own (empty) configuration."""
    (tmp_path / "pyproject.toml").write_text("[tool.summaryguard]\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def configure(project: Path, body: str) -> None:
    write(project / "pyproject.toml", "[tool.summaryguard]\n" + body)


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    status = main(["check", "--format", "json", *argv])
    return status, json.loads(capsys.readouterr().out)


def located(report: dict) -> list[tuple[str, int, str]]:  # type: ignore[type-arg]
    return [(f["path"], f["line"], f["code"]) for f in report["findings"]]


def test_clean_project(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "src" / "agent.py", CLEAN)
    write(project / "src" / "util.py", "def add(a, b):\n    return a + b\n")
    assert main(["check"]) == ExitCode.OK
    out = capsys.readouterr().out
    assert out.startswith("All clear: no findings in 2 files (")


def test_findings_text(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "src" / "agent.py", AGENT)
    assert main(["check"]) == ExitCode.FINDINGS
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(" [")[0] for line in lines[:-1]] == [
        "src/agent.py:2:11: SG101",
        "src/agent.py:2:11: SG102",
        "src/agent.py:2:11: SG103",
        "src/agent.py:3:35: SG201",
    ]
    assert "[rederive-missing-ref]" in lines[3]
    assert lines[-1].startswith("Found 4 findings in 1 file (")


def test_json_report(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "src" / "agent.py", AGENT)
    write(project / "src" / "clean.py", CLEAN)
    status, report = run_json(capsys, "src")
    assert status == ExitCode.FINDINGS
    assert report["version"] == 1 and report["errors"] == []
    assert report["stats"]["files"] == 2 and report["stats"]["findings"] == 4
    assert isinstance(report["stats"]["seconds"], float)
    assert [(f["line"], f["code"]) for f in report["findings"]] == AGENT_FINDINGS
    first = dict(report["findings"][0])
    message = first.pop("message")
    trace = first.pop("trace")
    # the evidence chain, source first, the reported node last (SPEC §3.2)
    assert trace[-1] == {"path": "src/agent.py", "line": 2, "note": "SG101: reported here"}
    assert all(set(step) == {"path", "line", "note"} for step in trace) and len(trace) >= 2
    assert first == {
        "path": "src/agent.py",
        "line": 2,
        "column": 11,
        "end_line": 2,
        "end_column": 38,
        "code": "SG101",
        "name": "resume-without-generation-check",
    }
    assert "checkpoint.resume_context()" in message


@pytest.mark.parametrize(
    ("argv", "path"),
    [
        ([], "src/agent.py"),
        (["."], "./src/agent.py"),
        (["src/"], "src/agent.py"),
        (["./src"], "./src/agent.py"),
        (["src/agent.py"], "src/agent.py"),
    ],
)
def test_paths_as_given(project: Path, capsys: pytest.CaptureFixture[str], argv: list[str], path: str) -> None:
    write(project / "src" / "agent.py", AGENT)
    _, report = run_json(capsys, "--select", "SG201", *argv)
    assert located(report) == [(path, 3, "SG201")]


def test_absolute_path(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    agent = write(project / "src" / "agent.py", AGENT)
    _, report = run_json(capsys, "--select", "SG201", str(project / "src"))
    assert located(report) == [(str(agent), 3, "SG201")]


@pytest.mark.parametrize(
    ("options", "codes"),
    [
        (["--select", "SG2"], ["SG201"]),
        (["--select", "sg10"], ["SG101", "SG102", "SG103"]),
        (["--select", "SG101,SG201"], ["SG101", "SG201"]),
        (["--select", "SG101", "--select", "SG103"], ["SG101", "SG103"]),
        (["--ignore", "SG1"], ["SG201"]),
        (["--select", "ALL", "--ignore", "SG102,SG201"], ["SG101", "SG103"]),
        (["--select", "SG3"], []),
    ],
)
def test_select_and_ignore(
    project: Path, capsys: pytest.CaptureFixture[str], options: list[str], codes: list[str]
) -> None:
    write(project / "agent.py", AGENT)
    status, report = run_json(capsys, *options)
    assert [f["code"] for f in report["findings"]] == codes
    assert status == (ExitCode.FINDINGS if codes else ExitCode.OK)


def test_configured_select_ignore_and_cli_precedence(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "agent.py", AGENT)
    configure(project, 'select = ["SG1"]\nignore = ["SG103"]\n')
    assert [f["code"] for f in run_json(capsys)[1]["findings"]] == ["SG101", "SG102"]
    # --select replaces the configured select; the configured ignore still applies, --ignore adds.
    assert [f["code"] for f in run_json(capsys, "--select", "ALL")[1]["findings"]] == ["SG101", "SG102", "SG201"]
    assert [f["code"] for f in run_json(capsys, "--ignore", "SG101")[1]["findings"]] == ["SG102"]


@pytest.mark.parametrize("flag", ["--select", "--ignore"])
def test_unknown_code_on_the_command_line(project: Path, capsys: pytest.CaptureFixture[str], flag: str) -> None:
    assert main(["check", flag, "SG1,SG9"]) == ExitCode.ERROR
    err = capsys.readouterr().err
    assert err.startswith(f"summaryguard check: error: {flag}: unknown rule code or prefix 'SG9'")
    assert "SG201" in err


@pytest.mark.parametrize("value", ["", ",", " , "])
def test_an_empty_select_on_the_command_line_is_an_error(
    project: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    write(project / "agent.py", AGENT)
    assert main(["check", "--select", value]) == ExitCode.ERROR
    captured = capsys.readouterr()
    assert captured.err.startswith("summaryguard check: error: --select: no rule code or prefix given")
    assert "nothing would be checked" in captured.err and captured.out == ""


def test_an_empty_select_in_configuration_is_an_error(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "agent.py", AGENT)
    configure(project, "select = []\n")
    assert main(["check"]) == ExitCode.ERROR
    captured = capsys.readouterr()
    assert captured.err.startswith(f"{project / 'pyproject.toml'}:2: error: [tool.summaryguard] select: an empty list")
    assert captured.out == ""


@pytest.mark.parametrize(
    ("configured", "options", "message"),
    [
        ("", ["--ignore", "SG"], "--ignore removes every rule that the default selection (ALL) chooses"),
        ("", ["--select", "SG101", "--ignore", "SG1"], "--ignore removes every rule that --select chooses"),
        ('ignore = ["SG1"]\n', ["--select", "SG10"], "removes every rule that --select chooses"),
        ('select = ["SG2"]\nignore = ["SG20"]\n', [], "[tool.summaryguard] ignore: it removes every rule"),
    ],
)
def test_a_selection_that_ignore_empties_is_an_error(
    project: Path, capsys: pytest.CaptureFixture[str], configured: str, options: list[str], message: str
) -> None:
    write(project / "agent.py", AGENT)
    configure(project, configured)
    assert main(["check", *options]) == ExitCode.ERROR
    captured = capsys.readouterr()
    assert message in captured.err and "nothing would be checked" in captured.err
    assert captured.out == ""


def test_unknown_code_in_configuration(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    configure(project, 'ignore = ["SG2O1"]\n')
    assert main(["check"]) == ExitCode.ERROR
    err = capsys.readouterr().err
    assert err.startswith(f"{project / 'pyproject.toml'}:2: error: [tool.summaryguard] ignore: unknown rule code")
    assert "'SG2O1'" in err


def test_per_file_ignores(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "tests" / "test_agent.py", AGENT)
    write(project / "src" / "agent.py", AGENT)
    configure(project, '[tool.summaryguard.per-file-ignores]\n"tests/*" = ["SG1", "SG201"]\n"src/agent.py" = ["SG10"]\n')
    assert located(run_json(capsys)[1]) == [("src/agent.py", 3, "SG201")]


def test_exclude_and_gitignore_and_venv(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "agent.py", AGENT)
    for folder in ("build", "generated", ".venv-x", "nested/skip"):
        write(project / folder / "agent.py", AGENT)
    write(project / ".venv-x" / "pyvenv.cfg", "home = /usr\n")
    write(project / ".gitignore", "generated/\n")
    write(project / "nested" / ".gitignore", "skip\n")
    configure(project, 'exclude = ["build"]\n')
    status, report = run_json(capsys, "--select", "SG201")
    assert located(report) == [("agent.py", 3, "SG201")]
    assert report["stats"]["files"] == 1 and status == ExitCode.FINDINGS


def test_suppressions(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = AGENT.splitlines()
    lines[1] += "  # summaryguard: ignore[SG101, SG102] reason: checked by the caller"
    lines[2] += "  # noqa: SG201"
    write(project / "agent.py", "\n".join(lines) + "\n")
    assert [(f["line"], f["code"]) for f in run_json(capsys)[1]["findings"]] == [(2, "SG103")]


@pytest.mark.parametrize(
    "comment",
    ["# noqa", "# noqa: E501", "# summaryguard: ignore", "# summaryguard: ignore[SG101]", "# noqa SG201"],
)
def test_what_does_not_suppress(project: Path, capsys: pytest.CaptureFixture[str], comment: str) -> None:
    lines = AGENT.splitlines()
    lines[2] += "  " + comment
    write(project / "agent.py", "\n".join(lines) + "\n")
    assert (3, "SG201") in [(f["line"], f["code"]) for f in run_json(capsys)[1]["findings"]]


def test_a_hash_in_a_string_is_not_a_comment(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = AGENT.splitlines()
    lines[2] = lines[2].replace('"latest"', '"latest  # noqa: SG201"')
    write(project / "agent.py", "\n".join(lines) + "\n")
    assert (3, "SG201") in [(f["line"], f["code"]) for f in run_json(capsys)[1]["findings"]]


def test_suppression_applies_to_the_first_line_of_a_finding(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = (
        "def next_turn(checkpoint):\n"
        "    ctx = checkpoint.resume_context()  # summaryguard: ignore[SG101,SG102,SG103]\n"
        '    handle = ctx.get("handle") or search(  # noqa: SG201\n'
        '        "latest",\n'
        "    )\n"
        "    other = ctx.get('other') or search(\n"
        "        'x',\n"
        "    )  # noqa: SG201\n"
        "    return handle, other\n"
        "\n\nfrom summaryguard.guard import tool_guard  # noqa: E402\n\n\n"
        "@tool_guard\ndef search(query):\n    return query\n"
    )
    write(project / "agent.py", source)
    # The comment on the last line of the second call silences nothing: it is reported (SG001).
    assert [(f["line"], f["code"]) for f in run_json(capsys)[1]["findings"]] == [(6, "SG201"), (8, "SG001")]


def test_configured_tool_calls_reach_the_engine(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(
        project / "agent.py",
        'def next_turn(checkpoint):\n    ctx = checkpoint.resume_context()\n'
        '    return ctx.get("handle") or make_handle("latest")\n',
    )
    assert run_json(capsys, "--select", "SG201")[1]["findings"] == []
    configure(project, 'tool-calls = ["make_handle"]\n')
    assert located(run_json(capsys, "--select", "SG201")[1]) == [("agent.py", 3, "SG201")]


def test_bad_files_are_reported_and_the_rest_is_checked(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "a_agent.py", AGENT)
    # Files the pre-filter lets through (they mention resumes and summaries) are parsed.
    write(project / "b_syntax.py", "def resume_from_summary(checkpoint:\n    pass\n")
    (project / "c_undecodable.py").write_bytes(b"summary = 1\nresume = '\xff'\n")
    (project / "d_dangling.py").symlink_to(project / "nowhere.py")
    (project / "e_folder.py").mkdir()  # a folder with a .py name is walked, not read
    write(project / "z_agent.py", AGENT)
    status, report = run_json(capsys, "--select", "SG201", ".", "missing.py")
    assert status == ExitCode.ERROR
    assert located(report) == [("./a_agent.py", 3, "SG201"), ("./z_agent.py", 3, "SG201")]
    errors = [(e["path"], e["line"]) for e in report["errors"]]
    # Where exactly the parser places a syntax error is the engine's business; that it has a line is ours.
    assert errors[0][0] == "./b_syntax.py" and errors[0][1] in (1, 2)
    assert errors[1:] == [("./c_undecodable.py", 2), ("./d_dangling.py", None), ("missing.py", None)]
    messages = [e["message"] for e in report["errors"]]
    assert "syntax error" in messages[0]
    assert "cannot decode file as utf-8: byte 0xff" in messages[1]
    assert "No such file or directory" in messages[2]
    assert messages[3] == "no such file or directory"


def test_errors_in_text_format(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "agent.py", AGENT)
    assert main(["check", "--select", "SG201", "agent.py", "missing.py"]) == ExitCode.ERROR
    out = capsys.readouterr().out.splitlines()
    assert out[1:] == ["missing.py: error: no such file or directory", out[-1]]
    assert out[-1].startswith("Found 1 finding and 1 error in 1 file")


def test_coding_cookie_and_bom(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    latin = "# -*- coding: latin-1 -*-\n# café\n" + AGENT
    (project / "latin.py").write_bytes(latin.encode("latin-1"))
    (project / "bom.py").write_bytes(b"\xef\xbb\xbf" + AGENT.encode())
    status, report = run_json(capsys, "--select", "SG201")
    assert located(report) == [("bom.py", 3, "SG201"), ("latin.py", 5, "SG201")]
    assert report["errors"] == []


def test_no_python_files(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "notes.txt", "nothing\n")
    assert main(["check"]) == ExitCode.OK
    captured = capsys.readouterr()
    assert "warning: no Python files found in ." in captured.err
    assert "no findings in 0 files" in captured.out


def test_jobs_and_no_cache_are_accepted(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "agent.py", AGENT)
    assert main(["check", "--jobs", "2", "--no-cache", "--select", "SG201"]) == ExitCode.FINDINGS


def test_explicit_config_file(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "agent.py", AGENT)
    write(project / "ci.toml", '[tool.summaryguard]\nselect = ["SG201"]\n')
    assert [f["code"] for f in run_json(capsys, "--config", "ci.toml")[1]["findings"]] == ["SG201"]


def test_configuration_is_found_from_a_subfolder(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "pkg" / "agent.py", AGENT)
    configure(project, 'select = ["SG201"]\nexclude = ["/pkg/skipped"]\n')
    write(project / "pkg" / "skipped" / "agent.py", AGENT)
    os.chdir(project / "pkg")
    assert located(run_json(capsys)[1]) == [("agent.py", 3, "SG201")]


# A check that records what failed and raises on it later, before the resume.
RECORDED_THEN_RAISED = """\
from summaryguard.guard import SummaryReconciliationError


def recover(store, agent, deps):
    checkpoint = store.load()
    summary = checkpoint.summary
    problems = []
    if summary is None or summary.generation != checkpoint.summary_generation:
        problems.append("generation")
    if summary.partial: problems.append("partial")
    if any(d not in summary.verbatim_refs for d in deps): problems.append("missing")
    if problems: raise SummaryReconciliationError(", ".join(problems))
    return agent.resume(summary, checkpoint.turn)


def recover_flag(store, agent, deps):
    checkpoint = store.load()
    summary = checkpoint.summary
    ok = True
    if summary is None or summary.generation != checkpoint.summary_generation:
        ok = False
    if summary.partial:
        ok = False
    if any(d not in summary.verbatim_refs for d in deps):
        ok = False
    if not ok:
        raise SummaryReconciliationError("invariant")
    return agent.resume(summary, checkpoint.turn)
"""


def test_a_flag_raised_on_before_the_resume_is_a_fail_closed_check(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(project / "recover.py", RECORDED_THEN_RAISED)
    status, report = run_json(capsys, "--no-cache")
    assert (status, report["findings"], report["errors"]) == (ExitCode.OK, [], [])


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("    if problems: raise SummaryReconciliationError", "    if problems: print"),  # never acted on
        ("    if not ok:\n", "    ok = True\n    if not ok:\n"),  # reset before the guard
    ],
)
def test_a_flag_nothing_acts_on_stays_a_soft_check(
    project: Path, capsys: pytest.CaptureFixture[str], old: str, new: str
) -> None:
    assert old in RECORDED_THEN_RAISED
    write(project / "recover.py", RECORDED_THEN_RAISED.replace(old, new))
    status, report = run_json(capsys, "--no-cache")
    assert status == ExitCode.FINDINGS
    lines = [8, 10, 11] if "problems" in old else [20, 22, 24]
    assert located(report) == [("recover.py", line, "SG104") for line in lines]


@pytest.mark.parametrize(
    ("raw", "line", "reason"),
    [
        (b"def f(:\n  pass\n", 1, "syntax error: "),
        (b"x = 1\ny = 2\0\n", 2, "syntax error: source code string cannot contain null bytes"),
        (b"def f():\n\treturn 1\n        return 2\n", 3, "syntax error: inconsistent use of tabs and spaces"),
    ],
    ids=["invalid", "null-byte", "tabs"],
)
def test_a_syntax_error_is_reported_in_a_file_the_text_prefilter_dismisses(
    project: Path, capsys: pytest.CaptureFixture[str], raw: bytes, line: int, reason: str
) -> None:
    (project / "plain.py").write_bytes(raw)  # nothing in it can matter to a rule
    write(project / "agent.py", CLEAN)
    for _ in ("cold", "warm"):  # the verdict is cached with its error
        status, report = run_json(capsys)
        assert status == ExitCode.ERROR and report["findings"] == []
        assert [(e["path"], e["line"]) for e in report["errors"]] == [("plain.py", line)]
        assert report["errors"][0]["message"].startswith(reason)
    assert main(["check", "plain.py"]) == ExitCode.ERROR
    assert capsys.readouterr().out.startswith(f"plain.py:{line}: error: syntax error: ")
