"""Benchmark the module records (rules/cli/records.py): cold, warm, and cost as importers grow.

SPEC §3.1.2: a whole tree, cold, costs less than parsing every file with
libcst on the same cores; warm (nothing changed) is at least 20x faster than
cold; the cost grows with the code, never with the number of files that import
a module (an imported module's analysis is computed once per content and
reused, across files and runs). This script prints those ratios, each measured
against its yardstick in the same run (the machine is shared: read ratios, not
seconds), as medians of ``--runs`` alternated runs:

1. **cold vs parse**: ``summaryguard check --format json --jobs N .`` with an
   empty result cache (``$SUMMARYGUARD_CACHE_DIR``: a fresh temporary folder),
   against a bare ``libcst.parse_module`` of every ``.py`` file of the tree in
   a pool of N processes; both are subprocesses, interpreter start-up included;
   the ratio is printed in wall seconds and in CPU seconds (user and system,
   workers included: what the load of a shared machine moves least);
2. **warm vs cold**: the same check again, nothing changed;
3. **importers**: a generated tree with one shared module (a validator and its
   helpers) and K, 2K, 4K small modules that import it: cold ``--no-cache``
   per line of code, and, from a warm cache, the cost of editing ONE importer
   (it and what it imports are analyzed again, never the other importers)
   and of editing the shared module (every importer misses: cost with the code).

The tree is a folder given as argument (a real package, e.g.
``~/.cache/sg-realcode/src/letta-0.16.8``: only read, the cache goes to a
temporary folder), or by default a generated synthetic tree, so the script runs
anywhere. Run it from the repository root, in the project's environment::

    python tests/benchmarks/bench_module_records.py
    python tests/benchmarks/bench_module_records.py ~/.cache/sg-realcode/src/letta-0.16.8 --jobs 2
    python tests/benchmarks/bench_module_records.py --importers 40 --runs 3 --skip-tree

It exits 1 if a warm run or the cache disagrees with the uncached findings.
The file name does not start with ``test_``, so pytest never collects it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Sequence
from pathlib import Path

SHARED_HELPERS = 60
FILLER_FUNCTIONS = 6


def summaryguard_command() -> list[str]:
    found = shutil.which("summaryguard")
    return [found] if found else [sys.executable, "-m", "summaryguard.rules.cli"]


# -- trees --------------------------------------------------------------------------------


def shared_module(helpers: int = SHARED_HELPERS) -> str:
    """A validator and ``helpers`` functions that read summary state: real analysis work."""
    parts = [
        "from summaryguard.guard import SummaryReconciliationError\n\n",
        textwrap.dedent(
            """
            def verify(checkpoint, deps):
                summary = checkpoint.summary
                if summary is None or summary.generation != checkpoint.summary_generation:
                    raise SummaryReconciliationError(None, checkpoint.turn, "", "generation mismatch")
                if summary.partial:
                    raise SummaryReconciliationError(summary.generation, checkpoint.turn, "", "partial")
                for ref in deps:
                    if ref not in summary.verbatim_refs:
                        raise SummaryReconciliationError(summary.generation, checkpoint.turn, ref, "dropped")
            """
        ),
    ]
    for number in range(helpers):
        parts.append(
            textwrap.dedent(
                f"""

                def summary_view_{number}(checkpoint, limit={number}):
                    summary = checkpoint.summary
                    if summary is None:
                        return []
                    refs = [ref for ref in summary.verbatim_refs if len(ref) > limit]
                    if summary.partial and refs:
                        refs = refs[: limit + 1]
                    return [summary.generation, *refs]
                """
            )
        )
    return "".join(parts)


def importer_module(package: str, number: int) -> str:
    """A small module that imports the shared one: a checked resume, an unchecked one, filler."""
    text = textwrap.dedent(
        f"""
        from {package}.shared import summary_view_{number % SHARED_HELPERS}, verify


        def recover_{number}(store, agent, deps):
            checkpoint = store.load()
            verify(checkpoint, deps)
            return agent.resume(checkpoint.summary, checkpoint.turn)


        def peek_{number}(checkpoint, agent):
            view = summary_view_{number % SHARED_HELPERS}(checkpoint)
            return agent.resume(checkpoint.summary, view)
        """
    )
    for filler in range(FILLER_FUNCTIONS):
        text += textwrap.dedent(
            f"""

            def table_{number}_{filler}(rows, width={filler + 1}):
                out = []
                for row in rows:
                    cells = [str(cell).ljust(width) for cell in row]
                    out.append(" | ".join(cells))
                return "\\n".join(out)
            """
        )
    return text


def write_tree(root: Path, importers: int, package: str = "app") -> int:
    """A project of one shared module and ``importers`` modules importing it; its line count."""
    folder = root / package
    folder.mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.summaryguard]\n", encoding="utf-8")
    (folder / "__init__.py").write_text("", encoding="utf-8")
    (folder / "shared.py").write_text(shared_module(), encoding="utf-8")
    for number in range(importers):
        (folder / f"agent_{number:04d}.py").write_text(importer_module(package, number), encoding="utf-8")
    return lines_of(root)


def python_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if ".summaryguard_cache" not in p.parts)


def lines_of(root: Path) -> int:
    return sum(p.read_bytes().count(b"\n") for p in python_files(root))


# -- runs ---------------------------------------------------------------------------------


#: Where the subprocesses keep their bytecode (set by :func:`main`): a user's interpreter
#: reuses its ``.pyc`` files, so a run that compiled every module would measure the wrong thing
#: (``PYTHONDONTWRITEBYTECODE`` may be set); a temporary folder, never the repository.
PYCACHE: dict[str, str] = {}


def environment_for_runs() -> dict[str, str]:
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    environment.update(PYCACHE)
    return environment


def _children_cpu() -> float:
    """User and system seconds of the finished subprocesses (theirs and their workers')."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def check(
    tree: Path, cache_dir: Path | None, jobs: int, cpu: list[float] | None = None
) -> tuple[float, dict]:  # type: ignore[type-arg]
    """One ``summaryguard check`` subprocess from ``tree``: wall seconds and its report (stats dropped);
    its CPU seconds (workers included) appended to ``cpu``."""
    command = [*summaryguard_command(), "check", "--format", "json", "--jobs", str(jobs), "."]
    environment = environment_for_runs()
    if cache_dir is None:
        command.insert(-1, "--no-cache")
    else:
        environment["SUMMARYGUARD_CACHE_DIR"] = str(cache_dir)
    started, used = time.perf_counter(), _children_cpu()
    done = subprocess.run(command, cwd=tree, capture_output=True, text=True, env=environment)
    seconds = time.perf_counter() - started
    if cpu is not None:
        cpu.append(_children_cpu() - used)
    if done.returncode not in (0, 1, 2) or "Traceback" in done.stderr:
        raise SystemExit(f"summaryguard crashed ({done.returncode}) in {tree}:\n{done.stderr[-3000:]}")
    report = json.loads(done.stdout)
    report.pop("stats", None)
    return seconds, report


def parse_all(tree: Path, jobs: int, cpu: list[float] | None = None) -> float:
    """Wall seconds of a subprocess that parses every file of ``tree`` with libcst on ``jobs`` processes;
    its CPU seconds appended to ``cpu``."""
    started, used = time.perf_counter(), _children_cpu()
    command = [sys.executable, __file__, "--parse-worker", str(tree), "--jobs", str(jobs)]
    subprocess.run(command, check=True, env=environment_for_runs())
    seconds = time.perf_counter() - started
    if cpu is not None:
        cpu.append(_children_cpu() - used)
    return seconds


def _parse_files(paths: Sequence[str]) -> int:
    import libcst

    failed = 0
    for path in paths:
        try:
            libcst.parse_module(Path(path).read_bytes())
        except Exception:  # noqa: BLE001 - the yardstick parses what it can
            failed += 1
    return failed


def parse_worker(tree: Path, jobs: int) -> None:
    paths = [str(p) for p in python_files(tree)]
    if jobs <= 1:
        _parse_files(paths)
        return
    from concurrent.futures import ProcessPoolExecutor

    size = max(1, -(-len(paths) // (jobs * 4)))
    chunks = [paths[i : i + size] for i in range(0, len(paths), size)]
    with ProcessPoolExecutor(jobs) as pool:
        list(pool.map(_parse_files, chunks))


def median_of(runs: int, *measures: Callable[[], float]) -> list[float]:
    """Medians of each measure, the measures alternated run by run (A B A B ...)."""
    times: list[list[float]] = [[] for _ in measures]
    for _ in range(runs):
        for index, measure in enumerate(measures):
            times[index].append(measure())
    return [statistics.median(t) for t in times]


# -- the three figures ---------------------------------------------------------------------


def tree_figures(tree: Path, jobs: int, runs: int, scratch: Path) -> bool:
    files, lines = len(python_files(tree)), lines_of(tree)
    print(f"tree {tree}: {files} files, {lines:,} lines, --jobs {jobs}, medians of {runs}")
    _, uncached = check(tree, None, jobs)
    agree = True
    counter = [0]

    cold_cpu: list[float] = []
    parse_cpu: list[float] = []

    def cold() -> float:
        counter[0] += 1
        folder = scratch / f"cold-{counter[0]}"
        seconds, report = check(tree, folder, jobs, cold_cpu)
        nonlocal agree
        agree &= report == uncached
        return seconds

    warm_dir = scratch / "warm"
    check(tree, warm_dir, jobs)

    def warm() -> float:
        seconds, report = check(tree, warm_dir, jobs)
        nonlocal agree
        agree &= report == uncached
        return seconds

    cold_s, parse_s, warm_s = median_of(runs, cold, lambda: parse_all(tree, jobs, parse_cpu), warm)
    cold_c, parse_c = statistics.median(cold_cpu), statistics.median(parse_cpu)
    print(f"  cold check      {cold_s:8.2f} s   ({lines / cold_s:,.0f} lines/s; CPU {cold_c:.2f} s)")
    print(f"  libcst parse    {parse_s:8.2f} s   (every file, {jobs} processes; CPU {parse_c:.2f} s)")
    print(f"  warm check      {warm_s:8.2f} s")
    print(f"  cold / parse    {cold_s / parse_s:8.2f}x   (goal < 1)")
    # CPU seconds move less with the machine's load than wall seconds (a shared machine):
    # what the check costs against what the parse costs, whatever the cores were doing.
    print(f"  cold / parse    {cold_c / parse_c:8.2f}x   in CPU seconds (processes and workers)")
    print(f"  cold / warm     {cold_s / warm_s:8.2f}x   (goal >= 20)")
    print(f"  findings: {len(uncached['findings'])}, errors: {len(uncached['errors'])}; "
          f"cached runs agree with --no-cache: {agree}")
    return agree


def importer_figures(base: int, jobs: int, runs: int, scratch: Path) -> bool:
    print(f"importers of one shared module ({SHARED_HELPERS} helpers): {base}, {2 * base}, {4 * base}; "
          f"--jobs {jobs}, medians of {runs}, the three scales alternated run by run")
    agree = True
    measures: list[Callable[[], float]] = []
    sizes: list[tuple[int, int]] = []
    for scale in (1, 2, 4):
        count = base * scale
        tree = scratch / f"importers-{count}"
        lines = write_tree(tree, count)
        sizes.append((count, lines))
        cache_dir = scratch / f"importers-cache-{count}"
        _, uncached = check(tree, None, jobs)
        check(tree, cache_dir, jobs)  # warm the records
        one = tree / "app" / f"agent_{count - 1:04d}.py"
        shared = tree / "app" / "shared.py"

        def edit(path: Path, tree: Path = tree, cache_dir: Path = cache_dir, uncached: dict = uncached) -> float:  # type: ignore[type-arg]
            with path.open("a", encoding="utf-8") as out:  # a new content each time: always a miss
                out.write(f"\n# edit {time.perf_counter_ns()}\n")
            seconds, report = check(tree, cache_dir, jobs)
            nonlocal agree
            agree &= report["findings"] == uncached["findings"]  # comments move no finding
            return seconds

        measures += [
            lambda tree=tree: check(tree, None, jobs)[0],
            lambda one=one, edit=edit: edit(one),
            lambda shared=shared, edit=edit: edit(shared),
        ]
    medians = median_of(runs, *measures)
    print(f"  {'importers':>9} {'lines':>7} {'cold s':>8} {'us/line':>8} {'vs 1x':>6}"
          f" {'edit 1 importer s':>17} {'edit shared s':>13}")
    first_per_line = None
    for (count, lines), (cold_s, one_s, shared_s) in zip(sizes, zip(*[iter(medians)] * 3)):
        per_line = cold_s / lines * 1e6
        first_per_line = first_per_line or per_line
        print(f"  {count:>9} {lines:>7} {cold_s:>8.2f} {per_line:>8.1f} {per_line / first_per_line:>5.2f}x"
              f" {one_s:>17.2f} {shared_s:>13.2f}")
    print("  goal: us/line flat or falling (cost grows with the code), 'edit 1 importer' flat (never with importers)")
    print(f"  edits agree with --no-cache: {agree}")
    return agree


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", help="a tree to check (default: a generated synthetic tree)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--importers", type=int, default=25, help="importers at 1x (then 2x, 4x)")
    parser.add_argument("--synthetic-size", type=int, default=150, help="importers of the default tree")
    parser.add_argument("--skip-tree", action="store_true", help="only the importers figures")
    parser.add_argument("--skip-importers", action="store_true", help="only the tree figures")
    parser.add_argument("--parse-worker", metavar="TREE", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.parse_worker:
        parse_worker(Path(args.parse_worker), args.jobs)
        return 0
    ok = True
    with tempfile.TemporaryDirectory(prefix="sg-bench-records-") as temporary:
        scratch = Path(temporary)
        PYCACHE["PYTHONPYCACHEPREFIX"] = str(scratch / "pycache")
        if not args.skip_tree:
            if args.folder:
                tree = Path(args.folder).expanduser().resolve()
            else:
                tree = scratch / "synthetic"
                write_tree(tree, args.synthetic_size)
            ok &= tree_figures(tree, args.jobs, args.runs, scratch)
        if not args.skip_importers:
            ok &= importer_figures(args.importers, args.jobs, args.runs, scratch)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
