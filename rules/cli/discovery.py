"""Which files a ``check`` run reads: the paths given, and the Python files below given folders.

Skipped while walking a folder, so that a run over a project checks the
project and not what it merely carries around:

* ``.gitignore``d paths: every ``.gitignore`` in the walked tree (nested ones
  override outer ones, ``!negation`` re-includes), those of the enclosing git
  repository above the walked folder, and ``.git/info/exclude``;
* virtual environments (any folder holding ``pyvenv.cfg``) and conda ones (``conda-meta/``), ``.git``, ``.hg``,
  ``.svn`` and ``__pycache__``;
* the configured ``exclude`` globs (relative to the configuration's folder);
* anything not named ``*.py`` or ``*.pyi``;
* named pipes, sockets and devices named like Python files are reported, not
  read (opening a FIFO blocks until a writer appears).

A path named on the command line is always used: a file is checked whatever
its name or ignore status, a folder is walked even if it is ignored. With
``force_exclude`` (``--force-exclude``, which the pre-commit hook passes,
since pre-commit names every staged file) the configured ``exclude`` globs
apply to named paths too, as they do to walked ones. Folder
symlinks met while walking are not followed (git stores them as links; their
target is checked where it lives), and every folder is entered at most once,
so symlink loops and bind-mount cycles cannot hang a run. A named path that
does not exist is reported, and the other paths are still used.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from .globs import compile_gitignore_lines, is_ignored
from .sources import FileRefused, read_regular_file
from .report import ReadError

if TYPE_CHECKING:  # pragma: no cover - pathspec loads when a pattern is compiled (see .globs)
    from pathspec import GitIgnoreSpec

    # (absolute folder the patterns are relative to, with a trailing separator; patterns)
    _IgnoreChain = tuple[tuple[str, GitIgnoreSpec], ...]

__all__ = ["Discovery", "discover"]

PYTHON_SUFFIXES = (".py", ".pyi")
SKIPPED_FOLDERS = frozenset({".git", ".hg", ".svn", "__pycache__"})
VENV_MARKER = "pyvenv.cfg"
#: What marks a conda environment (``conda create -p ./env``), which has no ``pyvenv.cfg``.
CONDA_MARKER = "conda-meta"
GITIGNORE = ".gitignore"
#: Largest ignore file read (git reads any size; one this large is not a list of patterns).
MAX_IGNORE_BYTES = 16 * 1024 * 1024


class Discovery(NamedTuple):
    """The files to check (display paths, in walk order, each once) and paths that could not be used;
    ``warnings``: ignore files that exist but could not be read (the run goes on without them)."""

    files: list[str]
    errors: list[ReadError]
    warnings: tuple[str, ...] = ()


def discover(
    paths: Sequence[str], *, root: Path, exclude: GitIgnoreSpec | None = None, force_exclude: bool = False
) -> Discovery:
    """Expand ``paths`` into Python files.

    ``root`` is the folder that ``exclude`` patterns are relative to (the
    configuration's folder). Display paths keep each given path as typed,
    joined with the file's path below it. No paths at all means the current
    folder, shown without a ``./`` prefix (nothing was typed to keep).
    """
    walker = _Walker(root=_with_sep(str(root.resolve())), exclude=exclude, force_exclude=force_exclude)
    if not paths:
        walker.walk(os.curdir, display="")
    for given in paths:
        walker.add(given)
    return walker.result._replace(warnings=tuple(dict.fromkeys(walker.warnings)))


def _with_sep(folder: str) -> str:
    return folder if folder.endswith(os.sep) else folder + os.sep


def _to_posix(relative: str) -> str:
    return relative.replace(os.sep, "/") if os.sep != "/" else relative


def _unresolved_link(path: str) -> str:
    """Why a symbolic link leads nowhere: a loop (it leads back to itself) or a missing target."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symbolic link loop (the link leads back to itself)"
    return "broken symbolic link (its target does not exist)"


class _Walker:
    def __init__(self, root: str, exclude: GitIgnoreSpec | None, force_exclude: bool = False) -> None:
        self.root = root
        self.exclude = exclude
        self.force_exclude = force_exclude and exclude is not None
        self.result = Discovery([], [])
        #: Ignore files that could not be read (see :func:`_read_ignore_file`).
        self.warnings: list[str] = []
        self._seen_files: set[str] = set()
        self._seen_folders: set[tuple[int, int]] = set()

    def add(self, given: str) -> None:
        if self.force_exclude and os.path.lexists(given) and self._excluded_named(os.path.abspath(given)):
            return
        if os.path.isdir(given):
            self.walk(given, display=given)
        elif os.path.exists(given):
            self._add_file(given, os.path.abspath(given))
        elif os.path.lexists(given):
            self.result.errors.append(ReadError(given, None, _unresolved_link(given)))
        else:
            self.result.errors.append(ReadError(given, None, "no such file or directory"))

    def _add_file(self, display: str, absolute: str) -> None:
        key = os.path.normpath(absolute)
        if key not in self._seen_files:
            self._seen_files.add(key)
            self.result.files.append(display)

    def walk(self, top: str, display: str) -> None:
        top_abs = os.path.abspath(top)
        chain = _enclosing_gitignores(top_abs, self.warnings)
        if chain and _ignored_by(chain, top_abs, is_dir=True):
            # The folder was named on purpose: ignore files above it do not apply inside it.
            chain = ()
        stack: list[tuple[str, str, _IgnoreChain]] = [(display, top_abs, chain)]
        while stack:
            display, absolute, chain = stack.pop()
            try:
                info = os.stat(absolute)
                entries = sorted(os.scandir(absolute), key=lambda e: e.name)
            except OSError as exc:
                shown = display or os.curdir
                self.result.errors.append(ReadError(shown, None, f"cannot list folder: {exc.strerror or exc}"))
                continue
            identity = (info.st_dev, info.st_ino)
            if identity in self._seen_folders:
                continue
            self._seen_folders.add(identity)
            chain = _extend(chain, absolute, self.warnings)
            subfolders: list[tuple[str, str, _IgnoreChain]] = []
            for entry in entries:
                self._visit(entry, display, chain, subfolders)
            stack.extend(reversed(subfolders))

    def _visit(
        self,
        entry: os.DirEntry[str],
        parent_display: str,
        chain: _IgnoreChain,
        subfolders: list[tuple[str, str, _IgnoreChain]],
    ) -> None:
        name = entry.name
        try:
            is_folder = entry.is_dir(follow_symlinks=False)
            is_link = entry.is_symlink()
        except OSError:  # pragma: no cover - a race with deletion
            return
        if is_folder:
            if name in SKIPPED_FOLDERS or _is_environment(entry.path):
                return
        elif not name.endswith(PYTHON_SUFFIXES):
            return
        elif is_link and _points_to_folder(entry):
            return
        elif _is_special(entry):
            self.result.errors.append(
                ReadError(os.path.join(parent_display, name), None, "cannot read file: " + _NOT_REGULAR)
            )
            return
        absolute = os.path.abspath(entry.path)
        if _ignored_by(chain, absolute, is_dir=is_folder) or self._excluded(absolute, is_folder):
            return
        display = os.path.join(parent_display, name)
        if is_folder:
            subfolders.append((display, absolute, chain))
        else:
            self._add_file(display, absolute)

    def _excluded_named(self, absolute: str) -> bool:
        """Whether ``exclude`` covers a named path: the path itself or a folder above it (as in git)."""
        if not absolute.startswith(self.root):
            return self._excluded(absolute, os.path.isdir(absolute))
        parts = absolute[len(self.root) :].split(os.sep)
        for depth in range(1, len(parts)):
            if self._excluded(self.root + os.sep.join(parts[:depth]), True):
                return True
        return self._excluded(absolute, os.path.isdir(absolute))

    def _excluded(self, absolute: str, is_dir: bool) -> bool:
        if self.exclude is None:
            return False
        if absolute.startswith(self.root):
            relative = absolute[len(self.root) :]
        else:
            relative = os.path.basename(absolute)
        return bool(is_ignored(self.exclude, _to_posix(relative), is_dir))


_NOT_REGULAR = "not a regular file (a named pipe, socket or device; reading it could block forever)"


def _is_special(entry: os.DirEntry[str]) -> bool:
    """A named pipe, socket or device (or a link to one): opening a FIFO to read
    blocks until some writer appears. Broken links are not special: reading
    them reports the missing target."""
    try:
        return not entry.is_file(follow_symlinks=True) and os.path.exists(entry.path)
    except OSError:  # pragma: no cover - a race with deletion
        return False


def _points_to_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=True)
    except OSError:
        return False


def _ignored_by(chain: _IgnoreChain, absolute: str, *, is_dir: bool) -> bool:
    """Git's rule: the innermost ``.gitignore`` with a matching pattern decides."""
    for base, spec in reversed(chain):
        if not absolute.startswith(base):
            continue
        verdict = is_ignored(spec, _to_posix(absolute[len(base) :]), is_dir)
        if verdict is not None:
            return verdict
    return False


def _extend(chain: _IgnoreChain, folder: str, warnings: list[str]) -> _IgnoreChain:
    spec = _read_ignore_file(os.path.join(folder, GITIGNORE), warnings)
    return chain if spec is None else (*chain, (_with_sep(folder), spec))


def _read_ignore_file(path: str, warnings: list[str]) -> GitIgnoreSpec | None:
    """The patterns of an ignore file; None when there is none. One that exists but cannot
    be read (no permission, a folder, a named pipe: opened as a file, a pipe would wait for
    a writer forever) is a warning in ``warnings``, as git warns of it, and the walk goes on
    without it."""
    try:
        raw = read_regular_file(path, MAX_IGNORE_BYTES)
    except (FileNotFoundError, NotADirectoryError):  # none here (``.git`` may be a worktree's file)
        return None
    except FileRefused as refused:
        warnings.append(f"ignored {path}: {refused.reason}")
        return None
    except OSError as exc:
        warnings.append(f"ignored {path}: cannot read it: {exc.strerror or exc}")
        return None
    return compile_gitignore_lines(raw.decode("utf-8", errors="replace").splitlines())


def _enclosing_gitignores(top_abs: str, warnings: list[str]) -> _IgnoreChain:
    """The ignore files above ``top_abs`` up to its git repository's root (none outside a repository)."""
    folders: list[str] = []
    repository: str | None = None
    probe = top_abs
    while True:
        if os.path.exists(os.path.join(probe, ".git")):
            repository = probe
            break
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    if repository is None:
        return ()
    chain: list[tuple[str, GitIgnoreSpec]] = []
    info_exclude = _read_ignore_file(os.path.join(repository, ".git", "info", "exclude"), warnings)
    if info_exclude is not None:
        chain.append((_with_sep(repository), info_exclude))
    if repository == top_abs:
        return tuple(chain)
    current = os.path.dirname(top_abs)
    while True:
        folders.append(current)
        if current == repository:
            break
        current = os.path.dirname(current)
    for folder in reversed(folders):
        spec = _read_ignore_file(os.path.join(folder, GITIGNORE), warnings)
        if spec is not None:
            chain.append((_with_sep(folder), spec))
    return tuple(chain)


def _is_environment(folder: str) -> bool:
    """A virtual environment (``pyvenv.cfg``) or a conda one (``conda-meta/``): installed
    packages, never the project's own code."""
    return os.path.exists(os.path.join(folder, VENV_MARKER)) or os.path.isdir(os.path.join(folder, CONDA_MARKER))
