"""The worker processes of one run: one pool, shared by its screening, its context
loading and its analysis, and forked before the run reads its files when it will
screen every one of them.

Why one pool: each kind of work used to fork a pool of its own when it began (a
screening and a lending pool per round of the search for a file's imports: agno's
``agent/_run.py`` checked alone forked five), each a fork of a process that grows
with what the run has read. A fork
copies the process's page tables, and each page either side then writes is copied
too: a cold check of the real-code corpus (4,729 files, ``--jobs 2``) spent 2.2-2.5 s
of system time, 1.5-1.6 s with one pool (three alternated runs each).

Why early: a worker forked after the run has read its files holds them too, as pages
it shares with this process. A shared page is held once, but it counts in each
process's resident size: the worker that analyzed agno in that check reported 795 MiB
resident, of which 321 MiB were shared with this process. Forked before the files are
read, it reported 458 MiB, 439 MiB of them its own (465 MiB before). What the run
holds in all hardly changes (1,284 against 1,218 MiB, the sum of its processes'
proportional set sizes, as ``tests/benchmarks/bench_check_corpus.py`` prints it); the
largest resident size, the figure a memory limit on a process sees, falls from 807
to 485 MiB. A run whose cache may answer leaves the pool to the first work that
wants it: a warm check forks nothing.

A pool that cannot start (no ``/dev/shm``, a sandbox, an analyzer that cannot be
pickled where processes are spawned) or that breaks (a worker killed) leaves every
later piece of work to this process; each kind of work that wanted it says so once
(:func:`pool_failure`). Work that fails in the workers for another reason (its own
exception) is done again here, and says so; later work keeps the pool.
"""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from concurrent.futures import Executor, Future

    from ..engine import Analyzer
    from .lazy_analyzer import LazyAnalyzer

__all__ = ["WORKER", "Workers", "pool_failure"]

#: What a worker process holds for the run: its ``"analyzer"`` (see :func:`_start_worker`).
WORKER: dict[str, Any] = {}


class Workers:
    """Up to ``jobs`` worker processes, each with the run's analyzer, started at most once."""

    def __init__(self, analyzer: Analyzer | LazyAnalyzer, jobs: int) -> None:
        self.analyzer = analyzer
        self.jobs = jobs
        self._pool: Executor | None = None
        #: The first task, whose result says the workers could start (see :meth:`_launch`).
        self._started: Future[bool] | None = None
        #: Why the pool cannot be used, and how it failed ("could not start", "stopped during
        #: the run": one of its workers died): set once, for good.
        self._failure: tuple[BaseException, str] | None = None
        #: Whether :meth:`close` ended it: a pool is started at most once.
        self._closed = False
        #: The kinds of work already told of a failure.
        self._told: set[str] = set()

    def start(self) -> None:
        """Fork the workers now, if there are to be any: before the run reads its files,
        so that they inherit none of them. A failure is kept for the first work that
        wants the pool, which says it."""
        if self.jobs > 1 and self._pool is None and self._failure is None and not self._closed:
            try:
                self._pool, self._started = self._launch()
            except Exception as exc:  # noqa: BLE001 - said by the work that wanted the pool
                self._failure = exc, "could not start"

    def pool(self, work: str, warnings: list[str]) -> Executor | None:
        """The started pool for ``work`` ("screening", "analysis"), or None: then ``work``
        runs in this process, and ``warnings`` says why (once per kind of work)."""
        self.start()
        started, self._started = self._started, None
        if started is not None:
            try:
                started.result()
            except Exception as exc:  # noqa: BLE001 - a worker that could not start
                self._failure = exc, "could not start"
                self.close()
        if self._failure is not None:
            self._tell(work, warnings, *self._failure)
            return None
        return self._pool

    def map(
        self, work: str, function: Callable[[Any], list[Any]], chunks: Sequence[Any], warnings: list[str]
    ) -> list[Any] | None:
        """``function`` of each of ``chunks`` in the pool, its lists joined in order; None
        when ``work`` is to be done in this process instead (``warnings`` says why)."""
        pool = self.pool(work, warnings)
        if pool is None:
            return None
        try:
            return [item for found in pool.map(function, chunks) for item in found]
        except Exception as exc:  # noqa: BLE001 - a broken pool, or the work's own failure: see failed()
            self.failed(work, exc, warnings)
            return None

    def failed(self, work: str, exc: BaseException, warnings: list[str]) -> None:
        """``work`` could not be done in the pool, and is done in this process instead. A
        broken pool (a worker died: ``BrokenProcessPool``) is given up for the rest of the
        run; any other failure (the work's own exception, its data that could not be
        pickled) is this work's alone, and later work still has the pool."""
        from concurrent.futures.process import BrokenProcessPool

        if isinstance(exc, BrokenProcessPool):
            self._failure = exc, "stopped during the run"
            self.close()
            self._tell(work, warnings, *self._failure)
        else:
            self._tell(work, warnings, exc, "failed")

    def close(self) -> None:
        """End the workers (they are idle between pieces of work, and at the end of the
        run), for good: the run starts no other pool."""
        self._closed = True
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def _tell(self, work: str, warnings: list[str], exc: BaseException, how: str) -> None:
        """Say once per kind of work why it ran in this process (see :func:`pool_failure`)."""
        if work not in self._told:
            self._told.add(work)
            warnings.append(pool_failure(work, self.jobs, exc, how=how))

    def _launch(self) -> tuple[Executor, Future[bool]]:
        """The pool, and its first task: where processes are forked, submitting it forks
        them all, now; its result (awaited by the first work that wants the pool, not
        here) shows that they could start (where processes are spawned, that the
        analyzer could be pickled)."""
        from concurrent.futures import ProcessPoolExecutor  # a pool's imports, paid only by a run that starts one

        analyzer = self.analyzer
        initargs = (analyzer.vocabulary, analyzer.rule_classes, analyzer.target_version)
        pool = ProcessPoolExecutor(self.jobs, mp_context=_context(), initializer=_start_worker, initargs=initargs)
        try:
            return pool, pool.submit(_ready)
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)
            raise


def pool_failure(work: str, workers: int, exc: BaseException, how: str = "could not start") -> str:
    """The warning for ``workers`` processes that could not do ``work`` (``how``: they "could
    not start", "stopped during the run", or the work "failed" in them): the run goes on in
    one process, with the same findings, only slower, and ``--jobs`` should not promise
    cores it did not get without saying so."""
    from ..engine.findings import describe

    if how == "failed":
        return f"the {work} ran in one process: it failed in the {workers} worker processes ({describe(exc)})"
    return f"the {work} ran in one process: {workers} worker processes {how} ({describe(exc)})"


def _context() -> Any:
    """``fork`` where it is safe and available (no start-up imports), else the platform's default."""
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1 and os.name == "posix":
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def _start_worker(
    vocabulary: Any, rule_classes: Sequence[type], target_version: str | None
) -> None:  # pragma: no cover - runs in a worker
    from ..engine import Analyzer

    WORKER["analyzer"] = Analyzer(vocabulary, rule_classes, target_version)
    # What the worker inherited and just built lives as long as it does: out of the
    # collector's sight, a parse's millions of short-lived nodes do not make every
    # full collection walk it again (measured: 20-30% of the screening CPU).
    gc.freeze()


def _ready() -> bool:  # pragma: no cover - runs in a worker
    return True
