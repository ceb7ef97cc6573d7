"""Time ``summaryguard check`` on pathological inputs and print what each run said.

Why: every input must end in a sane time with a clear message (SPEC §3.2: no
input ever produces a traceback; a bad file is reported and the run goes
on). ``tests/reliability/test_pathological.py`` asserts the behaviour; this
script measures it, on the same cases and on bigger ones.

Each case is built in a temporary folder and checked with
``summaryguard check --no-cache --format json`` in a subprocess, timed by
wall clock (interpreter start-up included, as a user sees it). The script
prints, per case: seconds, exit status, files, findings, and the first
error message. It exits 1 if a run crashed (an exit status other than
0/1/2, a traceback, an internal error) or exceeded ``--timeout``.

Run it from the repository root, in the project's environment::

    python tests/benchmarks/bench_pathological.py
    python tests/benchmarks/bench_pathological.py --only deep --timeout 60

The file name does not start with ``test_``, so pytest never collects it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

UNCHECKED = (
    "def recover(checkpoint):\n"
    "    summary = checkpoint.summary\n"
    "    return checkpoint.resume_context()\n"
)


def _in_function(body: str) -> str:
    return "def recover(checkpoint, a, flag):\n    summary = checkpoint.summary\n" + body + \
        "    return checkpoint.resume_context()\n"


def _long(lines: int, relevant: bool, every: int = 0) -> str:
    head = "from summaryguard.guard import check_resume\n" if relevant else "import os\n"
    out = [head]
    for i in range(lines // 4):
        if every and i % every == 0:
            out.append(f"def resume_{i}(checkpoint, summary):\n    x = summary.generation\n    checkpoint.resume(summary)\n\n")
        else:
            out.append(f"def helper_{i}(a, b):\n    c = a + b * {i}\n    return c\n\n")
    return "".join(out)


def _write(root: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


def _many(root: Path, count: int) -> None:
    for index in range(count):
        sub = root / "many" / f"part{index // 100:03d}"
        if index % 100 == 0:
            sub.mkdir(parents=True)
        body = UNCHECKED if index % 1000 == 0 else f"VALUE_{index} = {index}\n"
        (sub / f"m{index % 100:02d}.py").write_text(body)


def _symlink_loop(root: Path) -> None:
    package = root / "pkg"
    package.mkdir()
    (package / "agent.py").write_text(UNCHECKED)
    (package / "loop").symlink_to(root, target_is_directory=True)
    (package / "self").symlink_to(package, target_is_directory=True)
    (package / "a.py").symlink_to(package / "b.py")
    (package / "b.py").symlink_to(package / "a.py")


def _unreadable(root: Path) -> None:
    (root / "good.py").write_text(UNCHECKED)
    secret = root / "secret.py"
    secret.write_text(UNCHECKED)
    secret.chmod(0)  # root still reads it: then only the pipe and the dangling link are errors
    (root / "dangling.py").symlink_to(root / "missing.py")
    if hasattr(os, "mkfifo"):
        os.mkfifo(root / "pipe.py")


#: name -> builder of the folder's content
CASES: dict[str, Callable[[Path], None]] = {
    "deep: 1,000-term a + a + ...": lambda r: _write(r, {"x.py": UNCHECKED + "x = " + " + ".join(["a"] * 1000) + "\n"}),
    "deep: 20,000-term a + a + ...": lambda r: _write(r, {"x.py": UNCHECKED + "x = " + " + ".join(["a"] * 20000) + "\n"}),
    "deep: 20,000-long a.b.b.b...": lambda r: _write(r, {"x.py": UNCHECKED + "x = a" + ".b" * 20000 + "\n"}),
    "deep: 5,000 .b() method chain": lambda r: _write(r, {"x.py": UNCHECKED + "x = a" + ".b()" * 5000 + "\n"}),
    "deep: 100,000 unary minus": lambda r: _write(r, {"x.py": UNCHECKED + "x = " + "-" * 100_000 + "a\n"}),
    "deep: 1,000 nested brackets": lambda r: _write(r, {"x.py": UNCHECKED + "x = " + "[" * 1000 + "]" * 1000 + "\n"}),
    "deep: 200 nested brackets": lambda r: _write(r, {"x.py": UNCHECKED + "x = " + "[" * 199 + "]" * 199 + "\n"}),
    "deep: 150 nested ifs": lambda r: _write(
        r, {"x.py": "".join("    " * i + "if a:\n" for i in range(150)) + "    " * 150 + "pass\n" + UNCHECKED}
    ),
    "deep: 5,000-operand or-chain": lambda r: _write(
        r, {"x.py": _in_function("    ok = " + " or ".join(["flag"] * 5000) + "\n")}
    ),
    "deep: 3,000 concatenated strings": lambda r: _write(
        r, {"x.py": _in_function("    t = (\n" + "".join(f'        "p{i}"\n' for i in range(3000)) + "    )\n")}
    ),
    "deep: 30,000 concatenated strings": lambda r: _write(
        r, {"x.py": _in_function("    t = (\n" + "".join(f'        "p{i}"\n' for i in range(30000)) + "    )\n")}
    ),
    "deep: 1,000-branch elif chain": lambda r: _write(
        r, {"x.py": _in_function("    if a:\n        pass\n" + "".join(f"    elif a == {i}:\n        pass\n" for i in range(1000)))}
    ),
    "size: 50,000 lines, pre-filter rejects": lambda r: _write(r, {"x.py": _long(50_000, relevant=False)}),
    "size: 50,000 lines, relevant": lambda r: _write(r, {"x.py": _long(50_000, relevant=True, every=50)}),
    "size: 19,000 lines, relevant": lambda r: _write(r, {"x.py": _long(19_000, relevant=True, every=50)}),
    "size: 5 MB on one line": lambda r: _write(r, {"x.py": UNCHECKED + "x = '" + "a" * 5_000_000 + "'\n"}),
    "newlines: CRLF": lambda r: _write(r, {"x.py": UNCHECKED.replace("\n", "\r\n").encode()}),
    "newlines: BOM + CRLF": lambda r: _write(r, {"x.py": b"\xef\xbb\xbf" + UNCHECKED.replace("\n", "\r\n").encode()}),
    "newlines: CR only": lambda r: _write(r, {"x.py": UNCHECKED.replace("\n", "\r").encode()}),
    "folder: symlink loops": _symlink_loop,
    "folder: unreadable, dangling, named pipe": _unreadable,
    "folder: 10,000 small files": lambda r: _many(r, 10_000),
    "folder: 50,000 small files": lambda r: _many(r, 50_000),
}


def run_case(name: str, build: Callable[[Path], None], timeout: float) -> tuple[bool, str]:
    with tempfile.TemporaryDirectory(prefix="sg-patho-") as folder:
        root = Path(folder)
        (root / "pyproject.toml").write_text("[tool.summaryguard]\n")
        started = time.perf_counter()
        build(root)
        built = time.perf_counter() - started
        command = [sys.executable, "-m", "summaryguard.rules.cli", "check", "--no-cache", "--format", "json"]
        started = time.perf_counter()
        try:
            done = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return False, f"{name:<42} TIMEOUT after {timeout:.0f} s"
        seconds = time.perf_counter() - started
    crashed = done.returncode not in (0, 1, 2) or "Traceback" in done.stderr or "internal error" in done.stderr
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        return False, f"{name:<42} {seconds:6.2f} s  exit {done.returncode}  no JSON report: {done.stderr[-300:]}"
    errors = report["errors"]
    first = f"{errors[0]['path']}: {errors[0]['message']}" if errors else "-"
    line = (
        f"{name:<42} {seconds:6.2f} s  exit {done.returncode}  files {report['stats']['files']:>6}  "
        f"findings {len(report['findings']):>4}  errors {len(errors)}  (built in {built:.1f} s)\n"
        f"{'':<44}{first[:150]}"
    )
    if crashed:
        line += f"\n{'':<44}CRASH: {done.stderr[-500:]}"
    return not crashed, line


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="", help="run only the cases whose name contains this text")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds allowed per case")
    args = parser.parse_args()
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} cores; summaryguard check --no-cache --format json")
    ok = True
    for name, build in CASES.items():
        if args.only and args.only not in name:
            continue
        passed, line = run_case(name, build, args.timeout)
        ok = ok and passed
        print(line, flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
