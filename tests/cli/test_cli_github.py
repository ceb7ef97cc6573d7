"""``--format github``: workflow commands, escaped so that no value can break out of its place."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from summaryguard.rules.cli import main
from summaryguard.rules.engine.findings import FileError, Finding
from summaryguard.rules.cli.exitcodes import ExitCode
from summaryguard.rules.cli.formats import write_report
from summaryguard.rules.cli.formats.github import escape_data, escape_property
from summaryguard.rules.cli.report import BaselineStats, ReadError, Report

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


def render(report: Report) -> str:
    stream = io.StringIO()
    write_report(report, "github", stream)
    return stream.getvalue()


@pytest.mark.parametrize(
    ("text", "data", "prop"),
    [
        ("plain", "plain", "plain"),
        ("100%", "100%25", "100%25"),
        ("a\r\nb", "a%0D%0Ab", "a%0D%0Ab"),
        ("x: y, z", "x: y, z", "x%3A y%2C z"),
        ("%0A", "%250A", "%250A"),  # an escape sequence in the input stays literal
        ("::error::", "::error::", "%3A%3Aerror%3A%3A"),
        ("a\x1b[2J\tb\u202e", "a\\x1b[2J\\tb\\u202e", "a\\x1b[2J\\tb\\u202e"),  # other controls: visible
    ],
)
def test_escaping(text: str, data: str, prop: str) -> None:
    assert escape_data(text) == data
    assert escape_property(text) == prop


def test_findings_and_errors() -> None:
    finding = Finding("src/a,b.py", 12, 5, 13, 30, "SG201", "rederive-missing-ref", "100% re-derived\nagain: x")
    report = Report.build(
        [finding],
        [FileError("src/broken.py", 3, "syntax error: invalid syntax"), ReadError("gone.py", None, "not found")],
        files=3,
        seconds=0.1,
    )
    assert render(report) == (
        "::error file=src/a%2Cb.py,line=12,col=5,endLine=13,endColumn=30,title=SG201"
        "::[rederive-missing-ref] 100%25 re-derived%0Aagain: x\n"
        "::error file=gone.py,title=summaryguard%3A file not analyzed::not found\n"
        "::error file=src/broken.py,line=3,title=summaryguard%3A file not analyzed::syntax error: invalid syntax\n"
    )


def test_clean_run_prints_nothing_and_stale_baseline_is_a_notice() -> None:
    assert render(Report.build([], [], 1, 0.0)) == ""
    assert render(Report.build([], [], 1, 0.0, baseline=BaselineStats("b.json", 3, 0))) == ""
    one = render(Report.build([], [], 1, 0.0, baseline=BaselineStats("b.json", 3, 1)))
    assert one.startswith("::notice title=summaryguard baseline::1 baseline entry matches no finding")
    assert "drop it" in one
    two = render(Report.build([], [], 1, 0.0, baseline=BaselineStats("b.json", 3, 2)))
    assert "2 baseline entries match no finding" in two and "drop them" in two


def test_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.summaryguard]\n", encoding="utf-8")
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--format", "github", "--select", "SG2"]) == ExitCode.FINDINGS
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "::error file=agent.py,line=3,col=35,endLine=3,endColumn=51,title=SG201::[rederive-missing-ref] "
        + out[0].split("] ", 1)[1]
    ]
    assert "re-derives" in out[0]


def test_title_is_the_code_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """SPEC 3.2: ``::error file=...,line=...,col=...,title=SG201::...``."""
    (tmp_path / "pyproject.toml").write_text("[tool.summaryguard]\n", encoding="utf-8")
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--no-cache", "--format", "github"]) == ExitCode.FINDINGS
    lines = capsys.readouterr().out.splitlines()
    titles = []
    for line in lines:
        properties = dict(p.split("=", 1) for p in line.split("::")[1].removeprefix("error ").split(","))
        titles.append(properties["title"])
    assert sorted(titles) == ["SG101", "SG102", "SG103", "SG201"]
