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
