"""Property-based fuzzing: whatever the input, ``summaryguard check`` ends cleanly.

Three generators, each run through the real command line in this process
(``main(["check", ...])``) on a file written to a fresh folder:

* **programs** from hypothesmith's Python grammar (``from_grammar``) and from
  libcst's node types (``from_node``), with their names renamed to the
  analyzer's own vocabulary (summary, checkpoint, resume_context, tool, ...)
  so that the pre-filter keeps them and the flow analysis, the summaries and
  every rule actually run on them (random names would be dismissed unparsed);
* the same programs **embedded in a resume function** (statements that do not
  fit there are syntax errors, which must be reported, not crash);
* **random bytes**, raw and behind a vocabulary prelude.

The property: the exit status is 0, 1 or 2; nothing says "Traceback" or
"internal error" (the CLI's last-resort handler and the per-file rule
failure both say so); every reported error names the file.

Budget: a few hundred examples in CI (under ~30 s on two cores). For a long
run, set ``SUMMARYGUARD_FUZZ_EXAMPLES`` to the number of examples per test::

    SUMMARYGUARD_FUZZ_EXAMPLES=5000 python -m pytest tests/reliability/test_fuzz.py -q
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import os
import tempfile
import textwrap
from pathlib import Path

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from summaryguard.rules.cli import main

# Generated programs compare literals with ``is`` and call integers: CPython warns.
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning", "ignore::DeprecationWarning")

#: Examples per test; CI runs the default, a long run sets the variable.
EXAMPLES = int(os.environ.get("SUMMARYGUARD_FUZZ_EXAMPLES", "0")) or None

FUZZ = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
    derandomize=EXAMPLES is None,  # CI: the same examples every run; a long run explores
)

#: Names the analyzer recognizes, in the order generated names are mapped onto them.
VOCABULARY = (
    "summary", "checkpoint", "resume_context", "ctx", "generation", "check_resume", "partial",
    "verbatim_refs", "search_tool", "state", "resume", "deps", "SummaryReconciliationError",
    "drop_manifest", "restore", "get", "invoke", "setdefault", "rehydrate", "tool",
)

PRELUDE = (
    "from summaryguard.guard import check_resume, SummaryReconciliationError\n"
    "from langchain_core.tools import tool\n"
    "summary = checkpoint.summary\n"
)


def _examples(default: int) -> settings:
    return settings(FUZZ, max_examples=EXAMPLES or default)


class _Rename(ast.NodeTransformer):
    """Map every distinct name onto the vocabulary (then onto numbered variants)."""

    def __init__(self) -> None:
        self.mapping: dict[str, str] = {}

    def _new(self, name: str) -> str:
        if name not in self.mapping:
            n = len(self.mapping)
            word = VOCABULARY[n % len(VOCABULARY)]
            self.mapping[name] = word if n < len(VOCABULARY) else f"{word}_{n}"
        return self.mapping[name]

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = self._new(node.id)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        node.attr = self._new(node.attr)
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.arg = self._new(node.arg)
        return node

    def _named(self, node: ast.AST) -> ast.AST:
        node.name = self._new(node.name)  # type: ignore[attr-defined]
        return self.generic_visit(node)

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _named


def _in_vocabulary(source: str) -> str:
    """``source`` with its names renamed (unchanged if it cannot be renamed)."""
    try:
        return ast.unparse(_Rename().visit(ast.parse(source)))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return source


def _embedded(source: str) -> str:
    body = textwrap.indent(source, "    ") if source.strip() else "    pass\n"
    return f"{PRELUDE}\n\ndef resume_turn(checkpoint, deps):\n{body}\n    return checkpoint.resume_context()\n"


def _check(data: bytes | str, name: str = "fuzzed.py", formats: tuple[str, ...] = ("json",)) -> None:
    """Run the CLI on ``data`` (in each of ``formats``) and assert the property."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, name)
        path.write_bytes(raw)
        for fmt in formats:
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                status = main(["check", "--no-cache", "--jobs", "1", "--format", fmt, str(path)])
            text = out.getvalue() + err.getvalue()
            assert status in (0, 1, 2), text
            assert "Traceback" not in text, text
            assert "internal error" not in text, text
            if fmt == "json":
                report = json.loads(out.getvalue())
                assert all(e["path"] == str(path) and e["message"] for e in report["errors"]), report
                assert (status == 2) == bool(report["errors"]), report


def test_the_renamer_keeps_programs_valid_and_speaks_the_vocabulary() -> None:
    renamed = _in_vocabulary("def f(a, b):\n    return a.x + b\n")
    assert "summary" in renamed and "checkpoint" in renamed
    compile(renamed, "renamed.py", "exec")
    assert _in_vocabulary("def (") == "def ("


@_examples(50)
@given(hypothesmith.from_grammar())
def test_grammar_programs(source: str) -> None:
    _check(PRELUDE + _in_vocabulary(source))


@_examples(30)
@given(hypothesmith.from_node())
def test_libcst_programs(source: str) -> None:
    _check(PRELUDE + _in_vocabulary(source))


@_examples(50)
@given(hypothesmith.from_grammar())
def test_programs_inside_a_resume_function(source: str) -> None:
    _check(_embedded(_in_vocabulary(source)))


@_examples(100)
@given(st.binary(max_size=2000))
def test_random_bytes(raw: bytes) -> None:
    _check(raw)


@_examples(100)
@given(st.binary(max_size=500), st.sampled_from(["fuzzed.py", "fuzzed.pyi"]))
def test_random_bytes_behind_a_vocabulary_prelude(raw: bytes, name: str) -> None:
    _check(PRELUDE.encode() + raw, name)


@pytest.mark.parametrize(
    "raw",
    [
        b"\xef\xbb\xbf" + PRELUDE.encode() + b"checkpoint.resume(summary)\r\n",
        PRELUDE.replace("\n", "\r\n").encode() + b"checkpoint.resume(summary)\r\n",
        PRELUDE.replace("\n", "\r").encode() + b"checkpoint.resume(summary)\r",
        PRELUDE.encode() + b"checkpoint.resume(summary\x00)\n",
        PRELUDE.encode() + b"\x0c\x0b\tcheckpoint.resume(summary)\n",
        b"# -*- coding: latin-1 -*-\n" + PRELUDE.encode() + b"x = '\xe9'\ncheckpoint.resume(summary)\n",
        b"# -*- coding: utf-16 -*-\n" + PRELUDE.encode(),
        PRELUDE.encode() + b"\xff\xfe",
        PRELUDE.encode() + "x = '\ud800'\n".encode("utf-8", "surrogatepass"),
    ],
    ids=["bom-crlf", "crlf", "cr-only", "nul", "formfeed-vtab", "latin-1", "utf-16-cookie", "bad-bytes", "surrogate"],
)
def test_awkward_encodings_and_newlines(raw: bytes) -> None:
    _check(raw, formats=("json", "text", "sarif", "github"))
