"""What a condition proves about a summary when it is true, and when it is false.

``classify`` maps an expression to ``Facts(when_true, when_false)``: the kinds
of the invariant (``generation``, ``partial``, ``deps``) that are guaranteed
to hold on each branch of an ``if`` on it. ``summary.generation !=
checkpoint.summary_generation`` guarantees ``generation`` when *false*;
``not summary.partial`` guarantees ``partial`` when *true*; ``and`` / ``or`` /
``not`` combine as logic says; a name defined as such a condition (``ok =
...``) or a comprehension of missing references (``missing = [r for r in deps
if r not in summary.verbatim_refs]``) is followed; ``all()`` / ``any()``,
subset tests and predicates found by function summaries are understood.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import libcst as cst

from .syntax import bool_literal, identifiers, is_none, key_read, string_value

__all__ = ["ALL_KINDS", "DEPS", "Facts", "GENERATION", "PARTIAL", "classify", "kind_words"]

GENERATION = "generation"
PARTIAL = "partial"
DEPS = "deps"
ALL_KINDS = frozenset({GENERATION, PARTIAL, DEPS})
_KIND_WORDS = {GENERATION: "generation", PARTIAL: "completeness", DEPS: "next-turn dependencies"}


def checks_named(kinds: Iterable[str]) -> str:
    """The checks ``kinds`` stand for, as a message says them."""
    return ", ".join(sorted({_KIND_WORDS.get(k, k) for k in kinds}))
_NONE: frozenset[str] = frozenset()

_GENERATION = re.compile(r"generation|(^|_)gen($|_)", re.IGNORECASE)
_PARTIAL_BAD = re.compile(r"partial|incomplete|half_?written|torn|truncated", re.IGNORECASE)
_PARTIAL_GOOD = re.compile(r"(^|_)(is_)?complete(d)?$|(^|_)finished$|(^|_)finali[sz]ed$|(^|_)sealed$", re.IGNORECASE)
_DEPS = re.compile(r"(^|_)refs?($|_)|verbatim|(^|_)deps?($|_)|depend|handles?$|references", re.IGNORECASE)
_BAD_STATUS = re.compile(r"partial|incomplete|writing|in_progress|pending", re.IGNORECASE)
_GOOD_STATUS = re.compile(r"^(complete|completed|done|final|finished|sealed)$", re.IGNORECASE)


@dataclass(frozen=True)
class Facts:
    """Kinds guaranteed when the expression is true / false."""

    when_true: frozenset[str] = _NONE
    when_false: frozenset[str] = _NONE

    def negate(self) -> Facts:
        return Facts(self.when_false, self.when_true)

    @property
    def mentioned(self) -> frozenset[str]:
        return self.when_true | self.when_false


NOTHING = Facts()


class Context:
    """What :func:`classify` may ask of the enclosing function."""

    def definition(self, name: str) -> cst.BaseExpression | None:  # pragma: no cover - interface
        return None

    def flag(self, name: str) -> Facts | None:  # pragma: no cover - interface
        return None

    def predicate(self, call: cst.Call) -> frozenset[str] | None:  # pragma: no cover - interface
        return None

    def nullable(self, name: str) -> bool:
        """``name`` is None exactly when it is falsy (a stored error, see :func:`.flags.error_slots`)."""
        return False


def kind_words(node: cst.CSTNode) -> tuple[bool, bool]:
    """(mentions a generation, mentions references) anywhere in ``node``."""
    gen = deps = False
    for ident in identifiers(node):
        gen = gen or bool(_GENERATION.search(ident))
        deps = deps or bool(_DEPS.search(ident))
    return gen, deps


def classify(expr: cst.BaseExpression, ctx: Context, depth: int = 0) -> Facts:
    """The :class:`Facts` an ``if`` on ``expr`` establishes (see module doc)."""
    if depth > 6:
        return NOTHING
    handler = _HANDLERS.get(type(expr))
    return handler(expr, ctx, depth + 1) if handler is not None else NOTHING


def _unary(expr: cst.UnaryOperation, ctx: Context, depth: int) -> Facts:
    if isinstance(expr.operator, cst.Not):
        return classify(expr.expression, ctx, depth).negate()
    return NOTHING


def _boolean(expr: cst.BooleanOperation, ctx: Context, depth: int) -> Facts:
    left = classify(expr.left, ctx, depth)
    right = classify(expr.right, ctx, depth)
    if isinstance(expr.operator, cst.And):
        return Facts(left.when_true | right.when_true, left.when_false & right.when_false)
    return Facts(left.when_true & right.when_true, left.when_false | right.when_false)


def _word(word: str) -> Facts:
    if _PARTIAL_BAD.search(word):
        return Facts(_NONE, frozenset({PARTIAL}))
    if _PARTIAL_GOOD.search(word):
        return Facts(frozenset({PARTIAL}), _NONE)
    return NOTHING


def _subscript(expr: cst.Subscript, ctx: Context, depth: int) -> Facts:
    """``summary["partial"]`` says what ``summary.partial`` would."""
    read = key_read(expr)
    return _word(read[1]) if read is not None else NOTHING


def _identifier(expr: cst.Name | cst.Attribute, ctx: Context, depth: int) -> Facts:
    if isinstance(expr, cst.Name):
        if expr.value in ("True", "False", "None"):
            return Facts(_NONE, ALL_KINDS) if expr.value == "True" else Facts(ALL_KINDS, _NONE)
        flag = ctx.flag(expr.value)
        if flag is not None:
            return flag
        definition = ctx.definition(expr.value)
        if definition is not None:
            return classify(definition, ctx, depth)
        word = expr.value
    else:
        word = expr.attr.value
    return _word(word)


def _call(expr: cst.Call, ctx: Context, depth: int) -> Facts:
    predicate = ctx.predicate(expr)
    if predicate:
        return Facts(predicate, _NONE)
    read = key_read(expr)
    if read is not None:
        return _word(read[1])
    func = expr.func
    name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else ""
    args = [a.value for a in expr.args if a.keyword is None and not a.star]
    if name in ("all", "any") and len(args) == 1 and isinstance(args[0], (cst.GeneratorExp, cst.ListComp)):
        inner = classify(args[0].elt, ctx, depth)
        return Facts(inner.when_true, _NONE) if name == "all" else Facts(_NONE, inner.when_false)
    if name in ("len", "bool", "list", "set", "tuple", "sorted", "frozenset") and len(args) == 1:
        return classify(args[0], ctx, depth)
    if isinstance(func, cst.Attribute) and name in ("issubset", "issuperset", "difference", "isdisjoint"):
        _, deps = kind_words(expr)
        if deps:
            return Facts(frozenset({DEPS}), _NONE) if name.startswith("is") else Facts(_NONE, frozenset({DEPS}))
    return NOTHING


def _comprehension(expr: cst.ListComp | cst.SetComp | cst.GeneratorExp, ctx: Context, depth: int) -> Facts:
    """A comprehension is falsy when no element passed its filter."""
    ifs = expr.for_in.ifs
    if not ifs:
        return NOTHING
    facts = classify(ifs[0].test, ctx, depth)
    return Facts(_NONE, facts.when_false)


def _binary(expr: cst.BinaryOperation, ctx: Context, depth: int) -> Facts:
    if isinstance(expr.operator, cst.Subtract) and kind_words(expr)[1]:
        return Facts(_NONE, frozenset({DEPS}))
    return NOTHING


def _named(expr: cst.NamedExpr, ctx: Context, depth: int) -> Facts:
    return classify(expr.value, ctx, depth)


def _comparison(expr: cst.Comparison, ctx: Context, depth: int) -> Facts:
    target = expr.comparisons[0]
    op, left, right = target.operator, expr.left, target.comparator
    if isinstance(op, (cst.In, cst.NotIn)):
        if kind_words(expr)[1]:
            deps = frozenset({DEPS})
            return Facts(deps, _NONE) if isinstance(op, cst.In) else Facts(_NONE, deps)
        return NOTHING
    positive = isinstance(op, (cst.Equal, cst.Is))
    negative = isinstance(op, (cst.NotEqual, cst.IsNot))
    # x == True / x is False / x != False: the truthiness of x, maybe negated.
    for side, other in ((left, right), (right, left)):
        literal = bool_literal(other) if not is_none(other) else None
        if literal is not None and (positive or negative):
            facts = classify(side, ctx, depth)
            return facts if literal == positive else facts.negate()
    for side, other in ((left, right), (right, left)):
        if isinstance(other, cst.Integer) and other.value == "0" and isinstance(side, cst.Call):
            facts = classify(side, ctx, depth)
            if isinstance(op, (cst.GreaterThan, cst.NotEqual)):
                return facts
            if positive or isinstance(op, cst.LessThanEqual):
                return facts.negate()
    for side, other in ((left, right), (right, left)):
        # error is not None, for a name that holds None or a caught error: its truthiness.
        if is_none(other) and isinstance(side, cst.Name) and len(expr.comparisons) == 1 and ctx.nullable(side.value):
            if positive or negative:
                facts = classify(side, ctx, depth)
                return facts.negate() if positive else facts
    if any(is_none(s) for s in (left, right)):
        return NOTHING
    gen, deps = kind_words(expr)
    if gen:
        generation = frozenset({GENERATION})
        if positive or isinstance(op, (cst.GreaterThanEqual, cst.LessThanEqual)):
            return Facts(generation, _NONE)
        return Facts(_NONE, generation)
    if deps and isinstance(op, (cst.LessThanEqual, cst.GreaterThanEqual)):
        return Facts(frozenset({DEPS}), _NONE)
    for side in (left, right):
        if isinstance(side, cst.SimpleString) and (positive or negative):
            value = string_value(side)
            if not isinstance(value, str):
                continue
            if _GOOD_STATUS.search(value):
                facts = Facts(frozenset({PARTIAL}), _NONE)
            elif _BAD_STATUS.search(value):
                facts = Facts(_NONE, frozenset({PARTIAL}))
            else:
                continue
            return facts if positive else facts.negate()
    return NOTHING


_HANDLERS: dict[type, Callable[[cst.CSTNode, Context, int], Facts]] = {
    cst.UnaryOperation: _unary,  # type: ignore[dict-item]
    cst.BooleanOperation: _boolean,  # type: ignore[dict-item]
    cst.Name: _identifier,  # type: ignore[dict-item]
    cst.Attribute: _identifier,  # type: ignore[dict-item]
    cst.Subscript: _subscript,  # type: ignore[dict-item]
    cst.Call: _call,  # type: ignore[dict-item]
    cst.ListComp: _comprehension,  # type: ignore[dict-item]
    cst.SetComp: _comprehension,  # type: ignore[dict-item]
    cst.GeneratorExp: _comprehension,  # type: ignore[dict-item]
    cst.BinaryOperation: _binary,  # type: ignore[dict-item]
    cst.NamedExpr: _named,  # type: ignore[dict-item]
    cst.Comparison: _comparison,  # type: ignore[dict-item]
}
