"""summaryguard's plugin system, shared by the runtime guard and the analyzer.

Write a plugin with :data:`hookimpl` against the specifications in
:mod:`summaryguard.plugins.hookspecs`; publish it under the entry-point group
``summaryguard`` or call :func:`register`.

The plugin manager's names (and its module) load on first use: the markers and the hook
specifications import no pluggy, so a built-in plugin module (or a run that
only reads the built-ins' vocabulary, see :func:`.manager.builtin_answers`)
never pays for it.
"""

from __future__ import annotations

from ._lazy import lazy_exports
from .hookspecs import hookimpl, hookspec

__all__ = [
    "PluginLoadError",
    "PluginLoadWarning",
    "get_plugin_manager",
    "hookimpl",
    "hookspec",
    "plugin_errors",
    "register",
    "reset_plugin_manager",
    "unregister",
]

# ``manager`` itself too: the package imported it before, so ``summaryguard.plugins.manager``
# resolved after ``import summaryguard.plugins`` alone, and still does.
__getattr__, __dir__ = lazy_exports(
    __name__,
    dict.fromkeys(
        ("PluginLoadError", "PluginLoadWarning", "get_plugin_manager", "plugin_errors", "register",
         "reset_plugin_manager", "unregister", "manager"),
        "manager",
    ),
    __all__,
)
