"""Module records: one checked module's analysis, cached by what it depends on.

The engine is local (SPEC §3.1.1): a file's findings depend only on its content,
the settings and the project modules it imports, transitively. So the result
of one module's analysis is keyed by exactly that, and reused by every run
whose module has the same key, whatever else the run holds:

* the module's *identity* (the digest of its bytes, the dotted name it is
  imported by and its absolute location: an ``__init__.py`` that renames it
  changes it);
* the keys of the modules it imports, transitively, as a Merkle tree over
  the run's import graph (:func:`.dependencies.import_graph`): an import
  cycle is one node, keyed by the identities of its members and the keys of
  what the cycle imports. An edit to a validator in ``recovery.py`` changes
  the key of ``recovery.py`` and so of every module that imports it, however
  far up; a module nothing of it imports never does.

The settings (rules, engine, vocabulary, configuration) select the cache's
settings folder (:func:`.cache.settings_key`), so they are part of every key.

A record holds the module's findings and analysis errors as JSON rows
(:func:`~..engine.findings.finding_row`), with every path that names a module
of the run written as that module's absolute location and named again, on a
hit, as the run that reads it names the module (a checked file by the path it
was given, a context module by its absolute path): ``check a.py``,
``check .`` and ``check ./a.py`` share records.

The key follows the engine's contract (SPEC §3.1.1, locality). Where the
engine still breaks it (issue 9: a soft validator's SG104 is reported only when
a resume in an importer relies on it), a record made with the importer in the
run serves a run without it; ``tests/cli/test_cli_module_records.py`` pins that
as a strict xfail, next to ``tests/rules/test_locality.py``'s.

The records of a run are looked up once per module, by the parent process,
before any analysis (:func:`.batch.check_files`): only the modules that miss
are analyzed, with the modules they import as context, in one process or in
chunks across the worker pool; the workers never read the cache, they are
given only what misses. So a warm run over an unchanged tree parses nothing
with libcst, and after an edit only the edited module and its importers are
analyzed again (with what they import): the cost of a run grows with the code
that changed, never with how many files import an unchanged module.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .chunks import Unit, components

__all__ = ["localize_rows", "record_keys", "relocate_rows"]


def record_keys(
    units: Sequence[Unit], graph: Mapping[str, Sequence[str]], identity: Callable[[Unit], str]
) -> dict[str, str]:
    """The record key of every checked unit (by unit key), from ``identity(unit)`` and
    the keys of what it imports; computed once per import cycle, bottom up."""
    by_key = {u.key: u for u in units}
    found, component_of = components([u.key for u in units], graph)
    component_keys: list[str] = []
    for index, members in enumerate(found):  # successors come first
        digest = hashlib.sha256(b"module-record-1\n")
        for member in sorted(members):
            digest.update(f"m {identity(by_key[member])}\n".encode("utf-8", "surrogatepass"))
        below = {
            component_keys[component_of[successor]]
            for member in members
            for successor in graph.get(member, ())
            if component_of[successor] != index
        }
        for key in sorted(below):
            digest.update(f"i {key}\n".encode())
        component_keys.append(digest.hexdigest()[:32])
    keys: dict[str, str] = {}
    for unit in units:
        if unit.checked:
            own = f"{component_keys[component_of[unit.key]]} {identity(unit)}"
            keys[unit.key] = hashlib.sha256(own.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return keys


def localize_rows(
    findings: Sequence[list[Any]], errors: Sequence[list[Any]], location_of: Mapping[str, str]
) -> tuple[list[list[Any]], list[list[Any]]]:
    """Finding and error rows with each module path written as the module's location
    (``location_of``: path as this run names it -> unit key), for storing."""
    return _rename(findings, errors, location_of)


def relocate_rows(
    findings: Sequence[list[Any]], errors: Sequence[list[Any]], path_of: Mapping[str, str]
) -> tuple[list[list[Any]], list[list[Any]]]:
    """Stored rows with each module location named as this run names the module
    (``path_of``: unit key -> path); a location this run does not know stays as it is."""
    return _rename(findings, errors, path_of)


def _rename(
    findings: Sequence[list[Any]], errors: Sequence[list[Any]], names: Mapping[str, str]
) -> tuple[list[list[Any]], list[list[Any]]]:
    renamed: list[list[Any]] = []
    for row in findings:
        trace = [[names.get(step[0], step[0]), *step[1:]] for step in row[-1]]
        renamed.append([names.get(row[0], row[0]), *row[1:-1], trace])
    return renamed, [[names.get(row[0], row[0]), *row[1:]] for row in errors]
