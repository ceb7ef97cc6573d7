"""``returns_imported_instances``: a factory is known by what it returns, wherever the return sits."""

from __future__ import annotations

import ast
import textwrap

import pytest

from summaryguard.rules.engine.names import returns_imported_instances
from summaryguard.rules.engine.prefilter import Prefilter


@pytest.mark.parametrize(
    "source",
    [
        "from .kinds import Hosted\n\nclass F:\n    def make(self):\n        return Hosted()\n",
        # a lazy import and the return inside a match case, as provider factories write them
        """
        class F:
            @staticmethod
            def make(kind):
                match kind:
                    case "a":
                        from .kinds import Hosted as H
                        return H(kind)
        """,
        """
        def make(kind):
            try:
                from .kinds import Hosted
            except ImportError:
                return None
            else:
                return Hosted(kind)
        """,
        """
        def make(kind):
            try:
                pass
            except ImportError:
                from .kinds import Local
                return Local(kind)
        """,
    ],
)
def test_a_return_of_an_imported_class_instance_is_a_factory(source: str) -> None:
    source = textwrap.dedent(source)
    assert returns_imported_instances(ast.parse(source))
    assert Prefilter.may_lend(source) or "class " not in source


@pytest.mark.parametrize(
    "source",
    [
        # built by a class of its own, or by an attribute call: not another module's instance
        "from .kinds import Hosted\n\nclass Local:\n    pass\n\ndef make():\n    return Local()\n",
        "import kinds\n\ndef make():\n    return kinds.Hosted()\n",
        "from .kinds import Hosted\n\ndef make():\n    return Hosted\n",
        "from .kinds import *\n\ndef make():\n    return Hosted()\n",
    ],
)
def test_anything_else_is_not(source: str) -> None:
    assert not returns_imported_instances(ast.parse(source))


def test_the_text_may_lend_only_with_a_class_and_an_import() -> None:
    assert not Prefilter.may_lend("def make():\n    return Hosted()\n")
    assert not Prefilter.may_lend("class A:\n    def make(self):\n        return Hosted()\n")
    assert Prefilter.may_lend("import openai\n\nclass A:\n    pass\n")
    assert not Prefilter.may_lend("import json\n\nclass A:\n    pass\n")
    # a model library's name in a comment is not its import
    assert not Prefilter.imports_model_library("# see openai's docs\nimport json\n")


@pytest.mark.parametrize(
    "before, lends",
    [
        ("", True),  # the text's first word
        ("\n    ", True),
        ("x = 1; ", True),
        (")", True),
        ("no", False),  # ``noreturn Hosted(``: not the word ``return``
        ("_", False),
        ("é", False),  # a letter beyond ASCII is a word character too
        ("2", False),
    ],
)
def test_return_is_a_whole_word(before: str, lends: bool) -> None:
    """The factory's ``return Name(`` is found by a pattern without ``\\b`` (see
    ``prefilter._returns_instance``); the boundary is checked by hand, as ``\\b`` would."""
    import re

    text = f"import x\n\nclass A:\n    pass\n\n{before}return Hosted()\n"
    assert Prefilter.may_lend(text) is lends
    assert (re.search(r"\breturn[ \t]+[A-Z]\w*\(", text) is not None) is lends  # the old pattern agrees
