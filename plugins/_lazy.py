"""Public names of a framework room, imported from its private modules on first use.

A room's ``__init__`` must stay cheap: building the plugin manager, or importing
``summaryguard.guard``, never imports the framework. Each room lists where its
public names live; this module turns that table into the package's
``__getattr__`` and ``__dir__`` (PEP 562), one implementation for every room.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, homes: Mapping[str, str], public: Sequence[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: each name in ``homes`` is imported
    from ``package.<its module>`` when first asked for, then kept as an ordinary attribute.
    A name whose home is itself is that submodule (``{"manager": "manager"}``)."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(f"{package}.{home}")
        value = module if home == name else getattr(module, name)
        setattr(sys.modules[package], name, value)  # the next lookup is an ordinary attribute
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *public})

    return __getattr__, __dir__
