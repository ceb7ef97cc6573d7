"""Read, screen and analyze the files of one run: with the result cache, across cores.

The work has two parts, because the analysis crosses modules:

1. **Screening, per file** (:meth:`Analyzer.screen`): the text pre-filter,
   then CPython's parser and the code-word gate for the files the pre-filter
   keeps. It depends on the file's text alone, so its verdict is cached by
   content and, for the files not in the cache, computed in a process pool
   when more than one file needs CPython's parser (serial otherwise). What
   crosses process boundaries is small: the text in, a boolean and a few
   error rows out. No syntax tree is ever pickled.
2. **Analysis, of the screened-in files together** (:meth:`Analyzer.analyze`):
   libcst, function summaries solved to a fixed point across all of them,
   one rule pass per file. It runs in this process, on every file that
   needs it at once, so a validator in ``recovery.py`` still protects a
   resume in ``loop.py``. Its result is cached under the ordered list of
   (path, content digest) of those files (see :mod:`.cache`).

The engine's call resolution is project-wide (a bare name may resolve to a
method of any module, a method call to the one method of that name in the
project), so real code does not split into independent groups of files; the
analysis is therefore one unit, and the results of ``--jobs 1`` and
``--jobs N`` are identical by construction: only the screening is spread.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .cache import ResultCache, Verdict, content_digest, project_key
from .deepstack import call_with_deep_stack
from .report import ErrorLike, ReadError
from .sources import decode_source

if TYPE_CHECKING:  # pragma: no cover
    from .engine import Analyzer

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


def check_files(paths: Sequence[str], analyzer: Analyzer, cache: ResultCache | None, jobs: int) -> Batch:
    """Findings and errors of ``paths`` (display paths), as ``analyzer.analyze`` would give them."""
    from .engine import FileError, Finding

    batch = Batch()
    digests: dict[str, str] = {}
    verdicts: dict[str, Verdict] = {}
    misses: list[tuple[str, str]] = []
    facts: dict[str, Any] = {}  # path -> ScreenFacts, for the files screened in this run
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
        cached = cache.screen(digest) if cache is not None else None
        if cached is not None:
            verdicts[path] = cached
        elif not analyzer.might_matter(text):  # the text scan: cheap enough to stay here
            verdicts[path] = (False, ())
            if cache is not None:
                cache.store_screen(digest, verdicts[path])
        else:
            misses.append((path, text))

    batch.screened = len(misses)
    computed, batch.workers = _screen_all(analyzer, misses, jobs)
    for (path, _), (verdict, file_facts) in zip(misses, computed):
        verdicts[path] = verdict
        if file_facts is not None:
            facts[path] = file_facts
        if cache is not None:
            cache.store_screen(digests[path], verdict)

    wanted: list[tuple[str, str]] = []
    for path, text in batch.sources:
        needs, errors = verdicts[path]
        batch.errors.extend(FileError(path, line, message) for line, message in errors)
        if needs:
            wanted.append((path, text))

    if wanted:
        key = project_key((path, digests[path]) for path, _ in wanted)
        stored = cache.project(key) if cache is not None else None
        if stored is not None:
            batch.cached_analysis = True
            batch.findings.extend(Finding(*row) for row in stored[0])
            batch.errors.extend(FileError(*row) for row in stored[1])
        else:
            batch.analyzed = len(wanted)
            findings, errors = call_with_deep_stack(lambda: analyzer.analyze(wanted, facts))
            batch.findings.extend(findings)
            batch.errors.extend(errors)
            if cache is not None:
                cache.store_project(
                    key,
                    [[f.path, f.line, f.column, f.end_line, f.end_column, f.code, f.name, f.message] for f in findings],
                    [[e.path, e.line, e.message] for e in errors],
                )
    if cache is not None:
        cache.flush()
    return batch


def _read_bytes(path: str) -> bytes | ReadError:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except IsADirectoryError:
        return ReadError(path, None, "cannot read file: it is a folder")
    except OSError as exc:
        return ReadError(path, None, f"cannot read file: {exc.strerror or exc}")


# -- screening, in this process or in a pool ---------------------------------------------


def screen_texts(analyzer: Analyzer, items: Sequence[tuple[str, str]]) -> list[tuple[Verdict, Any]]:
    """Verdicts of ``(path, text)`` pairs, each with the :class:`~.engine.ScreenFacts` of a
    file screened in (None otherwise), on a thread with a deep stack (see :mod:`.deepstack`)."""

    def work() -> list[tuple[Verdict, Any]]:
        verdicts: list[tuple[Verdict, Any]] = []
        for path, text in items:
            needs, errors, file_facts = analyzer.screen_facts(path, text)
            verdicts.append(((needs, tuple((e.line, e.message) for e in errors)), file_facts))
        return verdicts

    return call_with_deep_stack(work)


def _screen_all(
    analyzer: Analyzer, items: list[tuple[str, str]], jobs: int
) -> tuple[list[tuple[Verdict, Any]], int]:
    """Verdicts in order, and the number of worker processes used (0: in this process)."""
    workers = min(jobs, len(items))
    if workers > 1:
        try:
            return _screen_in_pool(analyzer, items, workers), workers
        except Exception:  # noqa: BLE001 - no pool (no /dev/shm, a sandbox, an unpicklable plugin): serial
            pass
    return screen_texts(analyzer, items), 0


def _screen_in_pool(analyzer: Analyzer, items: list[tuple[str, str]], workers: int) -> list[tuple[Verdict, Any]]:
    # Contiguous chunks, a few per worker: large enough that pickling and
    # scheduling cost little, small enough to balance uneven files.
    size = max(1, -(-len(items) // (workers * 4)))
    chunks = [items[i : i + size] for i in range(0, len(items), size)]
    context = _context()
    initargs = (analyzer.vocabulary, analyzer.rule_classes)
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_start_worker, initargs=initargs) as pool:
        results = list(pool.map(_screen_chunk, chunks))
    return [verdict for chunk in results for verdict in chunk]


def _context() -> Any:
    """``fork`` where it is safe and available (no start-up imports), else the platform's default."""
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1 and os.name == "posix":
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


_WORKER: dict[str, Any] = {}


def _start_worker(vocabulary: Any, rule_classes: Sequence[type]) -> None:  # pragma: no cover - runs in a worker
    from .engine import Analyzer

    _WORKER["analyzer"] = Analyzer(vocabulary, rule_classes)


def _screen_chunk(items: Sequence[tuple[str, str]]) -> list[tuple[Verdict, Any]]:  # pragma: no cover - runs in a worker
    return screen_texts(_WORKER["analyzer"], items)
