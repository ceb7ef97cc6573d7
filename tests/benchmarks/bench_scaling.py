"""Scaling benchmark: the cold cost per line as one tree grows by copies of itself (issue 10).

SPEC §3.1.2: the cost of a cold check grows linearly with the code. The tree is
a few real packages of the real-code corpus (``--packages``, default langchain
and langmem: together about 75,000 lines, with findings in both), checked as
one tree at 1x, 2x and 4x. Each copy lives under other package names: every
folder of a copied package gets a suffix (``langchain`` -> ``langchain_c1``,
``agents`` -> ``agents_c1``), and the import statements of the copy name
the renamed folders, so no two copies share a module name or an import, and
each copy is the same work as the original. A line that is not an import (an
attribute chain ``langchain.agents.x`` after ``import langchain``) is left
as it is; that is why every copy's findings are compared with the original's
(same file, line and code): a copy that reports otherwise was not the same
work, and the script exits 1.

Each scale is checked with ``summaryguard check --no-cache --format json
--jobs N`` in a subprocess, the scales alternated run by run (``--runs``,
medians: the machine is shared); the script prints seconds per 1,000 lines at
each scale and their ratio to 1x. Goal: flat within 15% (at most 1.15x).

Run from the repository root, in the project's environment::

    python tests/benchmarks/bench_scaling.py --jobs 2
    python tests/benchmarks/bench_scaling.py --packages langgraph-1.2.24 --runs 3

The corpus comes from ``--corpus``, ``$SG_REALCODE_SRC`` or
``../shared/realcode/fetch.sh`` (see ``bench_check_corpus.py``). The file
name does not start with ``test_``, so pytest never collects it.
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
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_check_corpus import realcode_corpus, summaryguard_command  # noqa: E402

GOAL = 1.15
SCALES = (1, 2, 4)
DEFAULT_PACKAGES = ("langchain-1.5.2", "langmem-0.0.30")
_FROM = re.compile(r"^(\s*from\s+)([.\w]+)(\s+import\s+)(.*)$")
_IMPORT = re.compile(r"^(\s*import\s+)(.+)$")


def package_folders(package: Path) -> set[str]:
    """Names of the folders of ``package`` that hold Python files (what a copy renames)."""
    names: set[str] = set()
    for path in package.rglob("*.py"):
        names.update(part for part in path.relative_to(package).parts[:-1])
    return names


def top_level(package: Path) -> set[str]:
    """The folders an absolute import of the package starts with (directly in it, or in its ``src``)."""
    found: set[str] = set()
    for base in (package, package / "src"):
        if base.is_dir():
            found.update(p.name for p in base.iterdir() if p.is_dir() and any(p.rglob("*.py")))
    return found


def _renamed_dotted(dotted: str, renamed: set[str], suffix: str, tops: set[str] | None = None) -> str:
    """``dotted`` with its folders renamed: always when it is relative, and when absolute
    only if it starts with one of the package's own ``tops`` (``import mcp`` of an SDK
    stays, though the package has a folder ``mcp`` of its own)."""
    if tops is not None and not dotted.startswith(".") and dotted.split(".")[0] not in tops:
        return dotted
    return ".".join(part + suffix if part in renamed else part for part in dotted.split("."))


def _renamed_names(names: str, renamed: set[str], suffix: str) -> str:
    """The names of a ``from ... import`` list renamed where they are folders, bound to
    the name the code uses (``b`` becomes ``b_c1 as b``; ``b as c`` becomes ``b_c1 as c``)."""

    def item(text: str) -> str:
        match = re.match(r"^(\s*\(?\s*)([A-Za-z_]\w*)(\s+as\s+\w+)?(.*)$", text, re.S)
        if match is None or match.group(2) not in renamed:
            return text
        lead, name, alias, rest = match.groups()
        return f"{lead}{name}{suffix}{alias or ' as ' + name}{rest}"

    return ",".join(item(part) for part in names.split(","))


def rewrite_imports(text: str, renamed: set[str], suffix: str, tops: set[str] | None = None) -> str:
    """``text`` with the folders of ``renamed`` given ``suffix`` in its import statements
    (``from a.b import c``, ``import a.b as x``, and names imported from a package that
    are its folders: ``from . import b``, on the line or inside parentheses below it)."""
    lines = text.split("\n")
    open_list = False  # inside ``from x import (`` ... ``)``
    names_renamed: set[str] = set()
    for index, line in enumerate(lines):
        if open_list:
            lines[index] = _renamed_names(line, names_renamed, suffix)
            open_list = ")" not in line
            continue
        match = _FROM.match(line)
        if match:
            head, module, middle, names = match.groups()
            ours = module.startswith(".") or tops is None or module.split(".")[0] in tops
            names_renamed = renamed if ours else set()
            lines[index] = head + _renamed_dotted(module, renamed, suffix, tops) + middle + _renamed_names(names, names_renamed, suffix)
            open_list = "(" in names and ")" not in names
            continue
        match = _IMPORT.match(line)
        if match:
            head, rest = match.groups()
            parts = [
                re.sub(r"^(\s*)([.\w]+)", lambda m: m.group(1) + _renamed_dotted(m.group(2), renamed, suffix, tops), item)
                for item in rest.split(",")
            ]
            lines[index] = head + ",".join(parts)
    return "\n".join(lines)


def copy_package(package: Path, target: Path, suffix: str) -> None:
    """``package`` copied to ``target`` with every folder renamed (``suffix``) and its imports rewritten."""
    renamed = package_folders(package)
    tops = top_level(package)
    for path in package.rglob("*.py"):
        relative = path.relative_to(package)
        parts = [part + suffix if part in renamed else part for part in relative.parts[:-1]]
        destination = target.joinpath(*parts, relative.name)
        destination.parent.mkdir(parents=True, exist_ok=True)
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        destination.write_text(rewrite_imports(text, renamed, suffix, tops), encoding="utf-8", errors="surrogateescape")


def build_tree(corpus: Path, packages: list[str], scale: int, root: Path) -> int:
    """The tree of ``scale`` copies under ``root``; its number of lines."""
    for copy in range(scale):
        for name in packages:
            suffix = "" if copy == 0 else f"_c{copy}"
            copy_package(corpus / name, root / f"{name}{suffix}", suffix)
    return sum(p.read_bytes().count(b"\n") for p in root.rglob("*.py"))


def check(root: Path, jobs: int | None) -> tuple[float, dict]:
    command = [*summaryguard_command(), "check", "--no-cache", "--format", "json", "."]
    if jobs is not None:
        command += ["--jobs", str(jobs)]
    started = time.perf_counter()
    completed = subprocess.run(command, cwd=root, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if completed.returncode not in (0, 1):
        raise SystemExit(f"check of {root} failed ({completed.returncode}):\n{completed.stderr[-2000:]}")
    return elapsed, json.loads(completed.stdout)


def findings_by_copy(report: dict, scale: int) -> dict[int, set[tuple[str, int, str]]]:
    """Each copy's findings as (the original's path, line, code)."""
    by_copy: dict[int, set[tuple[str, int, str]]] = {copy: set() for copy in range(scale)}
    for finding in report["findings"]:
        path, line, code = os.path.normpath(finding["path"]), finding["line"], finding["code"]
        top, _, below = path.replace(os.sep, "/").partition("/")
        match = re.search(r"_c(\d+)$", top)
        copy = int(match.group(1)) if match else 0
        plain = re.sub(r"_c\d+(?=/|$)", "", f"{top}/{below}")
        by_copy[copy].add((plain, line, code))
    return by_copy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=None, help="the real-code corpus (default: $SG_REALCODE_SRC)")
    parser.add_argument("--packages", nargs="+", default=list(DEFAULT_PACKAGES), help="folders of the corpus to copy")
    parser.add_argument("--jobs", type=int, default=None, help="passed to summaryguard check --jobs")
    parser.add_argument("--runs", type=int, default=1, help="runs per scale (medians)")
    args = parser.parse_args()
    corpus = realcode_corpus(args.corpus)
    if corpus is None:
        raise SystemExit("no corpus: pass --corpus DIR or set SG_REALCODE_SRC (see ../shared/realcode/fetch.sh)")
    missing = [name for name in args.packages if not (corpus / name).is_dir()]
    if missing:
        raise SystemExit(f"not in {corpus}: {', '.join(missing)}")
    with tempfile.TemporaryDirectory(prefix="sg-bench-scaling-") as folder:
        trees: dict[int, tuple[Path, int]] = {}
        for scale in SCALES:
            root = Path(folder) / f"x{scale}"
            root.mkdir()
            (root / "pyproject.toml").write_text("[tool.summaryguard]\n", encoding="utf-8")
            trees[scale] = (root, build_tree(corpus, args.packages, scale, root))
        times: dict[int, list[float]] = {scale: [] for scale in SCALES}
        reports: dict[int, dict] = {}
        for _ in range(args.runs):
            for scale in SCALES:
                elapsed, reports[scale] = check(trees[scale][0], args.jobs)
                times[scale].append(elapsed)
        shutil.rmtree(folder, ignore_errors=True)
    print(f"packages: {', '.join(args.packages)}; --jobs {args.jobs or 'default'}; medians of {args.runs}")
    base = statistics.median(times[1]) / trees[1][1] * 1000
    failed = False
    for scale in SCALES:
        lines = trees[scale][1]
        per_k = statistics.median(times[scale]) / lines * 1000
        copies = findings_by_copy(reports[scale], scale)
        same = all(found == copies[0] for found in copies.values())
        failed |= not same
        print(
            f"  {scale}x: {lines:>9,} lines  {statistics.median(times[scale]):7.1f} s  {per_k:.3f} s per 1,000 lines"
            f"  ratio to 1x {per_k / base:.2f}  findings per copy {[len(copies[c]) for c in sorted(copies)]}"
            f"{'' if same else '  COPIES DIFFER'}"
        )
    worst = max(statistics.median(times[s]) / trees[s][1] * 1000 / base for s in SCALES)
    print(f"  worst ratio {worst:.2f}x (goal at most {GOAL}x: {'met' if worst <= GOAL else 'NOT met'})")
    if failed:
        print("  a copy reported other findings than the original: the copies were not the same work")
        sys.exit(1)


if __name__ == "__main__":
    main()
