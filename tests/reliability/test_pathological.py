"""Pathological inputs: each one is handled, with a clear message where it cannot be analyzed.

These tests assert behaviour, not time; ``tests/benchmarks/bench_pathological.py``
times the same cases (and bigger ones) and prints the figures.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from summaryguard.rules.cli import deepstack, main
from summaryguard.rules.engine import analyzer as engine_analyzer
from summaryguard.rules.cli.exitcodes import ExitCode

UNCHECKED = (
    "def recover(checkpoint):\n"
    "    summary = checkpoint.summary\n"
    "    return checkpoint.resume_context()\n"
)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    status = main(["check", "--no-cache", "--format", "json", *argv])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    assert "internal error" not in captured.out + captured.err
    return status, json.loads(captured.out)


def messages(report: dict) -> dict[str, str]:  # type: ignore[type-arg]
    return {Path(e["path"]).name: e["message"] for e in report["errors"]}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.summaryguard]\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


# -- very deep nesting -------------------------------------------------------------------


DEEP = {
    # refused by the cheap scan, naming the limit
    "binop.py": "x = " + " + ".join(["a"] * 1000) + "\n",
    "attribute.py": "x = a" + ".b" * 1000 + "\n",
    "calls.py": "x = a" + ".b()" * 500 + "\n",
    "unary.py": "x = " + "-" * 1000 + "a\n",
    # refused by CPython's own parser: a syntax error with its line
    "brackets.py": "x = " + "[" * 1000 + "]" * 1000 + "\n",
    "indentation.py": "".join("    " * i + "if a:\n" for i in range(120)) + "    " * 120 + "pass\n",
}


def test_very_deep_nesting_is_refused_with_the_limit(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name, body in DEEP.items():
        (project / name).write_text(UNCHECKED + body)
    (project / "good.py").write_text(UNCHECKED)
    status, report = run(capsys)
    assert status == ExitCode.ERROR
    found = messages(report)
    limit = engine_analyzer.MAX_DEPTH
    for name in ("binop.py", "attribute.py", "calls.py", "unary.py"):
        assert found[name].startswith("too deeply nested to analyze (") and f"at most {limit})" in found[name]
    assert found["brackets.py"] == "syntax error: too many nested parentheses"
    assert found["indentation.py"] == "syntax error: too many levels of indentation"
    assert {f["path"] for f in report["findings"]} == {"good.py"}  # every other file is still checked


@pytest.mark.parametrize(
    "body",
    [
        # deep for libcst (nested binary nodes), flat for CPython's ast
        "    ok = " + " or ".join(["flag"] * 1500) + "\n",
        "    text = (\n" + "".join(f'        "piece {i} "\n' for i in range(1500)) + "    )\n",
        # nested in both trees, but flat code: the depth scan counts an elif chain as one level
        "    if flag:\n        pass\n" + "".join(f"    elif flag == {i}:\n        pass\n" for i in range(1000)),
    ],
    ids=["or-chain", "implicit-concatenation", "elif-chain"],
)
def test_shapes_deep_only_for_libcst_are_analyzed(
    project: Path, capsys: pytest.CaptureFixture[str], body: str
) -> None:
    assert 1500 > sys.getrecursionlimit() or "elif" in body
    (project / "shape.py").write_text(
        "def recover(checkpoint, flag):\n    summary = checkpoint.summary\n" + body
        + "    return checkpoint.resume_context()\n"
    )
    status, report = run(capsys)
    assert report["errors"] == []
    assert status == ExitCode.FINDINGS
    assert {f["code"] for f in report["findings"]} == {"SG101", "SG102", "SG103"}


def test_a_chain_too_long_even_for_the_deep_stack_is_that_files_error_alone(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Flat for CPython (one node, under the depth limit), 30,000 levels for libcst: the
    # analysis reaches the deep stack's own recursion limit. That file is reported; the
    # file that imports it (analyzed with it, as one project) keeps its findings.
    assert 30_000 > deepstack.RECURSION_LIMIT
    (project / "chain.py").write_text(UNCHECKED + "x = " + " and ".join(["y"] * 30_000) + "\n")
    (project / "user.py").write_text("import chain\n\n" + UNCHECKED)
    status, report = run(capsys)
    assert status == ExitCode.ERROR
    assert messages(report) == {"chain.py": "too deeply nested to analyze (Python's recursion limit was reached)"}
    assert sorted((Path(f["path"]).name, f["code"]) for f in report["findings"]) == [
        ("user.py", "SG101"), ("user.py", "SG102"), ("user.py", "SG103"),
    ]


VALIDATOR = (
    "from summaryguard.guard import SummaryReconciliationError\n\n\n"
    "def verify(checkpoint, deps):\n"
    "    summary = checkpoint.summary\n"
    "    if summary is None or summary.generation != checkpoint.summary_generation:\n"
    "        raise SummaryReconciliationError('generation')\n"
    "    if summary.partial:\n"
    "        raise SummaryReconciliationError('partial')\n"
    "    for dep in deps:\n"
    "        if dep not in summary.verbatim_refs:\n"
    "            raise SummaryReconciliationError(dep)\n"
)


def test_a_fault_of_the_engine_is_the_files_error_and_the_others_keep_their_findings(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Whatever the engine raises on one file (here its models, made to fail whenever
    # broken.py is checked), that file is reported as an error, and every other file of
    # its project reports what it reports without the fault: the validator in checks.py
    # (checked in the same run, not context) still covers good.py's resume.
    (project / "checks.py").write_text(VALIDATOR)
    (project / "broken.py").write_text(UNCHECKED)
    (project / "good.py").write_text(
        "import broken\nfrom checks import verify\n\n\ndef go(checkpoint, agent, deps):\n"
        "    verify(checkpoint, deps)\n    return agent.resume(checkpoint.summary)\n" + UNCHECKED.replace("recover", "careless")
    )
    clean = main(["check", "--no-cache", "--format", "json", "--jobs", "1"])
    expected = [f for f in json.loads(capsys.readouterr().out)["findings"] if Path(f["path"]).name != "broken.py"]
    assert clean == ExitCode.FINDINGS and {Path(f["path"]).name for f in expected} == {"good.py"}
    real = engine_analyzer.build_models

    def failing_on_broken(project_: Any, results: Any) -> Any:
        if any(Path(module.path).name == "broken.py" for module in project_.modules if not module.context):
            raise KeyError("a fault of the engine")
        return real(project_, results)

    monkeypatch.setattr(engine_analyzer, "build_models", failing_on_broken)
    status = main(["check", "--no-cache", "--format", "json", "--jobs", "1"])
    report = json.loads(capsys.readouterr().out)
    assert status == ExitCode.ERROR
    assert messages(report) == {"broken.py": "could not be analyzed: internal error KeyError: 'a fault of the engine'"}
    assert report["findings"] == expected


# -- size ----------------------------------------------------------------------------------


def _long(lines: int, relevant: bool) -> str:
    head = UNCHECKED if relevant else "import os\n"
    chunk = "def helper_{i}(a, b):\n    c = a + b * {i}\n    return c\n\n"
    return head + "".join(chunk.format(i=i) for i in range(lines // 4))


def test_a_50000_line_file(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Refused with the limit when it would reach libcst; never parsed when the pre-filter rejects it."""
    (project / "big_relevant.py").write_text(_long(50_000, relevant=True))
    (project / "big_plain.py").write_text(_long(50_000, relevant=False))
    status, report = run(capsys)
    assert status == ExitCode.ERROR
    assert list(messages(report)) == ["big_relevant.py"]
    message = messages(report)["big_relevant.py"]
    assert message.startswith("too large to analyze (50,00") and "at most 20,000 lines" in message
    assert report["stats"]["files"] == 2


def test_a_huge_single_line(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "wide.py").write_text(UNCHECKED + "x = '" + "a" * (engine_analyzer.MAX_CHARS + 1) + "'\n")
    status, report = run(capsys)
    assert status == ExitCode.ERROR
    assert "characters, at most 2,000,000 characters" in messages(report)["wide.py"]


# -- newlines and byte-order marks ---------------------------------------------------------


@pytest.mark.parametrize(
    "encode",
    [
        lambda text: text.replace("\n", "\r\n").encode(),
        lambda text: b"\xef\xbb\xbf" + text.encode(),
        lambda text: b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode(),
        lambda text: text.replace("\n", "\r").encode(),
    ],
    ids=["crlf", "bom", "bom-crlf", "cr"],
)
def test_crlf_and_bom_files_report_what_lf_files_report(
    project: Path, capsys: pytest.CaptureFixture[str], encode: object
) -> None:
    text = "# first line\n\n" + UNCHECKED
    (project / "plain.py").write_text(text)
    _, expected = run(capsys)
    (project / "plain.py").unlink()
    (project / "plain.py").write_bytes(encode(text))  # type: ignore[operator]
    status, report = run(capsys)
    assert status == ExitCode.FINDINGS
    assert report["errors"] == []
    assert report["findings"] == expected["findings"]


@pytest.mark.parametrize(
    "endings",
    [lambda text: text.replace("\n", "\r\n"), lambda text: text.replace("\n", "\r"), lambda text: "# head\rx = 1\n" + text],
    ids=["crlf", "cr-only", "one-stray-cr"],
)
def test_suppression_comment_on_a_crlf_or_cr_line(
    project: Path, capsys: pytest.CaptureFixture[str], endings: Any
) -> None:
    # A lone CR ends a line for CPython and libcst, which place the finding; the comments
    # were read a line off, so the finding stayed and the suppression was called unused.
    text = UNCHECKED.replace("resume_context()", "resume_context()  # noqa: SG101, SG102, SG103")
    (project / "quiet.py").write_bytes(endings(text).encode())
    status, report = run(capsys)
    assert (status, report["findings"], report["errors"]) == (ExitCode.OK, [], [])


# -- folders: symlink loops, unreadable and special files, many files ----------------------


def test_a_symlink_loop_in_a_folder(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    package = project / "pkg"
    package.mkdir()
    (package / "agent.py").write_text(UNCHECKED)
    (package / "loop").symlink_to(project, target_is_directory=True)
    (package / "self").symlink_to(package, target_is_directory=True)
    (package / "a.py").symlink_to(package / "b.py")
    (package / "b.py").symlink_to(package / "a.py")
    status, report = run(capsys)
    assert status == ExitCode.ERROR
    assert [f["path"] for f in report["findings"]] == [os.path.join("pkg", "agent.py")] * 3
    # the two links that point at each other are files that cannot be read: said so, once each
    assert sorted(messages(report)) == ["a.py", "b.py"]
    assert all(m.startswith("cannot read file: ") for m in messages(report).values())


def test_a_symlink_loop_named_on_the_command_line(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "loop").symlink_to(project / "loop")
    status, report = run(capsys, "loop")
    assert status == ExitCode.ERROR
    assert [e["path"] for e in report["errors"]] == ["loop"]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    secret = project / "secret.py"
    secret.write_text(UNCHECKED)
    secret.chmod(0)
    (project / "good.py").write_text(UNCHECKED)
    try:
        status, report = run(capsys)
    finally:
        secret.chmod(0o644)
    assert status == ExitCode.ERROR
    assert messages(report) == {"secret.py": "cannot read file: Permission denied"}
    assert {f["path"] for f in report["findings"]} == {"good.py"}


def test_an_unreadable_folder_and_a_folder_named_like_a_file(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "folder.py").mkdir()
    (project / "folder.py" / "inner.py").write_text(UNCHECKED)
    (project / "dangling.py").symlink_to(project / "missing.py")
    status, report = run(capsys)
    assert status == ExitCode.ERROR
    assert {f["path"] for f in report["findings"]} == {os.path.join("folder.py", "inner.py")}
    assert list(messages(report)) == ["dangling.py"]
    assert messages(report)["dangling.py"].startswith("cannot read file: ")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_named_pipe_is_reported_not_read(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Opening a FIFO to read blocks until a writer comes: the run would hang forever."""
    os.mkfifo(project / "pipe.py")
    (project / "good.py").write_text(UNCHECKED)
    status, report = run(capsys)
    assert status == ExitCode.ERROR
    assert messages(report)["pipe.py"].startswith("cannot read file: not a regular file")
    assert {f["path"] for f in report["findings"]} == {"good.py"}


def test_a_folder_of_10000_small_files(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Most are dismissed by the text pre-filter; the few that matter are found."""
    folder = project / "many"
    for shard in range(100):
        sub = folder / f"part{shard:02d}"
        sub.mkdir(parents=True)
        for index in range(100):
            body = UNCHECKED if index == 0 and shard % 10 == 0 else f"VALUE_{index} = {index}\n"
            (sub / f"m{index:02d}.py").write_text(body)
    status, report = run(capsys, "--jobs", "2")
    assert status == ExitCode.FINDINGS
    assert report["stats"]["files"] == 10_000
    assert report["errors"] == []
    assert len({f["path"] for f in report["findings"]}) == 10
