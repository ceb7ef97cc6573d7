"""SPEC 3.1.1 "Python versions" and B17: a file libcst parses for the targeted grammar
is never a syntax error because the running interpreter is older or its tokenizer
differs (rules/engine/grammar.py, rules/targets.py, ``target-version``).

Real files through the real command. The PEP 695 / PEP 701 cases matter on a host
older than 3.12 (this project's machine runs 3.11): there CPython's parser rejects
them, and before the fix they were reported as syntax errors (exit 2).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from summaryguard.rules.cli import main
from summaryguard.rules.cli.config import ConfigError, load_config
from summaryguard.rules.cli.targets import KNOWN_TARGETS

RESUME = "def go(checkpoint):\n    return checkpoint.resume_context()\n"
PEP_695 = (
    "type Alias[T: int, *Ts, **P] = list[T]\n"
    "type Plain = int\n"
    "\n"
    "def first[T](items: list[T]) -> T:\n"
    "    return items[0]\n"
    "\n"
    "class Box[T]:\n"
    "    pass\n"
    "\n"
)
PEP_701 = (
    "def label(state, width):\n"
    "    return f\"{state[\"name\"]!r:>{width}} {f\"{state[\"x\"]}\"}\"\n"
    "\n"
)
EXPECTED = {"SG101", "SG102", "SG103"}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    status = main(["check", "--no-cache", "--format", "json", *argv])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and "internal error" not in captured.out + captured.err
    return status, json.loads(captured.out)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pyproject.toml").write_text('[tool.summaryguard]\ntarget-version = "3.12"\n')
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("prefix", [PEP_695, PEP_701, PEP_695 + PEP_701], ids=["pep695", "pep701", "both"])
def test_newer_syntax_under_its_target_is_analyzed_not_an_error(
    project: Path, capsys: pytest.CaptureFixture[str], prefix: str
) -> None:
    (project / "new.py").write_text(prefix + RESUME)
    status, report = run(capsys, "new.py")
    assert report["errors"] == []
    assert status == 1
    resume_line = prefix.count("\n") + 2
    assert {(f["code"], f["line"], f["column"]) for f in report["findings"]} == {
        (code, resume_line, 12) for code in EXPECTED
    }


def test_newer_syntax_without_vocabulary_is_not_an_error(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "plain.py").write_text(PEP_695 + PEP_701)
    status, report = run(capsys, "plain.py")
    assert (status, report["errors"]) == (0, [])


def test_the_default_target_is_the_newest_grammar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.summaryguard]\n")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "new.py").write_text(PEP_695 + RESUME)
    status, report = run(capsys, "new.py")
    assert (status, report["errors"]) == (1, [])


B17_TABS = (
    "def resume(checkpoint):\n    try:checkpoint\n    finally:\n     try:checkpoint\n     finally:\n"
    "\t\t\t\t\t\treturn checkpoint.resume_context()\n"
)


def test_tab_indentation_cpython_accepts_is_analyzed_with_its_own_columns(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    compile(B17_TABS, "tabs.py", "exec")
    (project / "tabs.py").write_text(B17_TABS)
    status, report = run(capsys, "tabs.py")
    assert report["errors"] == []
    assert status == 1
    # six tabs and "return ": the call starts at character 14 of the original line
    assert {(f["line"], f["column"], f["end_column"]) for f in report["findings"]} == {(6, 14, 41)}


@pytest.mark.parametrize(
    "source, line, message",
    [
        ("def f(:\n    pass\n", 1, "syntax error: invalid syntax"),
        ("type X = int\n\ndef go(checkpoint):\n    return checkpoint.resume_context(\n", 4, "syntax error: '(' was never closed"),
        ("def resume(checkpoint):\n    x = 1\n  y = 2\n", 3, "syntax error: unindent does not match any outer indentation level"),
        ("x = 1\n\tif x:\n", 2, "syntax error: unexpected indent"),
        # literals libcst keeps as written (it never decodes them), which no Python 3 runs
        (
            'LOG = "C:\\Users\\agent"\n' + RESUME, 1,
            "syntax error: (unicode error) 'unicodeescape' codec can't decode bytes in position 2-3: "
            "truncated \\UXXXXXXXX escape",
        ),
        ('RAW = b"\\xZZ"\n' + RESUME, 1, "syntax error: (value error) invalid \\x escape at position 0"),
        ('RAW = b"caf\u00e9"\n' + RESUME, 1, "syntax error: bytes can only contain ASCII literal characters"),
    ],
    ids=["invalid", "newer-syntax-and-unclosed", "dedent", "indent", "str-escape", "bytes-escape", "bytes-beyond-ascii"],
)
def test_a_real_syntax_error_is_still_exit_2_with_path_and_line(
    project: Path, capsys: pytest.CaptureFixture[str], source: str, line: int, message: str
) -> None:
    (project / "bad.py").write_text(source)
    (project / "good.py").write_text(RESUME)
    status, report = run(capsys, "bad.py", "good.py")
    assert status == 2
    [error] = report["errors"]
    assert error["path"] == "bad.py"
    if sys.version_info >= (3, 12) or "type X" not in source:
        assert (error["line"], error["message"]) == (line, message)
    assert {f["path"] for f in report["findings"]} == {"good.py"}


def test_a_unicode_name_the_host_does_not_know_is_no_syntax_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # "\N{...}" is decoded with the host's Unicode database: a name that only a newer one
    # knows is CPython's "unknown Unicode character name" here, and valid for the target.
    (project / "signal.py").write_text('SIGNAL = "\\N{NO NAME ANY UNICODE HAS}"\n' + RESUME)
    (project / "good.py").write_text(RESUME)
    status, report = run(capsys, "signal.py", "good.py")
    assert report["errors"] == []
    assert {f["path"] for f in report["findings"]} <= {"signal.py", "good.py"} and status == 1


# -- the target ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "table, project_table, target",
    [
        ('target-version = "3.12"\n', "", "3.12"),
        ('target-version = "py39"\n', "", "3.9"),
        ("", 'requires-python = ">=3.10"\n', "3.10"),
        ("", 'requires-python = ">=3.8, <4"\n', "3.8"),
        ("", 'requires-python = "~=3.11.2"\n', "3.11"),
        ("", 'requires-python = ">=3.4"\n', "3.3"),
        ("", 'requires-python = "<3.13"\n', None),
        ('target-version = "3.13"\n', 'requires-python = ">=3.10"\n', "3.13"),
        ("", "", None),
    ],
)
def test_the_target_comes_from_target_version_then_requires_python(
    tmp_path: Path, table: str, project_table: str, target: str | None
) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[project]\nname = 'x'\n{project_table}\n[tool.summaryguard]\n{table}")
    assert load_config(None, tmp_path).target_version == target


@pytest.mark.parametrize("value", ['"3.4"', '"3.99"', '"python3.12"', '"4.0"', "312", '""'])
def test_an_unknown_target_version_is_a_configuration_error_naming_it(tmp_path: Path, value: str) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[tool.summaryguard]\nselect = ['SG']\ntarget-version = {value}\n")
    with pytest.raises(ConfigError) as info:
        load_config(None, tmp_path)
    assert info.value.line == 3
    assert "target-version" in info.value.message
    assert (value.strip('"') in info.value.message) if value.startswith('"') else "an integer" in info.value.message


def test_the_known_targets_are_libcst_s() -> None:
    from libcst._parser.types.config import KNOWN_PYTHON_VERSION_STRINGS

    assert set(KNOWN_TARGETS) == set(KNOWN_PYTHON_VERSION_STRINGS)  # update targets.py with libcst


def test_a_target_newer_than_libcst_knows_gets_its_newest_grammar() -> None:
    from summaryguard.rules.engine.grammar import newest_target, parser_config

    assert parser_config("3.99").python_version == newest_target()
    assert parser_config("3.4").python_version == "3.3"
