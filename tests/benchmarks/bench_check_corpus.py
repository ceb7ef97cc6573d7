"""Benchmark ``summaryguard check`` on real code nobody here wrote, against a bare libcst parse.

Why: the analyzer must stay cheap on real trees (most files are dismissed by
the text pre-filter and never parsed), and it must never crash on real code.
The yardstick is the cost of merely parsing every file with libcst: a check
that costs less than that is doing its pre-filtering job.

The corpus (built once, then reused from the cache folder):

* the latest wheels (or sdists) of langgraph, langchain-core,
  llama-index-core, openai-agents and autogen-agentchat, fetched with
  ``pip download --no-deps`` and unpacked (their ``.py`` / ``.pyi`` files);
* this interpreter's standard library (without ``site-packages``), copied.

Then, in one run:

1. ``summaryguard check --no-cache --format json CORPUS`` in a subprocess,
   timed by wall clock (interpreter start-up included, as a user sees it);
2. ``libcst.parse_module`` of every corpus file, in this process;

and it prints files, lines, both times and their ratio, and lists every
finding and error the check reported. It exits 1 if the check crashed
(an exit status other than 0/1/2, an internal error or a traceback).

Run it from the repository root, in the project's environment::

    python tests/benchmarks/bench_check_corpus.py
    python tests/benchmarks/bench_check_corpus.py --cache /tmp/sg-bench --jobs 2
    python tests/benchmarks/bench_check_corpus.py --skip-parse   # only the check

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
import subprocess
import sys
import sysconfig
import tarfile
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


def copy_stdlib(target: Path) -> None:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    skipped = {"site-packages", "dist-packages", "__pycache__"}

    def ignore(folder: str, names: list[str]) -> set[str]:
        return {
            n
            for n in names
            if n in skipped or (not n.endswith(PYTHON_SUFFIXES) and not (Path(folder) / n).is_dir())
        }

    shutil.copytree(stdlib, target, ignore=ignore, symlinks=True)


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
    stdlib_target = corpus / f"stdlib-{sys.version_info.major}.{sys.version_info.minor}"
    if not stdlib_target.exists():
        print(f"copying the standard library to {stdlib_target}", file=sys.stderr)
        copy_stdlib(stdlib_target)
    return corpus


def corpus_files(corpus: Path) -> list[Path]:
    return sorted(p for p in corpus.rglob("*") if p.name.endswith(PYTHON_SUFFIXES) and p.is_file())


def summaryguard_command() -> list[str]:
    script = shutil.which("summaryguard")
    if script is not None:
        return [script]
    return [sys.executable, "-c", "import sys; from summaryguard.rules.cli import main; sys.exit(main())"]


def run_check(corpus: Path, jobs: int | None) -> tuple[float, subprocess.CompletedProcess[str]]:
    command = [*summaryguard_command(), "check", "--no-cache", "--format", "json", str(corpus)]
    if jobs is not None:
        command += ["--jobs", str(jobs)]
    started = time.perf_counter()
    completed = subprocess.run(command, capture_output=True, text=True)
    return time.perf_counter() - started, completed


def parse_all(files: list[Path]) -> tuple[float, int]:
    import libcst

    failures = 0
    started = time.perf_counter()
    for path in files:
        try:
            libcst.parse_module(path.read_bytes())
        except Exception:  # a bare parse fails on deliberately broken stdlib test files
            failures += 1
    return time.perf_counter() - started, failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=default_cache(), help="cache folder (outside the repository)")
    parser.add_argument("--jobs", type=int, default=None, help="passed to summaryguard check --jobs")
    parser.add_argument("--skip-parse", action="store_true", help="do not time the bare libcst parse")
    args = parser.parse_args(argv)

    corpus = build_corpus(args.cache)
    files = corpus_files(corpus)
    lines = sum(path.read_bytes().count(b"\n") for path in files)
    print(f"corpus: {corpus}")
    print(f"files:  {len(files)}")
    print(f"lines:  {lines}")

    check_seconds, completed = run_check(corpus, args.jobs)
    crashed = (
        completed.returncode not in (0, 1, 2)
        or "internal error" in completed.stderr
        or "Traceback" in completed.stderr
    )
    print(f"summaryguard check --no-cache: {check_seconds:.2f} s (exit {completed.returncode})")
    report: dict[str, object] = {}
    try:
        report = json.loads(completed.stdout)
    except json.JSONDecodeError:
        crashed = True
    if not args.skip_parse:
        parse_seconds, failures = parse_all(files)
        print(f"libcst.parse_module, every file: {parse_seconds:.2f} s ({failures} files did not parse)")
        print(f"ratio check / parse: {check_seconds / parse_seconds:.3f}")

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
