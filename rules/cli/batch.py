"""Read, screen and analyze the files of one run: with the result cache, across cores.

The work has two parts, because the analysis crosses modules:

1. **Screening, per file** (:meth:`Analyzer.screen_facts`): the text pre-filter,
   then CPython's parser and the code-word gate for the files the pre-filter
   keeps, and CPython's syntax check alone for the files it rejects (a file
   that cannot be parsed is an error wherever it is). It depends on the
   file's text alone, so its verdict is cached by content and, for the files
   not in the cache, computed in the run's worker processes (see :mod:`.workers`)
   when more than :data:`SERIAL_SCREEN_FILES` files or :data:`SERIAL_SCREEN_CHARS`
   of text need it (serial otherwise), the text pre-filter included: this
   process only reads the files. What crosses process boundaries is small: the text in, a
   boolean and a few error rows out. No syntax tree is ever pickled.
2. **Analysis of the screened-in files** (:meth:`Analyzer.analyze`): libcst,
   function summaries solved to a fixed point across modules, one rule pass
   per file. Project modules that those files import but that are not among
   the files of the run (a pre-commit hook passes only the staged files) are
   found on disk, screened the same way, and analyzed with them as
   *context*, never reported (see :mod:`.dependencies`), so a validator in
   ``recovery.py`` still protects a resume in ``loop.py``. So are the
   files of the run that the screening rejects but that lend their classes
   (a factory of model clients, a fire-and-forget helper,
   :meth:`Analyzer.lent_facts`), where a
   screened-in file imports them. Each checked
   module's findings are recorded under a key of its content and of the
   modules it imports, transitively (see :mod:`.records`); the records are
   looked up here, once per module, and only the modules that miss are
   analyzed, with what they import as context.

The engine is local (SPEC §3.1.1): a file's findings depend only on its own
content and the modules it imports, transitively. So with ``--jobs`` > 1 and
more than one file to analyze (at least :data:`SERIAL_ANALYSIS_CHARS` of
text), the checked files are split into up to ``jobs`` chunks balanced by text
length, each analyzed with the modules its files import, a checked file of
another chunk included (as context there), in the run's pool, whose workers take
the chunks' groups one by one, largest first; each file's
findings come from the one chunk that checks it (see :mod:`.chunks`).
Chunks that would mostly analyze the same imported modules run in one process
instead (:data:`MIN_SPEEDUP`): the records are shared, the engine's function
summaries are not (they hold syntax trees), so each chunk solves its context.
The results of ``--jobs 1`` and ``--jobs N`` are the same wherever the engine
keeps its locality (tests/cli/test_cli_parallel_analysis.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .chunks import Chunk, Unit, closures, partition
from .cache import Imports, ResultCache, Verdict, content_digest
from .deepstack import call_with_deep_stack
from .markers import may_hold_suppressions
from .report import ErrorLike, ReadError
from .sources import decode_source, read_source_bytes
from .workers import WORKER, Workers
from ..engine.module_paths import module_location, module_name_for
from ..engine.prefilter import Prefilter

if TYPE_CHECKING:  # pragma: no cover
    from concurrent.futures import Executor

    from .dependencies import Dependency, ImportResolver
    from ..engine import Analyzer
    from .lazy_analyzer import LazyAnalyzer

__all__ = ["Batch", "check_files"]


@dataclass
class Batch:
    """What :func:`check_files` produced, and how (for tests and ``--verbose`` tools)."""

    #: ``(path, text)`` of every file that could be read and decoded, in order.
    sources: list[tuple[str, str]] = field(default_factory=list)
    findings: list[Any] = field(default_factory=list)
    errors: list[ErrorLike] = field(default_factory=list)
    #: Files screened in this run (cache misses), and how many worker processes did it.
    screened: int = 0
    workers: int = 0
    #: Files handed to libcst in this run (0 when the analysis came from the cache).
    analyzed: int = 0
    #: Whether the analysis came from the cache.
    cached_analysis: bool = False
    #: Absolute paths of the context modules: imported by checked files, analyzed, not checked.
    context: list[str] = field(default_factory=list)
    #: Worker processes that ran the analysis (0: in this process), one chunk of files each.
    analysis_workers: int = 0
    #: Checked files whose findings came from their module record (see :mod:`.records`).
    records_hit: int = 0
    #: What the user should know of how the run went (a pool that could not start):
    #: the command line prints each once, as a warning.
    warnings: list[str] = field(default_factory=list)
    #: Per path of :attr:`sources`: whether its text may hold a suppression comment
    #: (:func:`.markers.may_hold_suppressions`, answered by the cache where it can).
    may_suppress: dict[str, bool] = field(default_factory=dict)


def check_files(
    paths: Sequence[str],
    analyzer: Analyzer | LazyAnalyzer,
    cache: ResultCache | None,
    jobs: int,
    root: str | os.PathLike[str] | None = None,
) -> Batch:
    """Findings and errors of ``paths`` (display paths), as ``analyzer.analyze`` would give them,
    with the project modules they import as context. ``root`` is the project's folder
    (the configuration's): absolute imports are also looked up below it."""
    batch = Batch()
    workers = Workers(analyzer, jobs)
    try:
        if len(paths) > SERIAL_SCREEN_FILES and (cache is None or not cache.holds_screenings()):
            # Every file will be screened, more than this process screens alone: the pool is
            # sure to be wanted, so it is forked now, before this process holds the files
            # (see .workers). A cache that may answer leaves it to the first work that wants it.
            workers.start()
        _check(batch, paths, analyzer, cache, workers, root)
    finally:
        workers.close()
    return batch


def _check(
    batch: Batch,
    paths: Sequence[str],
    analyzer: Analyzer | LazyAnalyzer,
    cache: ResultCache | None,
    workers: Workers,
    root: str | os.PathLike[str] | None,
) -> None:
    """:func:`check_files`' work, into ``batch``."""
    from .dependencies import ImportResolver, find_dependencies
    from ..engine import FileError

    digests: dict[str, str] = {}
    verdicts: dict[str, Verdict] = {}
    imports: dict[str, Imports] = {}  # path -> its imports, for the files screened in
    misses: list[tuple[str, str]] = []
    facts: dict[str, Any] = {}  # path -> ScreenFacts, for the files screened in this run
    marks: dict[str, int] = {}  # path -> scan_marks() of every source, from the cache where it held them
    for path in paths:
        raw = _read_bytes(path)
        if isinstance(raw, ReadError):
            batch.errors.append(raw)
            continue
        text = decode_source(path, raw)
        if isinstance(text, ReadError):
            batch.errors.append(text)
            continue
        batch.sources.append((path, text))
        digest = digests[path] = content_digest(raw)
        cached = _cached_screen(cache, digest, path, imports)
        if cached is None or cache is None:
            misses.append((path, text))
            continue
        verdicts[path] = cached
        known = cache.text_marks(digest)
        if known is None:  # a verdict stored without them (the screening of a module imported)
            known = scan_marks(text, cached[0])
            cache.store_screen(digest, cached, imports.get(path), known)
        marks[path] = known

    batch.screened = len(misses)
    # The text pre-filter too (most files stop there): 1.8 s of the real-code corpus's
    # 4,729 files, which this process spent alone while the workers waited.
    computed, batch.workers = _screen_all(workers, misses, batch.warnings)
    screened: list[tuple[str, str, Any]] = []  # cached by persist(), not here: see it
    for (path, text), (verdict, file_facts) in zip(misses, computed):
        verdicts[path] = verdict
        if file_facts is not None:
            facts[path] = file_facts
            imports[path] = file_facts.imports
            screened.append((path, digests[path], file_facts))
        marks[path] = scan_marks(text, verdict[0])
        if cache is not None:
            cache.store_screen(digests[path], verdict, imports.get(path) if verdict[0] else None, marks[path])

    def persist() -> None:
        """Hand the cache what this run screened, and write it. The analysis reads
        this run's facts from ``facts``, never from the cache, so this can wait for the
        analysis workers to start: done while they work, it costs this process's idle
        time, not the run's (a cold check of the real-code corpus writes 1,866 facts
        files and screen documents: 0.6 to 1.3 s, converting the facts 0.4 s more)."""
        if cache is None:
            return
        for path, digest, file_facts in screened:
            _store_facts(cache, path, digest, file_facts)
        screened.clear()
        problem = cache.flush()
        if problem is not None:
            batch.warnings.append(problem)

    wanted: list[tuple[str, str]] = []
    lenders: set[str] = set()  # screened out, but lending their classes: context where imported
    for path, text in batch.sources:
        needs, errors = verdicts[path]
        batch.errors.extend(FileError(path, line, message) for line, message in errors)
        batch.may_suppress[path] = bool(marks[path] & MAY_SUPPRESS)
        if needs:
            wanted.append((path, text))
        elif marks[path] & MAY_LEND or analyzer.prefilter.re_exports(path, text):
            # it may be context (Prefilter.may_be_context): its tree decides, where it is imported
            lenders.add(path)

    if wanted:
        resolver = ImportResolver(None if root is None else os.path.realpath(root))  # one per run
        context = find_dependencies(
            [(path, imports.get(path, ())) for path, _ in wanted],
            [path for path, _ in batch.sources if path not in lenders],
            resolver,
            lambda targets: _load_context(targets, workers, cache, facts, batch.warnings),
            lenders,
        )
        batch.context = [dependency.path for dependency in context]
        found, failed = _analyze_with_records(
            batch, workers, cache, wanted, context, digests, imports, facts, resolver, persist
        )
        batch.findings.extend(found)
        batch.errors.extend(failed)
    persist()  # what is left: all of it, or the module records the analysis added


def _analyze_with_records(
    batch: Batch,
    workers: Workers,
    cache: ResultCache | None,
    wanted: list[tuple[str, str]],
    context: Sequence[Dependency],
    digests: dict[str, str],
    imports: dict[str, Imports],
    facts: dict[str, Any],
    resolver: ImportResolver,
    meanwhile: Callable[[], None] = lambda: None,
) -> tuple[list[Any], list[Any]]:
    """Findings and errors of ``wanted``: from their module records where they hit
    (looked up once each, here), analyzed where they miss, with the modules they
    import, transitively, as context (see :mod:`.records`); the misses are recorded.
    ``meanwhile``: see :func:`_analyze_all`."""
    from ..engine import FileError
    from ..engine.findings import finding_from_row, finding_row
    from .dependencies import Dependency

    units = _units(wanted, context)
    if cache is None or len({u.key for u in units}) != len(units):
        # no cache, or two files of the run are one module on disk: no key tells them apart
        batch.analyzed = len(wanted)
        if cache is not None:
            items = [(p, t, digests[p]) for p, t in wanted] + [(d.path, d.text, d.digest) for d in context]
            _cached_facts(cache, facts, items)
        findings, errors, batch.analysis_workers = _analyze_all(
            workers, wanted, context, imports, facts, resolver, batch.warnings, meanwhile
        )
        return findings, errors
    from .dependencies import import_graph
    from .records import localize_rows, record_keys, relocate_rows

    modules = [(path, imports.get(path, ())) for path, _ in wanted] + [(d.path, d.imports) for d in context]
    graph = import_graph(modules, resolver)
    digest_of = {**digests, **{d.path: d.digest for d in context}}
    keys = record_keys(units, graph, lambda u: _identity(u.path, digest_of[u.path]))
    path_of = {u.key: u.path for u in units}
    findings: list[Any] = []
    errors: list[Any] = []
    missed: list[Unit] = []
    for unit in units[: len(wanted)]:
        stored = cache.record(keys[unit.key])
        if stored is None:
            missed.append(unit)
            continue
        rows, error_rows = relocate_rows(*stored, path_of)
        findings.extend(f for f in map(finding_from_row, rows) if f is not None)
        errors.extend(FileError(*row) for row in error_rows)
    batch.records_hit = len(wanted) - len(missed)
    if not missed:
        batch.cached_analysis = True
        return findings, errors
    # What the misses import, transitively, from the run's modules: checked files that hit included.
    reach = closures(units, graph)
    needed: set[str] = set()
    for unit in missed:
        needed |= reach[unit.key]
    own = {u.key for u in missed}
    by_path = {d.path: d for d in context}
    extra = [
        by_path.get(u.path) or Dependency(u.path, u.text, digest_of[u.path], imports.get(u.path, ()))
        for u in units
        if u.key in needed and u.key not in own
    ]
    batch.analyzed = len(missed)
    sources = [(u.path, u.text) for u in missed]
    items = [(u.path, u.text, digest_of[u.path]) for u in missed] + [(d.path, d.text, d.digest) for d in extra]
    _cached_facts(cache, facts, items)
    computed, failures, batch.analysis_workers = _analyze_all(
        workers, sources, extra, imports, facts, resolver, batch.warnings, meanwhile
    )
    location_of = {u.path: u.key for u in units}
    rows_of: dict[str, tuple[list[Any], list[Any]]] = {u.path: ([], []) for u in missed}
    for finding in computed:
        rows_of.setdefault(finding.path, ([], []))[0].append(finding_row(finding))
    for error in failures:
        rows_of.setdefault(error.path, ([], []))[1].append([error.path, error.line, error.message])
    for unit in missed:
        cache.store_record(keys[unit.key], *localize_rows(*rows_of[unit.path], location_of))
    findings.extend(computed)
    errors.extend(failures)
    findings.sort(key=lambda f: f.sort_key)
    errors.sort(key=lambda e: (e.path, e.line or 0, e.message))
    return findings, errors


def _units(wanted: Sequence[tuple[str, str]], context: Sequence[Dependency]) -> list[Unit]:
    """The modules of a run's analysis: the checked files in order, then the context."""
    units = [Unit(os.path.normpath(os.path.abspath(path)), path, text, True) for path, text in wanted]
    units += [Unit(os.path.normpath(os.path.abspath(d.path)), d.path, d.text, False) for d in context]
    return units


#: :func:`scan_marks`: the text may hold a suppression comment (:func:`.markers.may_hold_suppressions`).
MAY_SUPPRESS = 1
#: :func:`scan_marks`: screened out, the text may still lend its classes or dispatch work
#: (:meth:`~.engine.prefilter.Prefilter.lends_by_text`; a package's ``__init__`` that imports
#: is context too, which its path says, not its text).
MAY_LEND = 2


def scan_marks(text: str, screened_in: bool) -> int:
    """What the run asks of a checked file's text besides its verdict, as bits
    (:data:`MAY_SUPPRESS`, :data:`MAY_LEND`), stored with the verdict in the cache.

    Why: both scan the whole text, and a warm run asked them of every file again (67 MB
    for the real-code corpus): kept, they took a warm check of it from 1.27 to 1.00 s
    (medians of 6 alternated pairs)."""
    marks = MAY_SUPPRESS if may_hold_suppressions(text) else 0
    if not screened_in and Prefilter.lends_by_text(text):
        marks |= MAY_LEND
    return marks


def _cached_screen(cache: ResultCache | None, digest: str, path: str, imports: dict[str, Imports]) -> Verdict | None:
    """The cached verdict for ``digest`` (recording the imports of a file screened in), or None:
    a verdict that says "screened in" without its imports is a miss."""
    cached = cache.screen(digest) if cache is not None else None
    if cached is None or not cached[0]:
        return cached
    known = cache.imports(digest) if cache is not None else None
    if known is None:
        return None
    imports[path] = known
    return cached


def _facts_key(path: str, digest: str) -> str:
    """What a module's screening facts depend on: its content, and its module name (the
    functions' qualified names begin with it)."""
    return f"{digest} {module_name_for(path)[0]}"


def _store_facts(cache: ResultCache | None, path: str, digest: str, file_facts: Any) -> None:
    if cache is not None:
        cache.store_facts(_facts_key(path, digest), file_facts.to_json())


def _cached_facts(cache: ResultCache, facts: dict[str, Any], items: Sequence[tuple[str, str, str]]) -> None:
    """Fill ``facts`` from the cache for the ``(path, text, digest)`` about to be analyzed
    that this run did not screen: the analysis then parses none of them with CPython."""
    from ..engine import ScreenFacts

    for path, text, digest in items:
        if path not in facts:
            found = ScreenFacts.from_json(cache.facts(_facts_key(path, digest)), text)
            if found is not None:
                facts[path] = found


def _identity(path: str, digest: str) -> str:
    """What an analysis depends on of one file: its content, and the name it is imported by
    (its module name and its absolute location)."""
    return f"{_facts_key(path, digest)} {module_location(path)}"


#: Context files to screen (text length) below which no pool is started for them:
#: CPython's parse and scan cost about 1 s per megabyte of text, a pool about 0.1 s.
SERIAL_SCREEN_CHARS = 400_000


def _load_context(
    targets: Sequence[str],
    workers: Workers,
    cache: ResultCache | None,
    facts: dict[str, Any],
    warnings: list[str],
) -> dict[str, Dependency]:
    """Read and screen the files ``targets`` (absolute paths) like checked files; the ones
    screened in, as dependencies. A file that cannot be read or decoded is left out: it is
    not being checked, so nothing about it is reported. With ``--jobs`` > 1, the files the
    text pre-filter keeps are screened in a pool as the checked files are (see
    :func:`_screen_all`; a file checked in its package imports 150 of its modules: 13% of
    its cold check, on one core)."""
    from .dependencies import Dependency

    analyzer = workers.analyzer
    loaded: dict[str, Dependency] = {}
    misses: list[tuple[str, str, str]] = []
    lent: list[tuple[str, str, str]] = []  # screened out: maybe lending their classes
    for target in targets:
        raw = _read_bytes(target)
        if isinstance(raw, ReadError):
            continue
        text = decode_source(target, raw)
        if isinstance(text, ReadError):
            continue
        digest = content_digest(raw)
        known: dict[str, Imports] = {}
        cached = _cached_screen(cache, digest, target, known)
        if cached is not None:
            if cached[0]:
                loaded[target] = Dependency(target, text, digest, known[target])
            else:
                lent.append((target, text, digest))
        elif analyzer.might_matter(text):
            misses.append((target, text, digest))
        else:
            lent.append((target, text, digest))
    if misses:
        computed = _screen_all(workers, [(target, text) for target, text, _ in misses], warnings)[0]
        for (target, text, digest), (verdict, file_facts) in zip(misses, computed):
            found = file_facts.imports if file_facts is not None else ()
            if cache is not None:
                cache.store_screen(digest, verdict, found if verdict[0] else None)
            if verdict[0] and file_facts is not None:
                facts[target] = file_facts
                _store_facts(cache, target, digest, file_facts)
                loaded[target] = Dependency(target, text, digest, found)
            else:
                lent.append((target, text, digest))
    unknown: list[tuple[str, str, str]] = []
    for target, text, digest in lent:
        # screened out: it can still lend its classes (a factory of model clients), else no fact
        known_lent = cache.lent(digest) if cache is not None else None
        if known_lent is None:
            unknown.append((target, text, digest))
        elif known_lent[0]:  # its facts are left for an analysis to find, if one runs
            loaded[target] = Dependency(target, text, digest, known_lent[1])
    lent_found = _lend_all(workers, [(target, text) for target, text, _ in unknown], warnings)
    for (target, text, digest), lent_facts in zip(unknown, lent_found):
        if cache is not None:
            cache.store_lent(digest, None if lent_facts is None else lent_facts.imports)
        if lent_facts is not None:
            facts[target] = lent_facts
            _store_facts(cache, target, digest, lent_facts)
            loaded[target] = Dependency(target, text, digest, lent_facts.imports)
    return loaded


def _read_bytes(path: str) -> bytes | ReadError:
    """Regular files only, and at most :data:`~.sources.MAX_SOURCE_BYTES`: a FIFO or a
    device named on the command line is refused, never waited on or read without end."""
    return read_source_bytes(path)


# -- screening, in this process or in a pool ---------------------------------------------


def screen_texts(analyzer: Analyzer | LazyAnalyzer, items: Sequence[tuple[str, str]]) -> list[tuple[Verdict, Any]]:
    """Verdicts of ``(path, text)`` pairs, each with the :class:`~.engine.ScreenFacts` of a
    file screened in (None otherwise), on a thread with a deep stack (see :mod:`.deepstack`).

    The cyclic collector is paused meanwhile, as for an analysis (see
    :mod:`.engine.collector`): CPython's trees are acyclic and die with each file, so
    the collections their millions of nodes set off free nothing. Paired cold runs of
    the real-code corpus: the screening took 13.0-13.7 s against 14.1-15.7 s."""
    from ..engine.collector import collector_paused

    def work() -> list[tuple[Verdict, Any]]:
        verdicts: list[tuple[Verdict, Any]] = []
        with collector_paused():
            for path, text in items:
                needs, errors, file_facts = analyzer.screen_facts(path, text)
                verdicts.append(((needs, tuple((e.line, e.message) for e in errors)), file_facts))
        return verdicts

    return call_with_deep_stack(work)


def lent_texts(analyzer: Analyzer | LazyAnalyzer, items: Sequence[tuple[str, str]]) -> list[Any]:
    """:meth:`~.engine.Analyzer.lent_facts` of ``(path, text)`` pairs, in order, on a thread
    with a deep stack, the collector paused (as in :func:`screen_texts`)."""
    from ..engine.collector import collector_paused

    def work() -> list[Any]:
        with collector_paused():
            return [analyzer.lent_facts(path, text) for path, text in items]

    return call_with_deep_stack(work)


def _lend_all(workers: Workers, items: list[tuple[str, str]], warnings: list[str]) -> list[Any]:
    """:func:`lent_texts`, in the run's pool when ``--jobs`` > 1 and there are at least
    :data:`SERIAL_SCREEN_CHARS` of text. Why: the modules a whole tree's files import
    include the run's own screened-out files, and the parent process read what each
    lends with CPython's parser one after another while every worker waited (4.3 s of
    the real-code corpus, 4,729 files). Without a pool, the work is done here."""
    if not items:
        return []
    busy = min(workers.jobs, len(items))
    if busy > 1 and sum(len(text) for _, text in items) >= SERIAL_SCREEN_CHARS:
        found = workers.map("screening", _lent_chunk, _chunks(items, busy), warnings)
        if found is not None:
            return found
    return lent_texts(workers.analyzer, items)


#: Up to this many files to screen (below :data:`SERIAL_SCREEN_CHARS` of text) are screened
#: in this process: a pre-commit hook's few staged files would wait longer for a pool
#: to start (about 0.1 s) than for their screening. A run of more files than this, with
#: ``--jobs`` > 1 and no screening in its cache, starts its pool before it reads them
#: (see :func:`check_files`).
SERIAL_SCREEN_FILES = 64


def _screen_all(
    workers: Workers, items: list[tuple[str, str]], warnings: list[str]
) -> tuple[list[tuple[Verdict, Any]], int]:
    """Verdicts of ``items`` in order, and the number of worker processes used (0: in
    this process). Without a pool (see :mod:`.workers`), the work is done here and
    ``warnings`` says why."""
    busy = min(workers.jobs, len(items))
    if busy > 1 and (
        len(items) > SERIAL_SCREEN_FILES or sum(len(text) for _, text in items) >= SERIAL_SCREEN_CHARS
    ):
        found = workers.map("screening", _screen_chunk, _chunks(items, busy), warnings)
        if found is not None:
            return found, busy
    return screen_texts(workers.analyzer, items), 0


def _chunks(items: list[tuple[str, str]], workers: int) -> list[list[tuple[str, str]]]:
    """``items`` in contiguous chunks of decreasing text: each takes a share of what is
    left (a ``workers``-th of its half), down to :data:`MIN_CHUNK_CHARS` (or a quarter of a
    worker's share of a run with less text), and a file that would take a chunk past its
    share begins the next one. The workers take chunks as they finish the last one, so
    they end together within a small chunk's and one file's time.

    Why: a few chunks of equal file counts left one worker screening alone at the end for
    as long as its last chunk took (the real-code corpus: 1.4-1.6 s of a 9-11 s screening,
    in eight chunks; now 0.15-0.2 s). The order stays the given one (a package's files
    together): the same chunks dealt largest file first cost 10% more CPU, three runs each."""
    left = sum(len(text) for _, text in items)
    smallest = max(1, min(MIN_CHUNK_CHARS, left // (4 * workers)))  # little text: still a few per worker
    chunks: list[list[tuple[str, str]]] = []
    start = weight = 0
    share = max(smallest, left // (2 * workers))
    for end, (_, text) in enumerate(items):
        if weight and weight + len(text) > share:  # this file begins the next chunk
            chunks.append(items[start:end])
            left -= weight
            start, weight = end, 0
            share = max(smallest, left // (2 * workers))
        weight += len(text)
    if start < len(items):
        chunks.append(items[start:])
    return chunks


#: The least text a chunk of screening holds (unless it holds the rest, or the run holds
#: little): pickling a chunk and its results costs about a millisecond, its screening
#: about a second per megabyte.
MIN_CHUNK_CHARS = 200_000


def _screen_chunk(items: Sequence[tuple[str, str]]) -> list[tuple[Verdict, Any]]:  # pragma: no cover - runs in a worker
    return screen_texts(WORKER["analyzer"], items)


def _lent_chunk(items: Sequence[tuple[str, str]]) -> list[Any]:  # pragma: no cover - runs in a worker
    return lent_texts(WORKER["analyzer"], items)


# -- analysis, in this process or in chunks across a pool ---------------------------------

#: Below this many characters of checked text, the analysis stays in this process:
#: starting workers and shipping them their modules would cost more than it saves
#: (a pre-commit hook with a few small files).
SERIAL_ANALYSIS_CHARS = 20_000


def _analyze_all(
    workers: Workers,
    wanted: list[tuple[str, str]],
    context: Sequence[Dependency],
    imports: dict[str, Imports],
    facts: dict[str, Any],
    resolver: ImportResolver,
    warnings: list[str],
    meanwhile: Callable[[], None] = lambda: None,
) -> tuple[list[Any], list[Any], int]:
    """Findings and errors of ``wanted`` analyzed with ``context``, and the number of
    worker processes used (0: in this process). Chunked across the run's pool when
    ``--jobs`` > 1 and there is enough to share; the same findings either way (see
    :mod:`.chunks`). Without a pool (see :mod:`.workers`), the work is done here and
    ``warnings`` says why.
    ``meanwhile`` runs in this process while a pool's workers analyze (it must not
    raise): this process is otherwise idle until their results come back.

    Each group of files that shares no module with the others (see
    :func:`.chunks.groups`: unrelated packages checked as one tree) is analyzed as a
    project of its own, so two packages' modules of one name never meet (SPEC §3.1.1:
    a file's findings depend on what it imports, not on what else is in the run)."""
    analyzer, jobs = workers.analyzer, workers.jobs
    if len(wanted) <= 1:
        return (*_analyze_groups(analyzer, [_whole(wanted, context)], facts), 0)
    plan = _planner(wanted, context, imports, resolver)  # the import graph, resolved once
    parallel = jobs > 1 and sum(len(text) for _, text in wanted) >= SERIAL_ANALYSIS_CHARS
    chunks = plan(jobs if parallel else 1)
    if len(chunks) > 1:
        pool = workers.pool("analysis", warnings) if expected_speedup(chunks) >= MIN_SPEEDUP else None
        if pool is not None:
            try:
                return (*_analyze_in_pool(pool, chunks, facts, meanwhile), len(chunks))
            except Exception as exc:  # noqa: BLE001 - a broken pool, or the work's own failure: see .workers
                workers.failed("analysis", exc, warnings)
        chunks = plan(1)  # split for workers, but run here: one chunk, so no module is analyzed twice
    (chunk,) = chunks
    groups = [_projects(part) for part in chunk.parts] if chunk.parts else [_whole(wanted, context)]
    return (*_analyze_groups(analyzer, groups, facts), 0)


def _projects(part: Chunk) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """A group's ``(sources, context)`` as :meth:`~.engine.Analyzer.analyze` takes them."""
    return [(u.path, u.text) for u in part.sources], [(u.path, u.text) for u in part.context]


def _whole(
    wanted: Sequence[tuple[str, str]], context: Sequence[Dependency]
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The whole run as one project (one file, or two files that are one module on disk)."""
    return list(wanted), [(d.path, d.text) for d in context]


def _analyze_groups(
    analyzer: Analyzer | LazyAnalyzer,
    groups: Sequence[tuple[list[tuple[str, str]], list[tuple[str, str]]]],
    facts: dict[str, Any],
    last_of_process: bool = True,
) -> tuple[list[Any], list[Any]]:
    """Each ``(sources, context)`` analyzed as a project of its own, in this process; the
    results merged and sorted as :meth:`~.engine.Analyzer.analyze` sorts them. The
    command line's processes end after their analyses: the last one's cyclic garbage
    is left to the exit (see :func:`~.engine.collector.defer_next_collection`), so the
    largest group goes last. Every other group's garbage is collected when its analysis
    ends, at a cost that grows with the group: the real-code corpus checked whole put
    agno first in its chunk (15.6 of 24 M characters), and the collections were 7% of
    that worker's time."""
    from ..engine.collector import defer_next_collection

    findings: list[Any] = []
    errors: list[Any] = []
    # by size, smallest first (ties keep their order); the results are sorted below
    by_size = sorted(groups, key=lambda group: sum(len(text) for _, text in (*group[0], *group[1])))
    for index, (sources, context) in enumerate(by_size):
        if last_of_process and index == len(by_size) - 1:
            defer_next_collection()
        found, failed = call_with_deep_stack(lambda: analyzer.analyze(sources, facts, context))
        findings.extend(found)
        errors.extend(failed)
    if len(groups) > 1:
        findings.sort(key=lambda f: f.sort_key)
        errors.sort(key=lambda e: (e.path, e.line or 0, e.message))
    return findings, errors


#: The chunks of a run share the modules their files import (each analyzes them as
#: context), so splitting pays only when the largest chunk is well below the whole: below
#: this expected speed-up (every module's cost once, over the largest chunk's, a context
#: module counted as if checked), one process is as fast. Since a context module's bodies
#: are parsed and solved only as far as the checked files reach them (``.engine.bodies``,
#: ``.engine.solver.demanded``), context costs less than the model says, and one
#: package split in two pays below the 1.5 this was: on 2 cores (``--no-cache --jobs 2``
#: over one package, split forced against not, alternated, 2 runs each, 2026-12-04)
#: langchain-core 1.8.4 (expected 1.33) took 0.81x the wall time, letta 0.16.8 (1.31)
#: 0.86x, agno 3.1.10 (1.15) 0.90x and 1.02x, llama-index-core 0.14.25 (1.09) 1.01x.
MIN_SPEEDUP = 1.25


def expected_speedup(chunks: Sequence[Chunk]) -> float:
    """Every module's cost once, over the cost of the largest chunk (context included)."""
    once = {u.key: u.cost for chunk in chunks for u in (*chunk.sources, *chunk.context)}
    return sum(once.values()) / max(chunk.cost for chunk in chunks)


def plan_chunks(
    wanted: Sequence[tuple[str, str]],
    context: Sequence[Dependency],
    imports: dict[str, Imports],
    jobs: int,
    root: str | None,
) -> list[Chunk]:
    """The chunks of a run's analysis (see :func:`.chunks.partition`), each with its
    groups (``parts``); a single chunk of one project when two files of the run are the
    same module on disk (they cannot be told apart by key)."""
    from .dependencies import ImportResolver

    return _planner(wanted, context, imports, ImportResolver(root))(jobs)


def _planner(
    wanted: Sequence[tuple[str, str]],
    context: Sequence[Dependency],
    imports: dict[str, Imports],
    resolver: ImportResolver,
) -> Callable[[int], list[Chunk]]:
    """:func:`plan_chunks` for any number of jobs, over one import graph."""
    from .dependencies import import_graph

    modules = [(path, imports.get(path, ())) for path, _ in wanted] + [(d.path, d.imports) for d in context]
    graph = import_graph(modules, resolver)
    units = _units(wanted, context)
    if len({u.key for u in units}) != len(units):
        return lambda jobs: [Chunk(units[: len(wanted)], units[len(wanted) :])]
    return lambda jobs: partition(units, graph, jobs)


def _chunk_work(chunk: Chunk, facts: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """What a worker needs for ``chunk``: each group's sources and context, and their screening facts."""
    paths = [u.path for u in (*chunk.sources, *chunk.context)]
    return [_projects(part) for part in chunk.parts or [chunk]], {path: facts[path] for path in paths if path in facts}


def _analyze_in_pool(
    pool: Executor, chunks: list[Chunk], facts: dict[str, Any], meanwhile: Callable[[], None] = lambda: None
) -> tuple[list[Any], list[Any]]:
    """Every chunk analyzed in the run's pool, results merged and sorted as
    :meth:`~.engine.Analyzer.analyze` sorts them.

    A chunk's groups (unrelated packages, each a project of its own) are queued one by one,
    the largest first, and each worker takes the next when it is done: the plan balances
    chunks by text length, which only estimates their time (the real-code corpus's two
    chunks took 55.6 and 50.5 s of CPU, planned alike). Cold runs of that corpus, paired
    with the chunks queued whole, four pairs: 0.94x to 1.00x the time, median 0.98x."""
    tasks = [part for chunk in chunks for part in (chunk.parts or [chunk])]
    ordered = sorted(tasks, key=lambda c: -c.cost)
    findings: list[Any] = []
    errors: list[Any] = []
    futures = [pool.submit(_analyze_chunk, *_chunk_work(chunk, facts)) for chunk in ordered]
    meanwhile()
    try:
        for future in futures:
            chunk_findings, chunk_errors = future.result()
            findings.extend(chunk_findings)
            errors.extend(chunk_errors)
    except BaseException:
        for future in futures:  # the work is done again here: the workers need not finish it
            future.cancel()
        raise
    findings.sort(key=lambda f: f.sort_key)
    errors.sort(key=lambda e: (e.path, e.line or 0, e.message))
    return findings, errors


def _analyze_chunk(
    groups: list[tuple[list[tuple[str, str]], list[tuple[str, str]]]], facts: dict[str, Any]
) -> tuple[list[Any], list[Any]]:  # pragma: no cover - runs in a worker
    # A worker does not know which of its tasks is its last: none defers its garbage.
    return _analyze_groups(WORKER["analyzer"], groups, facts, last_of_process=False)
