"""The cheap look for entry points (``plugins.entry_points.may_declare``) errs one way only:
it says no only where ``importlib.metadata`` finds nothing, so the plugins loaded are the same."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

from summaryguard.plugins.entry_points import may_declare


def _distribution(site: Path, name: str, entry_points: str | None) -> None:
    dist = site / f"{name}-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    if entry_points is not None:
        (dist / "entry_points.txt").write_text(entry_points)


@pytest.mark.parametrize("group", ["console_scripts", "pytest11", "summaryguard", "no.such.group.anywhere"])
def test_it_agrees_with_importlib_metadata_on_this_environment(group: str) -> None:
    declared = list(metadata.entry_points(group=group))
    assert may_declare(group) or not declared
    if group == "no.such.group.anywhere":
        assert not may_declare(group)


def test_a_distribution_declaring_the_group_is_seen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _distribution(tmp_path, "other", "[console_scripts]\nx = y:z\n")
    _distribution(tmp_path, "bare", None)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert not may_declare("sg.test.group")
    _distribution(tmp_path, "declares", "[sg.test.group]\nmine = some_module\n")
    assert may_declare("sg.test.group")
    assert [ep.name for ep in metadata.entry_points(group="sg.test.group")] == ["mine"]


def test_an_upper_case_metadata_folder_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dist = tmp_path / "Loud-1.0.DIST-INFO"
    dist.mkdir()
    (dist / "entry_points.txt").write_text("[sg.test.group]\nmine = m\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert may_declare("sg.test.group")


def test_what_it_cannot_read_is_left_to_importlib_metadata(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    archive = tmp_path / "plugins.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr("zipped-1.0.dist-info/entry_points.txt", "[sg.test.group]\nmine = m\n")
    with monkeypatch.context() as patch:
        patch.syspath_prepend(str(archive))
        assert may_declare("sg.test.group")  # a zip on the path
    with monkeypatch.context() as patch:
        patch.syspath_prepend(str(tmp_path / "old.egg"))
        assert may_declare("sg.test.group")  # an egg: its metadata is in EGG-INFO
    with monkeypatch.context() as patch:
        patch.setattr(sys, "path", [*sys.path, Path(tmp_path)])
        assert may_declare("sg.test.group")  # not a string: importlib.metadata decides


def test_a_finder_that_lists_distributions_of_its_own_is_left_to_importlib_metadata(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Listing:
        @staticmethod
        def find_spec(*args: object) -> None:
            return None

        @staticmethod
        def find_distributions(*args: object) -> list[object]:
            return []

    assert not may_declare("sg.test.group")
    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Listing])
    assert may_declare("sg.test.group")


def test_the_plugin_manager_does_not_import_importlib_metadata_when_nothing_declares_plugins() -> None:
    probe = (
        "import sys\n"
        "from summaryguard.plugins.manager import get_plugin_manager\n"
        "get_plugin_manager()\n"
        "print('importlib.metadata' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert proc.stdout.strip() == ("True" if may_declare("summaryguard") else "False")
