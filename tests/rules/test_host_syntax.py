"""The host's syntax check answers exactly as ``compile(..., PyCF_ONLY_AST)`` does, though it
asks :func:`symtable.symtable` first (see :mod:`summaryguard.rules.engine.host_syntax`)."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import pytest

from summaryguard.rules.engine.host_syntax import host_parse_error, surely_parses

_ROOT = Path(__file__).resolve().parents[2]


def _compile_verdict(text: str) -> tuple[type, int | None] | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, "<summaryguard>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        return type(exc), getattr(exc, "lineno", None)
    except (RecursionError, MemoryError):
        return None
    return None


def _verdict(text: str) -> tuple[type, int | None] | None:
    found = host_parse_error(text)
    return None if found is None else (type(found), getattr(found, "lineno", None))


@pytest.mark.parametrize(
    "text",
    [
        "x = 1\n",
        "def f(:\n    pass\n",
        "a = 1\nb = (\n",
        "x = 1\0\n",
        'x = "\udcff"\n',  # a lone surrogate (undecodable bytes, escaped): compile()'s ValueError
        "print 'py2'\n",
        # the compiler's refusals, not the parser's: symtable rejects these, compile() with
        # PyCF_ONLY_AST does not, and its verdict is the one given
        "nonlocal x\n",
        "x = 1\nglobal x\n",
        "def f(a):\n    global a\n",
        "from __future__ import braces\n",
        # a refusal symtable leaves to the compiler too: both accept it
        "return 1\n",
        "x = '\\d'\n",  # a SyntaxWarning only
        "(" * 300 + ")" * 300 + "\n",
        "[" * 5000 + "]" * 5000 + "\n",
    ],
)
def test_the_verdict_is_compiles(text: str) -> None:
    assert _verdict(text) == _compile_verdict(text)


def test_the_compilers_own_refusals_are_no_syntax_error() -> None:
    for text in ("nonlocal x\n", "x = 1\nglobal x\n"):
        assert not surely_parses(text)  # the fast step declines ...
        assert host_parse_error(text) is None  # ... and compile() accepts it


def test_a_text_the_parser_accepts_is_answered_by_the_cheap_step() -> None:
    assert surely_parses("import os\n\ndef f(x):\n    return os.path.join(x, 'a')\n")
    assert not surely_parses("def f(:\n")


def test_the_verdict_is_compiles_on_every_python_file_of_this_repository() -> None:
    """Real texts, fixtures with syntax errors among them."""
    paths = [path for folder in ("guard", "rules", "plugins", "tests") for path in sorted((_ROOT / folder).rglob("*.py"))]
    texts = [path.read_text(encoding="utf-8", errors="replace") for path in paths]
    assert len(texts) > 100
    assert [_verdict(t) for t in texts] == [_compile_verdict(t) for t in texts]
