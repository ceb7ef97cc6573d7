"""CPython's tree, walked fast: the screening's child iteration.

Why: every file the text pre-filter keeps is walked by the screening several times
(the relevance scan, the outline's skeleton, the imports), in worker processes, and
``ast.iter_child_nodes`` (two generators per node, a field look-up and a type test per
field) was most of that cost. Two shapes of walk need less than every child:

* a walk for words and calls needs no ``ctx`` (``Load``, ``Store``) and no operator
  (``Add``, ``Eq``): nodes of no words, a third of all children (:func:`children`);
* a walk of statements needs only the fields that hold them (``body``, ``orelse``,
  ``finalbody``, ``handlers``, ``cases``): an expression never holds a statement
  (:func:`statements_below`).

Both keep the order of ``_fields``, so a walk yields what it did with
``ast.iter_child_nodes``, less what it never looked at.

Nor does a walk need the fields that hold a name, a string, a number or a constant
(``Name.id``, ``ImportFrom.level``): CPython describes each node type by its grammar
signature, as its docstring (``Name(identifier id, expr_context ctx)``), and a field of
type ``identifier``, ``string``, ``int`` or ``constant`` never holds a node. Where that
signature can be read (every node type of CPython 3.10 to 3.13), the remaining fields
hold only nodes, lists of nodes, and None (:func:`exact_fields`): the relevance scan,
the screening's hottest loop, then pushes their values without testing each one's type.
"""

from __future__ import annotations

import ast

__all__ = ["child_fields", "children", "exact_fields", "has_ctx", "statements_below"]

_NO_WORDS = frozenset({"ctx", "op", "ops"})
_STATEMENT_FIELDS = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})

#: The grammar's types of the fields that never hold a node.
_SCALAR_TYPES = frozenset({"identifier", "string", "int", "constant"})

_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}
_WITH_CTX: set[type] = set()
_EXACT: set[type] = set()
_BLOCK_FIELDS: dict[type, tuple[str, ...]] = {}


def child_fields(kind: type) -> tuple[str, ...]:
    """The fields of node type ``kind`` that can hold nodes with words, in ``_fields`` order."""
    fields = _CHILD_FIELDS.get(kind)
    if fields is None:
        names: tuple[str, ...] = getattr(kind, "_fields", ())
        scalars = _scalar_fields(kind, names)
        if scalars is not None:
            _EXACT.add(kind)
        fields = _CHILD_FIELDS[kind] = tuple(f for f in names if f not in _NO_WORDS and f not in (scalars or ()))
        if "ctx" in names:
            _WITH_CTX.add(kind)
    return fields


def exact_fields(kind: type) -> bool:
    """Whether every value of :func:`child_fields` of ``kind`` is a node, None or a list
    of nodes and Nones (``Dict.keys`` holds a None for ``**``): true where CPython's
    signature of the type was read (see the module's docstring)."""
    child_fields(kind)
    return kind in _EXACT


def _scalar_fields(kind: type, names: tuple[str, ...]) -> frozenset[str] | None:
    """The fields of ``kind`` that hold a name, a string, a number or a constant, from its
    signature (``ImportFrom(identifier? module, alias* names, int? level)``), or None
    where the signature is missing or does not name exactly the fields of ``_fields``."""
    doc = getattr(kind, "__doc__", None) or ""
    head, paren, rest = doc.strip().partition("(")
    if not paren or not rest.endswith(")") or not head.isidentifier():
        return None
    types: dict[str, str] = {}
    for part in rest[:-1].split(","):
        written, _, name = part.strip().rpartition(" ")
        if name:
            types[name] = written.rstrip("*?")
    if sorted(types) != sorted(names):
        return None
    return frozenset(name for name, written in types.items() if written in _SCALAR_TYPES)


def has_ctx(kind: type) -> bool:
    """Whether nodes of ``kind`` have a ``ctx`` child (``Name``, ``Attribute``, ...): a
    walk that counts depth counts it one level below (an operator never lies deeper
    than its operands)."""
    child_fields(kind)
    return kind in _WITH_CTX


def children(node: ast.AST, fields: tuple[str, ...] | None = None) -> list[ast.AST]:
    """``ast.iter_child_nodes(node)`` without ``ctx`` and operators, as a list; ``fields``:
    :func:`child_fields` of the node's type, where the caller has it already."""
    found: list[ast.AST] = []
    for name in child_fields(type(node)) if fields is None else fields:
        value = getattr(node, name, None)
        if type(value) is list:
            found.extend(item for item in value if isinstance(item, ast.AST))
        elif isinstance(value, ast.AST):
            found.append(value)
    return found


def statements_below(node: ast.AST) -> list[ast.AST]:
    """The statements, ``except`` clauses and ``case`` blocks directly below a statement
    (or a module, clause or block), in ``_fields`` order: what ``ast.iter_child_nodes``
    yields of them."""
    kind = type(node)
    fields = _BLOCK_FIELDS.get(kind)
    if fields is None:
        fields = _BLOCK_FIELDS[kind] = tuple(f for f in getattr(kind, "_fields", ()) if f in _STATEMENT_FIELDS)
    found: list[ast.AST] = []
    for name in fields:
        value = getattr(node, name, None)
        if type(value) is list:
            found.extend(value)
    return found
