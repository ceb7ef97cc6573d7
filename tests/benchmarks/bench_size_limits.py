"""Time and peak memory of ``summaryguard check`` on huge files (B15), against a small file.

Why: a file too large to analyze must be refused at the cost of looking at its
size, not of parsing it (B15: a 50 MB file in the analyzer's vocabulary took 110 s
and 5.5 GB before "too large to analyze"). ``tests/reliability/test_size_limits.py``
and ``test_special_files.py`` assert the behaviour; this script measures it.

Each case is a file generated in a temporary folder, checked with
``summaryguard check --no-cache`` in a subprocess under ``/usr/bin/time -v``
(wall time and maximum resident set size, interpreter start-up included). The
baseline is the same command on a two-line file, in the same run; each case
prints its seconds, peak RSS and both as ratios to the baseline, with the first
line of the report.

Run it from the repository root, in the project's environment::

    python tests/benchmarks/bench_size_limits.py            # 50 MB cases
    python tests/benchmarks/bench_size_limits.py --mb 10    # smaller
    python tests/benchmarks/bench_size_limits.py --memory-limit-gb 8

``--memory-limit-gb`` caps each run's address space (default 8): the code
before the fix needs about 5.5 GB for the 50 MB case. The file name does not
start with ``test_``, so pytest never collects it.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

RESUME = "def go(checkpoint):\n    return checkpoint.resume_context()\n"
#: One line in the analyzer's vocabulary (the pre-filter and the code-word gate keep it).
VOCABULARY_LINE = "summary = checkpoint.summary\n"
PLAIN_LINE = "total = first + second\n"


def cases(megabytes: float) -> dict[str, str]:
    size = int(megabytes * 1024 * 1024)
    return {
        "small file (baseline)": RESUME,
        f"{megabytes:g} MB, in the vocabulary": RESUME + VOCABULARY_LINE * (size // len(VOCABULARY_LINE)),
        f"{megabytes:g} MB, no vocabulary": PLAIN_LINE * (size // len(PLAIN_LINE)),
        "12 MB, in the vocabulary (read, refused before parsing)": RESUME
        + VOCABULARY_LINE * (12 * 1024 * 1024 // len(VOCABULARY_LINE)),
    }


def measure(source: str, limit_gb: float) -> tuple[float, int, int, str]:
    """Seconds, peak RSS in KiB, exit status and the first line of output."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "pyproject.toml").write_text("[tool.summaryguard]\n")
        (root / "case.py").write_text(source)
        limit = int(limit_gb * 1024**3)
        command = [
            "/usr/bin/time", "-v", sys.executable, "-c",
            f"import resource; resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}));"
            "import sys; from summaryguard.rules.cli import main; sys.exit(main(sys.argv[1:]))",
            "check", "--no-cache", "case.py",
        ]
        result = subprocess.run(command, cwd=root, capture_output=True, text=True, env=os.environ)
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", result.stderr)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", result.stderr)
    exit_status = re.search(r"Exit status: (\d+)", result.stderr)
    assert wall and rss and exit_status, result.stderr[-2000:]
    seconds = int(wall.group(1) or 0) * 3600 + int(wall.group(2)) * 60 + float(wall.group(3))
    first = (result.stdout.splitlines() or [""])[0]
    return seconds, int(rss.group(1)), int(exit_status.group(1)), first[:150]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=50.0, help="size of the big files (default 50)")
    parser.add_argument("--memory-limit-gb", type=float, default=8.0)
    options = parser.parse_args()
    import summaryguard.rules

    print(f"summaryguard.rules from {list(summaryguard.rules.__path__)[0]}")
    baseline: tuple[float, int] | None = None
    for name, source in cases(options.mb).items():
        seconds, rss, status, first = measure(source, options.memory_limit_gb)
        if baseline is None:
            baseline = (seconds, rss)
        print(
            f"{name:58} {seconds:7.2f} s ({seconds / baseline[0]:5.1f}x)  "
            f"{rss / 1024:8.0f} MB RSS ({rss / baseline[1]:5.1f}x)  exit {status}  {first}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
