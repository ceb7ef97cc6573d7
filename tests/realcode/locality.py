"""Locality on real code (SPEC §3.1.1): a file's findings do not depend on which other files are in the run.

``summaryguard check a.py`` (pre-commit, from the project root) and
``summaryguard check .`` (CI) must report the same findings for ``a.py``. For
each package of the real-code corpus this script runs the whole package once,
then every file that has findings alone, plus a fixed sample of files without
findings (``--sample``, 20 by default), each from the package folder, and
prints every file whose findings differ (only-in-whole / only-alone).

It is a report: exit 0 whatever it finds, 2 on a usage error; ``--strict``
exits 1 on any difference. Standard library and summaryguard only; the
analyzer runs as the installed CLI (``summaryguard check --no-cache --format
json``). The single-file runs are batched: one Python process runs the CLI's
``main`` once per file (:func:`check_alone`), which is the CLI itself without
the interpreter start-up per file.

    python tests/realcode/locality.py --packages langchain-1.5.2 letta-0.16.8
    SG_REALCODE_SRC=/path/to/src python tests/realcode/locality.py --strict
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

__all__ = ["Key", "check_alone", "check_tree", "corpus_packages", "differences", "main"]

#: What identifies a finding of a file across runs.
Key = tuple[int, str, str]

REPO_ROOT = Path(__file__).resolve().parents[2]
FETCH_SCRIPT = REPO_ROOT.parent / "shared" / "realcode" / "fetch.sh"
DEFAULT_CACHE = Path.home() / ".cache" / "sg-realcode" / "src"
CHECK = ["check", "--no-cache", "--format", "json"]

_DRIVER = """
import contextlib, io, json, os, sys
from summaryguard.rules.cli import main
os.chdir(sys.argv[1])
reports = []
for path in sys.argv[2:]:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        status = main([*json.loads(os.environ["SG_LOCALITY_CHECK"]), path])
    reports.append([path, status, buffer.getvalue()])
json.dump(reports, sys.stdout)
"""


class UsageError(Exception):
    """Bad arguments or no corpus: the message says what; the exit status is 2."""


def _by_file(report_text: str) -> dict[str, set[Key]]:
    report = json.loads(report_text)
    found: dict[str, set[Key]] = {}
    for f in report["findings"]:
        found.setdefault(os.path.normpath(f["path"]), set()).add((f["line"], f["code"], f["message"]))
    return found


def check_tree(root: Path, jobs: int | None = None) -> dict[str, set[Key]]:
    """Findings by file of one ``summaryguard check .`` run in ``root``."""
    command = [_summaryguard(), *CHECK, *(["--jobs", str(jobs)] if jobs else []), "."]
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1, 2) or not done.stdout.strip():
        raise RuntimeError(f"summaryguard check . in {root} exited {done.returncode}: {done.stderr[-2000:]}")
    return _by_file(done.stdout)


def check_alone(root: Path, files: Sequence[str], batch: int = 200) -> dict[str, set[Key]]:
    """Findings of each file checked alone from ``root`` (``summaryguard check FILE``)."""
    found: dict[str, set[Key]] = {}
    env = {**os.environ, "SG_LOCALITY_CHECK": json.dumps(CHECK)}
    for start in range(0, len(files), batch):
        chunk = list(files[start:start + batch])
        done = subprocess.run(
            [sys.executable, "-c", _DRIVER, str(root), *chunk], capture_output=True, text=True, check=False, env=env
        )
        if done.returncode != 0:
            raise RuntimeError(f"the single-file driver failed in {root}: {done.stderr[-2000:]}")
        for path, status, text in json.loads(done.stdout):
            if status not in (0, 1, 2) or not text.strip():
                raise RuntimeError(f"summaryguard check {path} exited {status}")
            found[os.path.normpath(path)] = _by_file(text).get(os.path.normpath(path), set())
    return found


def differences(whole: dict[str, set[Key]], alone: dict[str, set[Key]]) -> dict[str, tuple[set[Key], set[Key]]]:
    """File -> (only in the whole-tree run, only when alone), for the files checked alone."""
    result = {}
    for path, mine in alone.items():
        theirs = whole.get(path, set())
        if mine != theirs:
            result[path] = (theirs - mine, mine - theirs)
    return result


def _summaryguard() -> str:
    found = shutil.which("summaryguard")
    if found is None:
        raise UsageError("the summaryguard command is not on PATH: install the project (pip install -e .)")
    return found


def corpus_packages(corpus: str | None, names: Iterable[str]) -> list[Path]:
    """The package folders to check: ``--corpus``, ``$SG_REALCODE_SRC``, the user cache, or fetch.sh's output."""
    folder = corpus or os.environ.get("SG_REALCODE_SRC")
    if not folder and DEFAULT_CACHE.is_dir():
        folder = str(DEFAULT_CACHE)
    if not folder and FETCH_SCRIPT.is_file():
        done = subprocess.run(["bash", str(FETCH_SCRIPT)], capture_output=True, text=True, check=False)
        folder = done.stdout.strip().splitlines()[-1] if done.returncode == 0 and done.stdout.strip() else None
    if not folder or not Path(folder).is_dir():
        raise UsageError("no real-code corpus: pass --corpus DIR, set SG_REALCODE_SRC or run ../shared/realcode/fetch.sh")
    packages = sorted(p for p in Path(folder).iterdir() if p.is_dir())
    wanted = list(names)
    if wanted:
        packages = [p for p in packages if any(p.name == w or p.name.startswith(w + "-") for w in wanted)]
        if not packages:
            raise UsageError(f"no package named {', '.join(wanted)} in {folder}")
    return packages


def python_files(root: Path) -> list[str]:
    return sorted(
        p.relative_to(root).as_posix() for p in root.rglob("*.py")
        if not any(part in (".git", "__pycache__") for part in p.parts)
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", help="folder with one sub-folder per package")
    parser.add_argument("--packages", nargs="*", default=[], help="package folders (or their name before the version)")
    parser.add_argument("--sample", type=int, default=20, help="files without findings checked alone, per package")
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--strict", action="store_true", help="exit 1 on any difference")
    args = parser.parse_args(argv)
    try:
        packages = corpus_packages(args.corpus, args.packages)
        _summaryguard()
    except UsageError as exc:
        print(f"locality: {exc}", file=sys.stderr)
        return 2
    differing = 0
    for package in packages:
        whole = check_tree(package, args.jobs)
        with_findings = sorted(whole)
        others = [f for f in python_files(package) if f not in whole]
        sample = sorted(random.Random(package.name).sample(others, min(args.sample, len(others))))
        alone = check_alone(package, with_findings + sample)
        diff = differences(whole, alone)
        differing += len(diff)
        print(f"{package.name}: {sum(map(len, whole.values()))} findings in {len(whole)} files; "
              f"{len(alone)} files checked alone ({len(sample)} without findings); {len(diff)} differ")
        for path, (only_whole, only_alone) in sorted(diff.items()):
            for line, code, message in sorted(only_whole):
                print(f"  {path}:{line} {code} only in the whole-tree run: {message[:120]}")
            for line, code, message in sorted(only_alone):
                print(f"  {path}:{line} {code} only when checked alone: {message[:120]}")
    print(f"total: {differing} files differ")
    return 1 if args.strict and differing else 0


if __name__ == "__main__":
    sys.exit(main())
