"""Where the nodes of a tree are, as libcst reports them (``PositionProvider``).

A tree libcst parsed has its own positions. A tree converted from CPython's
(:mod:`.cpython_cst`) has no layout, so its positions come from libcst's parse
of the same text, paired node by node (:func:`pairs`), and only where they are
asked: the nodes of a file's findings and of their traces, a few statements of
the file (:class:`StatementPositions`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping, Sequence

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


#: The line a nested statement is parsed under: any indented statement is its block.
_STAND_IN = "if 1:\n"
#: A parse's cost in lines beyond the lines it reads (libcst's set-up, the position pass's):
#: a short top-level statement is parsed whole, its pieces apart would cost more.
_PARSE_COST = 20
_BLOCK_STOP = frozenset({cst.IndentedBlock})
_NO_STOP: frozenset[type] = frozenset()
#: CPython's statement for each compound statement of libcst (a ``match`` too, though
#: its blocks are not cut apart: its cases are islands of libcst's own, see :mod:`.cpython_cst`).
_CPYTHON_KIND: dict[type, tuple[type, ...]] = {
    cst.FunctionDef: (ast.FunctionDef, ast.AsyncFunctionDef),
    cst.ClassDef: (ast.ClassDef,),
    cst.If: (ast.If,),
    cst.For: (ast.For, ast.AsyncFor),
    cst.While: (ast.While,),
    cst.With: (ast.With, ast.AsyncWith),
    cst.Try: (ast.Try,),
    cst.Match: (ast.Match,),
}
if hasattr(ast, "TryStar"):  # pragma: no branch - Python >= 3.11
    _CPYTHON_KIND[cst.TryStar] = (ast.TryStar,)
_COMPOUND = tuple(kind for kinds in _CPYTHON_KIND.values() for kind in kinds)


class StatementPositions(Mapping[cst.CSTNode, CodeRange]):
    """:func:`whole_positions`, resolved one statement at a time, the innermost statement
    of a node asked about first.

    Why: positions are asked for the nodes of a file's findings and their traces, a few
    statements of the file, while libcst's parse of the whole text and its position pass
    cost a quarter of a pre-commit check of a large file with findings (0.7 of 2.8 s for
    a 3,700-line test module of openai-agents). A top-level statement starts a line at
    column 0, so libcst's parse of its lines alone (to the line before the next one's
    first, decorators included) gives each node the position the whole parse gives, its
    lines shifted. A statement in an indented block (a method, a statement of a long
    function) is parsed the same way under a stand-in ``if 1:`` line, its lines as they
    are, so its columns are the file's too: a finding in one method of a 3,000-line
    class parses that method, not the class (letta's cold check spent 2.1 of its 20 s
    parsing five such classes whole). Its lines are CPython's (the statement's first
    line, decorators included, to its last): libcst's positions leave out the comments
    and blank lines around a statement.

    Whatever this cannot place that way (the module node, text with tabs, form feeds,
    carriage returns or a line of a lone backslash, a statement whose lines do not parse
    as one statement of the same kind) is read from the enclosing statement, and at the
    top from the whole parse, once. Asking about every node of a long statement, the
    innermost first, costs at most one and a half of its own parse (:class:`_Nest`)."""

    def __init__(self, tree: cst.Module, target: str | None) -> None:
        self._tree = tree
        self._target = target
        #: Positions resolved so far, by the node's id (with the node: an id is never reused).
        self._found: dict[int, tuple[cst.CSTNode, CodeRange]] = {}
        #: Per top-level statement: whether its positions are in :attr:`_found`.
        self._statements: dict[int, bool] = {}
        self._owner: dict[int, int] | None = None
        self._starts: list[int] | None = None
        #: Per top-level statement, CPython's statements of it (``a; b`` is two).
        self._groups: list[list[ast.stmt]] = []
        #: Per top-level statement whose nodes were asked about: :meth:`_nest`'s maps.
        self._nests: dict[int, _Nest] = {}
        #: Per nested statement tried (by id): whether its positions are in :attr:`_found`.
        self._tried: dict[int, bool] = {}
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
        if index is None or not self._lines():
            return self._all().get(node, default)
        found = self._placed(node)
        if found is not None:
            return found
        nest = self._nest(index)
        unit = nest.owner.get(id(node))
        while unit is not None:  # its statement, then the statements around it
            if self._resolve_nested(unit, nest):
                found = self._placed(node)
                if found is not None:
                    return found
            unit = nest.spans[id(unit)][2]
        if not self._statement(index):
            return self._all().get(node, default)
        found = self._placed(node)
        return default if found is None else found

    def _placed(self, node: cst.CSTNode) -> CodeRange | None:
        known = self._found.get(id(node))
        return known[1] if known is not None and known[0] is node else None

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
        the text, whose ``a; b`` are one line of libcst's (and CPython's statements of each,
        :attr:`_groups`); empty when the text is not one this can cut (see the class's
        documentation)."""
        if self._starts is None:
            self._starts = []
            source: str = self._tree.source  # type: ignore[attr-defined]
            if "\t" in source or "\f" in source or "\r" in source or _lone_backslash(self._text()):
                return self._starts
            try:
                body = ast.parse(source).body
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return self._starts
            grouped = _grouped(self._tree.body, body)
            if grouped is not None:
                self._groups = [group for _, group in grouped]
                self._starts = [_first_line(group) for group in self._groups]
        return self._starts

    def _text(self) -> list[str]:
        if self._text_lines is None:
            self._text_lines = self._tree.source.split("\n")  # type: ignore[attr-defined]
        return self._text_lines

    def _resolve(self, index: int) -> bool:
        """Put the positions of statement ``index``'s nodes in :attr:`_found`; False when
        its lines cannot be read apart (see the class's documentation)."""
        starts = self._lines()
        last = starts[index + 1] - 1 if index + 1 < len(starts) else len(self._text())
        return self._read_apart(self._tree.body[index], starts[index], last, nested=False)

    def _nest(self, index: int) -> _Nest:
        """The nested statements of top-level statement ``index``, with what their parses
        may cost: the statement's lines."""
        found = self._nests.get(index)
        if found is None:
            found = self._nests[index] = _nest(self._tree.body[index], self._groups[index])
            starts, lines = self._lines(), self._text()
            found.budget = (starts[index + 1] if index + 1 < len(starts) else len(lines) + 1) - starts[index]
        return found

    def _resolve_nested(self, unit: cst.CSTNode, nest: _Nest) -> bool:
        """Put the positions of the nested statement ``unit``'s nodes in :attr:`_found`,
        once; False when its lines cannot be read apart."""
        known = self._tried.get(id(unit))
        if known is not None:
            return known
        first, last, _ = nest.spans[id(unit)]
        nest.spent += last - first + 1 + _PARSE_COST
        # past half of the top-level statement's lines, its one parse is cheaper from here on
        done = 2 * nest.spent <= nest.budget and self._read_apart(unit, first, last, nested=True)
        self._tried[id(unit)] = done
        return done

    def _read_apart(self, ours: cst.CSTNode, first: int, last: int, nested: bool) -> bool:
        """Put the positions of the statement ``ours`` (on lines ``first`` to ``last``) in
        :attr:`_found`, from libcst's parse of those lines alone (under :data:`_STAND_IN`
        when ``nested``); False when they do not parse as one statement of its kind."""
        lines = self._text()
        text = (_STAND_IN if nested else "") + "\n".join(lines[first - 1 : last]) + ("\n" if last < len(lines) else "")
        try:
            tree, shifts = parse_module(text, self._target, exact=True)
        except (cst.ParserSyntaxError, RecursionError):
            return False
        body: Sequence[cst.CSTNode] = tree.body
        if nested:
            block = body[0].body if len(body) == 1 and type(body[0]) is cst.If else None  # type: ignore[attr-defined]
            body = block.body if type(block) is cst.IndentedBlock else ()
        if shifts is not None or len(body) != 1 or type(body[0]) is not type(ours):
            return False
        found = MetadataWrapper(tree, unsafe_skip_copy=True).resolve(PositionProvider)
        offset = first - 2 if nested else first - 1
        for node, theirs in pairs(ours, body[0]):
            where = found.get(theirs)
            if where is not None:
                self._found[id(node)] = (node, shifted(where, offset))
        return True


class _Nest:
    """The statements nested in one top-level statement that can be parsed apart:
    ``spans`` (by the statement's id: its first and last line, and the statement around
    it, None at the top) and ``owner`` (by a node's id: the innermost of them holding it).
    A node the map leaves out is placed with its top-level statement."""

    __slots__ = ("budget", "owner", "spans", "spent")

    def __init__(self) -> None:
        self.owner: dict[int, cst.CSTNode] = {}
        self.spans: dict[int, tuple[int, int, cst.CSTNode | None]] = {}
        #: What its statements' parses cost so far (:data:`_PARSE_COST`), and the top-level
        #: statement's own lines: past half of them, the top-level statement is parsed
        #: instead, so asking about every node of it, the innermost first, costs at most
        #: one and a half of its one parse, never a parse per level.
        self.spent = 0
        self.budget = 0


def _nest(top: cst.CSTNode, group: list[ast.stmt]) -> _Nest:
    """:class:`_Nest` of the top-level statement ``top`` (CPython's ``group`` of it): its
    blocks' statements, paired with CPython's by their structure, each with its lines."""
    nest = _Nest()
    owner = nest.owner
    stack: list[tuple[cst.CSTNode, list[ast.stmt], bool]] = [(top, group, True)]
    while stack:
        stmt, statements, is_top = stack.pop()
        blocks = [] if type(stmt) is cst.SimpleStatementLine else _blocks(stmt, statements[0])
        if not is_top:  # its own nodes (all of them, when its blocks are not cut apart)
            for node in walk_nodes(stmt, _BLOCK_STOP if blocks is not None else _NO_STOP):
                owner[id(node)] = stmt
        if blocks is None:
            continue
        for block, below in blocks:
            grouped = _grouped(block.body, below)
            if not is_top:  # the block's own nodes (all of it, when not cut apart)
                owner[id(block)] = stmt
                for part in [block] if grouped is None else [block.header, *block.footer]:
                    for node in walk_nodes(part):
                        owner[id(node)] = stmt
            if grouped is None:
                continue
            for child, its in grouped:
                last = its[-1].end_lineno or its[-1].lineno
                nest.spans[id(child)] = (_first_line(its), last, None if is_top else stmt)
                stack.append((child, its, False))
    return nest


def _grouped(
    body: Sequence[cst.CSTNode], statements: Sequence[ast.stmt]
) -> list[tuple[cst.CSTNode, list[ast.stmt]]] | None:
    """Each statement of libcst's ``body`` with CPython's statements of it (a line
    ``a; b`` is two of CPython's), or None when the two do not correspond."""
    found: list[tuple[cst.CSTNode, list[ast.stmt]]] = []
    at = 0
    for stmt in body:
        if type(stmt) is cst.SimpleStatementLine:
            its = list(statements[at : at + len(stmt.body)])
            if len(its) != len(stmt.body) or any(isinstance(s, _COMPOUND) for s in its):
                return None
        else:
            its = list(statements[at : at + 1])
            kinds = _CPYTHON_KIND.get(type(stmt))
            if not its or kinds is None or not isinstance(its[0], kinds):
                return None
        found.append((stmt, its))
        at += len(its)
    return found if at == len(statements) else None


def _blocks(stmt: cst.CSTNode, node: ast.stmt) -> list[tuple[cst.IndentedBlock, list[ast.stmt]]] | None:
    """The indented blocks of the compound statement ``stmt``, each with CPython's
    statements of it (``node`` is CPython's ``stmt``), in order; None for a statement
    whose blocks are not cut apart (or that does not correspond)."""
    kind = type(stmt)
    suites: list[tuple[cst.BaseSuite, list[ast.stmt]]]
    if kind is cst.FunctionDef or kind is cst.ClassDef or kind is cst.With:
        suites = [(stmt.body, node.body)]  # type: ignore[attr-defined]
    elif kind is cst.For or kind is cst.While:
        suites = [(stmt.body, node.body)]  # type: ignore[attr-defined]
        orelse = stmt.orelse  # type: ignore[attr-defined]
        if (orelse is None) != (not node.orelse):  # type: ignore[attr-defined]
            return None
        if orelse is not None:
            suites.append((orelse.body, node.orelse))  # type: ignore[attr-defined]
    elif kind is cst.If:
        suites = [(stmt.body, node.body)]  # type: ignore[attr-defined]
        orelse = stmt.orelse  # type: ignore[attr-defined]
        if orelse is None:
            if node.orelse:  # type: ignore[attr-defined]
                return None
        elif type(orelse) is cst.If:  # ``elif``: CPython's ``orelse`` holds its ``if``
            if len(node.orelse) != 1 or not isinstance(node.orelse[0], ast.If):  # type: ignore[attr-defined]
                return None
            rest = _blocks(orelse, node.orelse[0])  # type: ignore[attr-defined]
            if rest is None:
                return None
            return [*_indented(suites), *rest]
        else:
            suites.append((orelse.body, node.orelse))  # type: ignore[attr-defined]
    elif kind is cst.Try or kind is getattr(cst, "TryStar", None):
        handlers = stmt.handlers  # type: ignore[attr-defined]
        if len(handlers) != len(node.handlers):  # type: ignore[attr-defined]
            return None
        suites = [(stmt.body, node.body)]  # type: ignore[attr-defined]
        suites += [(h.body, n.body) for h, n in zip(handlers, node.handlers)]  # type: ignore[attr-defined]
        for ours, theirs in ((stmt.orelse, node.orelse), (stmt.finalbody, node.finalbody)):  # type: ignore[attr-defined]
            if (ours is None) != (not theirs):
                return None
            if ours is not None:
                suites.append((ours.body, theirs))
    else:
        return None
    return _indented(suites)


def _indented(
    suites: list[tuple[cst.BaseSuite, list[ast.stmt]]]
) -> list[tuple[cst.IndentedBlock, list[ast.stmt]]]:
    """The blocks on lines of their own (``if x: y`` keeps ``y`` in its statement's line)."""
    return [(suite, stmts) for suite, stmts in suites if type(suite) is cst.IndentedBlock]


def _lone_backslash(lines: Sequence[str]) -> bool:
    """A line that holds only a backslash continuation: libcst's parse drops it, so the whole
    parse places what follows a line too early (``x = 1`` / ``\\`` / ``y = 2`` puts ``y`` on
    line 2), and a statement read apart, where it is, would disagree with it."""
    return any(line.strip() == "\\" for line in lines)


def _first_line(statements: Sequence[ast.stmt]) -> int:
    """The first line of a statement: its first decorator's, for a ``def`` or ``class``."""
    first = statements[0]
    return min([first.lineno, *(d.lineno for d in getattr(first, "decorator_list", ()))])


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
