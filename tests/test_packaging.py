"""The distribution installs as the spec says: one import root, a working command.

The fresh-environment tests build the project with pip (build isolation fetches
setuptools from the package index) into a new virtual environment that sees
this interpreter's site-packages for the run-time dependencies.
"""

from __future__ import annotations

import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_every_package_folder_is_listed() -> None:
    setuptools = pyproject()["tool"]["setuptools"]
    mapping = setuptools["package-dir"]
    listed = set(setuptools["packages"])
    found = set()
    for package, folder in mapping.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            found.add(".".join([package, *rel.parts]))
    assert found == listed


def test_no_top_level_guard_rules_or_plugins_is_mapped() -> None:
    mapping = pyproject()["tool"]["setuptools"]["package-dir"]
    assert all(name.startswith("summaryguard.") for name in mapping)


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(system_site_packages=True, with_pip=True).create(where)
    return where


@pytest.mark.parametrize("editable", [False, True], ids=["install", "editable"])
def test_fresh_virtualenv_install(fresh_venv: Path, editable: bool, tmp_path: Path) -> None:
    python = fresh_venv / "bin" / "python"
    target = ["-e", str(ROOT)] if editable else [str(ROOT)]
    pip = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", *target],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert pip.returncode == 0, pip.stderr
    # Run from an empty folder so nothing is imported from the checkout by accident.
    probe = subprocess.run(
        [
            str(python),
            "-c",
            "import importlib.util as u, summaryguard.guard, summaryguard.rules, summaryguard.plugins;"
            "print([n for n in ('guard', 'rules', 'plugins') if u.find_spec(n)])",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.strip() == "[]"
    command = subprocess.run(
        [str(fresh_venv / "bin" / "summaryguard"), "--version"], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert command.returncode == 0, command.stderr
    assert "0.1.0" in command.stdout
