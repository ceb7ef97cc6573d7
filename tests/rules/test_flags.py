"""Which names the flow analysis follows as flags, and what a statement does to them."""

from __future__ import annotations

import libcst as cst
import pytest

from summaryguard.rules.engine.flags import (
    FALSY,
    GROWS,
    TRUTHY,
    VALUE,
    candidates,
    directions,
    effects,
    error_slots,
)
from summaryguard.rules.engine.syntax import statements


def _body(code: str) -> list:
    return statements(cst.parse_module(code))


@pytest.mark.parametrize(
    ("code", "names"),
    [
        ("ok = True\nok = False\n", {"ok"}),
        ("problems = []\nproblems.append(1)\n", {"problems"}),
        ("found = {}\nfound[k] = 1\nfound[j] += 1\n", {"found"}),
        ("problems = list()\nproblems += [1]\nproblems.extend(more)\n", {"problems"}),
        ("problems = get()\nproblems.append(1)\n", set()),  # not known to be a container
        ("problems = []\nproblems.clear()\n", set()),
        ("problems = []\nx = problems.append(1)\n", {"x"}),  # filled inside an expression
        ("problems = []\ndel problems[0]\n", set()),
        ("ok = True\ndel ok\n", set()),
        ("ok = 1\nok += 1\n", set()),
        ("ok = 1\nfor ok in items: pass\n", set()),
        ("ok = 1\nwith f() as ok: pass\n", set()),
        ("ok = 1\ntry: pass\nexcept E as ok: pass\n", set()),
        ("ok = 1\n(ok := 2)\n", set()),
        ("ok = 1\nok, other = 1, 2\n", set()),
        ("ok = 1\nimport ok\n", set()),
        ("a = 1\nimport a.b\n", set()),
        ("ok = 1\ndef ok(): pass\n", set()),
        ("ok = 1\ndef f():\n    nonlocal ok\n", set()),
        ("problems = []\ndef f():\n    problems.clear()\n", set()),
        ("ok = 1\nmatch x:\n    case [*ok]: pass\n    case {**rest}: pass\n", set()),
    ],
)
def test_candidates(code: str, names: set[str]) -> None:
    assert candidates(_body(code)) == names


@pytest.mark.parametrize(
    ("code", "found"),
    [
        ("ok = False", [("ok", FALSY)]),
        ("ok = None", [("ok", FALSY)]),
        ("ok = []", [("ok", FALSY)]),
        ("ok = set()", [("ok", FALSY)]),
        ("ok = [1]", [("ok", TRUTHY)]),
        ("ok = [*xs]", [("ok", VALUE)]),
        ("ok = s.generation == g", [("ok", VALUE)]),
        ("a = b = True", [("a", TRUTHY), ("b", TRUTHY)]),
        ("ok: bool = True", [("ok", TRUTHY)]),
        ("p.append(1)", [("p", TRUTHY)]),
        ("p.extend(xs)", [("p", GROWS)]),
        ("p.sort()", []),
        ("p[k] = 1", [("p", TRUTHY)]),
        ("p += [1]", [("p", TRUTHY)]),
        ("n += 1", [("n", VALUE)]),
        ("self.ok = False", []),
    ],
)
def test_effects(code: str, found: list[tuple[str, str]]) -> None:
    (stmt,) = _body(code + "\n")
    assert [(name, kind) for name, kind, _ in effects(stmt)] == found


def test_directions_of_a_loop_body() -> None:
    body = _body(
        "if a:\n    ok = False\nif b:\n    ok = False\n"
        "problems.append(1)\nproblems.extend(xs)\n"
        "reset = True\nif c:\n    reset = False\n"
    )
    assert directions(body) == {"ok": FALSY, "problems": TRUTHY, "reset": VALUE}


@pytest.mark.parametrize(
    ("code", "names"),
    [
        ("error = None\ntry: pass\nexcept E as exc:\n    error = exc\n", {"error"}),
        ("error: E | None = None\ntry: pass\nexcept E as exc:\n    error: E = exc\n", {"error"}),
        ("error = None\nexc = make()\nerror = exc\n", set()),  # not inside the handler binding exc
        ("error = ''\ntry: pass\nexcept E as exc:\n    error = exc\n", set()),
        ("error = None\ntry: pass\nexcept E as exc:\n    error = exc\nerror = load()\n", set()),
        ("error = None\ntry: pass\nexcept E as exc:\n    error = str(exc)\n", set()),
    ],
)
def test_error_slots(code: str, names: set[str]) -> None:
    """Names that only hold None or a caught error: None exactly when falsy."""
    assert error_slots(_body(code)) == names
