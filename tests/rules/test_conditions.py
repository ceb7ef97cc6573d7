"""What a condition proves: Facts(when_true, when_false) for typical checks."""

from __future__ import annotations

import libcst as cst
import pytest

from summaryguard.rules.engine.conditions import Context, Facts, classify

G, P, D = "generation", "partial", "deps"


class _Ctx(Context):
    def __init__(self, definitions=None, flags=None, predicates=None):
        self.definitions = definitions or {}
        self.flags = flags or {}
        self.predicates = predicates or {}

    def definition(self, name):
        text = self.definitions.get(name)
        return cst.parse_expression(text) if text else None

    def flag(self, name):
        return self.flags.get(name)

    def predicate(self, call):
        name = call.func.value if isinstance(call.func, cst.Name) else None
        return self.predicates.get(name)


@pytest.mark.parametrize(
    ("expr", "true", "false"),
    [
        ("s.generation != c.summary_generation", set(), {G}),
        ("s.generation == c.summary_generation", {G}, set()),
        ("s.generation < c.summary_generation", set(), {G}),
        ("s.generation >= c.summary_generation", {G}, set()),
        ("not s.partial", {P}, set()),
        ("s.partial is True", set(), {P}),
        ("s.partial == False", {P}, set()),
        ("s.complete", {P}, set()),
        ("s.status == 'complete'", {P}, set()),
        ("s.status != 'complete'", set(), {P}),
        ("s.status == 'writing'", set(), {P}),
        ("s.status == 'other'", set(), set()),
        ("ref not in s.verbatim_refs", set(), {D}),
        ("ref in s.verbatim_refs", {D}, set()),
        ("x in y", set(), set()),
        ("s is None", set(), set()),
        ("s is None or s.generation != g", set(), {G}),
        ("s.generation == g and not s.partial", {G, P}, set()),
        ("all(r in s.verbatim_refs for r in deps)", {D}, set()),
        ("any(r not in s.verbatim_refs for r in deps)", set(), {D}),
        ("[r for r in deps if r not in s.verbatim_refs]", set(), {D}),
        ("[r for r in deps]", set(), set()),
        ("len([r for r in deps if r not in s.refs]) > 0", set(), {D}),
        ("len([r for r in deps if r not in s.refs]) == 0", {D}, set()),
        ("set(deps) - set(s.verbatim_refs)", set(), {D}),
        ("set(deps).issubset(s.verbatim_refs)", {D}, set()),
        ("set(deps).difference(s.verbatim_refs)", set(), {D}),
        ("set(deps) <= set(s.verbatim_refs)", {D}, set()),
        ("(ok := s.generation == g)", {G}, set()),
        ("-x", set(), set()),
        ("a + b", set(), set()),
        ("f(x)", set(), set()),
        ("x.y.z()", set(), set()),
        ("True", set(), {G, P, D}),
        ("None", {G, P, D}, set()),
        ("1 < 2", set(), set()),
        # A summary read as a mapping: its keys say what its attributes would.
        ("s['partial']", set(), {P}),
        ("not s.get('partial')", {P}, set()),
        ("s.get('is_complete', False)", {P}, set()),
        ("s['status'] == 'complete'", {P}, set()),
        ("s['generation'] != c['summary_generation']", set(), {G}),
        ("s['other']", set(), set()),
        ("s[0]", set(), set()),
        ("s[key]", set(), set()),
    ],
)
def test_classify(expr: str, true: set[str], false: set[str]) -> None:
    facts = classify(cst.parse_expression(expr), _Ctx())
    assert (set(facts.when_true), set(facts.when_false)) == (true, false)


def test_names_follow_definitions_flags_and_predicates() -> None:
    ctx = _Ctx(
        definitions={"missing": "[r for r in deps if r not in s.verbatim_refs]", "loop": "loop"},
        flags={"stale": Facts(frozenset(), frozenset({G}))},
        predicates={"consistent": frozenset({G, P})},
    )
    assert classify(cst.parse_expression("missing"), ctx).when_false == {D}
    assert classify(cst.parse_expression("not stale"), ctx).when_true == {G}
    assert classify(cst.parse_expression("consistent(c)"), ctx).when_true == {G, P}
    assert classify(cst.parse_expression("loop"), ctx) == Facts()  # self-reference stops
    assert classify(cst.parse_expression("unknown"), ctx) == Facts()
