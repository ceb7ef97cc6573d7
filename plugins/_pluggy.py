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
        method = getattr(plugin, name)
        options = marked_options(method, IMPL_ATTRIBUTE) if inspect.isroutine(method) else None
        if options is None:
            return super().parse_hookimpl_opts(plugin, name)  # pluggy's own marker, or none
        return _pluggy_options(_IMPL, options, f"{PROJECT_NAME}_impl")

    def parse_hookspec_opts(self, module_or_class: Any, name: str) -> Any:
        options = marked_options(getattr(module_or_class, name), SPEC_ATTRIBUTE)
        if options is None:
            return super().parse_hookspec_opts(module_or_class, name)
        return _pluggy_options(_SPEC, options, f"{PROJECT_NAME}_spec")
