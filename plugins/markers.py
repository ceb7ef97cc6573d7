"""The hook markers, ``hookimpl`` and ``hookspec``, without importing pluggy.

Why: every built-in plugin module is decorated with ``hookimpl`` when it is
imported, and a ``summaryguard check`` of files the text pre-filter dismisses
reads the built-ins' vocabulary without building the plugin manager (SPEC
§3.1.2: half of flake8's run for such a file; pluggy and ``inspect`` are a
tenth of flake8's run to import, registering the built-ins another tenth).

A marker records the keyword arguments it was given on the function, checked
against pluggy's own names; the plugin manager (:mod:`._pluggy`) turns that
record into pluggy's options by calling pluggy's own marker with the same
arguments, so whatever pluggy's version, the options are the ones it would
have made. A plugin marked with ``pluggy.HookimplMarker("summaryguard")``
works as before.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

__all__ = ["IMPL_ATTRIBUTE", "PROJECT_NAME", "SPEC_ATTRIBUTE", "HookMarker", "hookimpl", "hookspec", "marked_options"]

PROJECT_NAME = "summaryguard"
#: Where a marker keeps its keyword arguments on the function it marks.
IMPL_ATTRIBUTE = "_summaryguard_hookimpl"
SPEC_ATTRIBUTE = "_summaryguard_hookspec"

_IMPL_OPTIONS = frozenset({"wrapper", "hookwrapper", "optionalhook", "tryfirst", "trylast", "specname"})
_SPEC_OPTIONS = frozenset({"firstresult", "historic", "warn_on_impl", "warn_on_impl_args"})


class HookMarker:
    """``@marker`` or ``@marker(option=value, ...)``, as pluggy's markers are used."""

    __slots__ = ("_attribute", "_options")

    def __init__(self, attribute: str, options: frozenset[str]) -> None:
        self._attribute = attribute
        self._options = options

    def __call__(self, function: Callable[..., object] | None = None, **options: object) -> object:
        unknown = sorted(set(options) - self._options)
        if unknown:
            raise TypeError(f"unknown hook option(s) {', '.join(unknown)}; known: {', '.join(sorted(self._options))}")

        def mark(func: Callable[..., object]) -> Callable[..., object]:
            setattr(func, self._attribute, dict(options))
            return func

        return mark if function is None else mark(function)


hookimpl = HookMarker(IMPL_ATTRIBUTE, _IMPL_OPTIONS)
hookspec = HookMarker(SPEC_ATTRIBUTE, _SPEC_OPTIONS)


def marked_options(item: object, attribute: str) -> Mapping[str, object] | None:
    """The keyword arguments a marker recorded on ``item``, or None when it is not marked."""
    try:
        options = getattr(item, attribute, None)
    except Exception:  # noqa: BLE001 - an attribute that raises marks nothing (pluggy's rule too)
        return None
    return options if isinstance(options, dict) else None
