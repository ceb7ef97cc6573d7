"""What a type annotation says a value is (rules/engine/annotations.py)."""

from __future__ import annotations

import libcst as cst
import pytest

from summaryguard.rules.engine.annotations import annotated_class, returns_text
from summaryguard.rules.engine.names import ImportTable


def _imports() -> ImportTable:
    table = ImportTable("app.agent", False)
    for line in ("from mcp import ClientSession", "from app.clients import Client", "import typing as t"):
        statement = cst.parse_statement(line)
        assert isinstance(statement, cst.SimpleStatementLine)
        node = statement.body[0]
        assert isinstance(node, (cst.Import, cst.ImportFrom))
        table.add(node)
    return table


@pytest.mark.parametrize(
    ("annotation", "position", "expected"),
    [
        ("ClientSession", None, "mcp.ClientSession"),
        ("Optional[ClientSession]", None, "mcp.ClientSession"),
        ("t.Optional[ClientSession]", None, "mcp.ClientSession"),
        ("ClientSession | None", None, "mcp.ClientSession"),
        ("None | ClientSession | None", None, "mcp.ClientSession"),
        ("Union[ClientSession, None]", None, "mcp.ClientSession"),
        ("Annotated[Client, 'meta']", None, "app.clients.Client"),
        ("ClassVar[Client]", None, "app.clients.Client"),
        ("Client[int]", None, "app.clients.Client"),
        ('"ClientSession"', None, "mcp.ClientSession"),
        ("tuple[str, ClientSession, Client]", 1, "mcp.ClientSession"),
        ("tuple[str, ClientSession, Client]", 2, "app.clients.Client"),
        # nothing a class says, or two classes
        ("tuple[str, ClientSession]", None, None),
        ("tuple[ClientSession, ...]", 0, None),
        ("tuple[str, ClientSession]", 5, None),
        ("ClientSession", 0, None),
        ("ClientSession | Client", None, None),
        ("Union[ClientSession, Client]", None, None),
        ("None", None, None),
        ("str", None, None),
        ("Annotated[()]", None, None),
        ('"not an ( expression"', None, None),
        ("list[ClientSession]", None, None),  # a builtin generic: its elements are not the value
    ],
)
def test_the_class_an_annotation_names(annotation: str, position: int | None, expected: str | None) -> None:
    expr = cst.parse_expression(annotation)
    assert annotated_class(expr, _imports(), position) == expected


def test_no_annotation_says_nothing() -> None:
    assert annotated_class(None, _imports()) is None


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        ("Callable[[str], str]", True),
        ("typing.Callable[..., str]", True),
        ("Optional[Callable[[str], Awaitable[str]]]", True),
        ("Callable[[list[dict]], Coroutine[Any, Any, str]] | None", True),
        ("Union[None, Callable[[str], str]]", True),
        ("Annotated[Callable[[str], str], 'the model']", True),
        ('"Callable[[str], str]"', True),  # a forward reference
        ("Callable[[str], None]", False),  # a callback: nothing comes back
        ("Callable[[str], Awaitable[None]]", False),
        ("Callable[[str], dict]", False),
        ("Callable", False),
        ("str", False),
        ('"Callable[["', False),  # a forward reference that is no expression
    ],
)
def test_a_callable_declared_to_answer_with_text(annotation: str, expected: bool) -> None:
    assert returns_text(cst.parse_expression(annotation)) is expected


def test_no_annotation_declares_nothing() -> None:
    assert returns_text(None) is False
