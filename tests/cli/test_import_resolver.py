"""One resolver per run: the context search and the import graph resolve each import once, alike."""

from __future__ import annotations

import os
from pathlib import Path

from summaryguard.rules.cli.dependencies import (
    Dependency,
    ImportResolver,
    find_dependencies,
    import_graph,
    import_roots,
    resolve_import,
)


def _package(tmp_path: Path) -> Path:
    pkg = tmp_path / "app"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "store.py").write_text("import json\n")
    (pkg / "sub" / "loop.py").write_text("from ..store import save\nfrom app import store\n")
    return pkg


def test_answers_as_resolve_import_does(tmp_path: Path) -> None:
    pkg = _package(tmp_path)
    loop = str(pkg / "sub" / "loop.py")
    resolver = ImportResolver(str(tmp_path))
    roots = import_roots(loop, str(tmp_path))
    for spec in ("..store", "app.store", "app", "app.sub.loop", "json", "app.missing", "."):
        expected = resolve_import(spec, loop, [] if spec.startswith(".") else roots)
        assert resolver.resolve(spec, loop) == expected, spec
    assert resolver.resolve("..store", loop) == os.path.normpath(pkg / "store.py")


def test_a_files_imports_resolve_at_once_as_one_by_one(tmp_path: Path) -> None:
    pkg = _package(tmp_path)
    loop = str(pkg / "sub" / "loop.py")
    specs = ("..store", "app.store", "app", "json", "app.missing", ".", "..store")
    expected = tuple(ImportResolver(str(tmp_path)).resolve(spec, loop) for spec in specs)
    resolver = ImportResolver(str(tmp_path))
    assert resolver.resolve_all(specs, loop) == expected
    assert resolver.resolve_all(list(specs), loop) == expected  # any sequence of the same names
    os.remove(pkg / "store.py")  # one run reads one tree: the answers are the ones it gave
    assert resolver.resolve_all(specs, loop) == expected
    assert resolver.resolve_all(("app.store",), loop) == (os.path.normpath(pkg / "store.py"),)
    assert ImportResolver(str(tmp_path)).resolve_all(specs, loop)[0] is None  # a new run: gone
    assert resolver.resolve_all((), loop) == ()


def test_each_import_is_resolved_once_per_run(tmp_path: Path) -> None:
    """What the context search found stays what the graph sees, even if the disk changes
    in between: the run reads one tree."""
    pkg = _package(tmp_path)
    loop = str(pkg / "sub" / "loop.py")
    store = os.path.normpath(pkg / "store.py")
    resolver = ImportResolver(str(tmp_path))

    def load(targets: list[str]) -> dict[str, Dependency]:
        return {t: Dependency(t, Path(t).read_text(), "digest", ("json",)) for t in targets}

    found = find_dependencies([(loop, ("..store", "app.store"))], [loop], resolver, load)
    assert [d.path for d in found] == [store]
    os.remove(store)
    modules = [(loop, ("..store", "app.store")), (store, ("json",))]
    assert import_graph(modules, resolver) == {os.path.normpath(loop): [store], store: []}
    assert import_graph(modules, resolver.root) == {os.path.normpath(loop): [], store: []}  # a new run: gone


def test_files_are_found_in_their_folder_as_isfile_finds_them(tmp_path: Path) -> None:
    """The resolver reads each folder's listing once: what it calls a file is what
    ``os.path.isfile`` calls one (a link to a file is one, a broken link and a folder
    named like a module are not)."""
    pkg = _package(tmp_path)
    (pkg / "folder.py").mkdir()
    (pkg / "real.py").write_text("")
    os.symlink(pkg / "real.py", pkg / "linked.py")
    os.symlink(pkg / "gone.py", pkg / "broken.py")
    loop = str(pkg / "sub" / "loop.py")
    resolver = ImportResolver(str(tmp_path))
    for name in ("folder", "real", "linked", "broken", "absent", "store"):
        expected = os.path.normpath(pkg / f"{name}.py") if os.path.isfile(pkg / f"{name}.py") else None
        assert resolver.resolve(f"..{name}", loop) == expected, name
        assert resolver.resolve(f"app.{name}", loop) == expected, name
    assert resolver.resolve("..real", loop) is not None and resolver.resolve("..folder", loop) is None


def test_files_of_one_folder_share_the_answers(tmp_path: Path) -> None:
    """Two files of one folder resolve an import alike (roots and relative base are the
    folder's); a file of another folder resolves it from there."""
    pkg = _package(tmp_path)
    (pkg / "sub" / "store.py").write_text("")
    loop, other = str(pkg / "sub" / "loop.py"), str(pkg / "sub" / "other.py")
    resolver = ImportResolver(str(tmp_path))
    assert resolver.resolve(".store", loop) == resolver.resolve(".store", other) == os.path.normpath(pkg / "sub" / "store.py")
    assert resolver.resolve(".store", str(pkg / "top.py")) == os.path.normpath(pkg / "store.py")


def test_packages_are_entered_as_isdir_finds_them(tmp_path: Path) -> None:
    """The resolver walks down a dotted import through its folders' listings: a link to
    a package folder is entered, a broken link, a file named like a package, and a
    package missing at one root but present at the next are answered as the disk says."""
    pkg = _package(tmp_path)
    (tmp_path / "elsewhere" / "deep").mkdir(parents=True)
    (tmp_path / "elsewhere" / "deep" / "mod.py").write_text("")
    os.symlink(tmp_path / "elsewhere", pkg / "linked")
    os.symlink(tmp_path / "nowhere", pkg / "broken")
    (pkg / "flat").write_text("")  # a file, not a folder
    (tmp_path / "src" / "later").mkdir(parents=True)
    (tmp_path / "src" / "later" / "mod.py").write_text("")
    loop = str(pkg / "sub" / "loop.py")
    resolver = ImportResolver(str(tmp_path))
    roots = import_roots(loop, str(tmp_path))
    assert resolver.resolve("app.linked.deep.mod", loop) == os.path.normpath(pkg / "linked" / "deep" / "mod.py")
    assert resolver.resolve("..linked.deep.mod", loop) == os.path.normpath(pkg / "linked" / "deep" / "mod.py")
    for spec in ("app.broken.mod", "..broken.mod", "app.flat.mod", "outside.pkg.mod", "later.mod", "later.missing"):
        expected = resolve_import(spec, loop, [] if spec.startswith(".") else roots)
        assert resolver.resolve(spec, loop) == expected, spec
        by_stat = None
        name = spec.lstrip(".")
        base = [str(pkg)] if spec.startswith("..") else roots
        for folder in base:
            target = os.path.join(folder, *name.split("."))
            found = next((c for c in (target + ".py", os.path.join(target, "__init__.py")) if os.path.isfile(c)), None)
            if found is not None:
                by_stat = os.path.normpath(found)
                break
        assert expected == by_stat, spec
    assert resolver.resolve("later.mod", loop) == os.path.normpath(tmp_path / "src" / "later" / "mod.py")


def test_a_root_that_is_a_file_and_a_link_loop_are_answered_as_the_disk_says(tmp_path: Path) -> None:
    """A root that is not a folder (a file named ``src``) cannot be listed: the resolver
    asks the disk for each path instead. A link to itself in a package cannot be
    followed: it is neither a file nor a folder, as ``os.path`` says."""
    pkg = _package(tmp_path)
    (tmp_path / "src").write_text("")  # the project's ``src`` root is a file here
    os.symlink(pkg / "looping.py", pkg / "looping.py")
    os.symlink(pkg / "circle", pkg / "circle")
    loop = str(pkg / "sub" / "loop.py")
    resolver = ImportResolver(str(tmp_path))
    assert os.path.join(str(tmp_path), "src") in import_roots(loop, str(tmp_path))
    for spec in ("later", "later.mod", "app.looping", "app.circle.mod", "..looping", "app.store"):
        expected = resolve_import(spec, loop, [] if spec.startswith(".") else import_roots(loop, str(tmp_path)))
        assert resolver.resolve(spec, loop) == expected, spec
    assert resolver.resolve("app.looping", loop) is None and not os.path.isfile(pkg / "looping.py")
    assert resolver.resolve("app.store", loop) == os.path.normpath(pkg / "store.py")
