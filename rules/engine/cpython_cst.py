"""libcst trees built from CPython's parser: the engine's trees at a fraction of libcst's parse.

Why: libcst's parse is the engine's largest cost (41% of a cold run over real
agent packages, half of a pre-commit check of agno's ``agent/_run.py`` in its
package), and most of it is building the nodes of whitespace and punctuation
that the analysis never reads (87,000 libcst nodes for the 25,000 of CPython's
tree of ``_run.py``). CPython's parser reads the same text about ten times
faster. :func:`convert` builds, from CPython's tree, the libcst tree the engine
and the rules already read: the same node classes with the same structure and
the same values (names, string and number literals exactly as written), every
whitespace and punctuation field holding one shared default. The tests compare
the result with libcst's own parse, field by field, on real packages.

What such a tree lacks is layout. Positions come from libcst itself, and only
where asked (:func:`.positions.tree_positions`: libcst's parse of the same text,
paired node by node, for a file where a rule reports or a trace passes). The code libcst
generates for a converted node means what the source meant (parentheses where
precedence needs them), in its own spacing, without comments.
An f-string's text is split as libcst's tokenizer splits it (:mod:`.fstrings`) and
its expressions come from CPython's tree. A construct the conversion does not build
(``match`` statements, implicitly concatenated strings, an f-string the split does not
read for sure) is parsed by libcst from its source text: a small island in the
converted tree. Backslash continuations join lines as CPython's tokenizer joins them
(:meth:`_Converter.same_line`, :meth:`_Converter.first_on_line`).

:func:`convert` returns None for text CPython rejects or that carries tabs, form
feeds or carriage returns in a way the two parsers may count differently, or a
backslash continuation on a line with a ``#``; the caller parses with libcst then
(:func:`.grammar.parse_module`).
"""

from __future__ import annotations

import ast
import bisect
import dataclasses
import re
import unicodedata
from collections.abc import Callable, Iterator
from typing import Any

import libcst as cst

from .fstrings import Field as FStringField
from .fstrings import split as split_fstring

__all__ = ["ConvertedModule", "convert", "is_converted"]


# -- node construction without dataclass __init__ ------------------------------------------


def _maker(cls: type) -> Callable[..., Any]:
    """A constructor for ``cls`` that sets its slots directly: every field not given
    takes one shared default (whitespace and punctuation nodes are never mutated,
    libcst trees are immutable), and no validation runs (CPython's parser has
    accepted the text)."""
    fields = dataclasses.fields(cls)
    namespace: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    params, body = [], []
    for field in fields:
        if field.default is not dataclasses.MISSING:
            default = field.default
        elif field.default_factory is not dataclasses.MISSING:
            default = field.default_factory()
        else:
            default = None
        if isinstance(default, list):  # libcst's factories build lists; the parser gives tuples or lists
            default = ()
        namespace[f"_d_{field.name}"] = default
        namespace[f"_s_{field.name}"] = _slot(cls, field.name).__set__
        params.append(f"{field.name}=_d_{field.name}")
        body.append(f"    _s_{field.name}(o, {field.name})")
    source = f"def make({', '.join(params)}):\n    o = _new(_cls)\n" + "\n".join(body) + "\n    return o\n"
    exec(source, namespace)  # noqa: S102 - generated from libcst's own field names
    return namespace["make"]  # type: ignore[no-any-return]


def _slot(cls: type, name: str) -> Any:
    for klass in cls.__mro__:
        found = klass.__dict__.get(name)
        if found is not None and hasattr(found, "__set__"):
            return found
    raise TypeError(f"{cls.__name__}.{name} is not a slot")  # pragma: no cover - libcst's layout


class _Makers(dict[type, Callable[..., Any]]):
    def __missing__(self, cls: type) -> Callable[..., Any]:
        made = self[cls] = _maker(cls)
        return made


_MAKE = _Makers()
_M = _MAKE.__getitem__

_Name = _M(cst.Name)
_Attribute = _M(cst.Attribute)
_Call = _M(cst.Call)
_Arg = _M(cst.Arg)
_Element = _M(cst.Element)
_StarredElement = _M(cst.StarredElement)
_Index = _M(cst.Index)
_SubscriptElement = _M(cst.SubscriptElement)
_Param = _M(cst.Param)
_Annotation = _M(cst.Annotation)
_AsName = _M(cst.AsName)
_ImportAlias = _M(cst.ImportAlias)
_SimpleStatementLine = _M(cst.SimpleStatementLine)
_IndentedBlock = _M(cst.IndentedBlock)
_SimpleStatementSuite = _M(cst.SimpleStatementSuite)
_Expr = _M(cst.Expr)
_AssignTarget = _M(cst.AssignTarget)
_FormattedString = _M(cst.FormattedString)
_FormattedStringText = _M(cst.FormattedStringText)
_FormattedStringExpression = _M(cst.FormattedStringExpression)

_BINARY = {
    ast.Add: cst.Add, ast.Sub: cst.Subtract, ast.Mult: cst.Multiply, ast.Div: cst.Divide,
    ast.FloorDiv: cst.FloorDivide, ast.Mod: cst.Modulo, ast.Pow: cst.Power, ast.LShift: cst.LeftShift,
    ast.RShift: cst.RightShift, ast.BitOr: cst.BitOr, ast.BitXor: cst.BitXor, ast.BitAnd: cst.BitAnd,
    ast.MatMult: cst.MatrixMultiply,
}
_AUGMENTED = {
    ast.Add: cst.AddAssign, ast.Sub: cst.SubtractAssign, ast.Mult: cst.MultiplyAssign, ast.Div: cst.DivideAssign,
    ast.FloorDiv: cst.FloorDivideAssign, ast.Mod: cst.ModuloAssign, ast.Pow: cst.PowerAssign,
    ast.LShift: cst.LeftShiftAssign, ast.RShift: cst.RightShiftAssign, ast.BitOr: cst.BitOrAssign,
    ast.BitXor: cst.BitXorAssign, ast.BitAnd: cst.BitAndAssign, ast.MatMult: cst.MatrixMultiplyAssign,
}
_UNARY = {ast.UAdd: cst.Plus, ast.USub: cst.Minus, ast.Not: cst.Not, ast.Invert: cst.BitInvert}
_COMPARE = {
    ast.Eq: cst.Equal, ast.NotEq: cst.NotEqual, ast.Lt: cst.LessThan, ast.LtE: cst.LessThanEqual,
    ast.Gt: cst.GreaterThan, ast.GtE: cst.GreaterThanEqual, ast.Is: cst.Is, ast.IsNot: cst.IsNot,
    ast.In: cst.In, ast.NotIn: cst.NotIn,
}
_BOOLEAN = {ast.And: cst.And, ast.Or: cst.Or}


class _Operators(dict[type, cst.CSTNode]):
    """One instance per operator class (operators hold only whitespace), made when first
    met: a small file's check does not build the fifty constructors at import."""

    def __init__(self, *tables: dict[type, type]) -> None:
        super().__init__()
        self._classes = {k: v for table in tables for k, v in table.items()}

    def __missing__(self, kind: type) -> cst.CSTNode:
        made = self[kind] = _M(self._classes[kind])()
        return made


_OPERATORS = _Operators(_BINARY, _UNARY, _COMPARE, _BOOLEAN)
_AUG_OPERATORS = _Operators(_AUGMENTED)
_DOT = _M(cst.Dot)()
_ASYNC = _M(cst.Asynchronous)()
_PARAM_STAR = _M(cst.ParamStar)()
_PARAM_SLASH = _M(cst.ParamSlash)()
_IMPORT_STAR = _M(cst.ImportStar)()
_SENTINEL = cst.MaybeSentinel.DEFAULT
_CONSTANT_NAMES = {True: "True", False: "False", None: "None"}
_COMMA = _M(cst.Comma)()
#: ``{x=}``: the ``=`` as written (the generated code prints what the source printed).
_EQUAL = _M(cst.AssignEqual)(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
_LPAR = (_M(cst.LeftParen)(),)
_RPAR = (_M(cst.RightParen)(),)

# How tightly each kind of expression binds (as in ``ast.unparse``): a child that binds
# less tightly than its place asks is wrapped in parentheses, so that the code libcst
# generates for a converted tree means what the source meant (the engine quotes code in
# its traces). The source had those parentheses; it may have had more, which layout drops.
_TEST, _OR, _AND, _NOT, _CMP, _BOR, _FACTOR, _POWER, _AWAIT, _ATOM = 3, 4, 5, 6, 7, 9, 15, 16, 17, 18
_BINARY_BINDING = {
    ast.BitOr: 9, ast.BitXor: 10, ast.BitAnd: 11, ast.LShift: 12, ast.RShift: 12, ast.Add: 13, ast.Sub: 13,
    ast.Mult: 14, ast.Div: 14, ast.FloorDiv: 14, ast.Mod: 14, ast.MatMult: 14, ast.Pow: _POWER,
}
_BINDING: dict[type, int] = {
    ast.NamedExpr: 0, ast.Tuple: 1, ast.Yield: 2, ast.YieldFrom: 2, ast.IfExp: _TEST, ast.Lambda: _TEST,
    ast.Compare: _CMP, ast.Await: _AWAIT,
}


def _binding(node: ast.expr) -> int:
    kind = type(node)
    if kind is ast.BinOp:
        return _BINARY_BINDING[type(node.op)]  # type: ignore[attr-defined]
    if kind is ast.BoolOp:
        return _OR if type(node.op) is ast.Or else _AND  # type: ignore[attr-defined]
    if kind is ast.UnaryOp:
        return _NOT if type(node.op) is ast.Not else _FACTOR  # type: ignore[attr-defined]
    return _BINDING.get(kind, _ATOM)


def _wrapped(node: Any) -> Any:
    """``node`` (just built, not yet shared) in parentheses."""
    object.__setattr__(node, "lpar", _LPAR)
    object.__setattr__(node, "rpar", _RPAR)
    return node

#: One string literal, exactly as CPython's tokenizer reads it (prefix, quotes, body):
#: a segment that is not one whole literal is an implicit concatenation.
_STRING = re.compile(
    r"[A-Za-z]{0,2}(?:'''(?:[^'\\]|\\.|'(?!''))*'''|\"\"\"(?:[^\"\\]|\\.|\"(?!\"\"))*\"\"\""
    r"|'(?:[^'\\\n]|\\.|\\\n)*'|\"(?:[^\"\\\n]|\\.|\\\n)*\")",
    re.DOTALL,
)


_ALWAYS_WRAPPED = frozenset({ast.Tuple, ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.GeneratorExp})


_BEYOND_ASCII = re.compile(rb"[\x80-\xff]+")


class _Unsupported(Exception):
    """The text holds something the conversion does not build exactly: parse with libcst."""


# -- the conversion ------------------------------------------------------------------------


class _Converter:
    """CPython's tree of one text -> libcst's tree of it. One instance per text.

    Its dispatch tables (:data:`_EXPRESSIONS`, :data:`_STATEMENTS`) are the class's
    functions, not an instance's bound methods: tables of bound methods made each
    converter a reference cycle, and kept its text until the cyclic collector ran
    (844 converters after agno's analysis)."""

    def __init__(self, text: str) -> None:
        self.data = text.encode("utf-8")
        starts = [0]
        find = self.data.find
        at = find(b"\n")
        while at >= 0:
            starts.append(at + 1)
            at = find(b"\n", at + 1)
        self.starts = starts
        #: Whether a line ends with a backslash: lines may then join (see :meth:`same_line`).
        self.continued = b"\\\n" in self.data
        #: Where the text is not ASCII: the spans kept as written (see :meth:`check_identifiers`).
        self.verbatim_spans: list[tuple[int, int]] | None = None if text.isascii() else []
        #: One node for every ``pass``, ``break`` and ``continue`` of the text (they have no fields).
        self.keywords = {kind: _M(cls)() for kind, cls in _KEYWORDS.items()}

    # -- text --------------------------------------------------------------------------------

    def offset(self, line: int, col: int) -> int:
        return self.starts[line - 1] + col

    def span(self, node: ast.AST) -> tuple[int, int]:
        """``node``'s first and past-the-last byte in the text."""
        return (
            self.offset(node.lineno, node.col_offset),  # type: ignore[attr-defined]
            self.offset(node.end_lineno, node.end_col_offset),  # type: ignore[attr-defined]
        )

    def segment(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.data[start:end].decode("utf-8")

    def verbatim(self, node: ast.AST) -> str:
        """:meth:`segment`, for text the tree keeps as written (a literal, an island): where
        the file is not ASCII, its span is remembered for :meth:`check_identifiers`."""
        if self.verbatim_spans is not None:
            self.verbatim_spans.append(self.span(node))
        return self.segment(node)

    def check_identifiers(self) -> None:
        """CPython's tree holds identifiers NFKC-normalized (``ᵉ`` is ``e``), libcst's as
        written: a text with a character beyond ASCII outside its literals and comments
        (an identifier, then) is for libcst to parse."""
        spans = sorted(self.verbatim_spans or ())
        starts = [start for start, _ in spans]
        data = self.data

        def verbatim(at: int) -> bool:
            index = bisect.bisect_right(starts, at) - 1
            return index >= 0 and at < spans[index][1]

        for match in _BEYOND_ASCII.finditer(data):
            at = match.start()
            if verbatim(at):
                continue
            line = data.rfind(b"\n", 0, at) + 1
            hash_at = data.find(b"#", line, at)
            while hash_at >= 0 and verbatim(hash_at):
                hash_at = data.find(b"#", hash_at + 1, at)
            if hash_at < 0:
                raise _Unsupported("an identifier beyond ASCII")

    def first_on_line(self, node: ast.AST) -> bool:
        """Whether only indentation precedes ``node`` on its logical line.

        A backslash that ends the line before joins the two (``if x: \\`` then the body:
        libcst's ``SimpleStatementSuite``). Such a backslash is a continuation unless a
        comment holds it: a string cannot, since the string would then go on before
        ``node`` on its line. A line with a ``#`` is left to libcst, which tokenizes."""
        data, starts = self.data, self.starts
        line = node.lineno  # type: ignore[attr-defined]
        if data[starts[line - 1] : starts[line - 1] + node.col_offset].strip():  # type: ignore[attr-defined]
            return False
        while self.continued and line > 1:
            before = data[starts[line - 2] : starts[line - 1]]
            if not before.endswith(b"\\\n"):
                return True
            if b"#" in before:
                raise _Unsupported("a backslash on a line with a '#'")
            if before[:-2].strip():
                return False
            line -= 1
        return True

    def same_line(self, before: ast.stmt, node: ast.stmt) -> bool:
        """Whether the simple statement ``node`` stands on the logical line ``before`` ends
        on (``a; b``, or ``a; \\`` and ``b`` on the next line).

        Between two statements stand only ``;``, comments, line breaks and backslashes,
        never a string: the two share a logical line when every line break between them
        follows a backslash and no comment ends it."""
        if node.lineno == before.end_lineno:
            return True
        if not self.continued:
            return False
        gap = self.data[self.offset(before.end_lineno, before.end_col_offset) : self.offset(node.lineno, node.col_offset)]  # type: ignore[arg-type]
        return b"#" not in gap and gap.count(b"\n") == gap.count(b"\\\n")

    # -- expressions -------------------------------------------------------------------------

    def expr(self, node: ast.expr) -> cst.BaseExpression:
        kind = type(node)
        convert = _EXPRESSIONS.get(kind)
        if convert is None:  # pragma: no cover - CPython's expressions are all in the table
            raise _Unsupported(kind.__name__)
        made = convert(self, node)
        if kind in _ALWAYS_WRAPPED:  # valid in parentheses wherever they stand
            return _wrapped(made)
        return made

    def operand(self, node: ast.expr, binding: int) -> cst.BaseExpression:
        """``node`` where an expression binding at least ``binding`` tightly stands."""
        made = self.expr(node)
        if _binding(node) < binding and type(node) not in _ALWAYS_WRAPPED:
            return _wrapped(made)
        return made

    def opt(self, node: ast.expr | None) -> cst.BaseExpression | None:
        return None if node is None else self.expr(node)

    def name(self, node: ast.Name) -> cst.Name:
        return _Name(value=node.id)

    def attribute(self, node: ast.Attribute) -> cst.Attribute:
        value = node.value
        made = self.operand(value, _ATOM)
        if type(value) is ast.Constant and type(value.value) is int:  # ``(1).real``, not ``1.real``
            made = _wrapped(made)
        return _Attribute(value=made, attr=_Name(value=node.attr))

    def call(self, node: ast.Call) -> cst.Call:
        args = node.args
        keywords = node.keywords
        if keywords and args and _after(args[-1], keywords[0]):
            ordered: list[ast.AST] = sorted((*args, *keywords), key=_start)
        else:
            ordered = [*args, *keywords]
        return _Call(func=self.operand(node.func, _ATOM), args=tuple(self.arg(a) for a in ordered))

    def arg(self, node: ast.AST) -> cst.Arg:
        if isinstance(node, ast.keyword):
            if node.arg is None:
                return _Arg(value=self.expr(node.value), star="**")
            return _Arg(value=self.expr(node.value), keyword=_Name(value=node.arg))
        if isinstance(node, ast.Starred):
            return _Arg(value=self.expr(node.value), star="*")
        return _Arg(value=self.expr(node))  # type: ignore[arg-type]

    def constant(self, node: ast.Constant) -> cst.BaseExpression:
        value = node.value
        kind = type(value)
        if kind is str or kind is bytes:
            text = self.verbatim(node)
            if _STRING.fullmatch(text) is None:
                return self.island(node)
            return _M(cst.SimpleString)(value=text)
        if kind is bool or value is None:
            return _Name(value=_CONSTANT_NAMES[value])
        if kind is int:
            return _M(cst.Integer)(value=self.segment(node))
        if kind is float:
            return _M(cst.Float)(value=self.segment(node))
        if kind is complex:
            return _M(cst.Imaginary)(value=self.segment(node))
        if value is Ellipsis:
            return _M(cst.Ellipsis)()
        raise _Unsupported(f"constant {kind.__name__}")  # pragma: no cover - CPython's constants

    def joinedstr(self, node: ast.JoinedStr) -> cst.BaseExpression:
        """An f-string: its text as written split by :func:`.fstrings.split`, its
        expressions converted from CPython's tree; an island where the split does not
        read the text for sure or CPython's tree does not match it."""
        text = self.segment(node)
        literal = split_fstring(text) if self.verbatim_spans is None or text.isascii() else None
        if literal is not None:
            values = iter([v for v in node.values if type(v) is ast.FormattedValue])
            parts = self.fstring_parts(literal.parts, values)
            if parts is not None and next(values, None) is None:
                return _FormattedString(parts=parts, start=literal.start, end=literal.end)
        return self.island(node)

    def fstring_parts(
        self, parts: tuple[str | FStringField, ...], values: Iterator[ast.FormattedValue]
    ) -> tuple[cst.BaseFormattedStringContent, ...] | None:
        """The parts of an f-string or of a format specification, each field paired with
        CPython's next ``FormattedValue``; None where the two disagree.

        A field whose expression opens with a brace (a dict in ``{ {...} }``) is left to
        libcst: the code generated for it would open with ``{{``. A ``{x=}`` field prints
        its expression as written, so only a name or a dotted name (``a.b``, not ``f(a,b).c``),
        whose generated code is the same text, is converted."""
        made: list[cst.BaseFormattedStringContent] = []
        for part in parts:
            if type(part) is str:
                made.append(_FormattedStringText(value=part))
                continue
            value = next(values, None)
            if value is None:
                return None
            expression = value.value
            written = self.segment(expression)
            if part.expression.strip() != written or written.startswith("{"):
                return None
            if part.debug and (part.expression != written or not all(n.isidentifier() for n in written.split("."))):
                return None
            spec = None
            if part.spec is not None:
                inner = iter([v for v in value.format_spec.values if type(v) is ast.FormattedValue] if value.format_spec else [])  # type: ignore[attr-defined]
                spec = self.fstring_parts(part.spec, inner)
                if spec is None or next(inner, None) is not None:
                    return None
            made.append(_FormattedStringExpression(
                expression=self.expr(expression), conversion=part.conversion, format_spec=spec,
                equal=_EQUAL if part.debug else None,
            ))
        return tuple(made)

    def island(self, node: ast.expr) -> cst.BaseExpression:
        """libcst's own parse of ``node``'s text, parenthesized so that it may span lines
        (the parentheses stay: the code libcst generates for it must stay valid)."""
        return cst.parse_expression("(" + self.verbatim(node) + ")")

    def subscript(self, node: ast.Subscript) -> cst.Subscript:
        index = node.slice
        if isinstance(index, ast.Tuple) and index.elts and not self.parenthesized(index):
            elements = tuple(_SubscriptElement(slice=self.subscript_part(e)) for e in index.elts)
            if len(elements) == 1:  # ``a[x,]``: the comma makes it a tuple
                object.__setattr__(elements[0], "comma", _COMMA)
        else:
            elements = (_SubscriptElement(slice=self.subscript_part(index)),)
        return _M(cst.Subscript)(value=self.operand(node.value, _ATOM), slice=elements)

    def subscript_part(self, node: ast.expr) -> cst.BaseSlice:
        if isinstance(node, ast.Slice):
            return _M(cst.Slice)(lower=self.opt(node.lower), upper=self.opt(node.upper), step=self.opt(node.step))
        if isinstance(node, ast.Starred):
            return _Index(value=self.operand(node.value, _BOR), star="*")
        return _Index(value=self.expr(node), star=None, whitespace_after_star=None)

    def parenthesized(self, node: ast.expr) -> bool:
        """Whether ``node``'s text is wrapped in one pair of its own parentheses."""
        text = self.segment(node)
        if not (text.startswith("(") and text.endswith(")")):
            return False
        return _closing_paren(text) == len(text) - 1

    def binop(self, node: ast.BinOp) -> cst.BinaryOperation:
        binding = _BINARY_BINDING[type(node.op)]
        if binding == _POWER:  # right-associative, and ``a ** -b`` needs no parentheses
            left, right = self.operand(node.left, _POWER + 1), self.operand(node.right, _FACTOR)
        else:
            left, right = self.operand(node.left, binding), self.operand(node.right, binding + 1)
        return _M(cst.BinaryOperation)(left=left, operator=_OPERATORS[type(node.op)], right=right)

    def boolop(self, node: ast.BoolOp) -> cst.BooleanOperation:
        operator = _OPERATORS[type(node.op)]
        make = _M(cst.BooleanOperation)
        values = node.values
        tighter = (_OR if type(node.op) is ast.Or else _AND) + 1
        result = make(left=self.operand(values[0], tighter), operator=operator, right=self.operand(values[1], tighter))
        for value in values[2:]:
            result = make(left=result, operator=operator, right=self.operand(value, tighter))
        return result  # type: ignore[no-any-return]

    def compare(self, node: ast.Compare) -> cst.Comparison:
        target = _M(cst.ComparisonTarget)
        return _M(cst.Comparison)(
            left=self.operand(node.left, _CMP + 1),
            comparisons=tuple(
                target(operator=_OPERATORS[type(op)], comparator=self.operand(c, _CMP + 1))
                for op, c in zip(node.ops, node.comparators)
            ),
        )

    def unaryop(self, node: ast.UnaryOp) -> cst.UnaryOperation:
        binding = _NOT if type(node.op) is ast.Not else _FACTOR
        return _M(cst.UnaryOperation)(
            operator=_OPERATORS[type(node.op)], expression=self.operand(node.operand, binding)
        )

    def elements(self, nodes: list[ast.expr]) -> tuple[cst.BaseElement, ...]:
        return tuple(
            _StarredElement(value=self.operand(n.value, _BOR)) if type(n) is ast.Starred else _Element(value=self.expr(n))
            for n in nodes
        )

    def tuple_(self, node: ast.Tuple) -> cst.Tuple:
        return _M(cst.Tuple)(elements=self.elements(node.elts))

    def list_(self, node: ast.List) -> cst.List:
        return _M(cst.List)(elements=self.elements(node.elts))

    def set_(self, node: ast.Set) -> cst.Set:
        return _M(cst.Set)(elements=self.elements(node.elts))

    def dict_(self, node: ast.Dict) -> cst.Dict:
        element, starred = _M(cst.DictElement), _M(cst.StarredDictElement)
        return _M(cst.Dict)(
            elements=tuple(
                starred(value=self.operand(v, _BOR)) if k is None else element(key=self.expr(k), value=self.expr(v))
                for k, v in zip(node.keys, node.values)
            )
        )

    def starred_alone(self, node: ast.Starred) -> cst.StarredElement:  # pragma: no cover - only in elements
        raise _Unsupported("a starred expression outside a display")

    def await_(self, node: ast.Await) -> cst.Await:
        return _M(cst.Await)(expression=self.operand(node.value, _ATOM))

    def ifexp(self, node: ast.IfExp) -> cst.IfExp:
        return _M(cst.IfExp)(
            test=self.operand(node.test, _OR),
            body=self.operand(node.body, _OR),
            orelse=self.operand(node.orelse, _TEST),
        )

    def lambda_(self, node: ast.Lambda) -> cst.Lambda:
        return _M(cst.Lambda)(
            params=self.parameters(node.args, annotated=False), body=self.operand(node.body, _TEST)
        )

    def comp_for(self, generators: list[ast.comprehension]) -> cst.CompFor:
        make, comp_if = _M(cst.CompFor), _M(cst.CompIf)
        inner = None
        for generator in reversed(generators):
            inner = make(
                target=self.expr(generator.target),
                iter=self.operand(generator.iter, _OR),
                ifs=tuple(comp_if(test=self.operand(t, _OR)) for t in generator.ifs),
                inner_for_in=inner,
                asynchronous=_ASYNC if generator.is_async else None,
            )
        return inner  # type: ignore[return-value]

    def listcomp(self, node: ast.ListComp) -> cst.ListComp:
        return _M(cst.ListComp)(elt=self.expr(node.elt), for_in=self.comp_for(node.generators))

    def setcomp(self, node: ast.SetComp) -> cst.SetComp:
        return _M(cst.SetComp)(elt=self.expr(node.elt), for_in=self.comp_for(node.generators))

    def genexp(self, node: ast.GeneratorExp) -> cst.GeneratorExp:
        return _M(cst.GeneratorExp)(elt=self.expr(node.elt), for_in=self.comp_for(node.generators))

    def dictcomp(self, node: ast.DictComp) -> cst.DictComp:
        return _M(cst.DictComp)(
            key=self.expr(node.key), value=self.expr(node.value), for_in=self.comp_for(node.generators)
        )

    def yield_(self, node: ast.Yield) -> cst.Yield:
        return _M(cst.Yield)(value=self.opt(node.value))

    def yieldfrom(self, node: ast.YieldFrom) -> cst.Yield:
        return _M(cst.Yield)(value=_M(cst.From)(item=self.expr(node.value)))

    def namedexpr(self, node: ast.NamedExpr) -> cst.NamedExpr:
        return _M(cst.NamedExpr)(target=self.expr(node.target), value=self.expr(node.value))

    def parameters(self, args: ast.arguments, annotated: bool = True) -> cst.Parameters:
        positional = [*args.posonlyargs, *args.args]
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        made = [self.param(a, d, annotated) for a, d in zip(positional, defaults)]
        posonly = len(args.posonlyargs)
        if args.vararg is not None:
            star_arg: Any = self.param(args.vararg, None, annotated, "*")
        elif args.kwonlyargs:
            star_arg = _PARAM_STAR
        else:
            star_arg = _SENTINEL
        return _M(cst.Parameters)(
            params=tuple(made[posonly:]),
            star_arg=star_arg,
            kwonly_params=tuple(self.param(a, d, annotated) for a, d in zip(args.kwonlyargs, args.kw_defaults)),
            star_kwarg=None if args.kwarg is None else self.param(args.kwarg, None, annotated, "**"),
            posonly_params=tuple(made[:posonly]),
            posonly_ind=_PARAM_SLASH if posonly else _SENTINEL,
        )

    def param(self, node: ast.arg, default: ast.expr | None, annotated: bool, star: str = "") -> cst.Param:
        annotation = node.annotation
        return _Param(
            name=_Name(value=node.arg),
            annotation=_Annotation(annotation=self.expr(annotation)) if annotated and annotation else None,
            default=self.opt(default),
            star=star,
        )

    # -- statements --------------------------------------------------------------------------

    def module(self, tree: ast.Module) -> cst.Module:
        return _M(ConvertedModule)(body=self.statements(tree.body), default_newline="\n", has_trailing_newline=True)

    def statements(self, nodes: list[ast.stmt]) -> tuple[cst.BaseStatement, ...]:
        """Statements of one block: each compound statement on its own, consecutive simple
        statements that share a line (``a; b``) in one ``SimpleStatementLine``."""
        out: list[cst.BaseStatement] = []
        line: list[cst.BaseSmallStatement] = []
        last: ast.stmt | None = None  # the last simple statement of ``line``
        table = _STATEMENTS
        for node in nodes:
            convert = table.get(type(node))
            made = self.statement_island(node) if convert is None else convert(self, node)
            if isinstance(made, cst.BaseCompoundStatement):
                if line:
                    out.append(_SimpleStatementLine(body=tuple(line)))
                    line = []
                out.append(made)
                last = None
                continue
            if last is not None and not self.same_line(last, node):
                out.append(_SimpleStatementLine(body=tuple(line)))
                line = []
            line.append(made)
            last = node
        if line:
            out.append(_SimpleStatementLine(body=tuple(line)))
        return tuple(out)

    def block(self, nodes: list[ast.stmt]) -> cst.BaseSuite:
        """A compound statement's body: indented, or on the header's line (``if x: y``)."""
        if not self.first_on_line(nodes[0]):
            table = _STATEMENTS
            return _SimpleStatementSuite(body=tuple(table[type(n)](self, n) for n in nodes))  # small statements only
        return _IndentedBlock(body=self.statements(nodes))

    def statement_island(self, node: ast.stmt) -> cst.BaseCompoundStatement:
        """libcst's own parse of a compound statement the conversion does not build
        (``match``), from its lines, inside an ``if`` when it is indented."""
        first = self.starts[node.lineno - 1]
        last = self.starts[node.end_lineno] if node.end_lineno < len(self.starts) else len(self.data)  # type: ignore[operator]
        if self.verbatim_spans is not None:
            self.verbatim_spans.append((first, last))
        lines = self.data[first:last].decode("utf-8")
        if not lines.endswith("\n"):
            lines += "\n"
        if node.col_offset == 0:
            return cst.parse_module(lines).body[0]  # type: ignore[return-value]
        return cst.parse_module("if 1:\n" + lines).body[0].body.body[0]  # type: ignore[attr-defined,no-any-return]

    def expr_stmt(self, node: ast.Expr) -> cst.Expr:
        return _Expr(value=self.expr(node.value))

    def assign(self, node: ast.Assign) -> cst.Assign:
        return _M(cst.Assign)(
            targets=tuple(_AssignTarget(target=self.expr(t)) for t in node.targets), value=self.expr(node.value)
        )

    def annassign(self, node: ast.AnnAssign) -> cst.AnnAssign:
        return _M(cst.AnnAssign)(
            target=self.expr(node.target),
            annotation=_Annotation(annotation=self.expr(node.annotation)),
            value=self.opt(node.value),
        )

    def augassign(self, node: ast.AugAssign) -> cst.AugAssign:
        return _M(cst.AugAssign)(
            target=self.expr(node.target), operator=_AUG_OPERATORS[type(node.op)], value=self.expr(node.value)
        )

    def return_(self, node: ast.Return) -> cst.Return:
        return _M(cst.Return)(value=self.opt(node.value))

    def raise_(self, node: ast.Raise) -> cst.Raise:
        cause = None if node.cause is None else _M(cst.From)(item=self.expr(node.cause))
        return _M(cst.Raise)(exc=self.opt(node.exc), cause=cause)

    def assert_(self, node: ast.Assert) -> cst.Assert:
        return _M(cst.Assert)(test=self.expr(node.test), msg=self.opt(node.msg))

    def delete(self, node: ast.Delete) -> cst.Del:
        targets = node.targets
        if len(targets) == 1:
            return _M(cst.Del)(target=self.expr(targets[0]))
        return _M(cst.Del)(target=_M(cst.Tuple)(elements=self.elements(targets)))

    def dotted(self, name: str) -> cst.Name | cst.Attribute:
        parts = name.split(".")
        result: Any = _Name(value=parts[0])
        for part in parts[1:]:
            result = _Attribute(value=result, attr=_Name(value=part))
        return result  # type: ignore[no-any-return]

    def alias(self, node: ast.alias, dotted: bool) -> cst.ImportAlias:
        name = self.dotted(node.name) if dotted else _Name(value=node.name)
        asname = None if node.asname is None else _AsName(name=_Name(value=node.asname))
        return _ImportAlias(name=name, asname=asname)

    def import_(self, node: ast.Import) -> cst.Import:
        return _M(cst.Import)(names=tuple(self.alias(a, True) for a in node.names))

    def importfrom(self, node: ast.ImportFrom) -> cst.ImportFrom:
        if len(node.names) == 1 and node.names[0].name == "*":
            names: Any = _IMPORT_STAR
        else:
            names = tuple(self.alias(a, False) for a in node.names)
        return _M(cst.ImportFrom)(
            module=None if node.module is None else self.dotted(node.module),
            names=names,
            relative=(_DOT,) * (node.level or 0),
            lpar=None,
            rpar=None,
        )

    def global_(self, node: ast.Global) -> cst.Global:
        item = _M(cst.NameItem)
        return _M(cst.Global)(names=tuple(item(name=_Name(value=n)) for n in node.names))

    def nonlocal_(self, node: ast.Nonlocal) -> cst.Nonlocal:
        item = _M(cst.NameItem)
        return _M(cst.Nonlocal)(names=tuple(item(name=_Name(value=n)) for n in node.names))

    def orelse(self, nodes: list[ast.stmt]) -> cst.Else | None:
        return _M(cst.Else)(body=self.block(nodes)) if nodes else None

    def if_(self, node: ast.If) -> cst.If:
        orelse: Any = None
        rest = node.orelse
        if rest:
            first = rest[0]
            if len(rest) == 1 and type(first) is ast.If and self.data.startswith(
                b"elif", self.offset(first.lineno, first.col_offset)
            ):
                orelse = self.if_(first)
            else:
                orelse = _M(cst.Else)(body=self.block(rest))
        return _M(cst.If)(test=self.expr(node.test), body=self.block(node.body), orelse=orelse)

    def for_(self, node: ast.For | ast.AsyncFor) -> cst.For:
        return _M(cst.For)(
            target=self.expr(node.target),
            iter=self.expr(node.iter),
            body=self.block(node.body),
            orelse=self.orelse(node.orelse),
            asynchronous=_ASYNC if type(node) is ast.AsyncFor else None,
        )

    def while_(self, node: ast.While) -> cst.While:
        return _M(cst.While)(test=self.expr(node.test), body=self.block(node.body), orelse=self.orelse(node.orelse))

    def handlers(self, nodes: list[ast.ExceptHandler], cls: type) -> tuple[Any, ...]:
        make = _M(cls)
        return tuple(
            make(
                body=self.block(h.body),
                type=self.opt(h.type),
                name=None if h.name is None else _AsName(name=_Name(value=h.name)),
            )
            for h in nodes
        )

    def try_(self, node: ast.Try) -> cst.Try:
        return _M(cst.Try)(
            body=self.block(node.body),
            handlers=self.handlers(node.handlers, cst.ExceptHandler),
            orelse=self.orelse(node.orelse),
            finalbody=_M(cst.Finally)(body=self.block(node.finalbody)) if node.finalbody else None,
        )

    def try_star(self, node: Any) -> cst.TryStar:
        return _M(cst.TryStar)(
            body=self.block(node.body),
            handlers=self.handlers(node.handlers, cst.ExceptStarHandler),
            orelse=self.orelse(node.orelse),
            finalbody=_M(cst.Finally)(body=self.block(node.finalbody)) if node.finalbody else None,
        )

    def with_(self, node: ast.With | ast.AsyncWith) -> cst.With:
        item = _M(cst.WithItem)
        return _M(cst.With)(
            items=tuple(
                item(
                    item=self.expr(i.context_expr),
                    asname=None if i.optional_vars is None else _AsName(name=self.expr(i.optional_vars)),
                )
                for i in node.items
            ),
            body=self.block(node.body),
            asynchronous=_ASYNC if type(node) is ast.AsyncWith else None,
        )

    def decorators(self, nodes: list[ast.expr]) -> tuple[cst.Decorator, ...]:
        make = _M(cst.Decorator)
        return tuple(make(decorator=self.expr(d)) for d in nodes)

    def functiondef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> cst.FunctionDef:
        return _M(cst.FunctionDef)(
            name=_Name(value=node.name),
            params=self.parameters(node.args),
            body=self.block(node.body),
            decorators=self.decorators(node.decorator_list),
            returns=None if node.returns is None else _Annotation(annotation=self.expr(node.returns)),
            asynchronous=_ASYNC if type(node) is ast.AsyncFunctionDef else None,
        )

    def classdef(self, node: ast.ClassDef) -> cst.ClassDef:
        bases = tuple(self.arg(b) for b in node.bases)
        return _M(cst.ClassDef)(
            name=_Name(value=node.name),
            body=self.block(node.body),
            bases=bases,
            keywords=tuple(self.arg(k) for k in node.keywords),
            decorators=self.decorators(node.decorator_list),
        )


def _start(node: ast.AST) -> tuple[int, int]:
    return (node.lineno, node.col_offset)  # type: ignore[attr-defined]


def _after(a: ast.AST, b: ast.AST) -> bool:
    return _start(a) > _start(b)


def _closing_paren(text: str) -> int:
    """The index of the parenthesis that closes ``text``'s first character, skipping
    string literals and comments; -1 when none does."""
    depth = 0
    at, size = 0, len(text)
    while at < size:
        char = text[at]
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return at
        elif char == "#":
            newline = text.find("\n", at)
            at = size if newline < 0 else newline
            continue
        elif char in "'\"":
            match = _STRING.match(text, at)
            if match is not None:
                at = match.end()
                continue
        at += 1
    return -1


def _keyword(converter: _Converter, node: ast.stmt) -> cst.BaseSmallStatement:
    return converter.keywords[type(node)]  # type: ignore[no-any-return]


_KEYWORDS: dict[type, type] = {ast.Pass: cst.Pass, ast.Break: cst.Break, ast.Continue: cst.Continue}
#: How each CPython expression and statement is converted, by its node type.
_EXPRESSIONS: dict[type, Callable[[_Converter, Any], Any]] = {
    ast.Name: _Converter.name, ast.Attribute: _Converter.attribute, ast.Call: _Converter.call,
    ast.Constant: _Converter.constant, ast.Subscript: _Converter.subscript, ast.BinOp: _Converter.binop,
    ast.BoolOp: _Converter.boolop, ast.Compare: _Converter.compare, ast.UnaryOp: _Converter.unaryop,
    ast.Tuple: _Converter.tuple_, ast.List: _Converter.list_, ast.Set: _Converter.set_, ast.Dict: _Converter.dict_,
    ast.Await: _Converter.await_, ast.IfExp: _Converter.ifexp, ast.Lambda: _Converter.lambda_,
    ast.ListComp: _Converter.listcomp, ast.SetComp: _Converter.setcomp, ast.DictComp: _Converter.dictcomp,
    ast.GeneratorExp: _Converter.genexp, ast.Yield: _Converter.yield_, ast.YieldFrom: _Converter.yieldfrom,
    ast.NamedExpr: _Converter.namedexpr, ast.JoinedStr: _Converter.joinedstr, ast.Starred: _Converter.starred_alone,
}
_STATEMENTS: dict[type, Callable[[_Converter, Any], Any]] = {
    ast.Expr: _Converter.expr_stmt, ast.Assign: _Converter.assign, ast.AnnAssign: _Converter.annassign,
    ast.AugAssign: _Converter.augassign, ast.Return: _Converter.return_, ast.Raise: _Converter.raise_,
    ast.Assert: _Converter.assert_, ast.Delete: _Converter.delete, ast.Pass: _keyword, ast.Break: _keyword,
    ast.Continue: _keyword, ast.Import: _Converter.import_, ast.ImportFrom: _Converter.importfrom,
    ast.Global: _Converter.global_, ast.Nonlocal: _Converter.nonlocal_, ast.If: _Converter.if_,
    ast.For: _Converter.for_, ast.AsyncFor: _Converter.for_, ast.While: _Converter.while_, ast.Try: _Converter.try_,
    ast.With: _Converter.with_, ast.AsyncWith: _Converter.with_, ast.FunctionDef: _Converter.functiondef,
    ast.AsyncFunctionDef: _Converter.functiondef, ast.ClassDef: _Converter.classdef,
}
if hasattr(ast, "TryStar"):  # Python 3.11+
    _STATEMENTS[ast.TryStar] = _Converter.try_star


# -- public --------------------------------------------------------------------------------

class ConvertedModule(cst.Module):
    """A module tree built by :func:`convert`: it keeps the text it was built from, for
    :func:`positions` (libcst's own nodes have slots and no room for it)."""

    __slots__ = ("source",)



def convert(text: str, tree: ast.Module | None = None) -> cst.Module | None:
    """libcst's tree of ``text`` built from CPython's (``tree``, or parsed here), or None
    when this text is for libcst to parse (see the module's documentation)."""
    if "\t" in text or "\f" in text or "\r" in text:
        return None
    try:
        if tree is None:
            tree = ast.parse(text)
        converter = _Converter(text)
        module = converter.module(tree)
        if converter.verbatim_spans is not None:
            converter.check_identifiers()
    except Exception:  # noqa: BLE001 - CPython's refusal, a construct left to libcst, or a fault here: libcst parses
        return None
    object.__setattr__(module, "source", text)
    return module


def names_as_written(text: str, tree: ast.Module) -> bool:
    """Whether CPython's tree (``tree``, of ``text``) spells every identifier as ``text`` does:
    no character beyond ASCII outside the literals and comments (CPython normalizes
    identifiers, libcst keeps them as written; see :meth:`_Converter.check_identifiers`)."""
    if text.isascii():
        return True
    if not any(_may_name(char) for char in set(_BEYOND_ASCII_TEXT.findall(text))):
        return True  # no character beyond ASCII can be part of an identifier (emoji, dashes, quotes)
    converter = _Converter(text)
    converter.verbatim_spans = [
        converter.span(node) for node in ast.walk(tree)
        if type(node) is ast.JoinedStr or type(node) is ast.Constant and isinstance(node.value, (str, bytes))
    ]
    try:
        converter.check_identifiers()
    except _Unsupported:
        return False
    return True


_BEYOND_ASCII_TEXT = re.compile(r"[^\x00-\x7f]")


def _may_name(char: str) -> bool:
    """Whether ``char`` can be written in an identifier (CPython reads it NFKC-normalized)."""
    return ("_" + char).isidentifier() or ("_" + unicodedata.normalize("NFKC", char)).isidentifier()


def is_converted(module: cst.Module) -> bool:
    return type(module) is ConvertedModule
