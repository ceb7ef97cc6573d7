"""Where the nodes of a tree are, as libcst reports them (``PositionProvider``).

A tree libcst parsed has its own positions. A tree converted from CPython's
(:mod:`.cpython_cst`) has no layout, so its positions come from libcst's parse
of the same text, paired node by node (:func:`pairs`), and only where they are
asked: the nodes of a file's findings and of their traces, a few statements of
the file (:class:`StatementPositions`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping

import libcst as cst
from libcst.metadata import CodePosition, CodeRange, MetadataWrapper, PositionProvider

from .cpython_cst import is_converted
from .grammar import exact_tree, parse_module
from .syntax import children, walk_nodes

__all__ = ["StatementPositions", "pairs", "shifted", "tree_positions", "whole_positions"]


def tree_positions(tree: cst.Module, target: str | None) -> Mapping[cst.CSTNode, CodeRange]:
    """The position of every node of ``tree`` as libcst reports it, whether libcst parsed it
    or it was converted from CPython's tree (then libcst's positions of its parse of the
    same text, paired node by node: see :class:`StatementPositions`)."""
    if not is_converted(tree):
        return MetadataWrapper(tree, unsafe_skip_copy=True).resolve(PositionProvider)
    return StatementPositions(tree, target)


def whole_positions(tree: cst.Module, target: str | None) -> dict[cst.CSTNode, CodeRange]:
    """:func:`tree_positions` of a converted tree, from libcst's parse of all of its text."""
    exact = exact_tree(tree, target)
    found = MetadataWrapper(exact, unsafe_skip_copy=True).resolve(PositionProvider)
    return {ours: found[theirs] for ours, theirs in pairs(tree, exact) if theirs in found}


class StatementPositions(Mapping[cst.CSTNode, CodeRange]):
    """:func:`whole_positions`, resolved one top-level statement at a time, when a node
    of it is first asked about.

    Why: positions are asked for the nodes of a file's findings and their traces, a few
    statements of the file; libcst's parse of the whole text and its position pass cost
    a quarter of a pre-commit check of a large file with findings (0.7 of 2.8 s for a
    3,700-line test module of openai-agents). A top-level statement starts a line at
    column 0, so libcst's parse of its lines alone (to the line before the next one's
    first, decorators included) gives each node the position the whole parse gives,
    its lines shifted. Whatever this cannot place that way (the module node, text
    with tabs, form feeds or carriage returns, a statement whose lines do not parse as
    one statement of the same kind) is read from the whole parse, once."""

    def __init__(self, tree: cst.Module, target: str | None) -> None:
        self._tree = tree
        self._target = target
        #: Positions resolved so far, by the node's id (with the node: an id is never reused).
        self._found: dict[int, tuple[cst.CSTNode, CodeRange]] = {}
        #: Per top-level statement: whether its positions are in :attr:`_found`.
        self._statements: dict[int, bool] = {}
        self._owner: dict[int, int] | None = None
        self._starts: list[int] | None = None
        #: The text's lines, split once for every statement resolved (CPython's lines, not splitlines()').
        self._text_lines: list[str] | None = None
        self._whole: dict[cst.CSTNode, CodeRange] | None = None

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        found = self.get(node)
        if found is None:
            raise KeyError(node)
        return found

    def get(self, node: cst.CSTNode, default: CodeRange | None = None) -> CodeRange | None:  # type: ignore[override]
        if self._whole is not None:
            return self._whole.get(node, default)
        index = self._owners().get(id(node))
        if index is None or not self._statement(index):
            return self._all().get(node, default)
        known = self._found.get(id(node))
        return known[1] if known is not None and known[0] is node else default

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())

    def _all(self) -> dict[cst.CSTNode, CodeRange]:
        if self._whole is None:
            self._whole = whole_positions(self._tree, self._target)
            self._found.clear()
        return self._whole

    def _owners(self) -> dict[int, int]:
        """The top-level statement each node of the tree is under, by the node's id."""
        if self._owner is None:
            self._owner = {id(node): index for index, stmt in enumerate(self._tree.body) for node in walk_nodes(stmt)}
        return self._owner

    def _statement(self, index: int) -> bool:
        known = self._statements.get(index)
        if known is None:
            known = self._statements[index] = self._resolve(index)
        return known

    def _lines(self) -> list[int]:
        """Each top-level statement's first line (its first decorator's), as CPython reads
        the text, whose ``a; b`` are one line of libcst's; empty when the text is not one
        this can cut (see the class's documentation)."""
        if self._starts is None:
            self._starts = []
            source: str = self._tree.source  # type: ignore[attr-defined]
            if "\t" in source or "\f" in source or "\r" in source:
                return self._starts
            try:
                body = ast.parse(source).body
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return self._starts
            starts: list[int] = []
            at = 0
            for stmt in self._tree.body:
                if at >= len(body):
                    return self._starts
                first = body[at]
                decorators = getattr(first, "decorator_list", ())
                starts.append(min([first.lineno, *(d.lineno for d in decorators)]))
                at += len(stmt.body) if type(stmt) is cst.SimpleStatementLine else 1
            if at == len(body):
                self._starts = starts
        return self._starts

    def _resolve(self, index: int) -> bool:
        """Put the positions of statement ``index``'s nodes in :attr:`_found`; False when
        its lines cannot be read apart (see the class's documentation)."""
        starts = self._lines()
        if not starts:
            return False
        if self._text_lines is None:
            self._text_lines = self._tree.source.split("\n")  # type: ignore[attr-defined]
        lines = self._text_lines
        first = starts[index]
        last = starts[index + 1] - 1 if index + 1 < len(starts) else len(lines)
        text = "\n".join(lines[first - 1 : last]) + ("\n" if last < len(lines) else "")
        try:
            tree, shifts = parse_module(text, self._target, exact=True)
        except (cst.ParserSyntaxError, RecursionError):
            return False
        ours = self._tree.body[index]
        if shifts is not None or len(tree.body) != 1 or type(tree.body[0]) is not type(ours):
            return False
        found = MetadataWrapper(tree, unsafe_skip_copy=True).resolve(PositionProvider)
        offset = first - 1
        for node, theirs in pairs(ours, tree.body[0]):
            where = found.get(theirs)
            if where is not None:
                self._found[id(node)] = (node, shifted(where, offset))
        return True


def shifted(where: CodeRange, lines: int) -> CodeRange:
    """``where`` in a text that has ``lines`` more lines before it (a piece parsed apart)."""
    return CodeRange(
        CodePosition(where.start.line + lines, where.start.column), CodePosition(where.end.line + lines, where.end.column)
    )


def pairs(ours: cst.CSTNode, theirs: cst.CSTNode) -> Iterator[tuple[cst.CSTNode, cst.CSTNode]]:
    """The nodes of two trees of one text that correspond (layout aside), root first, as
    far down as their structure agrees."""
    yield ours, theirs
    stack = [(ours, theirs)]
    while stack:
        a, b = stack.pop()
        below_a, below_b = children(a), children(b)
        if len(below_a) != len(below_b):
            continue
        for x, y in zip(below_a, below_b):
            if type(x) is type(y):
                yield x, y
                stack.append((x, y))
