"""Output formats of ``summaryguard check``: one module per format, one registry.

A format is a function that writes a :class:`~summaryguard.rules.cli.report.Report`
to a text stream. Adding one (SARIF, GitHub workflow commands) is a new module
here and one line in :data:`FORMATS`; the command line offers whatever the
registry holds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO

from ..report import Report
from .github import write_github
from .json_v1 import write_json
from .sarif import write_sarif
from .text import write_text

__all__ = ["FORMATS", "DEFAULT_FORMAT", "Formatter", "write_report"]

Formatter = Callable[[Report, TextIO], None]

#: Format name (the ``--format`` value) to the function that writes it.
FORMATS: dict[str, Formatter] = {
    "text": write_text,
    "json": write_json,
    "sarif": write_sarif,
    "github": write_github,
}

DEFAULT_FORMAT = "text"


def write_report(report: Report, fmt: str, stream: TextIO) -> None:
    """Write ``report`` to ``stream`` in the format named ``fmt``."""
    FORMATS[fmt](report, stream)
