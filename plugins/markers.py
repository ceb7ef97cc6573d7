"""The hook markers, ``hookimpl`` and ``hookspec``, without importing pluggy.

Why: every built-in plugin module is decorated with ``hookimpl`` when it is
imported, and a ``summaryguard check`` of files the text pre-filter dismisses
reads the built-ins' vocabulary without building the plugin manager (SPEC
§3.1.2: half of flake8's run for such a file; importing pluggy and registering
the built-ins with it cost about a fifteenth of flake8's run).

A marker records the keyword arguments it was given on the function, checked
against pluggy's own names; the plugin manager (:mod:`._pluggy`) turns that
record into pluggy's options by calling pluggy's own marker with the same
arguments, so whatever pluggy's version, the options are the ones it would
have made. It also sets the options where pluggy's own marker puts them
(``summaryguard_impl``, ``summaryguard_spec``, with pluggy's defaults), so a plain
``pluggy.PluginManager("summaryguard")`` (a plugin's own tests) reads them too. A
plugin marked with ``pluggy.HookimplMarker("summaryguard")`` works as before.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

__all__ = ["IMPL_ATTRIBUTE", "PROJECT_NAME", "SPEC_ATTRIBUTE", "HookMarker", "hookimpl", "hookspec", "marked_options"]

PROJECT_NAME = "summaryguard"
#: Where a marker keeps its keyword arguments on the function it marks.
IMPL_ATTRIBUTE = "_summaryguard_hookimpl"
SPEC_ATTRIBUTE = "_summaryguard_hookspec"

#: pluggy's option names and defaults (its HookimplOpts and HookspecOpts).
_IMPL_OPTIONS = {"wrapper": False, "hookwrapper": False, "optionalhook": False, "tryfirst": False,
                 "trylast": False, "specname": None}
_SPEC_OPTIONS = {"firstresult": False, "historic": False, "warn_on_impl": None, "warn_on_impl_args": None}


class HookMarker:
    """``@marker`` or ``@marker(option=value, ...)``, as pluggy's markers are used."""

    __slots__ = ("_attribute", "_options", "_pluggy_attribute")

    def __init__(self, attribute: str, options: Mapping[str, object], pluggy_attribute: str) -> None:
        self._attribute = attribute
        self._options = options
        self._pluggy_attribute = pluggy_attribute

    def __call__(self, function: Callable[..., object] | None = None, **options: object) -> object:
        unknown = sorted(set(options) - self._options.keys())
        if unknown:
            raise TypeError(f"unknown hook option(s) {', '.join(unknown)}; known: {', '.join(sorted(self._options))}")

        def mark(func: Callable[..., object]) -> Callable[..., object]:
            setattr(func, self._attribute, dict(options))
            setattr(func, self._pluggy_attribute, {**self._options, **options})
            return func

        return mark if function is None else mark(function)


hookimpl = HookMarker(IMPL_ATTRIBUTE, _IMPL_OPTIONS, f"{PROJECT_NAME}_impl")
hookspec = HookMarker(SPEC_ATTRIBUTE, _SPEC_OPTIONS, f"{PROJECT_NAME}_spec")


def marked_options(item: object, attribute: str) -> Mapping[str, object] | None:
    """The keyword arguments a marker recorded on ``item``, or None when it is not marked."""
    try:
        options = getattr(item, attribute, None)
    except Exception:  # noqa: BLE001 - an attribute that raises marks nothing (pluggy's rule too)
        return None
    return options if isinstance(options, dict) else None
