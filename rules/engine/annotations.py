"""What a type annotation says a value is: the class of a parameter, a field, a return.

A receiver's class decides what its method calls are (SPEC §3.1.1: by value, never
by the local's name). A constructor says it where the value is built
(:meth:`.evidence.Evidence.qualified`); typed code says it everywhere else: a
parameter ``session: ClientSession``, a class field ``llm: LLM``, a project
function ``-> tuple[Client, ClientSession, str]`` whose second element a caller
unpacks. Only the annotation's class is read, qualified through the module's
imports; ``Optional[X]`` and ``X | None`` are ``X``, ``X[Any]`` is ``X``, a union of
two classes says nothing.
"""

from __future__ import annotations

import weakref
from functools import lru_cache

import libcst as cst

from .names import ImportTable, dotted, last_segment
from .project import FunctionInfo, ModuleInfo
from .syntax import string_value

__all__ = [
    "annotated_class", "class_expression", "class_field", "field_annotation", "param_annotation", "parameter",
    "return_annotation", "returns_text",
]

_NONE = frozenset({"None", "NoneType"})
_OPTIONAL = frozenset({"Optional", "Union"})
_TUPLE = frozenset({"tuple", "Tuple"})
_WRAPPERS = frozenset({"Annotated", "Final", "ClassVar"})
_AWAITABLE = frozenset({"Awaitable", "Coroutine"})


def annotated_class(annotation: cst.BaseExpression | None, imports: ImportTable, position: int | None = None) -> str | None:
    """The qualified class an annotation names (element ``position`` of a tuple type), or None."""
    expr = class_expression(annotation, position)
    name = dotted(expr) if expr is not None else None
    if name is None or name in _NONE:
        return None
    qualified = imports.qualify_name(name)
    return qualified if last_segment(qualified)[:1].isupper() else None


def class_expression(annotation: cst.BaseExpression | None, position: int | None = None) -> cst.BaseExpression | None:
    """The expression naming the class an annotation says (``LLM`` in ``Optional[LLM]``), or None."""
    if annotation is None:
        return None
    if isinstance(annotation, cst.SimpleString):  # ``"ClientSession"``: a forward reference
        text = string_value(annotation)
        parsed = _forward_reference(text) if isinstance(text, str) else None
        if parsed is None:
            return None
        annotation = parsed
    if position is not None:
        elements = _tuple_elements(annotation)
        if elements is None or position >= len(elements):
            return None
        return class_expression(elements[position])
    return _class_of(annotation)


@lru_cache(maxsize=1024)
def _forward_reference(text: str) -> cst.BaseExpression | None:
    """A quoted annotation's expression, parsed once per text (None if it is no expression)."""
    try:
        return cst.parse_expression(text)
    except (cst.ParserSyntaxError, RecursionError, ValueError):
        return None


def _class_of(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.BitOr):
        return _one_class([expr.left, expr.right])
    if isinstance(expr, cst.Subscript):
        head = last_segment(dotted(expr.value))
        arguments = [e.slice.value for e in expr.slice if isinstance(e.slice, cst.Index)]
        if head in _OPTIONAL:
            return _one_class(arguments)
        if head in _WRAPPERS:
            return _class_of(arguments[0]) if arguments else None
        if head in _TUPLE:
            return None
        expr = expr.value  # ``Client[Any]``: a generic class is its class
    return expr if dotted(expr) is not None and dotted(expr) not in _NONE else None


def _one_class(options: list[cst.BaseExpression]) -> cst.BaseExpression | None:
    """The class of a union with ``None``: ``X | None``; two classes say nothing."""
    found: list[cst.BaseExpression | None] = []
    for option in options:
        if isinstance(option, cst.BinaryOperation) and isinstance(option.operator, cst.BitOr):
            found.append(_one_class([option.left, option.right]))
        elif dotted(option) not in _NONE:
            found.append(_class_of(option))
    names = {dotted(f) if f is not None else None for f in found}
    return found[0] if len(names) == 1 and None not in names else None


def _tuple_elements(expr: cst.BaseExpression) -> list[cst.BaseExpression] | None:
    if isinstance(expr, cst.Subscript) and last_segment(dotted(expr.value)) in _TUPLE:
        elements = [e.slice.value for e in expr.slice if isinstance(e.slice, cst.Index)]
        if any(isinstance(e, cst.Ellipsis) for e in elements):
            return None  # ``tuple[X, ...]``: every element, not a position
        return elements
    return None


def returns_text(annotation: cst.BaseExpression | None) -> bool:
    """A callable's type whose answer is text: ``Callable[[str], str]``, ``Callable[...,
    Awaitable[str]]`` (also as ``Optional[...]``, ``... | None`` or a forward reference).
    The shape in which a library takes its user's model as a plain function."""
    if isinstance(annotation, cst.SimpleString):
        text = string_value(annotation)
        annotation = _forward_reference(text) if isinstance(text, str) else None
    found = _subscript_named(annotation, "Callable")
    arguments = [e.slice.value for e in found.slice if isinstance(e.slice, cst.Index)] if found is not None else []
    if len(arguments) != 2:
        return False
    answer = arguments[1]
    if isinstance(answer, cst.Subscript) and last_segment(dotted(answer.value)) in _AWAITABLE:
        inner = [e.slice.value for e in answer.slice if isinstance(e.slice, cst.Index)]
        answer = inner[-1] if inner else answer
    return isinstance(answer, cst.Name) and answer.value == "str"


def _subscript_named(expr: cst.BaseExpression | None, head: str) -> cst.Subscript | None:
    """The subscript ``head[...]`` inside an optional or wrapped annotation, or None."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.BitOr):
        return _subscript_named(expr.left, head) or _subscript_named(expr.right, head)
    if not isinstance(expr, cst.Subscript):
        return None
    name = last_segment(dotted(expr.value))
    if name == head:
        return expr
    if name in _OPTIONAL or name in _WRAPPERS:
        for element in expr.slice:
            if isinstance(element.slice, cst.Index):
                found = _subscript_named(element.slice.value, head)
                if found is not None:
                    return found
    return None


def parameter(fn: FunctionInfo, name: str) -> cst.Param | None:
    """``fn``'s parameter ``name`` as written (not its ``*args`` or ``**kwargs``), or None."""
    node = fn.header
    if not isinstance(node, cst.FunctionDef):
        return None
    params = node.params
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        if param.name.value == name:
            return param
    return None


def param_annotation(fn: FunctionInfo, name: str) -> cst.BaseExpression | None:
    """The annotation of ``fn``'s parameter ``name``, as written."""
    param = parameter(fn, name)
    return param.annotation.annotation if param is not None and param.annotation is not None else None


def return_annotation(fn: FunctionInfo) -> cst.BaseExpression | None:
    node = fn.header
    if isinstance(node, cst.FunctionDef) and node.returns is not None:
        return node.returns.annotation
    return None


_FIELDS: weakref.WeakKeyDictionary[ModuleInfo, dict[str, dict[str, cst.AnnAssign]]] = weakref.WeakKeyDictionary()


def field_annotation(module: ModuleInfo, class_name: str, attr: str) -> cst.BaseExpression | None:
    """The class-level annotation of ``attr`` in ``module``'s class ``class_name``
    (``llm: LLM`` in a pydantic model or a dataclass); one scan per module."""
    found = class_field(module, class_name, attr)
    return found.annotation.annotation if found is not None else None


def class_field(module: ModuleInfo, class_name: str, attr: str) -> cst.AnnAssign | None:
    """The class-level declaration of ``attr`` in ``module``'s class ``class_name``
    (``llm: LLM``, ``render: Callable[[str], str] = str.strip``); one scan per module."""
    fields = _FIELDS.get(module)
    if fields is None:
        fields = _FIELDS[module] = {}
        for stmt in module.tree.body:
            if isinstance(stmt, cst.ClassDef) and isinstance(stmt.body, cst.IndentedBlock):
                own = fields.setdefault(stmt.name.value, {})
                for line in stmt.body.body:
                    if isinstance(line, cst.SimpleStatementLine):
                        for small in line.body:
                            if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                                own.setdefault(small.target.value, small)
    return fields.get(class_name, {}).get(attr)
