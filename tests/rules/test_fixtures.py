"""Whole-file fixtures (flake8-bugbear style): expected findings are ``# expect:`` comments.

Each ``fixtures/*.py`` file is analyzed on its own; each folder below
``fixtures/`` is analyzed as one project (summaries cross its modules).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from summaryguard.rules.engine import Analyzer, Vocabulary, all_rules, expected_findings

FIXTURES = Path(__file__).parent / "fixtures"
ANALYZER = Analyzer(Vocabulary.build(), all_rules())


def _projects() -> list:
    projects = [pytest.param([p], id=p.name) for p in sorted(FIXTURES.glob("*.py"))]
    projects += [
        pytest.param(sorted(d.glob("*.py")), id=f"{d.name}/") for d in sorted(FIXTURES.iterdir()) if d.is_dir()
    ]
    return projects


@pytest.mark.parametrize("files", _projects())
def test_fixture(files: list[Path]) -> None:
    sources = [(f.relative_to(FIXTURES).as_posix(), f.read_text()) for f in files]
    findings, errors = ANALYZER.analyze(sources)
    assert errors == []
    expected = sorted((path, line, code) for path, text in sources for line, code in expected_findings(text))
    assert sorted((f.path, f.line, f.code) for f in findings) == expected


def test_precision_traps_are_valid() -> None:
    """Every trap fixture exists and expects nothing."""
    traps = sorted(FIXTURES.glob("trap_*.py"))
    assert len(traps) >= 6
    for trap in traps:
        assert expected_findings(trap.read_text()) == []
