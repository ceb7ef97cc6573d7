"""tests/realcode/run.py on a corpus built here: parsing judged.md, matching, precision, and the listings.

Why: run.py is how precision on real code is measured; a matching bug would
silently report a precision nobody earned. The corpus is two fake packages
whose files hold the text of SG103's own INVALID example (so the installed
analyzer really flags them; nothing is mocked), and a judged.md written here
that exercises each way a row can meet a finding: same line, moved line
(matched by source text), vanished, not judged, package not in the run.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from summaryguard.rules.sg103_resume_without_dependency_check import ResumeWithoutDependencyCheck

RUN_PY = Path(__file__).with_name("run.py")
HEADER = "| package | file | line | code | verdict | why | text |\n|---|---|---|---|---|---|---|\n"


def _load_run_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("realcode_run", RUN_PY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


run = _load_run_module()

EXAMPLE = ResumeWithoutDependencyCheck.INVALID[0]
SOURCE = EXAMPLE.code
((LINE, CODE),) = EXAMPLE.expectations()
TEXT = run.normalize_text(SOURCE.splitlines()[LINE - 1])


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _run(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(RUN_PY), *map(str, args)], capture_output=True, text=True, env=env, check=False
    )


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """alpha: a flagged library file and the same code in a test file; beta: a flagged file whose
    code moved two lines down, a flagged file nobody judged, and a syntax error."""
    root = tmp_path_factory.mktemp("corpus")
    _write(root / "alpha-1.0" / "alpha" / "core.py", SOURCE)
    _write(root / "alpha-1.0" / "alpha" / "tests" / "test_core.py", SOURCE)
    _write(root / "beta-2.0" / "beta" / "moved.py", "\n\n" + SOURCE)
    _write(root / "beta-2.0" / "beta" / "new.py", SOURCE)
    _write(root / "beta-2.0" / "bad.py", "def broken(:\n")
    return root


def _judged(tmp_path: Path, rows: str) -> Path:
    path = tmp_path / "judged.md"
    _write(path, "# Judged\n\nFree text before the table.\n\n" + HEADER + rows + "\nFree text after.\n")
    return path


def test_the_example_is_flagged_where_it_says() -> None:
    assert CODE == "SG103" and TEXT.startswith("return checkpoint.resume_context()")


def test_report_matches_judged_rows_and_lists_the_rest(corpus: Path, tmp_path: Path) -> None:
    judged = _judged(
        tmp_path,
        f"| alpha-1.0 | alpha/core.py | {LINE} | {CODE} | TP | real | {TEXT} |\n"
        f"| `alpha-1.0` | `alpha/tests/test_core.py` | {LINE} | {CODE} | FP | test double |  |\n"
        f"| beta | beta/moved.py | {LINE} | {CODE} | tp | moved by two lines | {TEXT} |\n"
        f"| beta-2.0 | beta/gone.py | 3 | {CODE} | FP | code that was deleted | x = 1 |\n"
        f"| gamma-1.0 | gamma.py | 1 | SG101 | TP | a package not in the corpus |  |\n",
    )
    out = tmp_path / "report.json"
    result = _run("--corpus", corpus, "--judged", judged, "--json", out, "--jobs", "1")
    assert result.returncode == 0, result.stderr

    report = json.loads(out.read_text(encoding="utf-8"))
    packages = {p["name"]: p for p in report["packages"]}
    assert list(packages) == ["alpha-1.0", "beta-2.0"]
    assert packages["alpha-1.0"]["findings_by_code"] == {CODE: 2}
    assert packages["alpha-1.0"]["lines"] == 2 * SOURCE.count("\n")
    assert packages["alpha-1.0"]["files"] == 2 and packages["alpha-1.0"]["errors"] == []
    assert packages["beta-2.0"]["findings_by_code"] == {CODE: 2}
    assert len(packages["beta-2.0"]["errors"]) == 1 and packages["beta-2.0"]["errors"][0].startswith("bad.py:1: ")
    assert report["totals"]["findings"] == 4 and report["totals"]["errors"] == 1

    verdicts = {(f["file"], f["line"]): (f["verdict"], f["matched_by"], f["library"])
                for p in report["packages"] for f in p["findings"]}
    assert verdicts == {
        ("alpha/core.py", LINE): ("TP", "line", True),
        ("alpha/tests/test_core.py", LINE): ("FP", "line", False),
        ("beta/moved.py", LINE + 2): ("TP", "text", True),
        ("beta/new.py", LINE): (None, None, True),
    }
    judged_part = report["judged"]
    assert (judged_part["tp"], judged_part["fp"]) == (2, 1)
    assert judged_part["precision"] == pytest.approx(2 / 3)
    assert judged_part["library"] == {"tp": 2, "fp": 0, "precision": 1.0}
    assert [(u["package"], u["file"], u["line"], u["code"], u["text"]) for u in judged_part["unjudged"]] == [
        ("beta-2.0", "beta/new.py", LINE, CODE, TEXT)
    ]
    assert [(v["file"], v["line"]) for v in judged_part["vanished"]] == [("beta/gone.py", 3)]
    assert [(m["file"], m["line"], m["now_line"]) for m in judged_part["moved"]] == [("beta/moved.py", LINE, LINE + 2)]
    assert [r["package"] for r in judged_part["not_run"]] == ["gamma-1.0"]
    assert judged_part["text_changed"] == []

    text = result.stdout
    assert "Judged TP found: 2\n" in text and "Judged FP found: 1\n" in text
    assert "Precision over judged findings: 66.7% (2 TP, 1 FP)" in text
    assert "library code only (no tests/, examples/, docs/, test_*.py): 100.0% (2 TP, 0 FP)" in text
    assert f"- beta-2.0/beta/new.py:{LINE} {CODE} `checkpoint.resume_context()`" in text
    assert f"- beta-2.0/beta/gone.py:3 {CODE} (was FP: code that was deleted)" in text
    assert f"- beta-2.0/beta/moved.py:{LINE} -> {LINE + 2} {CODE}" in text
    assert "beta-2.0: 1 error(s): bad.py:1: syntax error" in text
    # The row printed for the unjudged finding, once judged, matches it.
    pasted = next(line for line in text.splitlines() if line.startswith("| beta-2.0 | beta/new.py |"))
    rows = run.parse_judged(_judged(tmp_path, pasted.replace("| ? |", "| TP |") + "\n"))
    assert [(r.package, r.file, r.line, r.code, r.verdict, r.text) for r in rows] == [
        ("beta-2.0", "beta/new.py", LINE, CODE, "TP", TEXT)
    ]


def test_strict_passes_when_everything_found_is_judged_and_precise(corpus: Path, tmp_path: Path) -> None:
    all_judged = _judged(
        tmp_path,
        f"| alpha-1.0 | alpha/core.py | {LINE} | {CODE} | TP | real |  |\n"
        f"| alpha-1.0 | alpha/tests/test_core.py | {LINE} | {CODE} | TP | real too |  |\n"
        f"| beta-2.0 | beta/new.py | {LINE} | {CODE} | FP | its package is not selected: not run, not vanished |  |\n",
    )
    result = _run("--corpus", corpus, "--judged", all_judged, "--packages", "alpha", "--strict", "--jobs", "1")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Precision over judged findings: 100.0% (2 TP, 0 FP)" in result.stdout
    assert "Not judged yet: 0;" in result.stdout
    assert "beta" not in result.stdout.split("## Against")[0]  # only the selected package ran
    assert "rows of packages not in this run: 1" in result.stdout


def _finding(file: str, line: int) -> Any:
    return run.Finding("p-1", file, line, CODE, "m", "")


def _row(file: str, line: int, verdict: str) -> Any:
    return run.JudgedRow("p-1", file, line, CODE, verdict, "why", "", 1)


@pytest.mark.parametrize(("tp", "fp", "fails"), [(9, 1, False), (8, 1, True), (0, 0, False), (1, 0, False), (0, 1, True)])
def test_strict_precision_threshold_is_ninety_percent(tp: int, fp: int, fails: bool) -> None:
    verdicts = ["TP"] * tp + ["FP"] * fp
    findings = [_finding("lib.py", n + 1) for n in range(len(verdicts))]
    rows = [_row("lib.py", n + 1, v) for n, v in enumerate(verdicts)]
    comparison = run.compare(rows, [run.PackageRun(name="p-1", findings=findings)])
    assert comparison.counts() == (tp, fp)
    reasons = run.strict_failures(comparison, [])
    assert bool(reasons) is fails and all("precision" in r for r in reasons)


def test_strict_fails_on_unjudged_findings_and_on_a_package_without_report() -> None:
    ran = run.PackageRun(name="p-1", findings=[_finding("lib.py", 1), _finding("lib.py", 2)])
    broken = run.PackageRun(name="q-1", failure="exit 3: boom")
    comparison = run.compare([_row("lib.py", 1, "TP"), run.JudgedRow("q-1", "x.py", 1, CODE, "FP", "", "", 2)],
                             [ran, broken])
    assert [f.line for f in comparison.unjudged] == [2]
    assert [r.package for r in comparison.not_run] == ["q-1"]  # not "vanished": its package has no report
    assert comparison.vanished == []
    assert run.strict_failures(comparison, [ran, broken]) == ["1 finding(s) not judged yet", "q-1: no report (exit 3: boom)"]


def test_two_findings_on_one_line_with_one_code_are_one_judged_finding() -> None:
    ran = run.PackageRun(name="p-1", findings=[_finding("lib.py", 4), _finding("lib.py", 4)])
    comparison = run.compare([_row("lib.py", 4, "FP")], [ran])
    assert comparison.counts() == (0, 1) and comparison.unjudged == []


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (f"| a | f.py | x | {CODE} | TP | why |  |\n", "line 'x' is not a number"),
        (f"| a | f.py | 3 | {CODE} | maybe | why |  |\n", "verdict 'maybe' is not TP or FP"),
        (f"| a | f.py | 3 | {CODE} | TP | why |\n", "6 cells, the header has 7"),
        (f"| a | f.py | 3 | {CODE} | TP | one |  |\n| a | f.py | 3 | {CODE} | FP | two |  |\n", "is judged twice"),
    ],
)
def test_a_malformed_judged_file_is_a_usage_error_naming_the_line(
    corpus: Path, tmp_path: Path, rows: str, message: str
) -> None:
    judged = _judged(tmp_path, rows)
    result = _run("--corpus", corpus, "--judged", judged)
    assert result.returncode == 2
    assert f"{judged}:" in result.stderr and message in result.stderr
    assert result.stdout == ""  # nothing ran


def test_without_a_corpus_it_says_how_to_get_one(tmp_path: Path) -> None:
    """A clone without ../shared beside it and no $SG_REALCODE_SRC: exit 2 and a message, not a traceback."""
    script = tmp_path / "clone" / "tests" / "realcode" / "run.py"
    script.parent.mkdir(parents=True)
    shutil.copy(RUN_PY, script)
    _write(script.with_name("judged.md"), HEADER)
    env = {k: v for k, v in os.environ.items() if k != "SG_REALCODE_SRC"}
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, check=False)
    assert result.returncode == 2
    assert "no corpus: pass --corpus DIR, set $SG_REALCODE_SRC" in result.stderr
    assert "Traceback" not in result.stderr


def test_library_code_excludes_tests_examples_and_docs() -> None:
    assert run.is_library("langchain/agents/middleware/summarization.py")
    assert run.is_library("src/letta/testing_helpers.py")
    for path in ("tests/unit/test_x.py", "examples/mcp/demo.py", "docs/conf.py", "pkg/test_x.py", "pkg/conftest.py"):
        assert not run.is_library(path), path


def test_distribution_names_ignore_version_and_separators() -> None:
    assert run.distribution_name("openhands_sdk-1.58.2-py3-none-any") == "openhands_sdk"
    assert run.distribution_name("openhands-sdk") == "openhands_sdk"
    assert run.distribution_name("langchain-1.5.2") == "langchain" != run.distribution_name("langchain_core-1.8.4")


def test_the_judged_file_of_the_repository_parses() -> None:
    assert isinstance(run.parse_judged(run.DEFAULT_JUDGED), list)


_line_text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=120)
_file_name = _line_text.map(run.normalize_text).filter(lambda s: s != "" and "\\" not in s and not s.startswith("./"))


@given(text=_line_text, file=_file_name, why=_line_text)
def test_a_pasted_row_reads_back_as_written(
    tmp_path_factory: pytest.TempPathFactory, text: str, file: str, why: str
) -> None:
    """Whatever a source line holds (pipes, backslashes, backticks, odd spaces), the row printed for it
    reads back from judged.md as the same finding and text."""
    finding = run.Finding("pkg-1.0", file, 7, "SG103", "m", run.normalize_text(text))
    why = " ".join(why.split())
    path = tmp_path_factory.getbasetemp() / "roundtrip.md"
    path.write_text(HEADER + run.table_row(finding, verdict="FP", why=why) + "\n", encoding="utf-8")
    (row,) = run.parse_judged(path)
    assert (row.package, row.file, row.line, row.code, row.verdict, row.text) == (
        "pkg-1.0", file, 7, "SG103", "FP", finding.text
    )
    assert row.why == why
