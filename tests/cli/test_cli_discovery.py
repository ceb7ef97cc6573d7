"""Which files a check reads: gitignore (nested, negation), venvs, exclude, symlinks."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from summaryguard.rules.cli.config import load_config
from summaryguard.rules.cli.discovery import discover


def make(root: Path, *files: str) -> None:
    for name in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n", encoding="utf-8")


def found(root: Path, *paths: str, exclude: list[str] | None = None) -> list[str]:
    spec = None
    if exclude is not None:
        (root / "pyproject.toml").write_text(f"[tool.summaryguard]\nexclude = {exclude!r}\n", encoding="utf-8")
        spec = load_config(None, root).exclude_spec
    result = discover(list(paths) or [str(root)], root=root, exclude=spec)
    assert result.errors == []
    return sorted(os.path.relpath(p, root) for p in result.files)


def test_python_files_only_and_skipped_folders(tmp_path: Path) -> None:
    make(tmp_path, "a.py", "b.pyi", "c.txt", "pkg/d.py", ".git/e.py", "pkg/__pycache__/f.py", ".hg/g.py")
    make(tmp_path, "venv-here/lib/h.py", "venv-here/pyvenv.cfg", "deep/.tox/py/lib/i.py", "deep/.tox/py/pyvenv.cfg")
    # a conda environment has no pyvenv.cfg, but a conda-meta folder (a file of that name marks nothing)
    make(tmp_path, "condaenv/lib/site.py", "condaenv/conda-meta/history", "notconda/conda-meta", "notconda/j.py")
    assert found(tmp_path) == ["a.py", "b.pyi", "notconda/j.py", "pkg/d.py"]


def test_nested_gitignore_and_negation(tmp_path: Path) -> None:
    make(tmp_path, "keep.py", "gen.py", "build/x.py", "src/gen.py", "src/keep_gen.py", "src/sub/local.py", "src/sub/other.py")
    (tmp_path / ".gitignore").write_text("build/\n*gen.py\n", encoding="utf-8")
    (tmp_path / "src" / ".gitignore").write_text("!keep_gen.py\n", encoding="utf-8")
    (tmp_path / "src" / "sub" / ".gitignore").write_text("# comment\n/local.py\n\\\n", encoding="utf-8")
    assert found(tmp_path) == ["keep.py", "src/keep_gen.py", "src/sub/other.py"]


def test_gitignore_above_the_walked_folder_in_a_repository(tmp_path: Path) -> None:
    make(tmp_path, "src/a.py", "src/gen_b.py", "src/c.py")
    (tmp_path / ".git" / "info").mkdir(parents=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("c.py\n", encoding="utf-8")
    (tmp_path / ".gitignore").write_text("gen_*.py\n", encoding="utf-8")
    assert found(tmp_path, str(tmp_path / "src")) == ["src/a.py"]


def test_outside_a_repository_only_the_walked_tree_counts(tmp_path: Path) -> None:
    make(tmp_path, "src/gen_b.py")
    (tmp_path / ".gitignore").write_text("gen_*.py\n", encoding="utf-8")
    assert found(tmp_path, str(tmp_path / "src")) == ["src/gen_b.py"]


def test_named_paths_are_used_even_if_ignored(tmp_path: Path) -> None:
    make(tmp_path, "build/x.py", "gen.py", "notes.txt", "env/lib.py", "env/pyvenv.cfg")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("build/\ngen.py\n", encoding="utf-8")
    assert found(tmp_path, str(tmp_path / "build"), str(tmp_path / "gen.py"), str(tmp_path / "notes.txt")) == [
        "build/x.py",
        "gen.py",
        "notes.txt",
    ]
    assert found(tmp_path, str(tmp_path / "env")) == ["env/lib.py"]


def test_configured_exclude(tmp_path: Path) -> None:
    make(tmp_path, "a.py", "build/b.py", "src/build/c.py", "migrations/d.py", "src/migrations/e.py", "build/keep.py")
    assert found(tmp_path, exclude=["build", "/migrations", "!build/keep.py"]) == [
        "a.py",
        "src/migrations/e.py",
    ]


def test_force_exclude_applies_exclude_to_named_paths(tmp_path: Path) -> None:
    make(tmp_path, "a.py", "build/b.py", "build/keep.py", "src/build/c.py", "migrations/d.py", "src/gen/e.py")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.summaryguard]\nexclude = ["build", "/migrations", "!build/keep.py", "src/gen/"]\n', encoding="utf-8"
    )
    spec = load_config(None, tmp_path).exclude_spec
    named = [str(tmp_path / n) for n in ("a.py", "build/b.py", "build/keep.py", "src/build/c.py", "migrations/d.py", "src/gen/e.py")]
    assert len(discover(named, root=tmp_path, exclude=spec).files) == 6  # named paths are used as given
    forced = discover([*named, str(tmp_path / "migrations")], root=tmp_path, exclude=spec, force_exclude=True)
    assert forced.errors == []
    # As git would: a file below an excluded folder stays out even if a pattern re-includes it.
    assert sorted(os.path.relpath(p, tmp_path) for p in forced.files) == ["a.py"]
    assert discover(named[:2], root=tmp_path, exclude=None, force_exclude=True).files == named[:2]  # nothing to apply


def test_exclude_outside_the_configuration_folder_matches_names(tmp_path: Path) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    make(elsewhere, "build/a.py", "b.py")
    project.mkdir()
    (project / "pyproject.toml").write_text('[tool.summaryguard]\nexclude = ["build"]\n', encoding="utf-8")
    spec = load_config(None, project).exclude_spec
    result = discover([str(elsewhere)], root=project, exclude=spec)
    assert [os.path.relpath(p, elsewhere) for p in result.files] == ["b.py"]


def test_display_paths_keep_the_given_spelling(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make(tmp_path, "src/pkg/a.py", "b.py")
    monkeypatch.chdir(tmp_path)
    assert discover(["src/", "b.py", "./b.py", "src/pkg/a.py"], root=tmp_path).files == ["src/pkg/a.py", "b.py"]
    assert discover(["."], root=tmp_path).files == ["./b.py", "./src/pkg/a.py"]


def test_missing_and_broken_paths_are_errors_and_the_rest_goes_on(tmp_path: Path) -> None:
    make(tmp_path, "a.py")
    (tmp_path / "dangling.py").symlink_to(tmp_path / "nowhere.py")
    result = discover([str(tmp_path / "missing.py"), str(tmp_path / "dangling.py"), str(tmp_path / "a.py")], root=tmp_path)
    assert result.files == [str(tmp_path / "a.py")]
    assert [(Path(e.path).name, e.line) for e in result.errors] == [("missing.py", None), ("dangling.py", None)]
    assert "no such file" in result.errors[0].message
    assert "broken symbolic link" in result.errors[1].message


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_an_ignore_file_that_cannot_be_read_is_a_warning_never_a_hang(tmp_path: Path) -> None:
    """Opened as a file, a named pipe called ``.gitignore`` waited for a writer forever."""
    make(tmp_path, "pipe/a.py", "folder/b.py", "plain/c.py")
    os.mkfifo(tmp_path / "pipe" / ".gitignore")
    (tmp_path / "folder" / ".gitignore").mkdir()
    (tmp_path / "plain" / ".gitignore").write_text("c.py\n", encoding="utf-8")
    result = discover([str(tmp_path)], root=tmp_path)
    assert sorted(Path(f).name for f in result.files) == ["a.py", "b.py"]  # the readable one still applies
    assert result.errors == []
    assert result.warnings == (
        f"ignored {tmp_path / 'folder' / '.gitignore'}: cannot read it: Is a directory",
        f"ignored {tmp_path / 'pipe' / '.gitignore'}: not a regular file (it is a named pipe)",
    )


def test_a_worktree_whose_git_is_a_file_reads_no_exclude_and_warns_of_nothing(tmp_path: Path) -> None:
    make(tmp_path, "src/a.py")
    (tmp_path / ".git").write_text("gitdir: /elsewhere/.git/worktrees/x\n", encoding="utf-8")
    result = discover([str(tmp_path / "src")], root=tmp_path)
    assert [Path(f).name for f in result.files] == ["a.py"] and result.warnings == ()


def test_a_named_link_to_itself_is_a_loop_not_a_missing_target(tmp_path: Path) -> None:
    (tmp_path / "loop.py").symlink_to("loop.py")
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    result = discover([str(tmp_path / "loop.py"), str(tmp_path / "a")], root=tmp_path)
    assert result.files == []
    assert [e.message for e in result.errors] == ["symbolic link loop (the link leads back to itself)"] * 2


def test_symlinks_loops_and_folder_links(tmp_path: Path) -> None:
    make(tmp_path, "pkg/a.py", "outside/b.py")
    (tmp_path / "pkg" / "loop").symlink_to(tmp_path / "pkg", target_is_directory=True)
    (tmp_path / "pkg" / "linked.py").symlink_to(tmp_path / "outside", target_is_directory=True)
    (tmp_path / "pkg" / "file_link.py").symlink_to(tmp_path / "outside" / "b.py")
    (tmp_path / "pkg" / "dangling.py").symlink_to(tmp_path / "nowhere.py")
    files = found(tmp_path, str(tmp_path / "pkg"))
    # Folder links are not followed (no loop, no duplicates); file links are files;
    # a dangling link is listed and fails when it is read.
    assert files == ["pkg/a.py", "pkg/dangling.py", "pkg/file_link.py"]


def test_a_named_folder_is_walked_once(tmp_path: Path) -> None:
    make(tmp_path, "pkg/a.py")
    (tmp_path / "alias").symlink_to(tmp_path / "pkg", target_is_directory=True)
    result = discover([str(tmp_path / "pkg"), str(tmp_path / "alias"), str(tmp_path / "pkg")], root=tmp_path)
    assert result.files == [str(tmp_path / "pkg" / "a.py")]


def test_unlistable_folder_is_an_error(tmp_path: Path) -> None:
    make(tmp_path, "ok/a.py")
    blocked = tmp_path / "blocked"
    blocked.mkdir()
    blocked.chmod(0)
    try:
        if os.access(blocked, os.R_OK):
            pytest.skip("running as root: permissions are not enforced")
        result = discover([str(tmp_path)], root=tmp_path)
        assert [Path(p).name for p in result.files] == ["a.py"]
        assert [Path(e.path).name for e in result.errors] == ["blocked"]
    finally:
        blocked.chmod(0o755)


def test_matches_git_check_ignore(tmp_path: Path) -> None:
    """Our reading of .gitignore agrees with git's own on a tricky tree."""
    git = subprocess.run(["git", "--version"], capture_output=True)
    if git.returncode != 0:  # pragma: no cover - git is part of the development image
        pytest.skip("git not available")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    files = ["a.py", "logs/a.py", "src/x_test.py", "src/keep_test.py", "src/deep/y_test.py", "docs/build/z.py", "build/q.py"]
    make(tmp_path, *files)
    (tmp_path / ".gitignore").write_text("*_test.py\n/build/\nlogs\n", encoding="utf-8")
    (tmp_path / "src" / ".gitignore").write_text("!keep_test.py\n", encoding="utf-8")
    listed = subprocess.run(
        ["git", "-C", str(tmp_path), "ls-files", "--others", "--exclude-standard", "*.py"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert found(tmp_path) == sorted(listed)


def test_the_run_prints_the_warning_and_its_status_is_the_findings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from summaryguard.rules.cli import main

    make(tmp_path, "sub/a.py")
    (tmp_path / "sub" / ".gitignore").mkdir()
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--no-cache"]) == 0
    assert capsys.readouterr().err == (
        f"summaryguard: warning: ignored {tmp_path / 'sub' / '.gitignore'}: cannot read it: Is a directory\n"
    )
