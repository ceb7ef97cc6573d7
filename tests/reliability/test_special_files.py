"""B5 (analyzer): a FIFO or a device named on the command line, as ``--config`` or as
``--baseline`` is refused with its path and "not a regular file"; it never hangs the
run or is read until memory runs out, and every other file is still checked (exit 2).

Real FIFOs and real devices, in a real subprocess with a timeout and an address-space
limit: without the fix, a FIFO hangs (the timeout fails the test) and ``/dev/zero``
ends in a MemoryError that stops the run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo") or not os.path.exists("/dev/zero"), reason="POSIX")

GOOD = "def go(checkpoint):\n    return checkpoint.resume_context()\n"


def _limit_memory() -> None:  # pragma: no cover - runs in the child
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, 2 * 1024**3))


def check(cwd: Path, *argv: str) -> tuple[int, dict, str]:  # type: ignore[type-arg]
    result = subprocess.run(
        [sys.executable, "-m", "summaryguard.rules.cli", "check", "--no-cache", "--format", "json", *argv],
        cwd=cwd, capture_output=True, text=True, timeout=60, preexec_fn=_limit_memory,
    )
    assert "Traceback" not in result.stderr and "internal error" not in result.stdout + result.stderr
    report = json.loads(result.stdout) if result.stdout.startswith("{") else {}
    return result.returncode, report, result.stderr


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.summaryguard]\n")
    (tmp_path / "good.py").write_text(GOOD)
    os.mkfifo(tmp_path / "pipe.py")
    os.mkfifo(tmp_path / "fifo.toml")
    os.mkfifo(tmp_path / "fifo.json")
    return tmp_path


@pytest.mark.parametrize("special", ["pipe.py", "/dev/zero", "/dev/null"])
def test_a_special_file_on_the_command_line_is_refused_and_the_others_are_checked(project: Path, special: str) -> None:
    status, report, _ = check(project, special, "good.py")
    assert status == 2
    assert [(e["path"], e["message"]) for e in report["errors"]] == [
        (special, "cannot read file: not a regular file (it is a " + ("named pipe)" if special == "pipe.py" else "character device)"))
    ]
    assert {f["path"] for f in report["findings"]} == {"good.py"}


@pytest.mark.parametrize("special", ["fifo.toml", "/dev/zero"])
def test_a_special_config_file_is_a_configuration_error(project: Path, special: str) -> None:
    status, _, stderr = check(project, "--config", special, "good.py")
    assert status == 2
    assert special in stderr and "not a regular file" in stderr


@pytest.mark.parametrize("special", ["fifo.json", "/dev/zero"])
def test_a_special_baseline_file_is_a_configuration_error(project: Path, special: str) -> None:
    status, _, stderr = check(project, "--baseline", special, "good.py")
    assert status == 2
    assert special in stderr and "cannot read baseline: not a regular file" in stderr


def test_a_source_file_over_the_size_limit_is_refused_before_it_is_read(project: Path) -> None:
    from summaryguard.rules.cli.sources import MAX_SOURCE_BYTES

    big = project / "big.py"
    with open(big, "wb") as handle:  # sparse: no disk space, and reading it would cost MAX_SOURCE_BYTES
        handle.truncate(MAX_SOURCE_BYTES + 1)
    status, report, _ = check(project, "big.py", "good.py")
    assert status == 2
    [error] = report["errors"]
    assert error["path"] == "big.py"
    assert error["message"].startswith(f"too large to check ({MAX_SOURCE_BYTES + 1:,} bytes, at most {MAX_SOURCE_BYTES:,})")
    assert {f["path"] for f in report["findings"]} == {"good.py"}
