"""pluggy's plugin manager, taught to read summaryguard's own hook markers (:mod:`.markers`).

Imported only when the manager is built: the one module of the plugin system that
imports pluggy at its top.
"""

from __future__ import annotations

import inspect
from typing import Any

import pluggy

from .markers import IMPL_ATTRIBUTE, PROJECT_NAME, SPEC_ATTRIBUTE, marked_options

__all__ = ["PluginManager"]

_IMPL = pluggy.HookimplMarker(PROJECT_NAME)
_SPEC = pluggy.HookspecMarker(PROJECT_NAME)


def _pluggy_options(marker: Any, options: Any, attribute: str) -> Any:
    """The options pluggy's own ``marker`` makes of the same keyword arguments."""

    def probe() -> None:  # pragma: no cover - never called, only marked
        pass

    marker(**options)(probe)
    return getattr(probe, attribute)


class PluginManager(pluggy.PluginManager):
    """A pluggy manager that also accepts functions marked by :data:`.markers.hookimpl`
    and :data:`.markers.hookspec` (``parse_hookimpl_opts`` and ``parse_hookspec_opts`` are
    pluggy's documented ways to pick hooks up)."""

    def __init__(self) -> None:
        super().__init__(PROJECT_NAME)

    def parse_hookimpl_opts(self, plugin: Any, name: str) -> Any:
        found = super().parse_hookimpl_opts(plugin, name)
        if found is not None:
            return found  # marked with pluggy's own marker
        method = getattr(plugin, name)
        if not inspect.isroutine(method):
            return None
        options = marked_options(method, IMPL_ATTRIBUTE)
        return None if options is None else _pluggy_options(_IMPL, options, f"{PROJECT_NAME}_impl")

    def parse_hookspec_opts(self, module_or_class: Any, name: str) -> Any:
        found = super().parse_hookspec_opts(module_or_class, name)
        if found is not None:
            return found
        options = marked_options(getattr(module_or_class, name), SPEC_ATTRIBUTE)
        return None if options is None else _pluggy_options(_SPEC, options, f"{PROJECT_NAME}_spec")
