"""NameMatcher compiles on first use (a run that matches no name pays nothing) and matches as fnmatch does."""

from __future__ import annotations

import fnmatch

from hypothesis import given
from hypothesis import strategies as st

from summaryguard.rules.engine.vocabulary import NameMatcher, Vocabulary

_PART = st.text(alphabet="abc_*?", min_size=1, max_size=4)
_PATTERN = st.lists(_PART, min_size=1, max_size=3).map(".".join)
_NAME = st.lists(st.text(alphabet="abc_", min_size=1, max_size=4), min_size=1, max_size=3).map(".".join)


def _expected(patterns: list[str], name: str) -> bool:
    last = name.rpartition(".")[2]
    return any(fnmatch.fnmatchcase(name if "." in p else last, p) for p in patterns)


@given(patterns=st.lists(_PATTERN, max_size=4), names=st.lists(_NAME, min_size=1, max_size=5))
def test_a_matcher_matches_like_fnmatch_on_the_whole_name_or_its_last_segment(patterns: list[str], names: list[str]) -> None:
    matcher = NameMatcher(patterns)
    assert [matcher(name) for name in names] == [_expected(patterns, name) for name in names]
    assert matcher(None) is False and matcher("") is False


def test_building_the_vocabulary_compiles_no_matcher_until_a_name_is_asked() -> None:
    vocabulary = Vocabulary.build()
    matchers = list(vocabulary._matchers.values())
    assert matchers and not any(m._compiled for m in matchers)
    assert vocabulary.matches("resume-calls", "agent.rehydrate_summary")
    assert vocabulary._matchers["resume-calls"]._compiled


def test_only_globs_with_a_sign_inside_are_compiled() -> None:
    """Plain names and one ``*`` at an end are set and affix tests; ``a*b`` needs ``re``."""
    matcher = NameMatcher(["pkg.Agent.resume", "*.rehydrate", "myapp.tools.*", "fetch_*", "**Error"])
    assert matcher("pkg.Agent.resume") and matcher("x.rehydrate") and matcher("myapp.tools.search")
    assert matcher("a.fetch_one") and matcher("ValueError") and not matcher("pkg.Agent.resume2")
    assert matcher._dotted.rest is None and matcher._bare.rest is None
    inside = NameMatcher(["pkg.*.resume", "get_?"])
    assert inside("pkg.a.b.resume") and inside("x.get_y") and not inside("pkg.resume")
    assert inside._dotted.rest is not None and inside._bare.rest is not None
