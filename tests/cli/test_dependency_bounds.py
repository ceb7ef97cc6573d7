"""The bound on context modules counts what is read from outside the run, not the run's lenders."""

from __future__ import annotations

import os
from pathlib import Path

from summaryguard.rules.cli.dependencies import MAX_MODULES, Dependency, find_dependencies


def _tree(tmp_path: Path, count: int) -> tuple[str, list[str]]:
    modules = [f"m{i}" for i in range(count)]
    for name in modules:
        (tmp_path / f"{name}.py").write_text("x = 1\n")
    checked = tmp_path / "a.py"
    checked.write_text("".join(f"import {name}\n" for name in modules))
    return str(checked), modules


def _load(targets: list[str]) -> dict[str, Dependency]:
    return {t: Dependency(t, "x = 1\n", "digest", ()) for t in targets}


def test_modules_outside_the_run_are_bounded(tmp_path: Path) -> None:
    checked, modules = _tree(tmp_path, MAX_MODULES + 20)
    found = find_dependencies([(checked, modules)], [checked], str(tmp_path), _load)
    assert len(found) == MAX_MODULES


def test_lenders_of_the_run_are_not_cut_by_the_bound(tmp_path: Path) -> None:
    """A tree with many lending files (one per package) never loses another's context."""
    checked, modules = _tree(tmp_path, MAX_MODULES + 20)
    lenders = [str(tmp_path / f"{name}.py") for name in modules]
    found = find_dependencies([(checked, modules)], [checked], str(tmp_path), _load, lenders)
    assert sorted(os.path.basename(d.path) for d in found) == sorted(f"{m}.py" for m in modules)
