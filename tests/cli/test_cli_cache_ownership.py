"""B1: the result cache never deletes or overwrites what it did not create (rules/cache.py).

``$SUMMARYGUARD_CACHE_DIR`` may name a shared folder (``~/.cache``, a CI temporary
folder, ``.``): the cache keeps to ``summaryguard/`` inside it, writes its
``CACHEDIR.TAG`` and ``.gitignore`` only there and only where absent, and prunes
only settings folders that carry its marker. Real runs of the command, real folders.
"""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

import pytest

from summaryguard.rules.cli import cache as cache_module
from summaryguard.rules.cli.cache import CACHE_DIR_ENV, CACHE_FOLDER, MARKER, OWNED_FOLDER, ResultCache
from summaryguard.rules.cli import main

AGENT = "def go(checkpoint):\n    return checkpoint.resume_context()\n"


def check(cwd: Path, cache_dir: Path | str, *paths: str, stderr: list[str] | None = None) -> tuple[int, str]:
    """``summaryguard check`` in ``cwd`` with ``$SUMMARYGUARD_CACHE_DIR`` set (in process: many
    runs); what it says on stderr is appended to ``stderr`` when given."""
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(cwd)
        patch.setenv(CACHE_DIR_ENV, str(cache_dir))
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(["check", *paths])
    if stderr is not None:
        stderr.append(err.getvalue())
    return status, out.getvalue()


def fill_shared(shared: Path, count: int = 20) -> None:
    for i in range(count):
        folder = shared / f"userdata-{i:02d}"
        folder.mkdir(parents=True)
        (folder / "file.txt").write_text("precious")
        os.utime(folder, (1_700_000_000 + i,) * 2)
    (shared / ".gitignore").write_text("build/\n")


def test_a_shared_cache_folder_keeps_every_user_folder_and_its_gitignore(tmp_path: Path) -> None:
    shared, project = tmp_path / "shared", tmp_path / "proj"
    fill_shared(shared)
    project.mkdir()
    (project / "a.py").write_text(AGENT)
    for number in range(cache_module.KEEP_SETTINGS + 3):  # every run a new settings folder, pruning each time
        (project / "pyproject.toml").write_text(f"[tool.summaryguard]\nexclude = ['gen{number}']\n")
        assert check(project, shared, ".")[0] == 1
    assert sorted(p.name for p in shared.iterdir() if p.name.startswith("userdata")) == [
        f"userdata-{i:02d}" for i in range(20)
    ]
    assert all((shared / f"userdata-{i:02d}" / "file.txt").read_text() == "precious" for i in range(20))
    assert (shared / ".gitignore").read_text() == "build/\n"
    assert not (shared / "CACHEDIR.TAG").exists()
    owned = shared / OWNED_FOLDER
    assert (owned / "CACHEDIR.TAG").is_file() and (owned / ".gitignore").read_text().endswith("*\n")
    settings = [p for p in owned.iterdir() if p.is_dir()]
    assert len(settings) == cache_module.KEEP_SETTINGS  # its own entries are still pruned


def test_cache_dir_dot_inside_a_repository_deletes_nothing(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    for name in ("tests", "docs", "scripts", "src"):
        (repo / name).mkdir(parents=True)
        (repo / name / "keep.txt").write_text(name)
    (repo / ".gitignore").write_text("*.pyc\n")
    (repo / "src" / "a.py").write_text(AGENT)
    for number in range(cache_module.KEEP_SETTINGS + 2):
        (repo / "pyproject.toml").write_text(f"[tool.summaryguard]\nexclude = ['gen{number}']\n")
        assert check(repo, ".", "src")[0] == 1
    for name in ("tests", "docs", "scripts", "src"):
        assert (repo / name / "keep.txt").read_text() == name
    assert (repo / ".gitignore").read_text() == "*.pyc\n"
    assert not (repo / "CACHEDIR.TAG").exists()
    assert sorted(p.name for p in repo.iterdir()) == sorted(
        [".gitignore", "docs", "pyproject.toml", "scripts", "src", OWNED_FOLDER, "tests"]
    )


def test_a_folder_of_the_cache_s_name_that_is_not_its_own_is_left_alone(tmp_path: Path) -> None:
    shared, project = tmp_path / "shared", tmp_path / "proj"
    theirs = shared / OWNED_FOLDER
    (theirs / "sub").mkdir(parents=True)
    (theirs / "sub" / "data").write_text("theirs")
    (theirs / ".gitignore").write_text("keep\n")
    project.mkdir()
    (project / "a.py").write_text(AGENT)
    said: list[str] = []
    first = check(project, shared, "a.py", stderr=said)
    assert first[0] == 1
    assert check(project, shared, "a.py")[1].splitlines()[:-1] == first[1].splitlines()[:-1]
    assert sorted(p.name for p in theirs.iterdir()) == [".gitignore", "sub"]
    assert (theirs / ".gitignore").read_text() == "keep\n"
    # the run says why it is not cached, instead of being slow on every commit unexplained
    assert said == [f"summaryguard: warning: results are not cached: {theirs} is not summaryguard's cache folder "
                    "(a file, a link, or a folder holding other files and no CACHEDIR.TAG), so it is left alone\n"]


def test_a_cache_variable_naming_a_file_is_said_and_the_file_left_alone(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "a.py").write_text(AGENT)
    (tmp_path / "afile").write_text("mine")
    said: list[str] = []
    status, out = check(project, tmp_path / "afile", "a.py", stderr=said)
    assert status == 1 and "SG101" in out
    assert said == [f"summaryguard: warning: results are not cached: {tmp_path / 'afile' / OWNED_FOLDER} "
                    "cannot be created or written\n"]
    assert (tmp_path / "afile").read_text() == "mine"


def test_an_existing_gitignore_in_the_cache_s_folder_is_not_replaced(tmp_path: Path) -> None:
    folder = tmp_path / CACHE_FOLDER
    folder.mkdir()
    (folder / "CACHEDIR.TAG").write_text(cache_module._TAG)
    (folder / ".gitignore").write_text("# mine\n")
    store = ResultCache(folder, "s")
    store.store_screen("d", (False, ()))
    store.flush()
    assert (folder / ".gitignore").read_text() == "# mine\n"
    assert store.screen("d") == (False, ())


def test_pruning_spares_unmarked_folders_and_files_the_cache_did_not_write(tmp_path: Path) -> None:
    folder = tmp_path / CACHE_FOLDER
    first = ResultCache(folder, "first")
    first.store_screen("d", (False, ()))
    first.flush()
    (folder / "someone-elses").mkdir(parents=True)
    (folder / "someone-elses" / "screen.json").write_text("{}")
    os.utime(folder / "someone-elses", (1_600_000_000,) * 2)
    (folder / "first" / "notes.txt").write_text("added by hand")
    os.utime(folder / "first", (1_600_000_001,) * 2)
    for number in range(cache_module.KEEP_SETTINGS + 2):
        other = ResultCache(folder, f"settings{number}")
        other.store_screen("d", (False, ()))
        other.flush()
    assert (folder / "someone-elses" / "screen.json").read_text() == "{}"
    assert sorted(p.name for p in (folder / "first").iterdir()) == [MARKER, "notes.txt"]
    # "first" keeps its marker (the cache's files in it are gone): it still counts as an entry
    assert len([p for p in folder.iterdir() if (p / MARKER).is_file()]) == cache_module.KEEP_SETTINGS
    assert len([p for p in folder.iterdir() if (p / "screen").is_dir()]) == 7


def test_pruning_a_settings_folder_deletes_only_the_module_records(tmp_path: Path) -> None:
    folder = tmp_path / CACHE_FOLDER
    store = ResultCache(folder, "s")
    store.store_record("k0", [], [])
    store.store_facts("f0", {})
    store.store_screen("d", (False, ()))
    store.flush()
    (facts,) = (folder / "s" / "facts").iterdir()
    (folder / "s" / "facts.json").write_text("{}")  # what format 4 wrote: the cache's too
    (folder / "s" / "facts" / "notes.txt").write_text("not an entry")
    (folder / "s" / "screen.json").write_text("{}")  # what format 5 wrote
    (screen,) = (folder / "s" / "screen").iterdir()
    (folder / "s" / "README").write_text("not an entry")
    os.utime(folder / "s", (1_600_000_000,) * 2)  # the oldest settings folder: pruned first
    for number in range(cache_module.KEEP_SETTINGS + 1):
        other = ResultCache(folder, f"settings{number}")
        other.store_record("k", [], [])
        other.flush()
    assert (folder / "s" / "README").read_text() == "not an entry"
    assert not (folder / "s" / "modules.json").exists()
    assert not (folder / "s" / "facts.json").exists()
    assert not facts.exists()
    assert not screen.exists() and not (folder / "s" / "screen").exists()
    assert not (folder / "s" / "screen.json").exists()
    assert (folder / "s" / "facts" / "notes.txt").read_text() == "not an entry"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
def test_a_fifo_in_the_cache_is_a_miss_not_a_hang(tmp_path: Path) -> None:
    folder = tmp_path / CACHE_FOLDER
    store = ResultCache(folder, "s")
    store.store_screen("d", (False, ()))
    store.flush()
    screen = folder / "s" / "screen" / f"{cache_module._shard('d')}.json"
    screen.unlink()
    os.mkfifo(screen)
    assert ResultCache(folder, "s").screen("d") is None
