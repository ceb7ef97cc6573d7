"""What the project's index reads of a module, as plain data from CPython's tree.

Why: a file checked alone brings every project module it imports as context, and
the index needs all of them (a call resolves into any) while the analysis reads
the nodes of few (:meth:`.project.Project.add_outline`). The screening already
holds CPython's tree of every module it keeps, so it records here, once per
content, what the index takes of it: imports, and each function's name, class,
enclosing function, parameters, annotations and decorators. The result cache
keeps it with the screening's facts, so a context module that did not change is
indexed without any parse, in this run or the next.

The entries are the whole file's, in the order :meth:`.project.Project._collect`
visits libcst's tree. The analyzer's tree is an *outline* (:mod:`.outline`): the
bodies it blanks are gone from it, with what they held, so :func:`kept` drops the
entries on those lines. A text whose names CPython spells otherwise than libcst
(:func:`.cpython_cst.names_as_written`), or whose indentation libcst reads (tabs,
form feeds), has no entries: its modules take the whole path.

Entries (plain tuples, JSON-safe):

* ``("import", line, ((name, asname | None), ...))``
* ``("from", line, module | None, level, ((name, asname | None), ...))``
* ``(kind, line, qualname, name, class_name | None, parent, params, annotations,
  decorators)`` with ``kind`` ``"def"`` or ``"lambda"``, ``qualname`` after the
  module's name, ``class_name`` the class whose body holds it (a method, or a
  method of a class inside a function), ``parent`` the position of the enclosing
  function among the function entries (-1: none), ``annotations``
  ``((param, dotted), ...)``.

``line`` is 0-based: the ``def`` (not its decorators), the import, the assignment.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import Any

from .cpython_tree import statements_below
from .names import dotted_cpython

__all__ = ["JSON_ARRAYS", "Entry", "entries_from_json", "index_entries", "kept"]

Entry = tuple

#: Statements whose blocks stay in their scope, as :func:`.syntax.child_blocks` reads them.
_COMPOUND = frozenset(
    {ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, getattr(ast, "TryStar", ast.Try), ast.With, ast.AsyncWith, ast.Match}
)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
#: What a JSON array of the cache can be: JSON gives lists; the data as made holds tuples
#: (a worker hands them over pickled; a cache entry stored and read in one run stays as made).
JSON_ARRAYS = (list, tuple)


def index_entries(tree: ast.Module) -> tuple[Entry, ...]:
    """The entries of CPython's ``tree`` (see the module's documentation)."""
    indexer = _Indexer()
    indexer.collect(tree.body, -1, None, "")
    return tuple(indexer.entries)


class _Indexer:
    """:func:`index_entries`' walk. A class, not two recursive closures: those were a
    reference cycle holding every entry of a module until the cyclic collector came."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.count = 0  # function entries so far: a parent's position

    def function(self, node: ast.AST, name: str, parent: int, class_name: str | None, prefix: str) -> None:
        arguments = node.args  # type: ignore[attr-defined]
        params = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
        params.extend(extra for extra in (arguments.vararg, arguments.kwarg) if extra is not None)
        is_def = isinstance(node, _DEFS)
        decorators = tuple(
            dotted_cpython(d.func if isinstance(d, ast.Call) else d) or "" for d in node.decorator_list  # type: ignore[attr-defined]
        ) if is_def else ()
        qualname = f"{prefix}.{name}" if prefix else name
        self.entries.append((
            "def" if is_def else "lambda", node.lineno - 1, qualname, name,  # type: ignore[attr-defined]
            class_name, parent,
            tuple(p.arg for p in params),
            tuple((p.arg, dotted_cpython(p.annotation) or "") for p in params if p.annotation is not None),
            decorators,
        ))
        position = self.count
        self.count += 1
        if is_def:
            self.collect(node.body, position, None, f"{qualname}.<locals>")  # type: ignore[attr-defined]

    def collect(self, body: list[ast.stmt], owner: int, class_name: str | None, prefix: str) -> None:
        entries = self.entries
        stack: list[ast.AST] = list(reversed(body))
        while stack:
            stmt = stack.pop()
            kind = type(stmt)
            if kind is ast.Import:
                entries.append(("import", stmt.lineno - 1, tuple((a.name, a.asname) for a in stmt.names)))  # type: ignore[attr-defined]
            elif kind is ast.ImportFrom:
                entries.append((
                    "from", stmt.lineno - 1, stmt.module, stmt.level,  # type: ignore[attr-defined]
                    tuple((a.name, a.asname) for a in stmt.names),  # type: ignore[attr-defined]
                ))
            elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                self.function(stmt, stmt.name, owner, class_name, prefix)  # type: ignore[attr-defined]
            elif kind is ast.ClassDef:
                name = stmt.name  # type: ignore[attr-defined]
                self.collect(stmt.body, owner, name, f"{prefix}.{name}" if prefix else name)  # type: ignore[attr-defined]
            else:
                named = _named_lambda(stmt)
                if named is not None:
                    self.function(named[1], named[0], owner, class_name, prefix)
                elif kind in _COMPOUND:
                    stack.extend(reversed([s for clause in statements_below(stmt) for s in _clause(clause)]))


def kept(entries: Sequence[Entry], blanked: Sequence[tuple[int, int]]) -> tuple[Entry, ...]:
    """``entries`` less those on the lines of ``blanked`` bodies (0-based first and last
    lines, as :func:`.outline.outline_skeleton` blanks them): the entries of the outline.
    A function's entries all lie in its parent's body, so a parent dropped drops them too."""
    if not blanked:
        return tuple(entries)
    spans = sorted(blanked)
    found: list[Entry] = []
    renumber: dict[int, int] = {}
    position = -1
    for entry in entries:
        is_function = entry[0] == "def" or entry[0] == "lambda"
        position += is_function
        line = entry[1]
        if any(start <= line <= end for start, end in spans):
            continue
        if is_function:
            renumber[position] = len(renumber)
            parent = entry[5]
            entry = (*entry[:5], renumber[parent] if parent >= 0 else -1, *entry[6:])
        found.append(entry)
    return tuple(found)


def entries_from_json(data: object) -> tuple[Entry, ...] | None:
    """Entries back from their JSON lists, or None when the data does not have their
    shape (a damaged cache entry is a miss, never a wrong index)."""
    if not isinstance(data, JSON_ARRAYS):
        return None
    entries: list[Entry] = []
    functions = 0
    for item in data:
        entry = _entry(item, functions)
        if entry is None:
            return None
        functions += entry[0] in ("def", "lambda")
        entries.append(entry)
    return tuple(entries)


def _entry(item: Any, functions: int) -> Entry | None:
    if not isinstance(item, JSON_ARRAYS) or not item or type(item[0]) is not str or len(item) < 3 or type(item[1]) is not int:
        return None
    kind, line = item[0], item[1]
    if kind == "import" and len(item) == 3:
        names = _names(item[2])
        return None if names is None else (kind, line, names)
    if kind == "from" and len(item) == 5 and (item[2] is None or type(item[2]) is str) and type(item[3]) is int:
        names = _names(item[4])
        return None if names is None else (kind, line, item[2], item[3], names)
    if kind not in ("def", "lambda") or len(item) != 9:
        return None
    _, _, qualname, name, class_name, parent, params, annotations, decorators = item
    if type(qualname) is not str or type(name) is not str or not (class_name is None or type(class_name) is str):
        return None
    if type(parent) is not int or not -1 <= parent < functions:
        return None
    if not (_strings(params) and _strings(decorators) and isinstance(annotations, JSON_ARRAYS)):
        return None
    if not all(isinstance(a, JSON_ARRAYS) and len(a) == 2 and _strings(a) for a in annotations):
        return None
    return (kind, line, qualname, name, class_name, parent, tuple(params), tuple(tuple(a) for a in annotations), tuple(decorators))


def _names(value: object) -> tuple[tuple[str, str | None], ...] | None:
    if not isinstance(value, JSON_ARRAYS):
        return None
    names = []
    for pair in value:
        if not (isinstance(pair, JSON_ARRAYS) and len(pair) == 2 and type(pair[0]) is str and (pair[1] is None or type(pair[1]) is str)):
            return None
        names.append((pair[0], pair[1]))
    return tuple(names)


def _strings(value: object) -> bool:
    return isinstance(value, JSON_ARRAYS) and all(type(item) is str for item in value)


def _named_lambda(stmt: ast.AST) -> tuple[str, ast.Lambda] | None:
    """``name = lambda ...`` / ``name: T = lambda ...`` (see :func:`.project._named_lambda`)."""
    if type(stmt) is ast.Assign and len(stmt.targets) == 1:  # type: ignore[attr-defined]
        target, value = stmt.targets[0], stmt.value  # type: ignore[attr-defined]
    elif type(stmt) is ast.AnnAssign and stmt.value is not None:  # type: ignore[attr-defined]
        target, value = stmt.target, stmt.value  # type: ignore[attr-defined]
    else:
        return None
    if type(target) is ast.Name and type(value) is ast.Lambda:
        return target.id, value
    return None


def _clause(node: ast.AST) -> list[ast.AST]:
    """A block's statement, or an ``except`` clause's or a ``case`` block's statements."""
    if isinstance(node, (ast.excepthandler, ast.match_case)):
        return list(node.body)  # type: ignore[attr-defined]
    return [node]
