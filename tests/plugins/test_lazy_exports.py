"""A room's public names load from its private modules on first use, and only then."""

from __future__ import annotations

import subprocess
import sys

import pytest

ROOMS = {
    "summaryguard.plugins.langgraph": ("guard_graph", "_graph"),
    "summaryguard.plugins.langchain": ("guard_agent", "_agent"),
    "summaryguard.plugins.openai_agents": ("guard_runner", "_runner"),
}


@pytest.mark.parametrize("room", sorted(ROOMS))
def test_a_public_name_imports_its_module_when_asked_for(room: str) -> None:
    name, home = ROOMS[room]
    code = (
        "import sys, importlib\n"
        f"room = importlib.import_module({room!r})\n"
        f"before = {room + '.' + home!r} in sys.modules\n"
        f"listed = {name!r} in dir(room)\n"
        f"value = getattr(room, {name!r})\n"
        f"print(before, listed, callable(value), {name!r} in vars(room))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["False", "True", "True", "True"]


def test_an_unknown_name_is_an_attribute_error_naming_the_room() -> None:
    import summaryguard.plugins.langgraph as room

    with pytest.raises(AttributeError, match="summaryguard.plugins.langgraph.*no_such_name"):
        room.no_such_name  # noqa: B018


def test_the_plugin_package_still_reaches_its_manager_module() -> None:
    """``import summaryguard.plugins`` imported the manager before it became lazy: code that
    goes on to ``summaryguard.plugins.manager.X`` still works, and the exports stay lazy."""
    import subprocess
    import sys

    code = (
        "import sys, summaryguard.plugins as p\n"
        "lazy = 'summaryguard.plugins.manager' not in sys.modules and 'pluggy' not in sys.modules\n"
        "print(lazy, p.manager.BUILTIN_PLUGINS[0], p.register is p.manager.register)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60).stdout
    assert out.split() == ["True", "summaryguard.plugins.checkpoint_native", "True"]
