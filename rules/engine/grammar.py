"""Whether a file is valid Python is decided by libcst, for the Python the project targets.

SPEC 3.1.1 "Python versions": a file that libcst parses is never a syntax error
because the interpreter running summaryguard is older, or because CPython's
tokenizer and libcst's differ. The analyzer's cheap steps still use CPython
(the screening, :mod:`.relevance` and :mod:`.outline`, read CPython's
``ast``: ten times cheaper than libcst), so this module is where the two meet:

* :func:`parse_module` gives libcst's tree of a text. A text CPython's parser
  reads is converted from CPython's tree (:mod:`.cpython_cst`: libcst's nodes and
  structure without the layout, about three times cheaper than libcst's parse;
  libcst's native parser reads every grammar the host's does, whatever the target,
  so nothing it would reject is accepted); libcst parses the rest, configured for the
  target (``PartialParserConfig(python_version=...)``), and parses exactly where
  layout is asked for (positions, a plugin's visiting rule: :func:`.positions.tree_positions`,
  :func:`exact_tree`). libcst's tokenizer rejects
  some tab indentation that CPython accepts (B17: "no matching outer block for
  dedent"); when the text has tabs in its indentation, the parse is retried
  with that indentation expanded the way CPython reads it (a tab advances to
  the next multiple of 8, which is what decides blocks once CPython has
  accepted the file's consistency), and the :data:`Shifts` say how to map
  columns back.
* :func:`after_host_rejection` is called when CPython's parser rejected a
  text: libcst decides. If libcst rejects it too, it is a syntax error,
  reported with CPython's message and line. If libcst accepts it, the text
  is *lowered* (:func:`lower_for_host`): the syntax the
  host lacks (PEP 695 type parameters and ``type`` aliases, PEP 701 f-strings,
  PEP 750 t-strings, ``except*``) is rewritten into syntax it has, keeping
  every line and the column of every other token, so that CPython's tree of the
  lowered text describes the original's positions exactly and the analysis
  goes on over the original text. A text the host cannot read even then is
  accepted and not analyzed.
"""

from __future__ import annotations

import ast
import functools
import io
import re
import sys
import tokenize
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from .cpython_cst import convert

__all__ = [
    "HostVerdict",
    "Shifts",
    "after_host_rejection",
    "exact_tree",
    "expand_indentation",
    "lower_for_host",
    "map_column",
    "newest_target",
    "parse_module",
    "parser_config",
]

#: Per line (1-based) whose indentation was expanded: (original width, expanded width) in characters.
Shifts = dict[int, tuple[int, int]]

_HOST = sys.version_info[:2]


def newest_target() -> str:
    """The newest grammar libcst knows: the default target."""
    from libcst._parser.types.config import KNOWN_PYTHON_VERSION_STRINGS

    return KNOWN_PYTHON_VERSION_STRINGS[-1]


@functools.lru_cache(maxsize=None)
def parser_config(target: str | None) -> cst.PartialParserConfig:
    """libcst's configuration for ``target`` (None: the newest it knows; a version newer
    than this libcst knows: the newest it knows that is not newer)."""
    from libcst._parser.types.config import KNOWN_PYTHON_VERSION_STRINGS

    def key(version: str) -> tuple[int, ...]:
        return tuple(int(part) for part in version.split("."))

    wanted = target or newest_target()
    known = [v for v in KNOWN_PYTHON_VERSION_STRINGS if key(v) <= key(wanted)]
    return cst.PartialParserConfig(python_version=known[-1] if known else KNOWN_PYTHON_VERSION_STRINGS[0])


# -- libcst, with CPython's reading of tabs ----------------------------------------------


def parse_module(
    text: str, target: str | None, validate: bool = False, exact: bool = False
) -> tuple[cst.Module, Shifts | None]:
    """libcst's tree of ``text`` for the target grammar, and the column shifts when the
    indentation had to be expanded (see the module's documentation); raises
    ``cst.ParserSyntaxError`` when libcst rejects the text either way.

    Unless ``validate`` or ``exact`` is asked, a text CPython's parser accepts is read by
    it and converted (:mod:`.cpython_cst`): the same tree without its layout, about three
    times cheaper. libcst's native parser reads every grammar the host's does, whatever
    ``target`` says, so the conversion never accepts what libcst would have rejected.

    ``validate``: whether libcst's nodes check themselves as they are built. The analyzer
    parses only text a parser has already accepted (CPython's, or libcst's own verdict in
    :func:`after_host_rejection`, which validates), and the checks re-prove what the
    native parser guarantees, at about a sixth of the parse (a third of it on real packages'
    whitespace-heavy code: ``SimpleWhitespace._validate`` runs a regex per token)."""
    if not (validate or exact):
        converted = convert(text)
        if converted is not None:
            return converted, None
    config = parser_config(target)
    parse = cst.parse_module if validate else _parse_unvalidated
    try:
        return parse(text, config), None
    except cst.ParserSyntaxError:
        if "\t" not in text and "\f" not in text:
            raise
        expanded = expand_indentation(text)
        if expanded is None or expanded[0] == text:
            raise
        try:
            return parse(expanded[0], config), expanded[1]
        except cst.ParserSyntaxError:
            pass
        raise


def exact_tree(tree: cst.Module, target: str | None) -> cst.Module:
    """libcst's own parse of the text a converted tree was built from (see :mod:`.cpython_cst`)."""
    return parse_module(tree.source, target, exact=True)[0]  # type: ignore[attr-defined]




#: libcst's per-node check, run by every node's ``__init__`` (libcst's own comment there:
#: "It might make more sense to move validation work into the visitor, which would allow
#: us to avoid validating the tree when parsing a file").
_VALIDATE = cst.CSTNode.__post_init__


def _no_validation(self: cst.CSTNode) -> None:
    return None


def _parse_unvalidated(text: str, config: cst.PartialParserConfig) -> cst.Module:
    """``cst.parse_module`` with the nodes' construction checks off for its duration only:
    nodes built afterwards (a rule's ``with_changes``, the lowering) check themselves again."""
    cst.CSTNode.__post_init__ = _no_validation  # type: ignore[method-assign]
    try:
        return cst.parse_module(text, config)
    finally:
        cst.CSTNode.__post_init__ = _VALIDATE  # type: ignore[method-assign]


def expand_indentation(text: str) -> tuple[str, Shifts] | None:
    """``text`` with tabs and form feeds in the indentation of each line replaced by
    spaces as CPython counts them, and the shifts; lines inside a multi-line string
    are left alone. None when CPython's tokenizer cannot read the text (or it holds a
    lone carriage return: CPython and libcst split such lines differently)."""
    if "\r" in text.replace("\r\n", ""):
        return None
    lines = text.split("\n")
    inside: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.end[0] > token.start[0] and token.type != tokenize.NL:
                inside.update(range(token.start[0] + 1, token.end[0] + 1))
    except (tokenize.TokenError, SyntaxError):
        return None
    shifts: Shifts = {}
    for index, line in enumerate(lines):
        number = index + 1
        indent = len(line) - len(line.lstrip(" \t\f"))
        if number in inside or ("\t" not in line[:indent] and "\f" not in line[:indent]):
            continue
        width = 0
        for char in line[:indent]:
            width = (width // 8 + 1) * 8 if char == "\t" else (0 if char == "\f" else width + 1)
        lines[index] = " " * width + line[indent:]
        shifts[number] = (indent, width)
    return "\n".join(lines), shifts


def map_column(shifts: Shifts | None, line: int, column: int) -> int:
    """A 1-based ``column`` of the expanded text, on ``line``, as a column of the original."""
    if not shifts or line not in shifts:
        return column
    original, expanded = shifts[line]
    offset = column - 1
    return (offset - expanded + original if offset >= expanded else min(offset, original)) + 1


# -- after CPython said no ---------------------------------------------------------------


@dataclass(frozen=True)
class HostVerdict:
    """What :func:`after_host_rejection` decided: a syntax error (``error``), a
    lowered tree to analyze (``tree``), or neither (valid, but not analyzable here)."""

    error: tuple[int | None, str] | None = None
    tree: ast.Module | None = None


def after_host_rejection(text: str, target: str | None, host_error: SyntaxError, lower: bool = True) -> HostVerdict:
    """libcst's decision on a text CPython rejected (see the module's documentation);
    with ``lower=False``, the decision alone (for a file that will not be analyzed).

    Some refusals stand without asking libcst, because they are not a matter of the
    host being older: indentation errors (``IndentationError``, ``TabError``: the
    rules of indentation and of mixing tabs with spaces are the same in every Python 3,
    and libcst's tokenizer is more lenient there), a null byte, a literal whose value
    CPython cannot decode (:data:`_LITERAL_ERRORS`), and CPython's implementation
    limits (:data:`_CPYTHON_LIMITS`: no CPython runs such a file).
    Brackets nested beyond :data:`MAX_BRACKETS` also keep CPython's verdict: libcst's
    native parser takes seconds on them, or can exhaust its C stack."""
    if (
        isinstance(host_error, IndentationError)
        or host_error.msg in _CPYTHON_LIMITS
        or (host_error.msg.startswith(_LITERAL_ERRORS) and _NEWER_UNICODE not in host_error.msg)
        or "\0" in text
        or _bracket_depth(text) > MAX_BRACKETS
    ):
        return HostVerdict(error=(host_error.lineno, host_error.msg))
    try:
        module, _ = parse_module(text, target, validate=True)
    except Exception:  # noqa: BLE001 - libcst rejects it too (or fails): the host's verdict stands
        # CPython's message and line: the ones users know, and libcst's positions are often
        # a token off. (A file that also uses syntax newer than the host's may get the line
        # of that syntax: it is an error either way.)
        return HostVerdict(error=(host_error.lineno, host_error.msg))
    if not lower:
        return HostVerdict()
    lowered = lower_for_host(text, module)
    if lowered is None:
        return HostVerdict()
    return HostVerdict(tree=_host_parse(lowered))


#: CPython's refusals that are limits of the implementation, the same in every version.
_CPYTHON_LIMITS = frozenset(
    {
        "too many nested parentheses",
        "too many levels of indentation",
        "too many statically nested blocks",
        "too many expressions in star-unpacking assignment",
        "too many nested f-strings",
    }
)
#: CPython's refusals of a literal's value (an escape it cannot decode, a byte beyond ASCII in
#: ``b"..."``): libcst keeps literals as written and never decodes them, so it accepts such a
#: text, which no Python 3 runs (``"C:\\Users"``: ``\\U`` starts an escape).
_LITERAL_ERRORS = ("(unicode error)", "(value error)", "bytes can only contain ASCII")
#: ... except a ``\\N{...}`` name the host's Unicode database does not know: a newer
#: Python's may (``\\N{WIRELESS}`` is Unicode 14, Python 3.11's database 14, 3.10's 13).
_NEWER_UNICODE = "unknown Unicode character name"
#: Bracket nesting beyond which libcst is not asked (CPython's own limit is 200).
MAX_BRACKETS = 200
_BRACKETS = re.compile(r"[\[\](){}]")


def _bracket_depth(text: str) -> int:
    """The deepest bracket nesting, counting brackets in strings and comments too (an
    over-estimate at worst, which only means libcst is not asked)."""
    depth = deepest = 0
    for match in _BRACKETS.finditer(text):
        if match.group() in "([{":
            depth += 1
            if depth > deepest:
                deepest = depth
        elif depth:
            depth -= 1
    return deepest


def _host_parse(text: str) -> ast.Module | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


# -- lowering: the host's syntax, the original's positions -------------------------------


_NEWLINES = re.compile(r"\r\n|\r|\n")
_STRING_TYPES = (cst.FormattedString, cst.ConcatenatedString) + (
    (cst.TemplatedString,) if hasattr(cst, "TemplatedString") else ()
)
_TEMPLATE_PARTS = (cst.FormattedStringExpression,) + (
    (cst.TemplatedStringExpression,) if hasattr(cst, "TemplatedStringExpression") else ()
)


class _Text:
    """The characters of a text, edited in place by (line, column) ranges."""

    def __init__(self, text: str) -> None:
        self.chars = list(text)
        self.starts = [0] + [m.end() for m in _NEWLINES.finditer(text)]

    def offset(self, position: object) -> int:
        return self.starts[position.line - 1] + position.column  # type: ignore[attr-defined]

    def blank(self, start: int, end: int) -> None:
        for index in range(start, end):
            if self.chars[index] not in "\r\n":
                self.chars[index] = " "

    def restore(self, original: str, start: int, end: int) -> None:
        self.chars[start:end] = list(original[start:end])

    def first_blank(self, start: int, end: int) -> int | None:
        for index in range(start, end):
            if self.chars[index] == " ":
                return index
        return None


def lower_for_host(text: str, module: cst.Module) -> str | None:
    """``text`` rewritten so that the running CPython can parse it, every line and every
    token outside the rewritten constructs where it was; None if that fails."""
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    edits = _Text(text)

    def span(node: cst.CSTNode) -> tuple[int, int]:
        where = positions[node]
        return edits.offset(where.start), edits.offset(where.end)

    try:
        for node in _walk(module):
            if isinstance(node, _STRING_TYPES):
                if not _host_accepts_expression(module.code_for_node(node)):
                    _lower_string(node, text, module, edits, span)
                continue
            kind = type(node).__name__
            if kind == "TypeAlias" and _HOST < (3, 12):
                start, _ = span(node)
                edits.chars[start : start + 4] = list("_ = ")  # "type X = v" -> "_ =  X = v"
                if node.type_parameters is not None:
                    _blank_parameters(edits, span, node.type_parameters)
            elif kind in ("FunctionDef", "ClassDef") and getattr(node, "type_parameters", None) is not None:
                if _HOST < (3, 12):
                    edits.blank(*span(node.type_parameters))
            elif kind == "ExceptStarHandler" and _HOST < (3, 11):
                start, end = span(node)
                star = "".join(edits.chars[start:end]).index("*")
                edits.chars[start + star] = " "
    except _CannotLower:
        return None
    lowered = "".join(edits.chars)
    return lowered if _host_parse(lowered) is not None else None


def _lower_string(
    node: cst.CSTNode, text: str, module: cst.Module, edits: _Text, span: Callable[[cst.CSTNode], tuple[int, int]]
) -> None:
    """A string expression of :func:`lower_for_host` as a parenthesized tuple of its
    replacement fields' expressions. A function, not a recursive closure: that would be a
    reference cycle holding the module's tree (see :mod:`.collector`)."""
    start, end = span(node)
    edits.blank(start, end)
    for part in _template_parts(node):
        first, last = span(part.expression)
        edits.restore(text, first, last)
        comma = edits.first_blank(last, span(part)[1])
        if comma is None:  # pragma: no cover - a field always ends with "}"
            raise _CannotLower
        edits.chars[comma] = ","
        for inner in _strings_in(part.expression):
            if not _host_accepts_expression(module.code_for_node(inner)):
                _lower_string(inner, text, module, edits, span)
    edits.chars[start], edits.chars[end - 1] = "(", ")"


class _CannotLower(Exception):
    pass


def _walk(module: cst.Module) -> Iterator[cst.CSTNode]:
    """Every node, outermost first; below a string expression, nothing (it is lowered as
    a whole, its inner strings by :func:`lower_for_host` itself)."""
    stack: list[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, _STRING_TYPES):
            continue
        stack.extend(reversed(node.children))


def _strings_in(expression: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The outermost string expressions inside ``expression``."""
    stack: list[cst.CSTNode] = [expression]
    while stack:
        node = stack.pop()
        if isinstance(node, _STRING_TYPES):
            yield node
            continue
        stack.extend(reversed(node.children))


def _template_parts(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The replacement fields of a string expression, those of format specs included."""
    if isinstance(node, cst.ConcatenatedString):
        yield from _template_parts(node.left)
        yield from _template_parts(node.right)
        return
    stack = list(reversed(getattr(node, "parts", ())))
    while stack:
        part = stack.pop()
        if isinstance(part, _TEMPLATE_PARTS):
            yield part
            stack.extend(reversed(part.format_spec or ()))


def _blank_parameters(edits: _Text, span: object, parameters: cst.CSTNode) -> None:
    """``[T: int, *Ts, **P = x]`` -> ``[T     ,  Ts,   P    ]``: a subscript the host reads."""
    start, end = span(parameters)  # type: ignore[operator]
    keep: set[int] = {start, end - 1}
    for param in parameters.params:  # type: ignore[attr-defined]
        first, last = span(param.param.name)  # type: ignore[operator]
        keep.update(range(first, last))
        if isinstance(param.comma, cst.Comma):
            comma_start, comma_end = span(param.comma)  # type: ignore[operator]
            keep.update(i for i in range(comma_start, comma_end) if edits.chars[i] == ",")
    for index in range(start, end):
        if index not in keep and edits.chars[index] not in "\r\n":
            edits.chars[index] = " "


def _host_accepts_expression(code: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile("(" + code + "\n)", "<summaryguard>", "eval", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
        return True
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
