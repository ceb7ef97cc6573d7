"""Benchmark ``summaryguard check`` on real code nobody here wrote, against Fixit 2 and a bare libcst parse.

Why: the analyzer must stay cheap on real trees (most files are dismissed by
the text pre-filter and never parsed), and it must never crash on real code.
The yardstick is the cost of merely parsing every file with libcst: a check
that costs less than that is doing its pre-filtering job.

The corpus is the real-code corpus of ``../shared/realcode/`` (``--corpus DIR``, else
``$SG_REALCODE_SRC``, else the folder ``../shared/realcode/fetch.sh`` prints): released
agent packages, with no standard library padding (the pre-filter dismisses most of the
standard library, which flattered the ratio). Without one, ``--download`` builds a corpus
of the latest wheels of langgraph, langchain-core, llama-index-core, openai-agents and
autogen-agentchat (``pip download --no-deps``), cached.

Then, in one run:

1. cold: ``summaryguard check --format json CORPUS`` in a subprocess with an
   empty result cache (``$SUMMARYGUARD_CACHE_DIR`` set to a fresh temporary
   folder), timed by wall clock (interpreter start-up included, as a user
   sees it), summaryguard's modules read as bytecode compiled beforehand, as an
   installed package's are (see :func:`compiled_environment`);
2. warm: the same command again, nothing changed (served from the cache);
3. ``libcst.parse_module`` of every corpus file, in a pool of as many processes as the
   check's ``--jobs`` (the same cores: SPEC §3.1.2's yardstick), right after the
   check. The parse's own time moves with the machine's load far more than the
   check's (62-79 s for the real-code corpus over one day, the check 49-54 s), so
   ``--pairs N`` runs N-1 more cold checks, each followed by a parse, and the ratio is
   the median of the N pairs' ratios (and the lines per second are those of the
   median cold run);
4. Fixit 2 (``fixit --rules <module> lint CORPUS``) with ONE trivial rule of
   our own (flags ``global`` statements), written to a temporary folder. Fixit
   is a benchmark-only tool, installed on demand (``pip install 'fixit>=2,<3'``)
   and never a dependency of summaryguard; without it this step is skipped
   and says so;

and it prints files, lines, the times, the cold run's peak memory and the ratios against the goals
(issue 10: cold at most 0.7x the parse and at least 20,000 lines/s; warm at
least 20x faster than cold; Fixit at least 5x slower than cold), and lists every finding and error the check
reported. It exits 1 if the check crashed (an exit status other than 0/1/2,
an internal error or a traceback) or if the warm run disagreed with the cold one.

A second mode, ``--jobs-ratio FOLDER ...``, measures the parallel analysis
(SPEC §3.1.2: every core is used for the analysis itself): for each folder (a
real package, e.g. ``~/.cache/sg-realcode/src/langchain-1.5.2``), it runs
``summaryguard check --no-cache --format json --jobs 1 .`` and ``--jobs 2``
from that folder, alternately, ``--runs`` times each (3 by default: the
machine is shared, so medians), prints the medians and their ratio, and exits 1
if the two job counts report different findings or errors. No corpus is built.

Run it from the repository root, in the project's environment::

    python tests/benchmarks/bench_check_corpus.py --jobs 2
    python tests/benchmarks/bench_check_corpus.py --corpus ~/.cache/sg-realcode/src --jobs 2
    python tests/benchmarks/bench_check_corpus.py --corpus ~/.cache/sg-realcode/src --jobs 2 --pairs 3 --skip-fixit
    python tests/benchmarks/bench_check_corpus.py --download --cache /tmp/sg-bench --jobs 2
    python tests/benchmarks/bench_check_corpus.py --skip-parse --skip-fixit   # only the check
    python tests/benchmarks/bench_check_corpus.py --jobs-ratio ~/.cache/sg-realcode/src/langchain-1.5.2

The cache defaults to ``~/.cache/summaryguard-bench`` (or
``$SUMMARYGUARD_BENCH_CACHE``); delete it to fetch the newest releases.
The file name does not start with ``test_``, so pytest never collects it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import zipfile
from pathlib import Path

PACKAGES = ("langgraph", "langchain-core", "llama-index-core", "openai-agents", "autogen-agentchat")
PYTHON_SUFFIXES = (".py", ".pyi")


def default_cache() -> Path:
    return Path(os.environ.get("SUMMARYGUARD_BENCH_CACHE", Path.home() / ".cache" / "summaryguard-bench"))


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name.lower())


def _downloaded(package: str, downloads: Path) -> list[Path]:
    """Archives of ``package`` (not of a longer name such as ``langchain-core`` for ``langchain``)."""
    prefix = re.compile(re.escape(_normalized(package)) + r"_\d")
    return sorted(p for p in downloads.iterdir() if prefix.match(_normalized(p.name)))


def fetch(package: str, downloads: Path) -> Path:
    """The downloaded wheel or sdist of ``package`` (downloaded once)."""
    existing = _downloaded(package, downloads)
    if not existing:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "--dest", str(downloads), package],
            check=True,
        )
        existing = _downloaded(package, downloads)
    if not existing:
        raise SystemExit(f"pip download {package} produced no file")
    return existing[-1]


def unpack(archive: Path, target: Path) -> None:
    """Extract only the Python files of a wheel or an sdist (member paths are checked)."""
    target.mkdir(parents=True, exist_ok=True)
    root = target.resolve()

    def safe(name: str) -> Path | None:
        destination = (target / name).resolve()
        if not name.endswith(PYTHON_SUFFIXES) or root not in destination.parents:
            return None
        return destination

    if archive.suffix in (".whl", ".zip"):
        with zipfile.ZipFile(archive) as zipped:
            for info in zipped.infolist():
                destination = safe(info.filename)
                if destination is not None and not info.is_dir():
                    destination.parent.mkdir(parents=True, exist_ok=True)
                    destination.write_bytes(zipped.read(info))
    else:
        with tarfile.open(archive) as tarred:
            for member in tarred.getmembers():
                destination = safe(member.name)
                if destination is not None and member.isfile():
                    extracted = tarred.extractfile(member)
                    if extracted is not None:
                        destination.parent.mkdir(parents=True, exist_ok=True)
                        destination.write_bytes(extracted.read())


def build_corpus(cache: Path) -> Path:
    corpus = cache / "corpus"
    downloads = cache / "downloads"
    downloads.mkdir(parents=True, exist_ok=True)
    corpus.mkdir(parents=True, exist_ok=True)
    for package in PACKAGES:
        archive = fetch(package, downloads)
        name = archive.name.removesuffix(".tar.gz").removesuffix(".whl").removesuffix(".zip")
        target = corpus / name
        if not target.exists():
            print(f"unpacking {archive.name}", file=sys.stderr)
            unpack(archive, target)
    return corpus


def corpus_files(corpus: Path) -> list[Path]:
    return sorted(p for p in corpus.rglob("*") if p.name.endswith(PYTHON_SUFFIXES) and p.is_file())


def summaryguard_command() -> list[str]:
    script = shutil.which("summaryguard")
    if script is not None:
        return [script]
    return [sys.executable, "-c", "import sys; from summaryguard.rules.cli import main; sys.exit(main())"]


def children_peak_mib() -> float | None:
    """The largest resident size any finished child process of this script reached, in MiB
    (``getrusage(RUSAGE_CHILDREN)``: a maximum over processes, not a sum; None where the
    platform has no ``resource`` module). Read right after the cold run, which is the
    largest child so far, it is the cold run's peak."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def compiled_environment(folder: Path) -> dict[str, str]:
    """The environment of the timed checks: summaryguard's modules compiled to bytecode
    once, in ``folder`` (``PYTHONPYCACHEPREFIX``), and read from there by every run.

    Why: an installed package runs from bytecode (pip compiles it at install time), but
    an editable checkout under ``PYTHONDONTWRITEBYTECODE=1`` (this machine's) compiles the
    engine in every process of every run: 0.3 s of the warm run's 4 s, none of it a user's
    cost (see ``bench_single_file.child_environment``, the same environment)."""
    from bench_single_file import child_environment

    environment = child_environment(folder)
    packages = [str(Path(spec).parent) for spec in _package_files()]
    if packages:
        subprocess.run([sys.executable, "-m", "compileall", "-q", *packages], env=environment, check=False,
                       stdout=subprocess.DEVNULL)
    return environment


def _package_files() -> list[str]:
    """The ``__init__.py`` of each of summaryguard's three packages, as installed."""
    import importlib.util

    found = []
    for name in ("summaryguard.guard", "summaryguard.rules", "summaryguard.plugins"):
        try:
            spec = importlib.util.find_spec(name)
        except ModuleNotFoundError:  # not installed in this interpreter: the check says so itself
            continue
        if spec is not None and spec.origin:
            found.append(spec.origin)
    return found


def run_check(
    corpus: Path,
    jobs: int | None,
    cache_dir: Path,
    environment: dict[str, str] | None = None,
    memory: TreeMemory | None = None,
) -> tuple[float, subprocess.CompletedProcess[str]]:
    """One ``summaryguard check`` of ``corpus``, timed; ``memory`` samples its processes meanwhile."""
    command = [*summaryguard_command(), "check", "--format", "json", str(corpus)]
    if jobs is not None:
        command += ["--jobs", str(jobs)]
    environment = {**(os.environ if environment is None else environment), "SUMMARYGUARD_CACHE_DIR": str(cache_dir)}
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment)
    if memory is not None:
        memory.follow(process)
    stdout, stderr = process.communicate()
    seconds = time.perf_counter() - started
    if memory is not None:
        memory.stop()
    return seconds, subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


class TreeMemory:
    """The largest sum, over a command's processes (it and its descendants), of their
    proportional set sizes (``Pss`` of ``/proc/PID/smaps_rollup``: a page shared by k
    processes counts 1/k in each), sampled every :data:`SAMPLE_SECONDS` while it runs.

    Why, beside the largest process's resident size (:func:`children_peak_mib`): a worker
    forked from the command counts in its resident size every page it still shares with
    it. At 64dfc01 the worker that analyzed agno was 795 MiB resident, 321 MiB of them the
    parent's pages, held once. The sum of proportional sizes is what the run holds.
    Linux only (None elsewhere); a sample can miss a peak shorter than its interval.

    A sample costs the kernel about 12 ms when the run holds 0.9 GiB (it walks each
    process's page tables), so it is taken every half second, about 1% of the two
    cores' time, and only during the first cold run (``--pairs`` times the others
    without it)."""

    def __init__(self) -> None:
        self.peak_mib: float | None = None
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    @staticmethod
    def available() -> bool:
        return Path("/proc/self/smaps_rollup").is_file()

    def follow(self, process: subprocess.Popen[str]) -> None:
        self._done.clear()
        self._thread = threading.Thread(target=self._sample, args=(process.pid,), daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()

    def _sample(self, root: int) -> None:
        while not self._done.wait(SAMPLE_SECONDS):
            try:
                total = sum(_pss_kib(pid) for pid in _descendants(root))
            except Exception:  # noqa: BLE001 - one unreadable sample is skipped, not the rest
                continue
            if total and (self.peak_mib is None or total / 1024 > self.peak_mib):
                self.peak_mib = total / 1024


#: How often :class:`TreeMemory` samples.
SAMPLE_SECONDS = 0.5


def _descendants(root: int) -> list[int]:
    """``root`` and every process below it, from ``/proc/*/stat`` (its parent is field 4)."""
    children: dict[int, list[int]] = {}
    with os.scandir("/proc") as entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:  # bytes: a process's name (in parentheses) may be any bytes
                parent = int(Path(entry.path, "stat").read_bytes().rpartition(b")")[2].split()[1])
            except (OSError, ValueError, IndexError):  # ended meanwhile, or unreadable
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, stack = [], [root]
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children.get(pid, ()))
    return found


def _pss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):  # ended meanwhile, or unreadable
        pass
    return 0


#: The one trivial Fixit rule of the comparison (Fixit needs at least one rule to do its work).
FIXIT_RULE = """\
import libcst as cst
from fixit import LintRule


class NoGlobalStatement(LintRule):
    \"\"\"Flags ``global`` statements (a trivial rule, for the benchmark only).\"\"\"

    def visit_Global(self, node: cst.Global) -> None:
        self.report(node, "global statement")
"""


def run_fixit(corpus: Path) -> tuple[float, subprocess.CompletedProcess[str]] | None:
    """``fixit lint`` with only :data:`FIXIT_RULE`; None when Fixit 2 is not installed.
    Fixit's command is looked for next to this interpreter first: a virtual environment
    run by its own ``python`` without being activated has it there, not on ``PATH``."""
    fixit = shutil.which("fixit", path=os.path.dirname(sys.executable)) or shutil.which("fixit")
    if fixit is None:
        return None
    with tempfile.TemporaryDirectory(prefix="sg-bench-fixit-") as folder:
        Path(folder, "sg_bench_fixit_rule.py").write_text(FIXIT_RULE, encoding="utf-8")
        environment = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [folder, os.environ.get("PYTHONPATH")]))}
        started = time.perf_counter()
        completed = subprocess.run(
            [fixit, "--rules", "sg_bench_fixit_rule", "lint", str(corpus)],
            capture_output=True,
            text=True,
            env=environment,
        )
        return time.perf_counter() - started, completed


def _parse_chunk(paths: list[str]) -> int:
    """Parse each file with libcst; how many did not parse (a worker of :func:`parse_all`)."""
    import libcst

    failures = 0
    for path in paths:
        try:
            libcst.parse_module(Path(path).read_bytes())
        except Exception:  # a file of the corpus libcst cannot read: counted, not fatal
            failures += 1
    return failures


def parse_all(files: list[Path], jobs: int) -> tuple[float, int]:
    """``libcst.parse_module`` of every file on ``jobs`` processes (started inside the timing,
    as the check starts its own), wall seconds and the number that failed."""
    from concurrent.futures import ProcessPoolExecutor

    chunks = [[str(p) for p in files[i::jobs]] for i in range(jobs)]
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        failures = sum(pool.map(_parse_chunk, chunks))
    return time.perf_counter() - started, failures


def realcode_corpus(given: Path | None) -> Path | None:
    """``--corpus``, else ``$SG_REALCODE_SRC``, else what ../shared/realcode/fetch.sh prints (None if none)."""
    if given is not None:
        return given.expanduser().resolve()
    env = os.environ.get("SG_REALCODE_SRC")
    if env:
        return Path(env).expanduser().resolve()
    fetch = Path(__file__).resolve().parents[2].parent / "shared" / "realcode" / "fetch.sh"
    if fetch.is_file():
        done = subprocess.run(["bash", str(fetch)], capture_output=True, text=True)
        lines = done.stdout.strip().splitlines()
        if done.returncode == 0 and lines and Path(lines[-1]).is_dir():
            return Path(lines[-1]).resolve()
    return None


def jobs_ratio(folders: list[Path], runs: int, jobs: int) -> int:
    """``--jobs 1`` against ``--jobs N`` on each folder, ``--no-cache``: medians of ``runs`` runs and their ratio."""
    status = 0
    for folder in folders:
        command = [*summaryguard_command(), "check", "--no-cache", "--format", "json"]
        times: dict[int, list[float]] = {1: [], jobs: []}
        reports: dict[int, tuple[object, object]] = {}
        for _ in range(runs):
            for count in (1, jobs):  # alternately, so that the machine's load weighs on both
                started = time.perf_counter()
                completed = subprocess.run(
                    [*command, "--jobs", str(count), "."], capture_output=True, text=True, cwd=folder
                )
                times[count].append(time.perf_counter() - started)
                if completed.returncode not in (0, 1) or "Traceback" in completed.stderr:
                    print(f"{folder}: --jobs {count} failed (exit {completed.returncode}): {completed.stderr[-2000:]}")
                    return 1
                report = json.loads(completed.stdout)
                reports[count] = (report["findings"], report["errors"])
        serial, parallel = statistics.median(times[1]), statistics.median(times[jobs])
        files = sum(1 for _ in folder.rglob("*.py"))
        print(
            f"{folder.name}: {files} files; --jobs 1 median {serial:.2f} s {sorted(round(t, 2) for t in times[1])}; "
            f"--jobs {jobs} median {parallel:.2f} s {sorted(round(t, 2) for t in times[jobs])}; "
            f"ratio jobs 1 / jobs {jobs}: {serial / parallel:.2f}x; {len(reports[1][0])} findings"
        )
        if reports[1] != reports[jobs]:
            one = {json.dumps(f, sort_keys=True) for f in reports[1][0]}
            other = {json.dumps(f, sort_keys=True) for f in reports[jobs][0]}
            print(f"  FINDINGS DIFFER: {len(one - other)} only with --jobs 1, {len(other - one)} with --jobs {jobs}")
            for text in sorted(one - other)[:10]:
                f = json.loads(text)
                print(f"    only --jobs 1: {f['path']}:{f['line']} {f['code']}")
            for text in sorted(other - one)[:10]:
                f = json.loads(text)
                print(f"    only --jobs {jobs}: {f['path']}:{f['line']} {f['code']}")
            status = 1
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=None, help="folder to check (default: the real-code corpus)")
    parser.add_argument("--download", action="store_true", help="check a corpus of downloaded wheels instead")
    parser.add_argument("--cache", type=Path, default=default_cache(), help="cache folder of --download")
    parser.add_argument("--jobs", type=int, default=None, help="passed to summaryguard check --jobs")
    parser.add_argument("--skip-parse", action="store_true", help="do not time the bare libcst parse")
    parser.add_argument("--skip-fixit", action="store_true", help="do not time Fixit")
    parser.add_argument(
        "--jobs-ratio", type=Path, nargs="+", metavar="FOLDER", help="time --jobs 1 against --jobs 2 on these folders"
    )
    parser.add_argument("--runs", type=int, default=3, help="runs per job count with --jobs-ratio (medians)")
    parser.add_argument(
        "--pairs", type=int, default=1,
        help="cold checks, each followed by the bare parse; the cold/parse ratio is the median of the pairs' ratios",
    )
    args = parser.parse_args(argv)
    if args.jobs_ratio:
        return jobs_ratio([folder.expanduser().resolve() for folder in args.jobs_ratio], args.runs, args.jobs or 2)

    found = None if args.download else realcode_corpus(args.corpus)
    if found is None and not args.download:
        print("no corpus: pass --corpus DIR, set $SG_REALCODE_SRC, lay out ../shared beside the clone, or --download",
              file=sys.stderr)
        return 2
    corpus = found if found is not None else build_corpus(args.cache)
    if not corpus.is_dir():
        print(f"{corpus}: not a folder", file=sys.stderr)
        return 2
    jobs = args.jobs or os.cpu_count() or 1
    files = corpus_files(corpus)
    lines = sum(path.read_bytes().count(b"\n") for path in files)
    print(f"corpus: {corpus}")
    print(f"files:  {len(files)}")
    print(f"lines:  {lines}")

    pairs: list[tuple[float, float]] = []  # (cold check, the parse right after it), in order
    reruns: list[subprocess.CompletedProcess[str]] = []  # the cold checks after the first
    with tempfile.TemporaryDirectory(prefix="sg-bench-cache-") as cache_dir:
        environment = compiled_environment(Path(cache_dir) / "bytecode")
        memory = TreeMemory() if TreeMemory.available() else None
        cold_seconds, completed = run_check(corpus, jobs, Path(cache_dir) / "results", environment, memory)
        cold_peak = children_peak_mib()
        warm_seconds, warm = run_check(corpus, jobs, Path(cache_dir) / "results", environment)
        if not args.skip_parse:
            # The parse's own time moves with the machine's load far more than the check's (62-79 s
            # for the same corpus over one day): each cold check is paired with a parse run right
            # after it, and with --pairs the ratio is the median of the pairs' ratios.
            parse_seconds, failures = parse_all(files, jobs)
            pairs.append((cold_seconds, parse_seconds))
            for round_ in range(1, args.pairs):
                again, rerun = run_check(corpus, jobs, Path(cache_dir) / f"results-{round_}", environment)
                reruns.append(rerun)
                pairs.append((again, parse_all(files, jobs)[0]))
    crashed = any(
        run.returncode not in (0, 1, 2) or "internal error" in run.stderr or "Traceback" in run.stderr
        for run in (completed, warm, *reruns)
    )
    print(f"summaryguard check, cold (empty cache): {cold_seconds:.2f} s (exit {completed.returncode})")
    print(f"summaryguard check, warm (nothing changed): {warm_seconds:.2f} s (exit {warm.returncode})")
    if cold_peak is not None:
        print(f"peak memory, cold: {cold_peak:,.0f} MiB resident in its largest process (each worker is one; "
              "a worker's count includes the pages it shares with its parent)")
    if memory is not None and memory.peak_mib is not None:
        print(f"peak memory, cold: {memory.peak_mib:,.0f} MiB held by the run (proportional set sizes summed over "
              f"its processes, sampled every {SAMPLE_SECONDS} s)")
    report: dict[str, object] = {}
    try:
        report = json.loads(completed.stdout)
        warm_report = json.loads(warm.stdout)
        rerun_reports = [json.loads(rerun.stdout) for rerun in reruns]
    except json.JSONDecodeError:
        crashed = True
    else:
        def outcome(run_report: dict[str, object]) -> tuple[object, object]:
            return run_report.get("findings"), run_report.get("errors")

        if outcome(report) != outcome(warm_report):
            print("THE WARM RUN DISAGREES WITH THE COLD RUN", file=sys.stderr)
            crashed = True
        if any(outcome(report) != outcome(again) for again in rerun_reports):
            print("A LATER COLD RUN DISAGREES WITH THE FIRST", file=sys.stderr)
            crashed = True
    print(f"ratio cold / warm: {cold_seconds / warm_seconds:.1f}x (goal: at least 20x)")
    colds = [cold_seconds, *(cold for cold, _ in pairs[1:])]
    if len(colds) == 1:
        print(f"cold: {lines / cold_seconds:,.0f} lines/s (goal: at least 20,000)")
    else:  # one run is as noisy as one pair: the median of the cold runs, as for the ratio
        typical = statistics.median(colds)
        print(
            f"cold: {lines / typical:,.0f} lines/s at the median of {len(colds)} cold runs, {typical:.2f} s "
            "(goal: at least 20,000)"
        )
    if not args.skip_fixit:
        fixit = run_fixit(corpus)
        if fixit is None:
            print("fixit: not installed, skipped (pip install 'fixit>=2,<3' to compare)")
        else:
            fixit_seconds, fixit_run = fixit
            summary = (fixit_run.stderr.strip().splitlines() or [""])[-1]
            print(f"fixit lint, one trivial rule: {fixit_seconds:.2f} s (exit {fixit_run.returncode}; {summary})")
            print(f"ratio fixit / cold: {fixit_seconds / cold_seconds:.2f}x (goal: at least 5x)")
    if pairs:
        print(f"libcst.parse_module, every file, {jobs} processes: {parse_seconds:.2f} s ({failures} did not parse)")
        if len(pairs) == 1:
            print(f"ratio cold / parse: {cold_seconds / parse_seconds:.2f}x (goal: at most 0.7x)")
        else:
            for index, (cold, parse) in enumerate(pairs, 1):
                print(f"  pair {index}: cold {cold:.2f} s, parse {parse:.2f} s, {cold / parse:.2f}x")
            ratio = statistics.median(cold / parse for cold, parse in pairs)
            print(f"ratio cold / parse, median of {len(pairs)} pairs: {ratio:.2f}x (goal: at most 0.7x)")

    findings = report.get("findings", [])
    errors = report.get("errors", [])
    assert isinstance(findings, list) and isinstance(errors, list)
    print(f"stats: {report.get('stats')}")
    print(f"findings: {len(findings)}")
    for f in findings:
        print(f"  {f['path']}:{f['line']}:{f['column']}: {f['code']} [{f['name']}] {f['message']}")
    print(f"errors: {len(errors)}")
    for e in errors:
        where = e["path"] if e["line"] is None else f"{e['path']}:{e['line']}"
        print(f"  {where}: {e['message']}")
    if crashed:
        print("THE CHECK CRASHED:", file=sys.stderr)
        print(completed.stderr[-5000:], file=sys.stderr)
        return 1
    if completed.stderr.strip():
        print("stderr of the check:", completed.stderr.strip()[-2000:], sep="\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
