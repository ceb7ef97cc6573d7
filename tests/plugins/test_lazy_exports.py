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
