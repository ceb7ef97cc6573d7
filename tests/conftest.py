"""Shared fixtures: plugin isolation and checkpoints of every shape the guard reads."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from summaryguard.guard import Checkpoint, DroppedRef, Summary
from summaryguard.plugins import hookimpl
from summaryguard.plugins import manager as plugin_manager

#: The checkpoint shapes the built-in adapters read.
SHAPES = ("native", "attributes", "mapping")


@pytest.fixture(autouse=True)
def _plugins_back_to_builtins() -> Iterator[None]:
    """After each test, rebuild the plugin manager if the test changed it.

    Cheap when nothing changed (one comparison); a test that registered a
    plugin, blocked one or built the manager with other settings gets a fresh
    manager (and with it an empty adapter cache) before the next test.
    """
    yield
    manager = plugin_manager._manager
    if manager is None:
        return
    names = {name for name, _ in manager.list_name_plugin()}
    if names != set(plugin_manager.BUILTIN_PLUGINS) or plugin_manager._errors:
        plugin_manager.reset_plugin_manager()


@pytest.fixture
def use_plugin() -> Iterator[Callable[..., Any]]:
    """Register plugins for one test; they are unregistered afterwards."""
    from summaryguard.plugins import register, unregister

    names: list[str] = []

    def add(plugin: Any, name: str | None = None) -> Any:
        names.append(register(plugin, name=name))
        return plugin

    yield add
    for name in reversed(names):
        if plugin_manager._manager is not None and plugin_manager._manager.get_plugin(name) is not None:
            unregister(name=name)


def _make_checkpoint(
    shape: str,
    *,
    turn: int = 7,
    recorded: int | None = 3,
    generation: int | None = 3,
    has_summary: bool = True,
    partial: bool = False,
    refs: Any = ("h1",),
    manifest: Any = (),
    next_turn_deps: Any = (),
) -> Any:
    """One checkpoint with these facts, in the given shape.

    ``manifest`` holds ``(ref, last_known, tool)`` triples.
    """
    entries = [DroppedRef(ref=r, last_known=v, tool=t) for r, v, t in manifest]
    if shape == "native":
        summary = (
            Summary(
                generation=generation,  # type: ignore[arg-type]
                verbatim_refs={r: f"value-of-{r}" for r in refs},
                drop_manifest=tuple(entries),
                partial=partial,
            )
            if has_summary
            else None
        )
        return Checkpoint(turn=turn, summary=summary, summary_generation=recorded, next_turn_deps=tuple(next_turn_deps))
    if shape == "attributes":
        summary = (
            SimpleNamespace(generation=generation, partial=partial, verbatim_refs=set(refs), drop_manifest=entries)
            if has_summary
            else None
        )
        return SimpleNamespace(
            turn=turn, summary_generation=recorded, summary=summary, next_turn_deps=list(next_turn_deps)
        )
    if shape == "mapping":
        summary_data = (
            {
                "generation": generation,
                "partial": partial,
                "verbatim_refs": list(refs),
                "drop_manifest": [{"ref": r, "last_known": v, "tool": t} for r, v, t in manifest],
            }
            if has_summary
            else None
        )
        return {
            "turn": turn,
            "summary_generation": recorded,
            "summary": summary_data,
            "next_turn_deps": list(next_turn_deps),
        }
    raise ValueError(shape)


@pytest.fixture
def make_checkpoint() -> Callable[..., Any]:
    """The checkpoint builder (a pure function, safe to use under hypothesis)."""
    return _make_checkpoint


@pytest.fixture(params=SHAPES)
def shape(request: pytest.FixtureRequest) -> str:
    return request.param


class Spy:
    """A plugin that records the violation hooks it sees and resolves as told."""

    def __init__(self, answers: Callable[[Any, Any], Any] | None = None) -> None:
        self.observed: list[tuple[Any, Any]] = []
        self.resolved: list[Any] = []
        self.accepted: list[Any] = []
        self.answers = answers

    @hookimpl
    def summaryguard_observe_violation(self, error: Any, checkpoint: Any) -> None:
        self.observed.append((error, checkpoint))

    @hookimpl
    def summaryguard_resolve_violation(self, error: Any, checkpoint: Any) -> Any:
        self.resolved.append(error)
        return self.answers(error, checkpoint) if self.answers else None

    @hookimpl
    def summaryguard_divergence_accepted(self, record: Any) -> None:
        self.accepted.append(record)


@pytest.fixture
def spy(use_plugin: Callable[..., Any]) -> Spy:
    """A registered :class:`Spy` that answers None (no resolution); set ``.answers``."""
    return use_plugin(Spy(), name="test-spy")
