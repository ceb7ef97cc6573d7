"""The LangGraph room's boundaries: what loads when, and the compatibility path.

Each import check runs in a fresh interpreter, so what this test process
already imported cannot hide an import.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOM = "summaryguard.plugins.langgraph"
FRAMEWORKS = ("langgraph", "langmem", "langchain_core", "langchain")
#: The room's runtime wrappers: loaded when the integration is used, never by building the plugin manager.
RUNTIME = frozenset(f"{ROOM}.{name}" for name in ("_adapters", "_graph", "_refs", "_stamp", "_state", "_tools"))


def _modules_after(code: str) -> list[str]:
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def _room_modules(modules: list[str]) -> list[str]:
    return [m for m in modules if m == ROOM or m.startswith(ROOM + ".")]


def _framework_modules(modules: list[str]) -> list[str]:
    return [m for m in modules if m.split(".")[0] in FRAMEWORKS]


@pytest.mark.parametrize("code", ["import summaryguard.guard", "import summaryguard.guard.tools"])
def test_the_runtime_core_imports_no_module_of_the_room(code: str) -> None:
    modules = _modules_after(code)
    assert _room_modules(modules) == []
    assert _framework_modules(modules) == []


def test_building_the_plugin_manager_registers_the_room_without_its_runtime_modules() -> None:
    code = """
from summaryguard.plugins.manager import get_plugin_manager
manager = get_plugin_manager()
assert manager.get_plugin("summaryguard.plugins.langgraph.plugin") is not None
"""
    modules = _modules_after(code)
    assert f"{ROOM}.plugin" in modules
    assert [m for m in _room_modules(modules) if m in RUNTIME] == []
    assert _framework_modules(modules) == []


def test_every_private_module_of_the_room_is_counted_as_runtime() -> None:
    import summaryguard.plugins.langgraph as room

    [folder] = room.__path__
    private = {f"{ROOM}.{path.stem}" for path in Path(folder).glob("_*.py") if path.stem != "__init__"}
    assert private == RUNTIME


def test_the_probe_sees_the_runtime_modules_once_the_integration_is_used() -> None:
    """The check above is not vacuous: using a public name loads its module (and still not LangGraph)."""
    modules = _modules_after(f"from {ROOM} import register_extractor")
    assert f"{ROOM}._refs" in modules and f"{ROOM}._refs" in RUNTIME
    assert _framework_modules(modules) == []


def test_the_compatibility_shim_exports_the_same_objects_as_the_room() -> None:
    import summaryguard.guard.langgraph as shim
    import summaryguard.plugins.langgraph as room

    assert sorted(shim.__all__) == sorted(room.__all__)
    for name in room.__all__:
        assert getattr(shim, name) is getattr(room, name), name
    assert set(room.__all__) <= set(dir(room))


def test_an_unknown_name_of_the_room_is_an_attribute_error() -> None:
    import summaryguard.plugins.langgraph as room

    with pytest.raises(AttributeError, match="no attribute 'guard_everything'"):
        room.guard_everything  # noqa: B018
