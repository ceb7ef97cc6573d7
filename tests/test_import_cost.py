"""``import summaryguard.guard`` pays for the runtime only: no libcst, no pluggy, no analyzer."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

FORBIDDEN = ("libcst", "pluggy", "summaryguard.rules")


def _modules_after(code: str) -> list[str]:
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def _heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == f or m.startswith(f + ".") for f in FORBIDDEN)]


@pytest.mark.parametrize(
    "code",
    [
        "import summaryguard.guard",
        "from summaryguard.guard import resume_guard, tool_guard, check_resume, CheckpointStore, Compactor",
        "import summaryguard.guard.model, summaryguard.guard.store, summaryguard.guard.lock",
    ],
    ids=["package", "public-names", "durable-modules"],
)
def test_importing_the_runtime_loads_no_analyzer_and_no_plugin_manager(code: str) -> None:
    modules = _modules_after(code)
    assert "summaryguard.guard" in modules
    assert _heavy(modules) == []


def test_asyncio_is_imported_only_by_code_that_awaits() -> None:
    """asyncio alone costs ~20 ms of import; the lock imports it when a task first waits on it."""
    assert "asyncio" not in _modules_after("import summaryguard.guard")


def test_the_durable_half_runs_without_the_plugin_manager(tmp_path: object) -> None:
    """Compacting and writing/reading checkpoints never needs pluggy (only the resume check does)."""
    code = f"""
from summaryguard.guard import CheckpointStore, Compactor, ProducedRef, Turn
store = CheckpointStore({str(tmp_path)!r})
compactor = Compactor(lambda prev, turns: "kept handle-1", lock=store.lock)
compactor.compact([Turn(1, "t", (ProducedRef("h1", "handle-1", "open"),))])
store.checkpoint(compactor, 1, next_turn_deps=["h1"])
assert store.latest().summary.verbatim_refs == {{"h1": "handle-1"}}
"""
    assert _heavy(_modules_after(code)) == []


def test_the_probe_would_see_a_heavy_import() -> None:
    """The check is not vacuous: resolving an adapter does load pluggy (and still not libcst)."""
    code = """
from summaryguard.guard import Checkpoint, Summary, check_resume
check_resume(Checkpoint(1, Summary(1), 1))
"""
    modules = _modules_after(code)
    assert "pluggy" in modules
    assert not [m for m in modules if m.startswith(("libcst", "summaryguard.rules"))]
