"""Gitignore-style globs: one search of every pattern says what pathspec says (``cli.globs``)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from summaryguard.rules.cli import globs
from summaryguard.rules.cli.globs import compile_gitignore_lines, is_ignored

#: Every kind of line a ``.gitignore`` holds: folders, anchors, negations, classes, escapes.
LINES = [
    "# a comment", "", "build/", "!build/keep/", "*.py[cod]", "/dist", "docs/**/*.md", "!important.md",
    "a/**/b/", "\\#literal", "trailing\\ ", "[!a]bc", "x/*/y", ".venv", "node_modules/", "*.egg-info/",
    "!*.keep", "/only_root.py", "deep/**", "[", "ba?", "__pycache__/",
]

_PARTS = st.sampled_from(
    ["build", "keep", "x.pyc", "dist", "docs", "a", "b", "c", "important.md", "readme.md", "#literal",
     "trailing ", "xbc", "abc", "y", ".venv", "node_modules", "pkg.egg-info", "f.keep", "only_root.py",
     "deep", "bar", "__pycache__", "mod.py"]
)


@settings(max_examples=400, deadline=None)
@given(
    lines=st.lists(st.sampled_from(LINES), max_size=12),
    path=st.lists(_PARTS, min_size=1, max_size=4).map("/".join),
    is_dir=st.booleans(),
)
def test_one_search_of_all_patterns_gives_pathspecs_verdict(lines: list[str], path: str, is_dir: bool) -> None:
    spec = compile_gitignore_lines(lines)
    expected = spec.check_file(path.rstrip("/") + "/" if is_dir else path).include
    assert is_ignored(spec, path, is_dir) == expected


def test_the_joined_search_is_built_once_per_spec_and_skips_paths_no_pattern_matches(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spec = compile_gitignore_lines(["build/", "!keep.py", "*.log"])
    joined = globs._any_pattern(spec)
    assert joined is not None and globs._any_pattern(spec) is joined
    asked: list[str] = []
    real = type(spec).check_file

    def recording(self, file, separators=None):  # type: ignore[no-untyped-def]
        asked.append(file)
        return real(self, file, separators)

    monkeypatch.setattr(type(spec), "check_file", recording)
    assert is_ignored(spec, "src/app.py", False) is None and asked == []
    assert is_ignored(spec, "keep.py", False) is False and asked == ["keep.py"]
    assert is_ignored(spec, "out/build", True) is True


def test_patterns_that_cannot_be_joined_get_pathspecs_answer_for_every_path(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = compile_gitignore_lines(["build/"])
    pattern = spec.patterns[0]
    monkeypatch.setattr(pattern, "regex", re.compile(pattern.regex.pattern, re.IGNORECASE))
    assert globs._any_pattern(spec) is None
    assert is_ignored(spec, "x/build", True) is True and is_ignored(spec, "x/app.py", False) is None
