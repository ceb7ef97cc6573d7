"""The report every framework's overhead benchmark prints: guarded against unguarded runs.

The samples alternate (one unguarded run, one guarded run, ...) so that the
machine's load weighs on both; the paired median of the per-pair ratios is the
figure to read, with the ratio of medians, of minima and of wall times beside it.
Imported by the ``bench_<framework>.py`` scripts (run from the repository root,
which puts this folder on ``sys.path``); not collected by pytest.
"""

from __future__ import annotations

import statistics

__all__ = ["print_guarded_ratio"]


def print_guarded_ratio(title: str, times: dict[bool, list[float]], walls: dict[bool, list[float]], goal: float) -> None:
    """Print both kinds' CPU and wall medians and the guarded / unguarded ratios (``times[True]`` is guarded)."""
    print(title)
    for guarded, name in ((False, "unguarded"), (True, "guarded")):
        print(
            f"  {name:<10} CPU median {statistics.median(times[guarded]) * 1e3:7.2f} ms, min {min(times[guarded]) * 1e3:7.2f} ms"
            f"   (wall median {statistics.median(walls[guarded]) * 1e3:7.2f} ms)"
        )
    paired = statistics.median(g / u for g, u in zip(times[True], times[False]))
    median = statistics.median(times[True]) / statistics.median(times[False])
    best = min(times[True]) / min(times[False])
    wall = statistics.median(walls[True]) / statistics.median(walls[False])
    print(
        f"guarded / unguarded CPU: paired median {paired:.3f}x (goal < {goal}x); "
        f"ratio of medians {median:.3f}x, of minima {best:.3f}x; wall {wall:.3f}x"
    )
