"""The command line's analyzer is built when a file first needs it, and then answers as the
engine's own :class:`Analyzer` does (rules/cli/lazy_analyzer.py)."""

from __future__ import annotations

import sys

from summaryguard.rules.cli.lazy_analyzer import LazyAnalyzer
from summaryguard.rules.engine import Analyzer, Vocabulary, all_rules
from summaryguard.rules.engine.prefilter import Prefilter

RELEVANT = "def resume(checkpoint):\n    ctx = checkpoint.resume_context()\n    return ctx['summary']\n"
PLAIN = "import os\n\n\ndef add(a, b):\n    return a + b\n"


def _lazy(loads: list[int]) -> LazyAnalyzer:
    vocabulary = Vocabulary.build()

    def load_rules() -> list[type]:
        loads.append(1)
        return [rule for rule in all_rules() if rule.code != "SG001"]

    return LazyAnalyzer(vocabulary, Prefilter(vocabulary), load_rules, target_version="3.12")


def test_a_text_the_prefilter_settles_needs_no_analyzer() -> None:
    """The pre-filter's verdicts, the screening of a dismissed text CPython compiles and the
    lending of a text that cannot lend: no analyzer built, the engine's answers."""
    loads: list[int] = []
    lazy = _lazy(loads)
    engine = Analyzer(Vocabulary.build(), [rule for rule in all_rules() if rule.code != "SG001"], target_version="3.12")
    assert lazy.might_matter(RELEVANT) and not lazy.might_matter(PLAIN)
    assert lazy.screen_facts("plain.py", PLAIN) == engine.screen_facts("plain.py", PLAIN) == (False, [], None)
    assert lazy.lent_facts("plain.py", PLAIN) is engine.lent_facts("plain.py", PLAIN) is None
    assert (lazy.built, loads) == (False, [])


def test_a_text_cpython_rejects_is_the_engines_to_judge() -> None:
    """libcst decides for the target grammar what CPython rejects, so that builds the analyzer:
    an unclosed bracket is an error; a PEP 695 alias is valid 3.12 (CPython 3.11 rejects it,
    a newer one settles it without the engine)."""
    host_rejects_alias = sys.version_info < (3, 12)
    for text, errors, builds in (("x = (\n", 1, True), ("type Alias = int\n", 0, host_rejects_alias)):
        loads: list[int] = []
        lazy = _lazy(loads)
        needs, found, facts = lazy.screen_facts("odd.py", text)
        assert (needs, len(found), facts, lazy.built, len(loads)) == (False, errors, None, builds, int(builds))


def test_the_analyzer_is_built_once_on_first_need_and_answers_as_the_engines() -> None:
    loads: list[int] = []
    lazy = _lazy(loads)
    engine = Analyzer(Vocabulary.build(), [rule for rule in all_rules() if rule.code != "SG001"], target_version="3.12")
    needs, errors, facts = lazy.screen_facts("loop.py", RELEVANT)
    assert (lazy.built, loads) == (True, [1])
    expected = engine.screen_facts("loop.py", RELEVANT)
    assert (needs, errors, facts.to_json()) == (expected[0], expected[1], expected[2].to_json())
    assert lazy.lent_facts("plain.py", PLAIN) == engine.lent_facts("plain.py", PLAIN)
    found, failed = lazy.analyze([("loop.py", RELEVANT)])
    assert [(f.line, f.code) for f in found] == [(f.line, f.code) for f in engine.analyze([("loop.py", RELEVANT)])[0]]
    assert {f.code for f in found} >= {"SG101"} and failed == []
    assert lazy.rule_classes == engine.rule_classes
    assert lazy.analyzer() is lazy.analyzer() and loads == [1]
    built = lazy.analyzer()
    assert (built.vocabulary, built.target_version) == (lazy.vocabulary, "3.12")
    assert lazy.screen_facts("plain.py", PLAIN) == (False, [], None)  # the engine's answer, once built


def test_what_the_prefilter_settles_is_what_the_engine_reports() -> None:
    """Prefilter.settles (the quick path's and the lazy analyzer's test): a text the scan
    dismisses and CPython compiles, and only such a text; the engine then screens it out
    with no error."""
    vocabulary = Vocabulary.build()
    prefilter = Prefilter(vocabulary)
    engine = Analyzer(vocabulary, [rule for rule in all_rules() if rule.code != "SG001"])
    nested = "x = " + "(" * 300 + "1" + ")" * 300 + "\n"  # CPython allows 200 parentheses
    for text, settled in ((PLAIN, True), (RELEVANT, False), ("x = (\n", False), ("\0", False), (nested, False)):
        assert prefilter.settles(text) is settled, text[:20]
        if settled:
            assert engine.screen_facts("t.py", text) == (False, [], None)
