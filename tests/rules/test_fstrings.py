"""f-string literals split as libcst splits them (:mod:`summaryguard.rules.engine.fstrings`).

The conversion that builds libcst's f-string nodes from this split is tested against libcst
in ``test_cpython_cst.py``."""

from __future__ import annotations

import pytest

from summaryguard.rules.engine.fstrings import Field, Literal, split


def test_text_is_kept_as_written_and_fields_are_split_at_their_braces() -> None:
    assert split('f"a{{b}}\\n{x}d"') == Literal('f"', '"', ("a{{b}}\\n", Field("x", False, None, None), "d"))
    assert split("F''") == Literal("F'", "'", ())
    assert split('rf"\\d{x}"') == Literal('rf"', '"', ("\\d", Field("x", False, None, None)))
    assert split('f"\\N{EM DASH}{x}"') == Literal('f"', '"', ("\\N{EM DASH}", Field("x", False, None, None)))
    assert split("f'''a\n{ y }'''") == Literal("f'''", "'''", ("a\n", Field(" y ", False, None, None)))


def test_a_field_has_its_conversion_its_debug_sign_and_its_nested_specification() -> None:
    [field] = split('f"{x!r:>{w}.{p}f}"').parts  # type: ignore[union-attr]
    assert field == Field(
        "x", False, "r", (">", Field("w", False, None, None), ".", Field("p", False, None, None), "f")
    )
    assert split('f"{x:}"').parts == (Field("x", False, None, ()),)  # type: ignore[union-attr]
    assert split('f"{a.b=}"').parts == (Field("a.b", True, None, None),)  # type: ignore[union-attr]
    assert split('f"{a = !s}"').parts == (Field("a ", True, "s", None),)  # type: ignore[union-attr]


def test_operators_brackets_and_strings_inside_a_field_do_not_end_it() -> None:
    parts = split("f\"{a != b} {c <= d:>3} {e['}:!']} {f(g=1)} {h[1:2]} {(i := 3)}\"").parts  # type: ignore[union-attr]
    fields = [p for p in parts if isinstance(p, Field)]
    assert [f.expression for f in fields] == ["a != b", "c <= d", "e['}:!']", "f(g=1)", "h[1:2]", "(i := 3)"]
    assert fields[1].spec == (">3",)


@pytest.mark.parametrize(
    "text",
    [
        'f"a" "b"',  # an implicit concatenation: the segment holds two literals
        'f"{x}" f"{y}"',
        'f"\\{x}"',  # a backslash before a brace
        'f"{x:{{}}}"',  # ``{{`` in a specification: libcst reads a dict
        'f"{x # c\n}"',  # a comment (or a backslash) inside a field
        'f"{x"',  # a field that does not close
        'f"}"',
        'f"{x!z}"',
        'f"{x = y}"',  # ``=`` not followed by a conversion, a specification or the end
        "b'x'",
        "'x'",
        "f'{x['k']}'",  # the literal's own quote inside a field (Python 3.12 only)
        'f"{\'a\\\\b\'}"',  # a backslash in a field's string
        'f"\\N{x"',
        'f"abc\\',
    ],
)
def test_text_the_split_does_not_read_for_sure_is_left_to_libcst(text: str) -> None:
    assert split(text) is None
