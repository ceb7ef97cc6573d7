"""``--baseline`` / ``--write-baseline``: adopt on an existing code base, fail only on new findings."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from summaryguard.rules.cli.baseline import (
    BASELINE_VERSION,
    BaselineEntry,
    BaselineError,
    compare,
    load_baseline,
    write_baseline,
)
from summaryguard.rules.cli import main
from summaryguard.rules.cli.exitcodes import ExitCode

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
SECOND_REDERIVE = """\


def other_turn(checkpoint):
    ctx = checkpoint.resume_context()  # noqa: SG101, SG102, SG103
    token = ctx.get("token") or search("token")
    return token
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.summaryguard]\n", encoding="utf-8")
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def check(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["check", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def findings_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[tuple[int, str]]]:
    status, out, _ = check(capsys, "--format", "json", *argv)
    return status, [(f["line"], f["code"]) for f in json.loads(out)["findings"]]


def test_adopt_then_fail_only_on_new_findings(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = check(capsys, "--baseline", "sg-baseline.json", "--write-baseline")
    assert status == ExitCode.OK
    assert "wrote 4 findings to baseline sg-baseline.json" in err
    assert out.startswith("All clear: no findings in 1 file")
    assert "Baseline sg-baseline.json: 4 known findings not reported." in out

    data = json.loads((project / "sg-baseline.json").read_text(encoding="utf-8"))
    assert data["version"] == BASELINE_VERSION and data["tool"] == "summaryguard"
    assert [(e["path"], e["line"], e["code"]) for e in data["findings"]] == [
        ("agent.py", 2, "SG101"),
        ("agent.py", 2, "SG102"),
        ("agent.py", 2, "SG103"),
        ("agent.py", 3, "SG201"),
    ]
    assert all(e["fingerprint"] and e["message"] for e in data["findings"])

    # Unchanged code: clean against the baseline.
    assert check(capsys, "--baseline", "sg-baseline.json")[0] == ExitCode.OK
    # Lines move (and re-indent): still the same findings.
    moved = '"""An agent."""\nimport os\n\n\n' + AGENT
    (project / "agent.py").write_text(moved, encoding="utf-8")
    assert findings_json(capsys, "--baseline", "sg-baseline.json") == (ExitCode.OK, [])
    # A new defect of the same kind in the same file is reported, and only it.
    (project / "agent.py").write_text(moved + SECOND_REDERIVE, encoding="utf-8")
    assert findings_json(capsys, "--baseline", "sg-baseline.json") == (ExitCode.FINDINGS, [(AGENT.count("\n") + 9, "SG201")])
    # Without the baseline everything shows.
    assert len(findings_json(capsys)[1]) == 5


def test_the_same_line_twice_is_two_findings(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    twice = AGENT.replace("    return handle\n", '    again = ctx.get("handle") or search("latest")\n    return handle\n')
    twice = twice.replace("    again =", "    handle =")
    (project / "agent.py").write_text(twice, encoding="utf-8")
    assert check(capsys, "--baseline", "b.json", "--write-baseline")[0] == ExitCode.OK
    entries = load_baseline(project / "b.json")
    rederive = [e.fingerprint for e in entries if e.code == "SG201"]
    assert len(rederive) == 2 and rederive[0].split(":")[0] == rederive[1].split(":")[0]
    assert {f.split(":")[1] for f in rederive} == {"0", "1"}
    # A third copy of the same line is one new finding.
    (project / "agent.py").write_text(
        twice.replace("    return handle\n", '    handle = ctx.get("handle") or search("latest")\n    return handle\n'),
        encoding="utf-8",
    )
    status, found = findings_json(capsys, "--baseline", "b.json")
    assert status == ExitCode.FINDINGS and [code for _, code in found] == ["SG201"]


def test_fixed_findings_are_counted_as_stale(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    check(capsys, "--baseline", "b.json", "--write-baseline")
    (project / "agent.py").write_text(AGENT.replace(' or search("latest")', ""), encoding="utf-8")
    status, out, _ = check(capsys, "--baseline", "b.json")
    assert status == ExitCode.OK
    assert "Baseline b.json: 3 known findings not reported; 1 stale entry (fixed since: " in out
    # Only for codes and files this run checked: a narrower run reports no stale entry.
    assert "stale" not in check(capsys, "--baseline", "b.json", "--select", "SG1")[1]
    (project / "other.py").write_text("x = 1\n", encoding="utf-8")
    assert "stale" not in check(capsys, "--baseline", "b.json", "other.py")[1]
    # Rewriting the baseline drops the stale entry.
    check(capsys, "--baseline", "b.json", "--write-baseline")
    assert len(load_baseline(project / "b.json")) == 3


def test_baseline_paths_do_not_depend_on_the_folder_run_from(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "src").mkdir()
    (project / "agent.py").rename(project / "src" / "agent.py")
    check(capsys, "--baseline", "b.json", "--write-baseline", "src")
    assert {e.path for e in load_baseline(project / "b.json")} == {"src/agent.py"}
    monkeypatch.chdir(project / "src")
    assert findings_json(capsys, "--baseline", "../b.json", "agent.py") == (ExitCode.OK, [])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "baseline file not found (create it with: summaryguard check --baseline FILE --write-baseline)"),
        (b"{not json", "not a summaryguard baseline (invalid JSON"),
        (b"\xff\xfe", "not a summaryguard baseline (invalid JSON"),
        (b"[]", 'not a summaryguard baseline (expected a JSON object with a "version")'),
        (b'{"findings": []}', 'not a summaryguard baseline (expected a JSON object with a "version")'),
        (b'{"version": 2, "findings": []}', "unsupported baseline version 2 (this summaryguard reads version 1"),
        (b'{"version": 1}', 'baseline "findings" must be a list'),
        (b'{"version": 1, "findings": [{"code": "SG201", "path": "a.py"}]}', "baseline entry 0 must be an object"),
        (b'{"version": 1, "findings": ["x"]}', "baseline entry 0 must be an object"),
    ],
)
def test_a_bad_baseline_is_exit_2_and_says_why(
    project: Path, capsys: pytest.CaptureFixture[str], content: bytes | None, message: str
) -> None:
    if content is not None:
        (project / "b.json").write_bytes(content)
    status, out, err = check(capsys, "--baseline", "b.json")
    assert status == ExitCode.ERROR and out == ""
    assert err.startswith("b.json: error: " + message)
    assert "Traceback" not in err


def test_an_unreadable_baseline(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "b.json").mkdir()
    status, _, err = check(capsys, "--baseline", "b.json")
    assert status == ExitCode.ERROR and err.startswith("b.json: error: cannot read baseline: ")


def test_write_baseline_needs_a_file(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = check(capsys, "--write-baseline")
    assert status == ExitCode.ERROR
    assert "--write-baseline needs --baseline FILE" in err


def test_write_baseline_failure_is_exit_2(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = check(capsys, "--baseline", "no/such/folder/b.json", "--write-baseline")
    assert status == ExitCode.ERROR
    assert err.startswith("no/such/folder/b.json: error: cannot write baseline: ")
    (project / "b.json").mkdir()  # os.replace cannot put a file over a folder
    status, _, err = check(capsys, "--baseline", "b.json", "--write-baseline")
    assert status == ExitCode.ERROR and err.startswith("b.json: error: cannot write baseline: ")
    assert [p.name for p in project.iterdir() if p.name.endswith(".tmp")] == []


def test_write_baseline_replaces_only_a_baseline_an_empty_file_or_nothing(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A mistyped path must never wipe a file the tool did not write, nor turn a pipe
    # or a device into a plain file.
    source = (project / "agent.py").read_bytes()
    os.mkfifo(project / "pipe.json")
    (project / "notes.json").write_text('{"keep": "me"}\n')
    (project / "conflicted.json").write_text('<<<<<<< HEAD\n{"keep": 1}\n=======\n{"keep": 2}\n>>>>>>> topic\n')
    for name in ("agent.py", "pipe.json", "notes.json", "pyproject.toml", "conflicted.json"):
        status, _, err = check(capsys, "--baseline", name, "--write-baseline", "agent.py")
        assert status == ExitCode.ERROR, name
        assert err.startswith(f"{name}: error: cannot write baseline: "), err
    assert (project / "agent.py").read_bytes() == source
    assert stat.S_ISFIFO((project / "pipe.json").lstat().st_mode)
    assert (project / "notes.json").read_text() == '{"keep": "me"}\n'
    # an empty file, an earlier baseline (even of another version, or one a merge left
    # with conflict markers) and a link to one are replaced
    (project / "empty.json").write_text("")
    (project / "old.json").write_text('{"version": 0, "findings": []}')
    (project / "merged.json").write_text(
        '{\n  "version": 1,\n  "tool": "summaryguard",\n  "findings": [\n<<<<<<< HEAD\n    {"fingerprint": "a"}\n'
        '=======\n    {"fingerprint": "b"}\n>>>>>>> topic\n  ]\n}\n'
    )
    (project / "kept").mkdir()
    (project / "kept" / "real.json").write_text('{"version": 1, "findings": []}')
    (project / "link.json").symlink_to(Path("kept") / "real.json")
    for name in ("empty.json", "old.json", "merged.json", "link.json"):
        status, _, err = check(capsys, "--baseline", name, "--write-baseline", "agent.py")
        assert status == ExitCode.OK, err
        assert [e.code for e in load_baseline(project / name)] == ["SG101", "SG102", "SG103", "SG201"]
    assert (project / "link.json").is_symlink()  # written through the link, which stays
    assert load_baseline(project / "kept" / "real.json") == load_baseline(project / "link.json")


def test_write_is_atomic_and_keeps_permissions(tmp_path: Path) -> None:
    target = tmp_path / "b.json"
    entries = [BaselineEntry("b.py", "SG201", "ff:0", 3, "m"), BaselineEntry("a.py", "SG101", "ee:0", 9, "n")]
    write_baseline(target, entries)
    mode = stat.S_IMODE(target.stat().st_mode)
    assert mode & 0o644 == 0o644 or mode == 0o666 & ~_umask()
    assert [e.path for e in load_baseline(target)] == ["a.py", "b.py"]  # sorted, so it diffs well
    os.chmod(target, 0o600)
    write_baseline(target, entries[:1])
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert load_baseline(target) == [entries[0]]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.json"]  # no temporary file left behind


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current


def test_extra_fields_are_read_leniently(tmp_path: Path) -> None:
    target = tmp_path / "b.json"
    target.write_text(
        json.dumps({"version": 1, "note": "x", "findings": [{"fingerprint": "f:0", "code": "SG201", "path": "a.py"}]}),
        encoding="utf-8",
    )
    assert load_baseline(target) == [BaselineEntry("a.py", "SG201", "f:0", 0, "")]
    with pytest.raises(BaselineError) as raised:
        load_baseline(tmp_path / "missing.json")
    assert raised.value.render().endswith("baseline file not found (create it with: "
                                          "summaryguard check --baseline FILE --write-baseline)")


def test_compare_counts() -> None:
    class F:
        def __init__(self, code: str) -> None:
            self.code = code

    a, b = F("SG201"), F("SG101")
    prints = {a: "aa:0", b: "bb:0"}
    entries = [
        BaselineEntry("x.py", "SG201", "aa:0"),
        BaselineEntry("x.py", "SG201", "gone:0"),  # stale
        BaselineEntry("y.py", "SG201", "elsewhere:0"),  # file not checked
        BaselineEntry("x.py", "SG301", "unselected:0"),  # code not checked
    ]
    result = compare([a, b], prints, entries, {"x.py"}, {"SG201", "SG101"})  # type: ignore[arg-type]
    assert (result.new, result.matched, result.stale) == ([b], 1, 1)


def test_errors_still_fail_when_writing_a_baseline(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "broken.py").write_text("def resume_from_summary(checkpoint:\n    pass\n", encoding="utf-8")
    status, out, err = check(capsys, "--baseline", "b.json", "--write-baseline")
    assert status == ExitCode.ERROR  # the baseline is written, but an unanalyzed file is still an error
    assert "broken.py" in out and "wrote 4 findings" in err
    assert len(load_baseline(project / "b.json")) == 4


def test_console_script(project: Path) -> None:
    script = shutil.which("summaryguard")
    assert script is not None
    env = {k: v for k, v in os.environ.items() if k != "SUMMARYGUARD_DEBUG"}

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([script, "check", *argv], cwd=project, capture_output=True, text=True, env=env, timeout=120)

    assert run("--baseline", "b.json").returncode == ExitCode.ERROR
    written = run("--baseline", "b.json", "--write-baseline")
    assert (written.returncode, written.stderr) == (ExitCode.OK, "summaryguard: wrote 4 findings to baseline b.json\n")
    assert run("--baseline", "b.json").returncode == ExitCode.OK
    (project / "agent.py").write_text(AGENT + SECOND_REDERIVE, encoding="utf-8")
    result = run("--baseline", "b.json", "--format", "github")
    assert result.returncode == ExitCode.FINDINGS
    assert result.stdout.startswith(f"::error file=agent.py,line={AGENT.count(chr(10)) + 5},")


def test_a_file_name_that_is_not_utf8_is_recorded_and_matched(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        odd = project / os.fsdecode(b"\xff_agent.py")
        shutil.move(project / "agent.py", odd)
    except (OSError, UnicodeError):  # pragma: no cover - a file system that only takes UTF-8 names
        pytest.skip("this file system refuses names that are not UTF-8")
    assert check(capsys, "--baseline", "bl.json", "--write-baseline")[0] == ExitCode.OK
    document = json.loads((project / "bl.json").read_bytes().decode("utf-8"))  # valid UTF-8
    assert {entry["path"] for entry in document["findings"]} == {"\\xff_agent.py"}
    assert findings_json(capsys, "--baseline", "bl.json") == (ExitCode.OK, [])
    odd.write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")  # fixed: its entries go stale
    status, out, _ = check(capsys, "--baseline", "bl.json")
    assert status == ExitCode.OK and "4 stale entries" in out
