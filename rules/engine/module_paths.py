"""Which module a file is, from its path and the packages on disk (no parse, no libcst).

One job, apart from :mod:`.names` (which reads import statements with libcst's
nodes): the command line keys the result cache and follows imports by module
names in every run, and a run whose files the cache answers imports no libcst
(see :mod:`summaryguard.rules.cli.lazy_analyzer`).
"""

from __future__ import annotations

import os

__all__ = ["module_location", "module_name_for", "package_root"]


def module_name_for(path: str) -> tuple[str, bool]:
    """Dotted module name of the file at ``path``, and whether it is a package
    (``__init__.py``), from the package structure on disk: the file's absolute
    path is walked up while its folders hold an ``__init__.py``, so the name
    is the one Python imports it by, whatever folder the run starts from
    (``app/recovery.py`` is ``app.recovery`` both from ``app/``'s parent and
    from inside ``app/``). A file outside any package is its stem alone; a
    path that does not exist gets no package (its :func:`module_location`
    still carries its folders)."""
    if not path:
        return "__main__", False
    absolute = os.path.abspath(path)
    folder, filename = os.path.split(absolute)
    stem = _stem(filename)
    package = _package_parts(folder)
    if stem == "__init__":
        return ".".join(package) or "__main__", True
    return ".".join([*package, stem]), False


def module_location(path: str) -> str:
    """The file's absolute path as a dotted name (``/src/app/loop.py`` -> ``src.app.loop``).

    Call resolution matches imported names on suffixes of it as well as of
    :func:`module_name_for`, so that plain folders and namespace packages (no
    ``__init__.py``) resolve too, the same way from any working folder."""
    if not path:
        return "__main__"
    folder, filename = os.path.split(os.path.abspath(path))
    stem = _stem(filename)
    parts = [p for p in folder.replace("\\", "/").split("/") if p and not p.endswith(":")]
    if stem != "__init__":
        parts.append(stem)
    return ".".join(parts) or "__main__"


def _stem(filename: str) -> str:
    for suffix in (".py", ".pyi"):
        if filename.endswith(suffix):
            return filename[: -len(suffix)]
    return filename


def _package_parts(folder: str) -> list[str]:
    """The dotted name of ``folder`` as a package: its name and its parents' while
    each holds an ``__init__.py`` (empty when ``folder`` is not a package)."""
    parts: list[str] = []
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        parent, name = os.path.split(folder)
        if not name or parent == folder:
            break
        parts.append(name)
        folder = parent
    parts.reverse()
    return parts


def package_root(path: str) -> str:
    """The folder Python would need on ``sys.path`` to import the file at ``path``
    by its :func:`module_name_for`: the parent of its outermost package."""
    folder = os.path.dirname(os.path.abspath(path))
    for _ in _package_parts(folder):
        folder = os.path.dirname(folder)
    return folder
