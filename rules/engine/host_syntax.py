"""Whether CPython's parser accepts a text: the syntax check of every file the text
pre-filter dismisses (a file that cannot be parsed is an error wherever it is).

One concept, one place: the single-file path of the command line (which must not
import libcst, see :mod:`summaryguard.rules.cli.runner`) and the engine's
:meth:`~.analyzer.Analyzer.syntax_errors` ask it the same way, so their verdicts
cannot drift apart. This module imports nothing of the engine.

Why two steps: ``compile(..., PyCF_ONLY_AST)`` builds the whole tree as Python
objects, and nobody reads it here. :func:`symtable.symtable` runs the same parser
and keeps only the C tree (it adds a pass over the scopes), at two thirds of the
cost on the real-code corpus (3.4 against 5.3 s for 3,000 files). Its success
means the parser accepted the text. It also rejects some texts the parser accepts
(``nonlocal x`` at the top level, ``from __future__ import braces``), so a rejection
is asked again of ``compile`` with ``PyCF_ONLY_AST``, whose verdict is the one given:
the answers are exactly those of ``compile`` alone.
"""

from __future__ import annotations

import warnings
from _ast import PyCF_ONLY_AST  # ``ast`` itself is not needed to ask CPython for a tree
from symtable import symtable

__all__ = ["host_parse_error", "surely_parses"]

_NAME = "<summaryguard>"


def surely_parses(text: str) -> bool:
    """True when CPython's parser accepts ``text`` (cheap); False means "ask
    :func:`host_parse_error`", not "it does not parse"."""
    try:
        with warnings.catch_warnings():  # CPython's SyntaxWarnings are not ours to print
            warnings.simplefilter("ignore")
            symtable(text, _NAME, "exec")
    except Exception:  # noqa: BLE001 - any refusal, even the compiler's own: ask compile()
        return False
    return True


def host_parse_error(text: str) -> SyntaxError | ValueError | None:
    """CPython's refusal of ``text`` as its parser gives it (a :class:`SyntaxError`, or a
    :class:`ValueError` for a null byte), or None when it parses. Nesting too deep to
    parse (:class:`RecursionError`, :class:`MemoryError`) is no syntax error: None."""
    if surely_parses(text):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, _NAME, "exec", flags=PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        return exc
    except (RecursionError, MemoryError):
        return None
    return None
