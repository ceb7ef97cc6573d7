"""The metamorphic test on real code (SPEC §3.1.1, issue 9): renaming the user's names creates no finding.

For each package of the real-code corpus, every ``.py`` file is copied twice
into a temporary folder: as written, and with all its modules neutralized
together by ``tests/rules/renaming.py`` (the user's functions, classes,
parameters, locals and attributes renamed to neutral names). The installed
``summaryguard check --no-cache --format json`` runs on both copies, and the
script prints the findings that *appeared* (a name decided them: always a bug)
and those that *vanished*, each with whether its trace rested on a value's
flow (a link before the sink with basis "value"; the JSON trace carries no
basis today, so a step without one counts as value: the strict reading).

A report: exit 0 whatever it finds, 2 on a usage error; ``--strict`` exits 1
on any appeared finding or any vanished finding that rested on flow.
Standard library and summaryguard only.

    python tests/realcode/metamorphic.py --packages langchain-1.5.2 letta-0.16.8 agno-3.1.10
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "rules"))

from locality import UsageError, _summaryguard, corpus_packages, python_files  # noqa: E402
from renaming import neutralize  # noqa: E402

__all__ = ["main", "rests_on_flow"]


def rests_on_flow(finding: dict) -> bool:
    """:attr:`Finding.rests_on_flow` for a JSON finding: links before the sink, none a name vote.

    The JSON schema carries no basis, so a link without one counts as a value (the strict reading)."""
    links = finding.get("trace", [])[:-1]
    return bool(links) and all(step.get("basis", "value") == "value" for step in links)


def _check(root: Path, jobs: int | None) -> dict[tuple[str, int, str], dict]:
    command = [_summaryguard(), "check", "--no-cache", "--format", "json", *(["--jobs", str(jobs)] if jobs else []), "."]
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1, 2) or not done.stdout.strip():
        raise RuntimeError(f"summaryguard check . in {root} exited {done.returncode}: {done.stderr[-2000:]}")
    report = json.loads(done.stdout)
    return {(os.path.normpath(f["path"]), f["line"], f["code"]): f for f in report["findings"]}


def compare_package(package: Path, jobs: int | None) -> tuple[list[dict], list[tuple[dict, bool]], int, float]:
    """(appeared, [(vanished, rested on flow)], findings before, seconds spent neutralizing)."""
    files = python_files(package)
    sources = {}
    for path in files:
        try:
            sources[path] = (package / path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    started = time.perf_counter()
    renamed = neutralize(sources)
    spent = time.perf_counter() - started
    with tempfile.TemporaryDirectory(prefix="sg-metamorphic-") as tmp:
        for side, texts in (("original", sources), ("neutral", renamed)):
            for path, text in texts.items():
                target = Path(tmp, side, path)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
            if (package / "pyproject.toml").is_file():
                shutil.copy(package / "pyproject.toml", Path(tmp, side, "pyproject.toml"))
        before = _check(Path(tmp, "original"), jobs)
        after = _check(Path(tmp, "neutral"), jobs)
    appeared = [f for key, f in after.items() if key not in before]
    vanished = [(f, rests_on_flow(f)) for key, f in before.items() if key not in after]
    return appeared, vanished, len(before), spent


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", help="folder with one sub-folder per package")
    parser.add_argument("--packages", nargs="*", default=[], help="package folders (or their name before the version)")
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--strict", action="store_true", help="exit 1 on an appeared or a vanished flow finding")
    args = parser.parse_args(argv)
    try:
        packages = corpus_packages(args.corpus, args.packages)
        _summaryguard()
    except UsageError as exc:
        print(f"metamorphic: {exc}", file=sys.stderr)
        return 2
    bad = 0
    for package in packages:
        appeared, vanished, total, spent = compare_package(package, args.jobs)
        flow = sum(1 for _, on_flow in vanished if on_flow)
        bad += len(appeared) + flow
        print(f"{package.name}: {total} findings; {len(appeared)} appeared, {len(vanished)} vanished "
              f"({flow} resting on flow); renaming took {spent:.1f} s")
        for f in appeared:
            print(f"  APPEARED {f['path']}:{f['line']} {f['code']} {f['message'][:100]}")
        for f, on_flow in vanished:
            why = "rested on flow" if on_flow else "names only"
            notes = " | ".join(step["note"] for step in f.get("trace", [])[:-1])
            print(f"  vanished ({why}) {f['path']}:{f['line']} {f['code']}  trace: {notes[:160]}")
    print(f"total: {bad} appeared or vanished-on-flow findings")
    return 1 if args.strict and bad else 0


if __name__ == "__main__":
    sys.exit(main())
