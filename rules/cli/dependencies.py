"""The project modules that checked files import but that are not being checked.

A validator in ``app/recovery.py`` protects a resume in ``app/agent.py``
(SPEC §3.1: user validators are found "also across modules of the same
project"). A pre-commit hook passes only the staged files, so
``app/recovery.py`` is often not among the files of a run; without it the
resume in ``app/agent.py`` would look unchecked. This module finds such
modules on disk so that the engine can analyze them as *context*: their
functions are indexed and summarized, nothing in them is reported.

Resolution of one import of the file at ``P``, written as
:func:`~summaryguard.rules.engine.names.imported_modules` records it:

* relative (``.recovery``, ``..pkg.mod``): from ``P``'s folder, one folder up
  per extra dot;
* absolute (``app.recovery``): below the folder that holds ``P``'s outermost
  package (what Python would have on ``sys.path``), then below each folder
  from ``P``'s up to the project root (plain folders and namespace
  packages), then below ``ROOT/src``. Standard-library names are skipped.

``a.b`` is ``a/b.py`` or ``a/b/__init__.py`` (a ``.pyi`` stub is not code that
runs, so it is not used). The first root that has it wins.

Bounded: only modules the checked files import, then the modules those
import, :data:`MAX_DEPTH` levels deep and :data:`MAX_MODULES` read from outside
the run (the run's own lending files are not counted); only
modules that pass the screening, or that the screening rejects but that
lend their classes (they define a class, and import a model library or
return instances of the classes they import: a factory whose returns'
overrides call an SDK decides what a method call runs in the importer, see
:meth:`~..engine.Analyzer.lent_facts`), or that are a package's ``__init__``
re-exporting what its importers name, or that define a fire-and-forget helper
(a function that hands its parameter to a task or thread); a
module rejected otherwise cannot lend a fact, and its imports are not
followed, exactly as when it is checked. A checked file that only lends is
context here too (the loader reads it as one), so a whole-tree run and a
run of the importer alone see the same modules. Every file is read and
screened at most once per run, and the screening is cached by content
like that of checked files (the "lends" verdict is a test of the text and,
where the text may lend, of CPython's tree, recomputed, never cached). A module that
cannot be read, decoded or parsed is skipped silently: it is not being
checked.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..engine.module_paths import package_root

__all__ = [
    "Dependency",
    "ImportResolver",
    "MAX_DEPTH",
    "MAX_MODULES",
    "find_dependencies",
    "import_graph",
    "import_roots",
    "resolve_import",
]

#: Import levels followed from a checked file: its imports (1), theirs (2), and theirs (3).
#: A validator usually sits one import away; its helpers one more.
MAX_DEPTH = 3
#: At most this many context modules per run, whatever the project's size.
MAX_MODULES = 200

_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ())) | {"__future__"}


@dataclass(frozen=True)
class Dependency:
    """One context module: read, screened in, to be analyzed but not checked."""

    #: Absolute path (how the engine names it; never shown).
    path: str
    text: str
    #: Content digest of its bytes (part of the cache key of the analysis).
    digest: str
    #: Its own imports, as written.
    imports: tuple[str, ...]


#: ``load(paths) -> {path: Dependency}`` for the files that could be read and are
#: screened in (the others are simply absent).
Loader = Callable[[Sequence[str]], Mapping[str, Dependency]]


class _Disk:
    """``os.path.isfile`` and folder resolution, memoized for one run.

    A file is looked up in its folder's listing, read once (``os.scandir``): an import is
    tried below every root of its file, two names each, and most of those files do not
    exist (a warm run of the real-code corpus asked 0.3 s of ``stat`` calls that way).
    The listing holds the folder's sub-folders too, so that an import of an outside
    package (``pydantic.main``) stops at the root's listing instead of listing the
    folders it would need (29,000 ``scandir`` calls of missing folders in that warm run)."""

    def __init__(self) -> None:
        self._files: dict[str, bool] = {}
        self._real: dict[str, str] = {}
        #: By folder, the names of its files and of its sub-folders (None: it cannot be listed).
        self._listings: dict[str, tuple[frozenset[str], frozenset[str]] | None] = {}

    def isfile(self, path: str) -> bool:
        known = self._files.get(path)
        if known is None:
            folder, name = os.path.split(path)
            listed = self._listing(folder)
            known = self._files[path] = name in listed[0] if listed is not None else os.path.isfile(path)
        return known

    def has_folder(self, folder: str, name: str) -> bool:
        """Whether ``folder`` holds a folder ``name`` (as ``os.path.isdir`` of the two joined says)."""
        listed = self._listing(folder)
        return name in listed[1] if listed is not None else os.path.isdir(os.path.join(folder, name))

    def _listing(self, folder: str) -> tuple[frozenset[str], frozenset[str]] | None:
        if folder in self._listings:
            return self._listings[folder]
        files: list[str] = []
        folders: list[str] = []
        try:
            with os.scandir(folder or os.curdir) as entries:
                for entry in entries:
                    if _is_file(entry):
                        files.append(entry.name)
                    elif _is_folder(entry):
                        folders.append(entry.name)
            listed: tuple[frozenset[str], frozenset[str]] | None = (frozenset(files), frozenset(folders))
        except FileNotFoundError:
            listed = (frozenset(), frozenset())
        except OSError:  # not a folder, or not readable: ask for the file itself
            listed = None
        self._listings[folder] = listed
        return listed

    def realpath(self, folder: str) -> str:
        known = self._real.get(folder)
        if known is None:
            known = self._real[folder] = os.path.realpath(folder)
        return known


def _is_file(entry: os.DirEntry[str]) -> bool:
    """``os.path.isfile`` of a listed entry (a link to a file counts; one that cannot be
    followed does not)."""
    try:
        return entry.is_file()
    except OSError:
        return False


def _is_folder(entry: os.DirEntry[str]) -> bool:
    """``os.path.isdir`` of a listed entry (a link to a folder counts)."""
    try:
        return entry.is_dir()
    except OSError:
        return False


class ImportResolver:
    """Where a run's imports lead on disk, memoized for the run.

    :func:`find_dependencies` resolves every import of the run's modules to find the
    context; :func:`import_graph` asks the same questions again to plan the analysis and
    key its records (a warm run over an unchanged tree does both): one resolver per run
    answers each ``(file, import)`` once."""

    def __init__(self, root: str | None) -> None:
        #: The project's folder (resolved), below which absolute imports are also looked up.
        self.root = root
        self._disk = _Disk()
        self._roots: dict[str, list[str]] = {}
        self._targets: dict[tuple[str, str], str | None] = {}
        #: An absolute import looked up below one root: the folders of a package share
        #: most of their roots (the folders up to the project's), so each is asked once.
        self._below: dict[tuple[str, str], str | None] = {}
        #: :meth:`resolve_all`'s answers, by file and imports.
        self._files: dict[tuple[str, tuple[str, ...]], tuple[str | None, ...]] = {}

    def resolve_all(self, specs: Sequence[str], path: str) -> tuple[str | None, ...]:
        """:meth:`resolve` of each of ``specs`` in the file at ``path``, in order, kept by file.

        Why: a run asks about every import of every module it analyzes two or three times
        (the context search, then the import graph of each plan), and a module imports a
        hundred names or so. A warm run of the real-code corpus made 192,503 calls of
        :meth:`resolve` for 1,602 files, nearly all answered from its memo: the calls alone
        cost 0.3 s of a 1.4 s run."""
        key = (path, tuple(specs))
        found = self._files.get(key)
        if found is None:
            folder = os.path.dirname(path)
            found = self._files[key] = tuple(self._resolve(folder, spec, path) for spec in key[1])
        return found

    def resolve(self, spec: str, path: str) -> str | None:
        """:func:`resolve_import` of ``spec`` in the file at ``path``, with the run's roots.

        Where an import leads depends only on the folder of the file that makes it (its
        roots and its relative base are the folder's), so the answers are kept by folder:
        the files of a package ask the same questions (a warm run of the real-code corpus
        asked each about ten times)."""
        return self._resolve(os.path.dirname(path), spec, path)

    def _resolve(self, folder: str, spec: str, path: str) -> str | None:
        key = (folder, spec)
        if key in self._targets:
            return self._targets[key]
        if spec.startswith("."):
            target = resolve_import(spec, path, [], self._disk)
        else:
            roots = self._roots.get(folder)
            if roots is None:
                roots = self._roots[folder] = import_roots(path, self.root, self._disk)
            target = None
            for base in roots:
                below = (base, spec)
                if below in self._below:
                    found = self._below[below]
                else:
                    found = self._below[below] = resolve_import(spec, path, [base], self._disk)
                if found is not None:
                    target = found
                    break
        self._targets[key] = target
        return target


def import_roots(path: str, root: str | None, disk: _Disk | None = None) -> list[str]:
    """Folders below which absolute imports of the file at ``path`` are looked up, in order."""
    disk = disk or _Disk()
    roots = [package_root(path)]
    if root is not None:
        folder = os.path.dirname(os.path.abspath(path))
        ancestors: list[str] = []
        while True:
            ancestors.append(folder)
            if disk.realpath(folder) == root:
                roots.extend(ancestors)
                break
            parent = os.path.dirname(folder)
            if parent == folder:  # the file is not below the project root: its package only
                break
            folder = parent
        roots.append(os.path.join(root, "src"))
    unique: list[str] = []
    for folder in roots:
        if folder not in unique:
            unique.append(folder)
    return unique


def resolve_import(spec: str, path: str, roots: Sequence[str], disk: _Disk | None = None) -> str | None:
    """The file that the import ``spec`` of the file at ``path`` loads, if it is in the project."""
    disk = disk or _Disk()
    name = spec.lstrip(".")
    level = len(spec) - len(name)
    parts = [p for p in name.split(".") if p]
    if level:
        base = os.path.dirname(os.path.abspath(path))
        for _ in range(level - 1):
            base = os.path.dirname(base)
        bases: Sequence[str] = [base]
    else:
        if not parts or parts[0] in _STDLIB:
            return None
        bases = roots
    for base in bases:
        folder = base
        for part in parts[:-1]:  # the package's folders, each in its parent's listing
            if not disk.has_folder(folder, part):
                break
            folder = os.path.join(folder, part)
        else:
            candidates = (os.path.join(folder, parts[-1] + ".py"), os.path.join(folder, parts[-1], "__init__.py")) \
                if parts else (os.path.join(folder, "__init__.py"),)
            for candidate in candidates:
                if disk.isfile(candidate):
                    return os.path.normpath(candidate)
    return None


def _resolver(root: str | ImportResolver | None) -> ImportResolver:
    return root if isinstance(root, ImportResolver) else ImportResolver(root)


def find_dependencies(
    importers: Iterable[tuple[str, Sequence[str]]],
    checked: Iterable[str],
    root: str | ImportResolver | None,
    load: Loader,
    run_lenders: Iterable[str] = (),
) -> list[Dependency]:
    """The context modules of a run, in a stable order (breadth first).

    ``importers`` are the screened-in checked files with their imports;
    ``checked`` every file of the run (never context, whatever its screening);
    ``root`` the project's folder (resolved), or the run's :class:`ImportResolver` for
    it when the run resolves its imports again; ``load`` reads and screens files.
    ``run_lenders`` are files of the run that are context where imported (they lend):
    :data:`MAX_MODULES` bounds what is read from outside the run, not these, so that
    how many of them a tree holds never cuts another package's context (locality)."""
    resolver = _resolver(root)
    seen = {os.path.normpath(os.path.abspath(p)) for p in checked}
    in_run = {os.path.normpath(os.path.abspath(p)) for p in run_lenders}
    found: list[Dependency] = []
    outside_found = 0
    level: list[tuple[str, Sequence[str]]] = list(importers)
    for _ in range(MAX_DEPTH):
        wanted: list[str] = []
        for path, imports in level:
            for target in resolver.resolve_all(imports, path):
                if target is not None and target not in seen:
                    seen.add(target)
                    wanted.append(target)
        outside = [t for t in wanted if t not in in_run][: max(0, MAX_MODULES - outside_found)]
        wanted = [t for t in wanted if t in in_run] + outside
        if not wanted:
            break
        loaded = load(wanted)
        level = []
        for target in wanted:
            dependency = loaded.get(target)
            if dependency is not None:
                found.append(dependency)
                level.append((target, dependency.imports))
                outside_found += target not in in_run
    return found


def import_graph(
    modules: Iterable[tuple[str, Sequence[str]]], root: str | ImportResolver | None
) -> dict[str, list[str]]:
    """Which of ``modules`` each one imports, resolved exactly as :func:`find_dependencies` does.

    ``modules`` are ``(path, imports)`` pairs (checked files by their display path,
    context modules by their absolute path); the graph is keyed by each module's
    normalized absolute path, and holds only edges between modules of ``modules``
    (an import of anything else is not analyzed in the run, so it cannot matter).
    The parallel analysis splits a run with it: a chunk of files needs the modules
    they import, transitively (SPEC §3.1.1, locality). ``root`` is as for
    :func:`find_dependencies`: the run's resolver, when that has already resolved these imports."""
    resolver = _resolver(root)
    pairs = [(os.path.normpath(os.path.abspath(path)), path, imports) for path, imports in modules]
    known = {key for key, _, _ in pairs}
    graph: dict[str, list[str]] = {}
    for key, path, imports in pairs:
        targets: list[str] = []
        for target in resolver.resolve_all(imports, path):
            if target is not None and target in known and target != key and target not in targets:
                targets.append(target)
        graph[key] = targets
    return graph
