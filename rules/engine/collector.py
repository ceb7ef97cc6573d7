"""Pause Python's cyclic garbage collector while one analysis builds its heap.

An analysis keeps every parsed module's libcst tree, the project index and the
function summaries alive until its rules have run: hundreds of megabytes of
objects that all live exactly as long as the analysis. libcst's parser makes
millions of short-lived objects on the way, and each collection they trigger
walks the young generations, and from time to time the whole heap that the
analysis has built so far. None of those walks frees the trees (they are
still in use), so their cost is pure overhead: measured on agno's
``agent/_run.py`` checked in its package, 49.9 s with the collector and 37.6 s
without it, for 348 MB against 384 MB of peak memory; letta 0.16.8 checked whole
(``--jobs 2``), 51.5 s against 47.3 s, for 362 MiB against 393 MiB. About a tenth
more memory for up to a quarter less time.

So :func:`collector_paused` turns the collector off for the duration of an
analysis and back on after it (when it was on: a caller who disabled it keeps
it disabled). Reference counting still frees every acyclic object at once;
only cyclic garbage made during the analysis waits for the next collection
after it. Pauses nest and may overlap across threads: the collector comes
back on when the last one ends.

That next collection used to walk everything the analysis made (its project index
was cyclic, and it held the trees): 1.1 s of a 16 s check of agno's
``agent/_run.py`` in its package. An analysis now breaks its index's cycles when it
ends (:meth:`.project.Project.release`), so reference counting frees its trees and
that collection finds little (langchain-core checked whole: 7,900 objects left
where there were 1.29 M). So the engine makes no other cycle that reaches a tree: no
recursive closure (a closure that calls itself is a cycle, and one that held the
compaction facts kept agno's whole analysis, 1.9 M objects, for the collector), no
table of an instance's bound methods, no throwaway index left linked
(``tests/rules/test_collector.py`` checks an analysis and a screening for it). A
process that ends after its analyses (the command line, its workers) need not pay
it for the last one, since the
interpreter's exit does not collect frozen objects (:func:`gc.freeze`). After
:func:`defer_next_collection`, the end of the next pause freezes what is there,
garbage included, and the start of the pause after it, if any, collects it
(``unfreeze``, collect, ``freeze`` again what is alive): at most one analysis's
garbage is ever kept. That deferred collection walks the whole heap, not only
what the analysis made, so it is armed once per batch of analyses (before the
last of them), never for each: armed for every group of a run, it made a
four-package run in one process 1.19x slower.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collector_paused", "defer_next_collection"]

_lock = threading.Lock()
_paused = 0
_resume = False  # whether the collector was on when the first pause began
_defer = False  # set by defer_next_collection(), for the next outermost pause's end
_deferred = False  # the last pause froze its garbage: the next one collects it


def defer_next_collection() -> None:
    """For the last analysis of a process that ends after it (the command line): its
    cyclic garbage is collected when another analysis starts, if one does, never at
    its end (see the module's documentation). Arms the next outermost pause only."""
    global _defer
    _defer = True


@contextmanager
def collector_paused() -> Iterator[None]:
    """Keep the cyclic collector off inside the ``with`` block (see module doc)."""
    global _paused, _resume, _deferred, _defer
    with _lock:
        if _paused == 0:
            _resume = gc.isenabled()
            gc.disable()
            if _deferred:  # the previous analysis's garbage, frozen when it ended
                _deferred = False
                gc.unfreeze()
                gc.collect()
                gc.freeze()
        _paused += 1
    try:
        yield
    finally:
        with _lock:
            _paused -= 1
            if _paused == 0:
                if _defer:
                    _defer = False
                    gc.freeze()
                    _deferred = True
                if _resume:
                    gc.enable()
