"""The one plugin manager, built lazily and once.

Built-in plugins are registered through the same manager as third-party ones.
Entry points of the group ``summaryguard`` are loaded on first use; a plugin
that fails to import or register is reported (a :class:`PluginLoadWarning` and
an entry in :func:`plugin_errors`), never fatal to the host agent.

Environment:

* ``SUMMARYGUARD_DISABLE_PLUGIN_AUTOLOAD=1``: load no entry-point plugins;
* ``SUMMARYGUARD_BLOCK_PLUGINS=name,other``: skip these plugin names, entry
  points and built-ins alike (``summaryguard.plugins.observe_logging``, say).
"""

# No ``from __future__ import annotations``: its NamedTuple would compile each
# annotation given as a string (see summaryguard.rules.cli.report).
import importlib
import os
import warnings
from _thread import RLock  # threading's own RLock; ``threading`` itself is not needed here
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any, NamedTuple

from .entry_points import may_declare

if TYPE_CHECKING:  # pragma: no cover
    import pluggy

__all__ = [
    "BUILTIN_PLUGINS",
    "PluginLoadError",
    "PluginLoadWarning",
    "builtin_answers",
    "builtin_plugins_with",
    "get_plugin_manager",
    "plugin_errors",
    "register",
    "reset_plugin_manager",
    "unregister",
]

ENTRY_POINT_GROUP = "summaryguard"
DISABLE_AUTOLOAD_ENV = "SUMMARYGUARD_DISABLE_PLUGIN_AUTOLOAD"
BLOCK_ENV = "SUMMARYGUARD_BLOCK_PLUGINS"

#: Modules registered as plugins before any third-party plugin.
BUILTIN_PLUGINS: tuple[str, ...] = (
    "summaryguard.plugins.checkpoint_native",
    "summaryguard.plugins.checkpoint_attributes",
    "summaryguard.plugins.checkpoint_mappings",
    "summaryguard.plugins.langgraph.plugin",
    "summaryguard.plugins.langchain.plugin",
    "summaryguard.plugins.openai_agents.plugin",
    "summaryguard.plugins.pydantic_ai.plugin",
    "summaryguard.plugins.adk.plugin",
    "summaryguard.plugins.crewai.plugin",
    "summaryguard.plugins.mcp.plugin",
    "summaryguard.plugins.smolagents.plugin",
    "summaryguard.plugins.openhands.plugin",
    "summaryguard.plugins.observe_logging",
)


class PluginLoadWarning(UserWarning):
    """A third-party plugin could not be loaded; the host goes on without it."""


class PluginLoadError(NamedTuple):
    """Why one plugin was not loaded."""

    name: str
    value: str
    error: str


_lock = RLock()
_manager: "pluggy.PluginManager | None" = None
_errors: list[PluginLoadError] = []
#: Called with no arguments whenever the set of plugins changes (cache resets).
_listeners: list[Callable[[], None]] = []


def get_plugin_manager() -> "pluggy.PluginManager":
    """The process-wide manager, with built-ins and entry points loaded."""
    manager = _manager
    if manager is not None:
        return manager
    with _lock:
        if _manager is None:
            _build()
        assert _manager is not None
        return _manager


def _build() -> None:
    global _manager
    from . import hookspecs
    from ._pluggy import PluginManager

    manager = PluginManager()
    manager.add_hookspecs(hookspecs)
    # Blocked names first, so a block holds for built-ins too, autoload or not.
    blocked = _blocked_names()
    for name in blocked:
        manager.set_blocked(name)
    for module_name in BUILTIN_PLUGINS:
        if module_name not in blocked:
            manager.register(importlib.import_module(module_name), name=module_name)
    _errors.clear()
    if _autoloads():
        _load_entry_points(manager, blocked)
    manager.check_pending()
    _manager = manager
    _changed()


def builtin_answers(hook: str) -> list[object] | None:
    """Every plugin's answer to the collecting hook ``hook``, asked of the built-in plugin
    modules directly, when they are all the plugins there can be; else None (ask the manager).

    Why: a run whose files the text pre-filter all dismisses needs the built-ins'
    vocabulary and rule folders, and importing pluggy and registering them with it
    cost about a fifteenth of flake8's whole run on such a file (SPEC §3.1.2). The answers are the
    manager's exactly: nothing is registered until the manager is built, and an
    entry-point plugin is ruled out as :func:`_load_entry_points` rules it out. Their
    order is pluggy's (the last registered first: no built-in marks a collecting hook
    ``tryfirst`` or ``trylast``, a test holds them to it); a hook with ``firstresult`` or
    a wrapper is no collecting hook and must not be asked here.
    """
    modules = builtin_plugins_with(hook)
    if modules is None:
        return None
    answers = (getattr(module, hook)() for module in reversed(modules))
    return [answer for answer in answers if answer is not None]


def builtin_plugins_with(hook: str) -> list[ModuleType] | None:
    """The built-in plugin modules that implement ``hook``, when the built-ins are all the
    plugins there can be (see :func:`builtin_answers`); else None."""
    if _manager is not None or _autoloads() and may_declare(ENTRY_POINT_GROUP):
        return None
    from .markers import IMPL_ATTRIBUTE, marked_options

    blocked = _blocked_names()
    modules = [importlib.import_module(name) for name in BUILTIN_PLUGINS if name not in blocked]
    return [m for m in modules if marked_options(getattr(m, hook, None), IMPL_ATTRIBUTE) is not None]


def _autoloads() -> bool:
    return not _truthy(os.environ.get(DISABLE_AUTOLOAD_ENV))


def _blocked_names() -> set[str]:
    return {n.strip() for n in os.environ.get(BLOCK_ENV, "").split(",") if n.strip()}


def _load_entry_points(manager: "pluggy.PluginManager", blocked: set[str]) -> None:
    if not may_declare(ENTRY_POINT_GROUP):
        return  # importlib.metadata would list none (see .entry_points): its import is not paid
    from importlib import metadata

    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in blocked or manager.get_plugin(ep.name) is not None:
            continue
        try:
            plugin = ep.load()
            manager.register(plugin, name=ep.name)
            # A plugin whose hooks are not in our specs is a broken plugin too.
            manager.check_pending()
        except Exception as exc:  # noqa: BLE001 - any failure of a plugin is reported, not raised
            if manager.get_plugin(ep.name) is not None:
                manager.unregister(name=ep.name)
            error = PluginLoadError(ep.name, ep.value, f"{type(exc).__name__}: {exc}")
            _errors.append(error)
            warnings.warn(
                f"summaryguard: plugin {ep.name!r} ({ep.value}) was not loaded: {error.error}",
                PluginLoadWarning,
                stacklevel=3,
            )


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in {"1", "true", "yes", "on"}


def plugin_errors() -> list[PluginLoadError]:
    """The plugins that failed to load in this process, with the reason."""
    get_plugin_manager()
    return list(_errors)


def register(plugin: Any, name: str | None = None) -> str:
    """Register a plugin object (module, class or instance with hookimpls).

    Raises :class:`pluggy.PluginValidationError` (and registers nothing) when a
    hookimpl matches no specification or its arguments do not fit one, and
    ValueError when the name is blocked.
    """
    with _lock:
        manager = get_plugin_manager()
        already = manager.is_registered(plugin)
        try:
            registered = manager.register(plugin, name=name)
            if registered is None:  # pluggy's answer for a blocked name
                blocked = name or manager.get_canonical_name(plugin)
                raise ValueError(f"summaryguard: plugin name {blocked!r} is blocked ({BLOCK_ENV})")
            manager.check_pending()  # a hook we do not specify: refuse the plugin
        except Exception:
            # pluggy keeps a plugin whose hookimpl failed validation half-registered
            if not already and manager.is_registered(plugin):
                manager.unregister(plugin)
            raise
        _changed()
    return registered


def unregister(plugin: Any = None, name: str | None = None) -> None:
    """Remove a plugin registered earlier."""
    with _lock:
        get_plugin_manager().unregister(plugin, name=name)
        _changed()


def reset_plugin_manager() -> None:
    """Forget the manager; the next use builds it afresh (tests, reloads)."""
    global _manager
    with _lock:
        _manager = None
        _changed()


def on_plugins_changed(listener: Callable[[], None]) -> None:
    """Call ``listener`` whenever plugins are (un)registered: cache owners use it."""
    _listeners.append(listener)


def _changed() -> None:
    for listener in list(_listeners):
        listener()
