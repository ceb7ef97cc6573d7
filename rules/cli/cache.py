"""The result cache of ``summaryguard check``: a second run over an unchanged tree is near-instant.

What is cached, and under which key:

* **settings**: one folder per combination of the analyzer's code (the size
  and modification time of every module of the engine, the rules, the plugins
  and their rooms, and the command line, so an edited rule or engine in a
  development checkout, or an upgrade, is never served stale), the Python and
  libcst versions, the selected rules (their codes; a plugin rule from outside
  summaryguard by its class, ``VERSION`` and the stamp of its module), the
  vocabulary fingerprint and the configuration file's text. Changing any of
  them starts from an empty folder. No version is read through
  :mod:`importlib.metadata`: importing it cost 28 ms of every cached run, a
  tenth of a pre-commit check of a small file (see :func:`_package_version`).
* **screen**: per file *content* (a BLAKE2 digest of the bytes), the outcome
  of the cheap look that decides whether a file needs libcst at all (see
  :meth:`Analyzer.screen_facts`), with the syntax errors it found, for a file
  screened in the modules it imports (as written), and for a checked file what
  else the command line asks of its text (whether it may hold a suppression
  comment, whether a file screened out may lend its classes: see
  :func:`.batch.scan_marks`), so that a warm run scans no text. It depends on
  the text alone. In 256 documents by the digest's first two digits (``screen/``), each
  read when a run first asks for one of its digests and written when it
  changed: a pre-commit run reads and writes a few, a whole tree's run reads them
  all (one document for all was 2.3 MB after a check of the real-code corpus,
  read and rewritten by every pre-commit run).
* **modules**: per checked module that needed libcst, its findings and
  analysis errors, keyed by its content, the name it is imported by and the
  keys of the project modules it imports, transitively (see :mod:`.records`):
  the analysis crosses modules (a validator in ``recovery.py`` protects a
  resume in ``loop.py``), so an edit to an imported module (a validator
  edited, created or deleted, an ``__init__.py`` that renames a module)
  misses for that module and every module that imports it, and for nothing
  else. Files screened out take no part in the analysis, so changing one of
  them never invalidates the others' findings. One document, read once per
  run and written once, when something new was recorded; the entries used
  least recently go first beyond :data:`KEEP_MODULES`.
* **facts**: per module that an analysis read (content digest and module
  name), what CPython's tree told the engine of it (see
  :meth:`~.engine.ScreenFacts.to_json`): a pre-commit run after an edit of one
  file analyzes it with every module it imports, and without these it parsed
  all of them with CPython again (a fifth of that run for agno's
  ``agent/_run.py``, which imports 147). One file per module in ``facts/``,
  read when an analysis asks for that module and written once, when new: a
  run's cost grows with the modules it analyzes, not with the cache. (One
  document for all of them, as format 4 kept them, was 36 MB after a check of
  the real-code corpus, and the pre-commit run above read and rewrote it
  whole: 3.8 s against 2.2 s with a cache of that package alone.) Kept to
  :data:`KEEP_FACTS`, those used least recently first (a file's modification
  time is its last use), down to nine tenths of it once past it. Only files
  the cache names as its own are deleted, and nothing is written or deleted
  through a symbolic link put in place of ``facts/`` or ``screen/``.

Stored under ``.summaryguard_cache/`` at the configuration's folder, or under
``$SUMMARYGUARD_CACHE_DIR/summaryguard/``: the variable names a folder that
may be shared (``~/.cache``, a CI temporary folder, even ``.``), so the cache
keeps to a folder of its own inside it and never touches anything else there.
That folder is the cache's only if the cache created it (it holds
``CACHEDIR.TAG`` with the cache's signature) or it is empty: a folder of that
name that holds something else is left alone, and the run goes on uncached.
``CACHEDIR.TAG`` and ``.gitignore`` are written only inside it, and only where
absent; pruning removes only settings folders that carry the cache's marker
file, and only the files the cache writes (a folder with anything else in it
stays). Entries are JSON, written to a temporary file and renamed into place
(atomic); an entry that cannot be read or does not have the expected shape
is a miss, never an error. Failing to write is silent: a cache must never
fail a check.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from .sources import FileRefused, read_regular_file

__all__ = ["CACHE_DIR_ENV", "CACHE_FOLDER", "ResultCache", "content_digest", "settings_key"]

CACHE_DIR_ENV = "SUMMARYGUARD_CACHE_DIR"
CACHE_FOLDER = ".summaryguard_cache"
#: The folder the cache keeps to inside ``$SUMMARYGUARD_CACHE_DIR``.
OWNED_FOLDER = "summaryguard"
#: In each settings folder: says the folder is the cache's (what pruning looks for).
MARKER = ".summaryguard-cache-entry"
#: Largest cache entry read back (anything bigger is a miss).
MAX_ENTRY_BYTES = 64 * 1024 * 1024
#: Bumped when the layout or the meaning of an entry changes (2: screen entries
#: carry imports; 3: project keys cover module names and context modules;
#: 4: one record per module instead of one entry per run; 5: one file per module's facts;
#: 6: the screen verdicts in 256 documents).
FORMAT = 6
#: How many settings folders are kept (the oldest go first).
KEEP_SETTINGS = 8
#: How many module records a settings folder keeps (the least recently used go first).
KEEP_MODULES = 20_000
#: How many modules' screening facts a settings folder keeps (about 17 bytes per line of code).
KEEP_FACTS = 20_000
#: The folder of a settings folder that holds the facts, one file per module.
FACTS_FOLDER = "facts"
#: The folder of a settings folder that holds the screen verdicts, by the digest's first two digits.
SCREEN_FOLDER = "screen"

_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# summaryguard's result cache (https://bford.info/cachedir/)\n"
_GITIGNORE = "# created by summaryguard\n*\n"
#: Files the cache writes in a settings folder (all that pruning ever deletes there;
#: a ``projects`` folder of entries is what format 3 wrote, ``facts.json`` what format 4
#: wrote and ``screen.json`` what format 5 wrote, all pruned the same way).
_ENTRY_FILES = frozenset({"screen.json", "modules.json", "facts.json", MARKER})
_PROJECT_FILE = re.compile(r"^[^.][^/\\]*\.json$")
#: The name of a facts file (:meth:`ResultCache._facts_file`): all that pruning deletes in ``facts/``.
_FACTS_FILE = re.compile(r"^[0-9a-f]{32}\.json$")
#: The name of a screen document (:func:`_shard`): all that pruning deletes in ``screen/``.
_SCREEN_FILE = re.compile(r"^[0-9a-f]{2}\.json$")
_SHARD = re.compile(r"[0-9a-f]{2}")

Verdict = tuple[bool, tuple[tuple[int | None, str], ...]]
#: What a screened-in file imports (see :func:`~.engine.names.imported_modules`).
Imports = tuple[str, ...]


def content_digest(raw: bytes) -> str:
    return hashlib.blake2b(raw, digest_size=16).hexdigest()


def cache_folder(root: Path) -> Path:
    """``$SUMMARYGUARD_CACHE_DIR/summaryguard`` if the variable is set, else
    ``.summaryguard_cache`` in ``root``: never the shared folder itself."""
    override = os.environ.get(CACHE_DIR_ENV)
    return Path(override) / OWNED_FOLDER if override else root / CACHE_FOLDER


def _version(distribution: str) -> str:
    # imported here, and only where a package carries no version file: importlib.metadata
    # (with email, zipfile, csv) costs about 20 ms, which a --no-cache run never needs
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:  # running from an uninstalled tree
        return "unknown"


def _package_version(package: str) -> str:
    """What identifies an installed package's release without importing it or
    :mod:`importlib.metadata`: the text of the ``_version.py`` that setuptools-scm writes
    into it (libcst's), else the distribution's metadata. Why: importing
    :mod:`importlib.metadata` was 28 of the 29 ms the settings key took, on every run
    with the cache (a pre-commit hook's), and importing libcst to ask would cost 150 ms
    on a run whose files need no libcst."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):  # pragma: no cover - a broken installation
        spec = None
    for folder in getattr(spec, "submodule_search_locations", None) or ():
        try:
            with open(os.path.join(folder, "_version.py"), "rb") as handle:
                return handle.read(4096).decode("utf-8", "replace")
        except OSError:
            continue
    return _version(package)


def _file_stamp(module_name: str) -> list[object]:
    module = sys.modules.get(module_name)
    filename = getattr(module, "__file__", None)
    if not filename:
        return [module_name]
    try:
        stat = os.stat(filename)
    except OSError:  # pragma: no cover - a module whose file went away
        return [module_name, filename]
    return [module_name, filename, stat.st_size, stat.st_mtime_ns]


def _engine_stamp() -> list[object]:
    """Size and modification time of every module of the analyzer and of the command line
    (which keys and reads the records): every ``.py`` file below ``summaryguard.rules`` and
    ``summaryguard.plugins``, the rooms and their rules, and a rule's helper modules,
    included. An upgrade rewrites them, so summaryguard's own version adds nothing. Empty
    when the modules are not files (a zip on ``sys.path``): :func:`settings_key` then
    names the version instead.

    Why every file, not the rules' own: what a run's rules are and do is decided in more
    files than the modules that define their classes (a room's ``rules()`` lists them, a
    rule may import a helper of its own), and a key that missed one served the findings
    of the rules before an edit (about 150 files: a millisecond of every run)."""
    stamps: list[object] = []
    for package in ("summaryguard.rules", "summaryguard.plugins"):
        module = sys.modules.get(package)
        for top in getattr(module, "__path__", ()):
            stamps.extend(_tree_stamp(package, top))
    return stamps


def _tree_stamp(package: str, top: str) -> list[object]:
    """``[package, folder]`` (where the files are: two installs whose files share sizes
    and dates, a Nix store's, differ there), then ``[package, path, size, mtime]`` of every
    ``.py`` file below ``top``, symbolic links to folders followed (a room developed in
    a checkout of its own) and each folder once (a link cycle ends), dot folders and
    ``__pycache__`` skipped. Empty when there is no such file (a zip on ``sys.path``)."""
    stamps: list[object] = []
    seen: set[str] = set()
    for folder, subfolders, names in os.walk(top, followlinks=True):
        real = os.path.realpath(folder)
        if real in seen:
            subfolders[:] = []
            continue
        seen.add(real)
        subfolders[:] = sorted(d for d in subfolders if not d.startswith((".", "__pycache__")))
        for name in sorted(names):
            if name.endswith(".py"):
                try:
                    stat = os.stat(os.path.join(folder, name))
                except OSError:  # a link to nothing, or a file that went away meanwhile
                    continue
                where = os.path.relpath(os.path.join(folder, name), top).replace(os.sep, "/")
                stamps.append([package, where, stat.st_size, stat.st_mtime_ns])
    return [[package, os.path.realpath(top)], *stamps] if stamps else []


def settings_key(
    *,
    rules: Sequence[type] | None = None,
    rule_codes: Collection[str] | None = None,
    vocabulary_fingerprint: str,
    config_text: str,
    config_path: str,
) -> str:
    """The digest of everything besides file contents that a result depends on.

    The selected rules are named by their classes (``rules``: each with the stamps of its
    module and of its bases' modules; a plugin's helper modules that no class of it comes
    from are not stamped), or, where every rule ships
    with summaryguard, by their codes alone (``rule_codes``): their modules are among the
    files :func:`_engine_stamp` stamps, so a run whose every file the cache answers
    imports no rule module, and with them libcst (0.2 s of a 1.4 s warm check of the
    real-code corpus). Exactly one of the two is given."""
    if (rules is None) == (rule_codes is None):
        raise TypeError("settings_key: give the rules' classes or their codes, exactly one")
    described = {
        "format": FORMAT,
        "libcst": _package_version("libcst"),
        "python": sys.version,
        "rules": sorted(rule_codes) if rule_codes is not None else [
            [
                getattr(r, "code", ""), r.__module__, r.__qualname__, str(getattr(r, "VERSION", "")),
                # the modules of its bases too: a plugin's rule may inherit what it decides
                [_file_stamp(name) for name in dict.fromkeys(c.__module__ for c in r.__mro__) if name != "builtins"],
            ]
            for r in rules or ()
        ],
        "engine": _engine_stamp() or [_version("summaryguard")],
        "vocabulary": vocabulary_fingerprint,
        "config": [config_path, config_text],
    }
    text = json.dumps(described, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


#: The prefix of a :meth:`ResultCache.lent` entry among the screen verdicts (which are
#: keyed by the bare digest).
_LENT = "lent:"


class ResultCache:
    """One settings folder of the cache; load once, look up many, :meth:`flush` once."""

    def __init__(self, folder: Path, settings: str) -> None:
        self.folder = folder
        self.settings = settings
        self.here = folder / settings
        #: The screen documents read so far, by their name (:func:`_shard`).
        self._screen: dict[str, dict[str, Any]] = {}
        self._screen_dirty: set[str] = set()
        self._owned: bool | None = None
        self._modules: dict[str, Any] | None = None
        self._modules_dirty = False
        #: Facts stored by this run, written by :meth:`flush`; in the order of their last use.
        self._facts: dict[str, Any] = {}
        #: This run's stamp on the records it uses (least recently used go first).
        self._run = 0

    def owned(self) -> bool:
        """Whether :attr:`folder` is the cache's: absent (it will create it), empty, or
        holding the cache's ``CACHEDIR.TAG``. Anything else is somebody's folder: the
        cache then neither reads nor writes (asked once per run)."""
        if self._owned is None:
            self._owned = _is_ours(self.folder)
        return self._owned

    # -- screen verdicts -------------------------------------------------------------------

    def holds_screenings(self) -> bool:
        """Whether this settings folder holds any screen document: without one, every file
        of the run is screened (a first run, new settings, an upgrade)."""
        if not self.owned():
            return False
        try:
            with os.scandir(self.here / SCREEN_FOLDER) as entries:
                return any(entry.name.endswith(".json") for entry in entries)
        except OSError:
            return False

    def _screen_entries(self, digest: str) -> dict[str, Any]:
        """The screen document that holds ``digest``'s entries, read on first use."""
        name = _shard(digest)
        entries = self._screen.get(name)
        if entries is None:
            entries = self._screen[name] = {}
            document = _read_json(self.here / SCREEN_FOLDER / f"{name}.json") if self.owned() else None
            if isinstance(document, dict) and document.get("settings") == self.settings:
                found = document.get("entries")
                if isinstance(found, dict):
                    entries = self._screen[name] = found
        return entries

    def screen(self, digest: str) -> Verdict | None:
        """The cached verdict for content ``digest``; None for a miss or a malformed entry."""
        entry = self._screen_entries(digest).get(digest)
        if not (isinstance(entry, list) and 2 <= len(entry) <= 4 and isinstance(entry[0], bool)):
            return None
        errors = entry[1]
        if not isinstance(errors, list):
            return None
        parsed: list[tuple[int | None, str]] = []
        for item in errors:
            if not (isinstance(item, list) and len(item) == 2 and isinstance(item[1], str)):
                return None
            line = item[0]
            if line is not None and (not isinstance(line, int) or isinstance(line, bool)):
                return None
            parsed.append((line, item[1]))
        return entry[0], tuple(parsed)

    def imports(self, digest: str) -> Imports | None:
        """The imports stored with the verdict for content ``digest``; None if there are none."""
        entry = self._screen_entries(digest).get(digest)
        if not (isinstance(entry, list) and 3 <= len(entry) <= 4 and isinstance(entry[2], list)):
            return None
        if not all(isinstance(item, str) for item in entry[2]):
            return None
        return tuple(entry[2])

    def text_marks(self, digest: str) -> int | None:
        """The marks stored with the verdict for content ``digest`` (what else a scan of the
        text told, see :func:`~.batch.scan_marks`); None if there are none."""
        entry = self._screen_entries(digest).get(digest)
        if not (isinstance(entry, list) and len(entry) == 4 and type(entry[3]) is int):
            return None
        return entry[3] if 0 <= entry[3] < 1 << 8 else None

    def store_screen(
        self, digest: str, verdict: Verdict, imports: Imports | None = None, marks: int | None = None
    ) -> None:
        """Store ``digest``'s verdict, with the imports of a file screened in and the marks
        of its text (:meth:`text_marks`)."""
        needs, errors = verdict
        entry: list[Any] = [needs, [[line, message] for line, message in errors]]
        if imports is not None or marks is not None:
            entry.append(None if imports is None else list(imports))
        if marks is not None:
            entry.append(marks)
        self._screen_entries(digest)[digest] = entry
        self._screen_dirty.add(_shard(digest))

    # -- what a screened-out module lends (see Analyzer.lent_facts) ----------------------

    def lent(self, digest: str) -> tuple[bool, Imports] | None:
        """Whether the screened-out module of content ``digest`` lends its classes to its
        importers, and its imports when it does; None for a miss or a malformed entry.

        A warm run must know it for every such module its checked files import (their
        record keys cover what they import), and finding it out costs CPython's parse
        of the module: stored beside the screen verdicts, it is asked of the text once."""
        entry = self._screen_entries(digest).get(_LENT + digest)
        if entry == [False]:
            return False, ()
        if isinstance(entry, list) and len(entry) == 2 and entry[0] is True and isinstance(entry[1], list):
            if all(isinstance(item, str) for item in entry[1]):
                return True, tuple(entry[1])
        return None

    def store_lent(self, digest: str, imports: Imports | None) -> None:
        """Record :meth:`lent`: ``imports`` of a module that lends, None for one that does not."""
        self._screen_entries(digest)[_LENT + digest] = [False] if imports is None else [True, list(imports)]
        self._screen_dirty.add(_shard(digest))

    # -- module records (see .records) ----------------------------------------------------

    def _load_modules(self) -> dict[str, Any]:
        if self._modules is None:
            self._modules = {}
            document = _read_json(self.here / "modules.json") if self.owned() else None
            if isinstance(document, dict) and document.get("settings") == self.settings:
                entries, run = document.get("entries"), document.get("run")
                if isinstance(entries, dict) and _is(run, int):
                    self._modules, self._run = entries, run + 1
        return self._modules

    def record(self, key: str) -> tuple[list[list[Any]], list[list[Any]]] | None:
        """The ``(findings, errors)`` rows of the module record ``key``; None for a miss
        or an entry of the wrong shape (a corrupt entry is a miss, never an error)."""
        entry = self._load_modules().get(key)
        if not (isinstance(entry, list) and len(entry) == 3 and isinstance(entry[0], list) and isinstance(entry[1], list)):
            return None
        from ..engine.findings import finding_from_row

        findings: list[list[Any]] = []
        for row in entry[0]:
            if finding_from_row(row) is None:
                return None
            findings.append(row)
        errors: list[list[Any]] = []
        for row in entry[1]:
            if not (isinstance(row, list) and len(row) == 3 and isinstance(row[0], str) and isinstance(row[2], str)):
                return None
            if row[1] is not None and not _is(row[1], int):
                return None
            errors.append(row)
        entry[2] = self._run  # written only with new records: a warm run writes nothing
        return findings, errors

    def store_record(self, key: str, findings: Sequence[Sequence[Any]], errors: Sequence[Sequence[Any]]) -> None:
        entries = self._load_modules()
        entries[key] = [[list(f) for f in findings], [list(e) for e in errors], self._run]
        self._modules_dirty = True

    # -- what the engine read of a module's CPython tree ---------------------------------

    def _facts_file(self, key: str) -> Path:
        name = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
        return self.here / FACTS_FOLDER / f"{name}.json"

    def facts(self, key: str) -> object | None:
        """The stored facts data of module ``key`` (its digest and name), unchecked: the
        engine reads it back (:meth:`~.engine.ScreenFacts.from_json`), or None. A file
        read is marked as used now (its modification time), for :func:`_prune_facts`."""
        pending = self._facts.pop(key, None)
        if pending is not None:
            self._facts[key] = pending  # used last: written last
            return pending
        if not self.owned():
            return None
        path = self._facts_file(key)
        document = _read_json(path)
        if not (isinstance(document, dict) and document.get("key") == key and "data" in document):
            return None
        try:
            os.utime(path)
        except OSError:  # a cache that cannot be written is still read
            pass
        return document["data"]

    def store_facts(self, key: str, data: object) -> None:
        self._facts.pop(key, None)
        self._facts[key] = data

    def _write_facts(self) -> None:
        """One file per module stored this run, each atomically, marked used in the order
        of :attr:`_facts` (microseconds apart: a file system's clock may give files written
        together one time), then the least recently used pruned (see :func:`_prune_facts`)."""
        folder = self.here / FACTS_FOLDER
        if not _writable_folder(folder):
            self._facts.clear()
            return
        stamp = time.time_ns()
        names: list[str] = []
        for offset, (key, data) in enumerate(self._facts.items()):
            path = self._facts_file(key)
            if _write_json(path, {"key": key, "data": data}):
                names.append(path.name)
                try:
                    os.utime(path, ns=(stamp + offset * 1_000, stamp + offset * 1_000))
                except OSError:  # pragma: no cover - just written by this process
                    pass
        self._facts.clear()
        # Counting the files lists the folder (17 ms at the limit); a run that writes a few
        # counts only now and then, by the names it wrote (about one file in 256).
        if len(names) * 256 >= KEEP_FACTS or any(name.startswith("00") for name in names):
            _prune_facts(folder, KEEP_FACTS)

    # -- writing ---------------------------------------------------------------------------

    def flush(self) -> str | None:
        """Write the screen verdicts, the module records and the facts if any changed; set
        up the folder on first use. Returns why nothing could be kept, if so: a run whose
        results are silently not cached is slow on every commit for no reason anyone sees."""
        if not (self._screen_dirty or self._modules_dirty or self._facts):
            return None
        if not self._set_up():
            if not self.owned():
                return (
                    f"results are not cached: {self.folder} is not summaryguard's cache folder "
                    "(a file, a link, or a folder holding other files and no CACHEDIR.TAG), so it is left alone"
                )
            return f"results are not cached: {self.folder} cannot be created or written"
        if self._screen_dirty and _writable_folder(self.here / SCREEN_FOLDER):
            for name in sorted(self._screen_dirty):
                document = {"settings": self.settings, "entries": self._screen[name]}
                _write_json(self.here / SCREEN_FOLDER / f"{name}.json", document)
        self._screen_dirty.clear()
        if self._modules_dirty and self._modules is not None:
            self._modules_dirty = False
            entries = self._modules
            if len(entries) > KEEP_MODULES:
                def stamp(key: str) -> int:
                    entry = entries[key]
                    return entry[2] if isinstance(entry, list) and len(entry) == 3 and _is(entry[2], int) else -1

                entries = {key: entries[key] for key in sorted(entries, key=stamp, reverse=True)[:KEEP_MODULES]}
            document = {"settings": self.settings, "run": self._run, "entries": entries}
            _write_json(self.here / "modules.json", document)
        if self._facts:
            self._write_facts()
        try:
            os.utime(self.here)  # its age is its last use: settings folders are pruned by it
        except OSError:  # pragma: no cover - just set up by this process
            pass
        return None

    def _set_up(self) -> bool:
        """Make sure the folders exist and are marked; False if the cache must not write.

        ``CACHEDIR.TAG`` and ``.gitignore`` go into the cache's own folder only, and
        only where there is none (an existing ``.gitignore`` is never replaced).
        Only settings folders that carry :data:`MARKER` are pruned."""
        if not self.owned():
            return False
        if os.path.isfile(self.here / MARKER):  # False, not an error, where the folder cannot be searched
            return True
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            tag = self.folder / "CACHEDIR.TAG"
            if not os.path.lexists(tag):
                _write_text(tag, _TAG)
            if not os.path.lexists(self.folder / ".gitignore"):
                _write_text(self.folder / ".gitignore", _GITIGNORE)
            self.here.mkdir(exist_ok=True)
        except OSError:
            return False
        if not _write_text(self.here / MARKER, _marker_text(self.settings)):
            return False
        _prune_settings(self.folder, KEEP_SETTINGS - 1, keep=self.settings)
        return True


def _shard(digest: str) -> str:
    """The screen document of ``digest``: its first two hexadecimal digits (a content
    digest's are evenly spread), or two of a digest of it for any other key."""
    head = digest[:2]
    if _SHARD.fullmatch(head):
        return head
    return hashlib.blake2b(digest.encode("utf-8", "surrogatepass"), digest_size=1).hexdigest()


def _marker_text(settings: str) -> str:
    return f"summaryguard cache entry {settings}\n"


def _is_ours(folder: Path) -> bool:
    """Absent, an empty folder, or a folder with the cache's ``CACHEDIR.TAG``."""
    try:
        if not os.path.lexists(folder):
            return True
        if folder.is_symlink() or not folder.is_dir():
            return False
        tag = folder / "CACHEDIR.TAG"
        if tag.is_file() and not tag.is_symlink():
            with open(tag, "rb") as handle:
                return handle.read(len(_TAG) + 1).decode("utf-8", "replace") == _TAG
        return not any(os.scandir(folder))
    except OSError:
        return False


def _is(value: object, kind: type) -> bool:
    return isinstance(value, kind) and not (kind is int and isinstance(value, bool))


def _read_json(path: Path) -> object:
    try:
        return json.loads(read_regular_file(str(path), MAX_ENTRY_BYTES))
    except (OSError, FileRefused, ValueError, RecursionError):  # missing, unreadable or corrupt: a miss
        return None


def _write_json(path: Path, document: object) -> bool:
    return _write_text(path, json.dumps(document, separators=(",", ":")))


def _write_text(path: Path, text: str) -> bool:
    """Write atomically (temporary file, then rename); False if it could not be done."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    except OSError:
        return False
    try:
        with os.fdopen(handle, "w", encoding="utf-8", errors="surrogatepass") as out:
            out.write(text)
        os.replace(temporary, path)
        return True
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:  # pragma: no cover
            pass
        return False


def _prune_settings(folder: Path, limit: int, keep: str) -> None:
    """Remove the oldest settings folders of ``folder`` beyond ``limit`` (never ``keep``).

    Only folders with the cache's :data:`MARKER` (naming that folder) count, and
    only the files the cache writes are deleted from them: a folder that holds
    anything else is emptied of the cache's files and left in place."""
    try:
        entries = [e for e in os.scandir(folder) if e.name != keep and _is_entry_folder(e)]
        entries.sort(key=lambda e: e.stat(follow_symlinks=False).st_mtime_ns, reverse=True)
    except OSError:
        return
    for entry in entries[limit:]:
        _remove_entry_folder(Path(entry.path))


def _is_entry_folder(entry: os.DirEntry[str]) -> bool:
    try:
        if not entry.is_dir(follow_symlinks=False):
            return False
        marker = Path(entry.path) / MARKER
        if marker.is_symlink() or not marker.is_file():
            return False
        with open(marker, "rb") as handle:
            return handle.read(200).decode("utf-8", "replace") == _marker_text(entry.name)
    except OSError:
        return False


def _prune_facts(folder: Path, limit: int) -> None:
    """Beyond ``limit`` facts files in ``folder``, delete the least recently used down to
    nine tenths of it: only files named as the cache names them. Reading their dates
    costs a stat each (100 ms at 20,000), so the margin keeps the next runs from paying
    it again at once."""
    try:
        entries = [e for e in os.scandir(folder) if _FACTS_FILE.match(e.name)]
        if len(entries) <= limit:
            return
        dated = sorted((e.stat(follow_symlinks=False).st_mtime_ns, e.name, e.path) for e in entries)
    except OSError:
        return
    for _, _, path in dated[: len(dated) - (limit - limit // 10)]:
        try:
            os.unlink(path)
        except OSError:  # pragma: no cover - another run pruned it first
            pass


def _writable_folder(folder: Path) -> bool:
    """Whether the cache may write into ``folder`` of a settings folder: absent (it is
    created) or a folder, never a symbolic link (whose target the cache did not make)."""
    return not os.path.islink(folder) and (not os.path.lexists(folder) or os.path.isdir(folder))


def _remove_owned_files(folder: Path, owned: re.Pattern[str]) -> None:
    """Delete the files of ``folder`` named as ``owned`` and the cache's temporary files,
    then the folder if that emptied it: anything else in it stays, and so does it."""
    try:
        if not folder.is_dir() or folder.is_symlink():
            return
        for entry in os.scandir(folder):
            if (owned.match(entry.name) or entry.name.startswith(".tmp-")) and entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)
        os.rmdir(folder)
    except OSError:
        pass


def _remove_entry_folder(here: Path) -> None:
    _remove_owned_files(here / "projects", _PROJECT_FILE)
    _remove_owned_files(here / FACTS_FOLDER, _FACTS_FILE)
    _remove_owned_files(here / SCREEN_FOLDER, _SCREEN_FILE)
    try:
        for entry in os.scandir(here):
            if entry.name in _ENTRY_FILES - {MARKER} or entry.name.startswith(".tmp-"):
                if entry.is_file(follow_symlinks=False):
                    os.unlink(entry.path)
        remaining = [e.name for e in os.scandir(here)]
        if remaining == [MARKER]:  # the marker goes last: a half-pruned folder is still known as ours
            os.unlink(here / MARKER)
            os.rmdir(here)
    except OSError:
        pass
