"""Outline a module for libcst: blank the bodies of functions that cannot matter.

libcst's parse is the engine's largest cost (about half of a cold run), and
most lines of a file that passes the code-word gate belong to functions that
show no evidence at all: a 4,000-line test module with one relevant method.
Such a function keeps an "unknown" summary (see :mod:`.relevance`), so its
body is never analyzed; only its ``def`` line (name, parameters, decorators)
is read, for call resolution. Before libcst parses a file, the body of every
function that cannot matter is blanked: a string statement spanning its lines
(``...`` for a body of one line; see :func:`_fill`): line and column numbers
of everything kept are unchanged, so findings point where they would in the
full file.

A function's body is kept when any of these holds (decided on CPython's tree):

* the function is relevant (the bound of :func:`.relevance.relevance`), or a
  function nested in it is kept;
* its own words show any evidence group, even alone (a summary, checkpoint,
  resume, compaction or reconciliation word: the compaction rules read every
  function of a module that mentions summaries), or concurrency and graph
  words (threads, tasks, executors, callbacks, locks, and the framework models'
  node registrations and pauses) that SG203/SG304 and the graph facts read;
* it imports something (imports anywhere count for the whole module);
* the module only lends its classes (see :meth:`.analyzer.Analyzer.lent_facts`) and
  ``lent`` keeps the function: a factory's return, an override that calls a model;
* its name is passed to some node registration of the run (``add_node(...)``: a graph node
  of a summarizing module becomes relevant after parsing), or a relevant
  function calls it by that name (the evidence of a call reads one level into
  an unanalyzed callee's body: does it call a tool, return one).

Text with a carriage return is not outlined (CPython and libcst could count
its lines differently); nor is a body that shares a line with its ``def``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Collection, Iterable

from .cpython_tree import statements_below
from .relevance import FileScan

__all__ = ["Skeleton", "outline", "outline_skeleton", "skeleton"]

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
#: What holds statements of one scope: statements, ``except`` clauses, ``case`` blocks.
_BLOCKS = (ast.stmt, ast.excepthandler, ast.match_case)
#: Read through their class's node (the fields a class stamps), never deferred (see :mod:`.bodies`).
_CONSTRUCTORS = frozenset({"__init__", "__post_init__"})
#: Words that keep a body for the concurrency and graph facts, whatever else it says.
_CONCURRENCY = (
    "Thread", "thread", "create_task", "ensure_future", "TaskGroup", "submit", "xecutor", "allback",
    "lock", "Lock", "acquire", "flock",
)


#: One function or class of a module, as :func:`outline` reads it: ``(is_def, name,
#: imports, span, children, import_lines)``, children in the order the outline visits
#: them; ``import_lines``: the 0-based first and last lines of each import of the
#: function's own body, or None when one shares a line with other code (see
#: the ``deferred`` of :func:`outline_skeleton`).
#: Plain tuples, so that the screening in a worker process can hand it over.
Skeleton = tuple


def skeleton(text: str, tree: ast.Module) -> Skeleton:
    """What :func:`outline` needs of CPython's tree (no tree kept): see :data:`Skeleton`."""
    if "\r" in text:
        return ()
    return _skeleton_of(tree.body, text.split("\n"))


def _skeleton_of(body: list[ast.stmt], lines: list[str]) -> Skeleton:
    """:func:`skeleton` of one block of the text of ``lines``. A function, not a recursive
    closure: such a closure is a reference cycle, and kept the lines of every text the
    screening read until the cyclic collector came."""
    items = []
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, _DEFS):
            imported = _imports(node)
            items.append(
                (True, node.name, bool(imported), _span(node, lines), _skeleton_of(node.body, lines),
                 _lines_of(imported, lines))
            )
        elif isinstance(node, ast.ClassDef):
            items.append((False, node.name, False, None, _skeleton_of(node.body, lines), ()))
        elif isinstance(node, _BLOCKS):
            stack.extend(statements_below(node))
    return tuple(items)


def outline(
    text: str,
    tree: ast.Module,
    file_scan: FileScan,
    module_name: str,
    relevant: set[str],
    evidence: Callable[[str], bool],
    nodes: set[str],
) -> str:
    """``text`` with the bodies of functions that cannot matter blanked (see module doc)."""
    return outline_skeleton(text, skeleton(text, tree), file_scan, module_name, relevant, evidence, nodes)


def outline_skeleton(
    text: str,
    outline_of: Skeleton,
    file_scan: FileScan,
    module_name: str,
    relevant: set[str],
    evidence: Callable[[str], bool],
    nodes: set[str],
    lent: Callable[[str, Iterable[str]], bool] | None = None,
    deferred: dict[str, tuple[int, int, str]] | None = None,
    blanked: list[tuple[int, int]] | None = None,
) -> str:
    """:func:`outline`, from the module's :func:`skeleton` instead of its tree; ``lent``
    (words, calls) keeps more of a module that only lends its classes.

    ``deferred`` (for a context module) receives the kept bodies that can be parsed
    later (see :mod:`.bodies`), by qualified name, and those are blanked too; such a
    body keeps its imports, each on its own lines at the body's indentation: an import
    anywhere in a module counts for the whole module's names.

    ``blanked`` receives the 0-based first and last lines of every body blanked for
    good (not ``deferred``): what the outline's tree no longer holds (see
    :func:`.module_index.kept`)."""
    if "\r" in text:
        return text
    # functions with named lambdas in them: their bodies add functions to the index
    owners = {q.partition(".<locals>.")[0] for q in file_scan.functions if ".<locals>." in q} if deferred is not None else ()
    outliner = _Outliner(file_scan, relevant, evidence, nodes, lent, deferred, owners)
    outliner.visit(outline_of, module_name)
    spans, restores, named = outliner.spans, outliner.restores, outliner.named
    if blanked is not None:
        blanked.extend((start, end) for start, end, _ in spans)
    if deferred:
        for qualname in [q for q in deferred if named[q] > 1]:
            del deferred[qualname]  # which of the functions of that name a span is, the index cannot tell
        spans.extend(deferred.values())
    if not spans:
        return text
    lines = text.split("\n")
    kept = [r for q in deferred or () for r in restores[q]]
    original = lines[:] if kept else lines
    for start, end, indent in spans:
        lines[start : end + 1] = [""] * (end + 1 - start)
    for first, last, indent in kept:
        lines[first] = indent + original[first].lstrip(" \t")
        lines[first + 1 : last + 1] = original[first + 1 : last + 1]
    reach = -1
    for start, end, indent in sorted(spans):
        if start > reach:  # a nested function's span lies inside its blanked parent's
            _fill(lines, start, end, indent)
            reach = end
    return "\n".join(lines)


class _Outliner:
    """:func:`outline_skeleton`'s walk of a skeleton: which bodies it blanks and defers. A
    class, not recursive closures: those were a reference cycle holding each outline's
    spans until the cyclic collector came."""

    def __init__(
        self,
        file_scan: FileScan,
        relevant: set[str],
        evidence: Callable[[str], bool],
        nodes: set[str],
        lent: Callable[[str, Iterable[str]], bool] | None,
        deferred: dict[str, tuple[int, int, str]] | None,
        owners: Collection[str],
    ) -> None:
        self.file_scan, self.relevant, self.evidence, self.nodes = file_scan, relevant, evidence, nodes
        self.lent, self.deferred, self.owners = lent, deferred, owners
        self.spans: list[tuple[int, int, str]] = []
        #: Imports a deferred body keeps: first and last line, the body's indentation.
        self.restores: dict[str, list[tuple[int, int, str]]] = {}
        #: How many functions have each qualified name (``@overload`` stubs, conditional defs).
        self.named: dict[str, int] = {}

    def keeps(self, name: str, qualname: str) -> bool:
        if qualname in self.relevant or name in self.nodes:
            return True
        words = self.file_scan.functions.get(qualname)
        if words is None:
            return True
        joined = "\n".join(words.words)
        if self.lent is not None and self.lent(joined, words.calls):
            return True
        return self.evidence(joined) or any(w in joined for w in _CONCURRENCY)

    def visit(self, items: Skeleton, prefix: str, whole: bool = False) -> bool:
        """Collect blankable spans under ``items``; whether anything under them is kept.
        ``whole``: inside a kept function of a lending module, whose closures are part of
        what it lends (a helper's ``create_task(runner())`` runs the closure's body)."""
        spans, named, deferred, lent = self.spans, self.named, self.deferred, self.lent
        kept = False
        for is_def, name, imports, span, children, import_lines in items:
            if is_def:
                qualname = f"{prefix}.{name}"
                named[qualname] = named.get(qualname, 0) + 1
                own = whole or (lent is not None and self.keeps(name, qualname))
                inner = self.visit(children, f"{qualname}.<locals>", own)
                if own or inner or self.keeps(name, qualname) or imports:
                    kept = True
                    if (
                        deferred is not None and not inner and not children and span is not None
                        and import_lines is not None and "<locals>" not in prefix
                        and name not in _CONSTRUCTORS and qualname not in self.owners
                    ):
                        deferred[qualname] = span
                        self.restores[qualname] = [(first, last, span[2]) for first, last in import_lines]
                    continue
                if span is None:
                    kept = True
                else:
                    spans.append(span)
            else:
                before = len(spans)
                inner = self.visit(children, f"{prefix}.{name}", whole)
                if inner:
                    # a class whose methods are analyzed keeps its constructor: what they read of
                    # ``self`` comes from it (``self._template = template or self.BASE_TEMPLATE``,
                    # a prompt that asks for a summary), and whether an instance dispatches at
                    # all can depend on what it was built with (``self.agent = agent`` ...
                    # ``if self.agent: spawn(...)``, and the caller's ``self.trimmer =
                    # Trimmer(None)``; see .inflight)
                    init = [c[3] for c in children if c[0] and c[1] in _CONSTRUCTORS and c[3] is not None]
                    spans[before:] = [sp for sp in spans[before:] if sp not in init]
                kept = inner or kept
        return kept


def _fill(lines: list[str], start: int, end: int, indent: str) -> None:
    """Fill the blanked lines ``start``..``end`` of one body (0-based, where imports a
    deferred body keeps are already back on their lines) with the fewest tokens.

    Why: libcst makes nodes of every line, and a blanked body's empty lines were a fifth
    of the parse of agno's outlines (each one an ``EmptyLine`` with its whitespace and
    newline). A run of blanked lines becomes one string statement spanning them,
    ``\"\"\"`` on its first line to ``\"\"\"`` on its last, whose content is only line
    breaks: one token, no words, and every line after it where it was. A body's first
    line is ``...`` when it is blanked alone."""
    index = start
    while index <= end:
        if lines[index]:  # a kept import
            index += 1
            continue
        run_end = index
        while run_end < end and not lines[run_end + 1]:
            run_end += 1
        if run_end > index:
            lines[index] = indent + '"""'
            lines[run_end] = '"""'
        elif index == start:
            lines[index] = indent + "..."
        index = run_end + 1


def _imports(node: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """The imports of a function's own body (not of nested defs or classes), in
    ``except`` and ``case`` blocks too, as the project's index collects them
    (:func:`.syntax.walk_statements`)."""
    found: list[ast.Import | ast.ImportFrom] = []
    stack = statements_below(node)
    while stack:
        child = stack.pop()
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            found.append(child)
        elif not isinstance(child, (*_DEFS, ast.ClassDef)):
            stack.extend(statements_below(child))
    return found


def _lines_of(imports: list[ast.Import | ast.ImportFrom], lines: list[str]) -> tuple[tuple[int, int], ...] | None:
    """Each import's 0-based first and last line, or None when one shares a line with
    other code (``if TYPE_CHECKING: import x``, ``import x; y()``): it cannot be kept alone."""
    found = []
    for node in imports:
        first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
        if last >= len(lines) or node.end_col_offset is None:
            return None
        line = lines[first]
        if len(line) - len(line.lstrip(" \t")) != node.col_offset:
            return None
        rest = lines[last].encode("utf-8", "surrogatepass")[node.end_col_offset :].decode("utf-8", "replace").strip()
        if rest and not rest.startswith("#"):
            return None
        found.append((first, last))
    return tuple(sorted(found))


def _span(node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> tuple[int, int, str] | None:
    """0-based first and last line of the body and its indentation, or None when not blankable."""
    first, last = node.body[0], node.body[-1]
    # a decorated statement starts at its first decorator, not at its ``def`` / ``class`` line
    start = min([first.lineno, *(d.lineno for d in getattr(first, "decorator_list", ()))]) - 1
    end = (last.end_lineno or last.lineno) - 1
    if start <= node.lineno - 1 or end >= len(lines):
        return None
    line = lines[start]
    indent = line[: len(line) - len(line.lstrip(" \t"))]
    if not indent or len(indent) != first.col_offset:
        return None
    return start, end, indent
