"""SG001 unused-suppression: a comment that silences nothing is reported, for the codes the run checked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from summaryguard.rules.cli import main
from summaryguard.rules.engine import all_rules
from summaryguard.rules.engine.findings import Finding
from summaryguard.rules.cli.exitcodes import ExitCode
from summaryguard.rules.sg001_unused_suppression import UnusedSuppressionComment, check_comments
from summaryguard.rules.cli.suppression import parse_suppressions

AGENT = """\
def next_turn(checkpoint):
    ctx = checkpoint.resume_context()  # noqa: SG101, SG102, SG103
    handle = ctx.get("handle") or search("latest")  # summaryguard: ignore[SG201] reason: idempotent
    return handle


from summaryguard.guard import tool_guard  # noqa: E402  (below, so the lines above keep their numbers)


@tool_guard
def search(query):
    return query
"""
STALE = """\
def plain(ctx):
    handle = ctx["handle"]  # summaryguard: ignore[SG201] reason: fixed long ago
    size = len(handle)  # noqa: E501, SG202
    return size  # noqa: SG001, SG104
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.summaryguard]\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def findings(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[dict]]:  # type: ignore[type-arg]
    status = main(["check", "--format", "json", *argv])
    return status, json.loads(capsys.readouterr().out)["findings"]


def test_used_suppressions_are_silent(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "agent.py").write_text(AGENT, encoding="utf-8")
    assert findings(capsys) == (ExitCode.OK, [])


def test_unused_suppressions_are_reported_where_the_comment_is(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "stale.py").write_text(STALE, encoding="utf-8")
    status, found = findings(capsys)
    assert status == ExitCode.FINDINGS
    assert [(f["line"], f["column"], f["end_column"], f["code"], f["name"]) for f in found] == [
        (2, 29, 81, "SG001", "unused-suppression"),
        (3, 25, 44, "SG001", "unused-suppression"),
        # line 4 names SG001 itself: its unused SG104 is silenced there
    ]
    assert found[0]["message"].startswith("unused suppression of SG201: no such finding on this line")
    assert "SG202" in found[1]["message"] and "E501" not in found[1]["message"]


def test_only_codes_checked_in_this_run(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "stale.py").write_text(STALE, encoding="utf-8")
    # SG001 not selected: nothing judged.
    assert findings(capsys, "--select", "SG2") == (ExitCode.OK, [])
    # SG202 not selected: only the SG201 comment is judged.
    assert [f["line"] for f in findings(capsys, "--select", "SG0,SG201")[1]] == [2]
    assert [f["line"] for f in findings(capsys, "--ignore", "SG201")[1]] == [3]
    assert findings(capsys, "--ignore", "SG001") == (ExitCode.OK, [])


def test_per_file_ignores_turn_codes_off_for_those_files(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "pyproject.toml").write_text(
        '[tool.summaryguard]\nper-file-ignores = {"legacy/*" = ["SG201"], "vendored/*" = ["SG001"]}\n',
        encoding="utf-8",
    )
    for folder in ("legacy", "vendored", "src"):
        (project / folder).mkdir()
        (project / folder / "stale.py").write_text(STALE, encoding="utf-8")
    _, found = findings(capsys)
    assert sorted((f["path"], f["line"]) for f in found) == [
        ("legacy/stale.py", 3),
        ("src/stale.py", 2),
        ("src/stale.py", 3),
    ]


def test_files_that_failed_are_not_judged(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "broken.py").write_text(
        "def resume_from_summary(checkpoint:  # noqa: SG201\n    pass\n", encoding="utf-8"
    )
    status, found = findings(capsys)
    assert status == ExitCode.ERROR and found == []


def test_the_rule_is_known_to_rules_explain_and_selection(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert UnusedSuppressionComment in all_rules()
    assert main(["rules"]) == ExitCode.OK
    assert "SG001  unused-suppression" in capsys.readouterr().out.replace("   ", "  ")
    assert main(["explain", "sg001"]) == ExitCode.OK
    out = capsys.readouterr().out
    assert out.startswith("# SG001 (unused-suppression)") and "## Why is this bad?" in out
    (project / "pyproject.toml").write_text('[tool.summaryguard]\nselect = ["SG0"]\n', encoding="utf-8")
    (project / "stale.py").write_text(STALE, encoding="utf-8")
    assert findings(capsys) == (ExitCode.OK, [])  # only SG001 selected: no other code is judged


def test_the_engine_never_runs_it() -> None:
    assert UnusedSuppressionComment().wants(None) is False  # type: ignore[arg-type]


def test_check_comments_directly() -> None:
    text = "x = 1  # noqa: SG201\ny = 2\n"
    finding = Finding("a.py", 2, 1, 2, 2, "SG201", "rederive-missing-ref", "m")
    assert check_comments("a.py", "y = 2\n", [finding], {"SG001", "SG201"}) == [finding]
    kept = check_comments("a.py", text, [finding], {"SG001", "SG201"})
    assert [(f.line, f.code) for f in kept] == [(2, "SG201"), (1, "SG001")]
    assert check_comments("a.py", text, [finding], {"SG201"}) == [finding]


def test_unused_without_spans_and_empty() -> None:
    suppressions = parse_suppressions("x = 1\n")
    assert suppressions.unused([], {"SG201"}) == []


TYPOS = """\
def next_turn(checkpoint):
    ctx = checkpoint.resume_context()  # summaryguard: ignore[SG10] reason: a prefix
    handle = ctx.get("handle") or search("latest")  # noqa: SG999
    size = len(handle)  # summaryguard: ignore[SG999]
    other = size + 1  # noqa: E501, BLE001
    again = other  # summaryguard: ignore[SG9, SG20] reason: SG9 starts no rule
    last = again  # summaryguard: ignore[ALL]
    return last  # summaryguard: ignore[SG1]


from summaryguard.guard import tool_guard  # noqa: E402  (below, so the lines above keep their numbers)


@tool_guard
def search(query):
    return query
"""


def test_unknown_codes_are_reported_and_prefixes_work_as_in_select(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "typos.py").write_text(TYPOS, encoding="utf-8")
    status, found = findings(capsys)
    assert status == ExitCode.FINDINGS
    assert sorted((f["line"], f["code"]) for f in found) == [
        # line 2: the prefix SG10 silences SG101-SG103
        (3, "SG001"),
        (3, "SG201"),  # the typo did not silence it
        (4, "SG001"),
        # line 5: other tools' codes are left alone
        (6, "SG001"),
        (7, "SG001"),
        (8, "SG001"),  # a known prefix, with nothing to silence: unused, not unknown
    ]
    messages = {f["line"]: f["message"] for f in found if f["code"] == "SG001"}
    assert messages[3].startswith("unknown rule code SG999 in this suppression: no rule has such a code")
    assert messages[4].startswith("unknown rule code SG999 in this suppression")
    assert messages[6].startswith("unused suppression of SG20: no such finding on this line; unknown rule code SG9 ")
    assert messages[7].startswith("unknown rule code ALL in this suppression")
    assert messages[8].startswith("unused suppression of SG1: no such finding on this line; remove")


def test_unknown_codes_follow_the_selection_of_sg001_not_of_the_code(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "typos.py").write_text(TYPOS, encoding="utf-8")
    # SG001 not selected: nothing is judged, typos included.
    assert [f["code"] for f in findings(capsys, "--ignore", "SG001")[1]] == ["SG201"]
    # SG2 not selected: SG20 is a known prefix of unchecked rules (not judged), SG9 is still unknown.
    lines = {f["line"]: f["message"] for f in findings(capsys, "--select", "SG0,SG1")[1]}
    assert sorted(lines) == [3, 4, 6, 7, 8]
    assert lines[6].startswith("unknown rule code SG9 in this suppression")


def test_unknown_code_silenced_by_naming_sg001(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "a.py").write_text("x = 1  # noqa: SG999, SG001\n", encoding="utf-8")
    assert findings(capsys) == (ExitCode.OK, [])


def test_check_comments_knows_every_rule_not_only_the_checked_ones() -> None:
    text = "x = 1  # summaryguard: ignore[SG202]\n"
    assert check_comments("a.py", text, [], {"SG001", "SG201"}, {"SG001", "SG201", "SG202"}) == []
    reported = check_comments("a.py", text, [], {"SG001", "SG201"})
    assert [(f.code, f.message.split(":")[0]) for f in reported] == [
        ("SG001", "unknown rule code SG202 in this suppression")
    ]


NAMELESS = """\
def next_turn(ctx):
    a = ctx["a"]  # summaryguard: ignore SG201
    b = ctx["b"]  # summaryguard: ignore[]
    c = ctx["c"]  # SummaryGuard: Ignore
    d = ctx["d"]  # summaryguard: ignore[SG201]  # summaryguard: ignore: SG202
    e = ctx["e"]  # noqa: SG001  # summaryguard: ignore
    f = "# summaryguard: ignore"  # a string, not a comment
    g = 1  # prose may quote the form: `# summaryguard: ignore` in backticks is no suppression
    h = 2# summaryguard: ignore
    i = 3  # summaryguard: ignore comments need their codes in brackets (prose, not a suppression)
    j = 4  # summaryguard: ignore-file (another directive, not ours)
    return a, b, c, d, e, f, g, h, i, j
"""


def test_a_suppression_in_our_form_that_names_no_code_is_reported(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It was written to silence something and silences nothing: the brackets are missing."""
    (project / "nameless.py").write_text(NAMELESS, encoding="utf-8")
    status, found = findings(capsys)
    assert status == ExitCode.FINDINGS
    # line 5: an unused code, then a second form that names none; line 6 silences its own report
    assert [(f["line"], f["column"]) for f in found] == [(2, 19), (3, 19), (4, 19), (5, 19), (9, 10)]
    nameless = (
        "this suppression names no rule code, so it silences nothing: name each code in brackets, "
        "`# summaryguard: ignore[SG201]`"
    )
    for line in (2, 3, 4, 9):
        assert next(f["message"] for f in found if f["line"] == line) == nameless
    assert next(f["message"] for f in found if f["line"] == 5).startswith(
        nameless + "; unused suppression of SG201: no such finding on this line"
    )
    assert findings(capsys, "--ignore", "SG001") == (ExitCode.OK, [])


def test_nameless_comments_directly() -> None:
    suppressions = parse_suppressions(NAMELESS, {"SG"})
    assert sorted(suppressions.malformed) == [2, 3, 4, 5, 6, 9]
    assert [(u.line, u.codes) for u in suppressions.nameless()] == [(n, ()) for n in (2, 3, 4, 5, 6, 9)]
    assert parse_suppressions("x = 1  # noqa: E501\n", {"SG"}).malformed == {}
