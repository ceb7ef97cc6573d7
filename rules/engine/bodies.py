"""A context module's function bodies, parsed with libcst only when something reads them.

Why: a file checked alone (a pre-commit hook) brings as context every project
module it imports, transitively, and libcst's parse of them is most of the run:
agno's ``agent/_run.py`` brings 147 modules, whose parse was 56% of its check,
while the analysis reads 41% of their function text (the solver's demand,
:func:`.solver.demanded`, and the facts that look into a callee). The outline
(:mod:`.outline`) decides on CPython's tree which bodies *can* matter; which
ones *do* is known only while the analysis runs, from calls resolved on
libcst's trees. So a context function whose body the outline keeps is blanked
too, and :class:`~.project.FunctionInfo` parses it from the module's text the
first time its ``node`` is read: nothing that reads a body can see less than a
whole parse would have given it.

Only a function whose body adds nothing to its module's index qualifies (no
nested function, class or named lambda in it: those are indexed when the module
is, see :meth:`.project.Project.add_module`; its imports stay in the blanked
body, on their lines), outside any other function, the only one of its name,
and not a constructor (``__init__`` and ``__post_init__`` are read through
their class's node, for the fields a class stamps). The body is parsed under a
stand-in ``def`` line, its lines as they are, so its nodes' lines are the
file's minus a known offset (:func:`positions`).

The outline names functions as CPython spells them, NFKC-normalized (``ｆ`` is
``f``); libcst keeps what is written, so a name is looked up normalized.
"""

from __future__ import annotations

import unicodedata
from collections import ChainMap
from collections.abc import Mapping
from typing import NamedTuple

import libcst as cst
from libcst.metadata import CodeRange

from .grammar import parse_module
from .positions import shifted, tree_positions
from .project import ModuleInfo

__all__ = ["ParsedBody", "defer_bodies", "positions"]

#: The stand-in ``def`` line a body is parsed under (one line: see :class:`ParsedBody`).
_HEADER = "def _():\n"


class ParsedBody(NamedTuple):
    """A body parsed after its module: the ``def`` the module's tree holds (body blanked),
    the ``def`` with the body, and the tree the body was parsed in, whose line ``n`` is
    the file's line ``n + offset``."""

    stub: cst.FunctionDef
    loaded: cst.FunctionDef
    snippet: cst.Module
    offset: int


def defer_bodies(
    module: ModuleInfo, text: str, spans: Mapping[str, tuple[int, int, str]], target: str | None
) -> None:
    """Defer the bodies of ``module``'s functions named in ``spans`` (qualified name ->
    the body's 0-based first and last line in ``text``, as :func:`.outline.outline_skeleton`
    blanked them)."""
    if not spans:
        return
    lines = text.split("\n")
    for fn in module.functions:
        span = spans.get(_as_cpython_spells(fn.qualname, module.name))
        stub = fn.header
        if span is not None and isinstance(stub, cst.FunctionDef):
            fn.defer_body(lambda stub=stub, span=span: _parse_body(module, stub, lines, span, target))


def _as_cpython_spells(qualname: str, module_name: str) -> str:
    """``qualname`` with its names (after the module's) NFKC-normalized, as CPython's parser
    normalizes identifiers; the module's name comes from its path on both sides."""
    if qualname.isascii():
        return qualname
    return module_name + unicodedata.normalize("NFKC", qualname[len(module_name) :])


def _parse_body(
    module: ModuleInfo, stub: cst.FunctionDef, lines: list[str], span: tuple[int, int, str], target: str | None
) -> cst.FunctionDef:
    """``stub`` with its body parsed from ``lines``. CPython's parser accepted the whole
    file, so libcst's refusal (or a body nested too deeply for it) is not expected; the
    function then keeps its blanked body, which knows nothing (a context module reports
    nothing; :meth:`.analyzer.Analyzer._parse_cst` drops a module libcst cannot parse)."""
    start, end, _ = span
    try:
        snippet, _shifts = parse_module(_HEADER + "\n".join(lines[start : end + 1]) + "\n", target)
        body = snippet.body[0]
        if not isinstance(body, cst.FunctionDef):  # pragma: no cover - the header is a def
            return stub
        loaded = stub.with_changes(body=body.body)
    except Exception:  # noqa: BLE001 - libcst's failure on one body is that body's, never the run's
        return stub
    # the snippet's line 2 is the body's first line, the file's line ``start + 1``
    module.parsed_bodies.append(ParsedBody(stub, loaded, snippet, start - 1))
    return loaded


def positions(
    module: ModuleInfo, found: Mapping[cst.CSTNode, CodeRange], target: str | None
) -> Mapping[cst.CSTNode, CodeRange]:
    """``found`` (the positions of ``module``'s tree) with those of the bodies parsed later,
    laid over it: ``found`` is never copied, so the tree's positions stay resolved only as
    far as they are asked (see :class:`.positions.StatementPositions`)."""
    if not module.parsed_bodies:
        return found
    merged: dict[cst.CSTNode, CodeRange] = {}
    for parsed in module.parsed_bodies:
        stub = merged[parsed.stub] if parsed.stub in merged else found.get(parsed.stub)
        if stub is not None:
            merged[parsed.loaded] = stub
        offset = parsed.offset
        for node, where in tree_positions(parsed.snippet, target).items():
            merged[node] = shifted(where, offset)
    return ChainMap(merged, found)  # type: ignore[arg-type]
