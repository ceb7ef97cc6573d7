"""Output formats of ``summaryguard check``: one module per format, one registry.

A format is a function that writes a :class:`~summaryguard.rules.cli.report.Report`
to a text stream. Adding one (SARIF, GitHub workflow commands) is a new module
here and one line in :data:`FORMATS`; the command line offers whatever the
registry holds.

The registry names each format's module and function instead of importing it:
a run imports the one format it writes (SARIF's rule descriptions and package
metadata cost a pre-commit run tens of milliseconds it does not need).
"""

from __future__ import annotations

import codecs
from collections.abc import Callable
from importlib import import_module
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from ..report import Report

__all__ = ["FORMATS", "DEFAULT_FORMAT", "Formatter", "formatter", "write_report", "writes_utf8"]

Formatter = Callable[["Report", TextIO], None]

#: Format name (the ``--format`` value) to the module and function that write it.
FORMATS: dict[str, tuple[str, str]] = {
    "text": ("text", "write_text"),
    "json": ("json_v1", "write_json"),
    "sarif": ("sarif", "write_sarif"),
    "github": ("github", "write_github"),
}

DEFAULT_FORMAT = "text"


def formatter(fmt: str) -> Formatter:
    """The function that writes the format named ``fmt`` (imported on first use)."""
    module, function = FORMATS[fmt]
    return getattr(import_module(f"{__name__}.{module}"), function)  # type: ignore[no-any-return]


def write_report(report: Report, fmt: str, stream: TextIO) -> None:
    """Write ``report`` to ``stream`` in the format named ``fmt``."""
    formatter(fmt)(report, stream)


def writes_utf8(stream: object) -> bool:
    """Whether ``stream`` encodes text as UTF-8, so it can spell every character. Where it
    cannot (a cp1252 console, ``PYTHONIOENCODING=ascii``), the command line makes it escape
    what it cannot encode, and JSON escapes every character beyond ASCII itself
    (``ensure_ascii``): Python's escapes (``\\U0001f600``) are not JSON's."""
    try:
        return codecs.lookup(getattr(stream, "encoding", None) or "utf-8").name == "utf-8"
    except LookupError:
        return False
