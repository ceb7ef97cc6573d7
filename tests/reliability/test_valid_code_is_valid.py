"""B17, as a property: a program CPython compiles is never reported as a syntax error,
whatever its indentation is made of (spaces, tabs, form feeds), and a program that is
a syntax error for CPython and for libcst is still reported, with its line.

hypothesmith's programs, renamed into the analyzer's vocabulary so that libcst parses
them (the pre-filter keeps them), run through the real command line in this process.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import tempfile
from pathlib import Path

import hypothesmith
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from summaryguard.rules.cli import main

pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning", "ignore::DeprecationWarning")

PROPERTY = settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)
PRELUDE = "def resume(checkpoint):\n    return checkpoint.resume_context()\n"
_INDENT = re.compile(r"^( +)", re.MULTILINE)


def check(source: str) -> dict:  # type: ignore[type-arg]
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "pyproject.toml").write_text("[tool.summaryguard]\n")
        (root / "prog.py").write_text(source, encoding="utf-8", newline="")
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            status = main(["check", "--no-cache", "--format", "json", str(root / "prog.py"), "--config", str(root / "pyproject.toml")])
    assert status in (0, 1, 2)
    return json.loads(out.getvalue())


def compiles(source: str) -> bool:
    try:
        compile(source, "prog.py", "exec", dont_inherit=True)
        return True
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False


def with_tabs(source: str, style: int) -> str:
    """The same program with each indentation of 8 or more spaces rewritten with tabs
    (style 1), or every indentation led by a form feed (style 2)."""
    if style == 1:
        return _INDENT.sub(lambda m: "\t" * (len(m.group(1)) // 8) + " " * (len(m.group(1)) % 8), source)
    return _INDENT.sub(lambda m: "\f" + m.group(1), source)


@PROPERTY
@given(program=hypothesmith.from_grammar(), style=st.sampled_from([0, 1, 2]))
def test_a_program_cpython_compiles_is_never_a_syntax_error(program: str, style: int) -> None:
    source = PRELUDE + "\n" + (with_tabs(program, style) if style else program)
    assume(compiles(source))
    report = check(source)
    assert [e for e in report["errors"] if e["message"].startswith("syntax error")] == []


@PROPERTY
@given(program=hypothesmith.from_grammar())
def test_a_program_broken_for_both_parsers_is_reported_with_a_line(program: str) -> None:
    import libcst as cst

    source = PRELUDE + program + "\ndef broken(:\n"
    assume(not compiles(source))
    with contextlib.suppress(Exception):
        cst.parse_module(source)
        assume(False)
    report = check(source)
    errors = [e for e in report["errors"] if e["path"].endswith("prog.py")]
    assert errors and all(e["line"] is not None for e in errors if e["message"].startswith("syntax error"))
