"""Text and JSON reports: exact shapes."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from summaryguard.rules.engine.findings import FileError, Finding, TraceStep
from summaryguard.rules.cli import main
from summaryguard.rules.cli.formats import FORMATS, write_report
from summaryguard.rules.cli.report import ReadError, Report, step_path

TRACE_B = (TraceStep("b.py", 2, "`ctx` is resumed state"), TraceStep("b.py", 3, "SG201: reported here"))
FINDING_B = Finding(
    "b.py", 3, 5, 3, 30, "SG201", "rederive-missing-ref", "the handle is fetched again", trace=TRACE_B
)
FINDING_A = Finding("a.py", 12, 1, 14, 2, "SG101", "resume-without-generation-check", "resume without check")
ERROR = FileError("c.py", 4, "cannot parse: invalid syntax")
MISSING = ReadError("nope.py", None, "no such file or directory")


def render(report: Report, fmt: str) -> str:
    stream = io.StringIO()
    write_report(report, fmt, stream)
    return stream.getvalue()


def test_registry() -> None:
    assert set(FORMATS) >= {"text", "json"}


def test_text() -> None:
    report = Report.build([FINDING_B, FINDING_A], [MISSING, ERROR], files=3, seconds=0.123)
    assert render(report, "text") == (
        "a.py:12:1: SG101 [resume-without-generation-check] resume without check\n"
        "b.py:3:5: SG201 [rederive-missing-ref] the handle is fetched again\n"
        "c.py:4: error: cannot parse: invalid syntax\n"
        "nope.py: error: no such file or directory\n"
        "Found 2 findings and 2 errors in 3 files (0.12s).\n"
    )


def test_text_summaries() -> None:
    assert render(Report.build([], [], 1, 0.0), "text") == "All clear: no findings in 1 file (0.00s).\n"
    assert render(Report.build([FINDING_A], [], 2, 1.5), "text").endswith("Found 1 finding in 2 files (1.50s).\n")
    assert render(Report.build([], [ERROR], 1, 0.0), "text").endswith("Found 1 error in 1 file (0.00s).\n")


def test_json() -> None:
    report = Report.build([FINDING_B], [MISSING, ERROR], files=2, seconds=0.12345)
    data = json.loads(render(report, "json"))
    assert data == {
        "version": 1,
        "findings": [
            {
                "path": "b.py",
                "line": 3,
                "column": 5,
                "end_line": 3,
                "end_column": 30,
                "code": "SG201",
                "name": "rederive-missing-ref",
                "message": "the handle is fetched again",
                "trace": [
                    {"path": "b.py", "line": 2, "note": "`ctx` is resumed state"},
                    {"path": "b.py", "line": 3, "note": "SG201: reported here"},
                ],
            }
        ],
        "errors": [
            {"path": "c.py", "line": 4, "message": "cannot parse: invalid syntax"},
            {"path": "nope.py", "line": None, "message": "no such file or directory"},
        ],
        "stats": {"files": 2, "findings": 1, "seconds": 0.123},
    }
    assert list(data) == ["version", "findings", "errors", "stats"]


def test_paths_that_are_not_utf8_are_shown_by_their_bytes_in_every_format() -> None:
    from summaryguard.rules.cli.report import displayable

    odd = os.fsdecode(b"src/\xff\xfe.py")  # how Python holds a file name that is not UTF-8
    assert displayable(odd) == "src/\\xff\\xfe.py"
    assert displayable("src/caf\u00e9.py") == "src/caf\u00e9.py"
    assert displayable("\ud800") == "\\ud800"  # no file name decodes to this; still printable
    finding = Finding(odd, 3, 5, 3, 30, "SG201", "rederive-missing-ref", "the handle is fetched again")
    report = Report.build([finding], [FileError(odd, 1, "syntax error: invalid syntax")], files=1, seconds=0.0)
    for fmt in FORMATS:
        rendered = render(report, fmt)
        rendered.encode("utf-8")  # strict: no lone surrogates
        assert "src/\\xff\\xfe.py" in rendered.replace("\\\\", "\\")


def test_the_trace_is_sarif_code_flows_and_text_under_show_trace() -> None:
    report = Report.build([FINDING_B, FINDING_A], [], files=2, seconds=0.1)
    [with_trace, without] = sorted(json.loads(render(report, "sarif"))["runs"][0]["results"],
                                   key=lambda r: r["ruleId"], reverse=True)
    [flow] = with_trace["codeFlows"]
    steps = [(s["location"]["physicalLocation"]["region"]["startLine"], s["location"]["message"]["text"])
             for s in flow["threadFlows"][0]["locations"]]
    assert steps == [(2, "`ctx` is resumed state"), (3, "SG201: reported here")]
    assert "codeFlows" not in without
    plain = render(report, "text")
    assert "resumed state" not in plain
    shown = Report.build([FINDING_B], [], files=1, seconds=0.1, show_trace=True)
    lines = render(shown, "text").splitlines()
    assert lines[1:3] == ["    b.py:2: `ctx` is resumed state", "    b.py:3: SG201: reported here"]


def test_a_step_in_an_imported_module_is_written_as_the_finding_path_is(tmp_path: Path) -> None:
    """The engine names a context module by its absolute path: shown relative to the
    current folder when the finding's own path is relative, as it is when that is absolute."""
    inside, outside = str(tmp_path / "pkg" / "recovery.py"), os.path.join(os.sep, "elsewhere", "recovery.py")
    assert step_path(inside, "pkg/loop.py", str(tmp_path)) == os.path.join("pkg", "recovery.py")
    assert step_path(inside, "pkg/loop.py", str(tmp_path) + os.sep) == os.path.join("pkg", "recovery.py")
    assert step_path(inside, str(tmp_path / "pkg" / "loop.py"), str(tmp_path)) == inside
    assert step_path(outside, "pkg/loop.py", str(tmp_path)) == outside
    assert step_path("pkg/loop.py", "pkg/loop.py", str(tmp_path)) == "pkg/loop.py"
    assert step_path(str(tmp_path) + "x" + os.sep + "a.py", "a.py", str(tmp_path)) == str(tmp_path) + "x" + os.sep + "a.py"


SOFT_VALIDATOR = """\
import logging


def verify(checkpoint, summary):
    if summary.generation != checkpoint.summary_generation:
        logging.warning("stale summary")
"""
CALLER = """\
from pkg.recovery import verify


def resume_run(agent, checkpoint):
    summary = checkpoint.summary
    verify(checkpoint, summary)
    return agent.resume(summary)
"""


def test_show_trace_and_json_name_the_imported_module_as_typed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A soft check in an imported module (SG104 at the caller, the check itself a step of
    the trace in the other module): its step reads ``pkg/recovery.py`` beside
    ``pkg/loop.py``, not the absolute path the import resolved to."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "recovery.py").write_text(SOFT_VALIDATOR)
    (tmp_path / "pkg" / "loop.py").write_text(CALLER)
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--no-cache", "--jobs", "1", "--show-trace", "pkg/loop.py"]) == 1
    text = capsys.readouterr().out
    assert f"    {os.path.join('pkg', 'recovery.py')}:5: the soft check\n" in text
    assert str(tmp_path) not in text
    assert main(["check", "--no-cache", "--jobs", "1", "--format", "json", "pkg/loop.py"]) == 1
    steps = {s["path"] for f in json.loads(capsys.readouterr().out)["findings"] for s in f["trace"]}
    assert steps == {"pkg/loop.py", os.path.join("pkg", "recovery.py")}
    absolute = str(tmp_path / "pkg" / "loop.py")
    assert main(["check", "--no-cache", "--jobs", "1", "--format", "json", absolute]) == 1
    steps = {s["path"] for f in json.loads(capsys.readouterr().out)["findings"] for s in f["trace"]}
    assert steps == {absolute, str(tmp_path / "pkg" / "recovery.py")}
