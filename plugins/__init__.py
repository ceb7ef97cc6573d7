"""summaryguard's plugin system, shared by the runtime guard and the analyzer.

Write a plugin with :data:`hookimpl` against the specifications in
:mod:`summaryguard.plugins.hookspecs`; publish it under the entry-point group
``summaryguard`` or call :func:`register`.
"""

from __future__ import annotations

from .hookspecs import hookimpl, hookspec
from .manager import (
    PluginLoadError,
    PluginLoadWarning,
    get_plugin_manager,
    plugin_errors,
    register,
    reset_plugin_manager,
    unregister,
)

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
