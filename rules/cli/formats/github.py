"""``--format github``: GitHub Actions workflow commands, which the runner turns into annotations.

One ``::error`` command per finding and per file that could not be analyzed::

    ::error file=src/agent.py,line=12,col=5,endLine=12,endColumn=30,title=SG201::[rederive-missing-ref] the handle ...
    ::error file=src/broken.py,line=3,title=summaryguard: file not analyzed::syntax error: ...

Escaping follows the runner's rules for workflow commands: in the message
``%``, ``\\r`` and ``\\n`` become ``%25``, ``%0D`` and ``%0A``; in property
values ``:`` and ``,`` also become ``%3A`` and ``%2C``, so a path or message
can never end a property or start the message early. Other control characters
are written as visible escapes (``\\x1b``), as the text format writes them.

A finding's title is its code alone (SPEC 3.2), the annotation's heading on
the pull request; the rule's name opens the message, as in the text format.
"""

from __future__ import annotations

from typing import TextIO

from ..report import ErrorLike, FindingLike, Report, displayable
from .text import visible_controls

__all__ = ["escape_data", "escape_property", "format_error", "format_finding", "write_github"]


def escape_data(text: str) -> str:
    """Escape a command's message (bytes that are not UTF-8 shown as ``\\xNN``, see
    :func:`~summaryguard.rules.cli.report.displayable`); any other control character
    (an ESC sequence in a file name) becomes a visible escape, as in the text format."""
    escaped = displayable(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return visible_controls(escaped)


def escape_property(text: str) -> str:
    """Escape a command property's value."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _command(properties: list[tuple[str, object]], message: str) -> str:
    rendered = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties)
    return f"::error {rendered}::{escape_data(message)}"


def format_finding(finding: FindingLike) -> str:
    return _command(
        [
            ("file", finding.path),
            ("line", finding.line),
            ("col", finding.column),
            ("endLine", finding.end_line),
            ("endColumn", finding.end_column),
            ("title", finding.code),
        ],
        f"[{finding.name}] {finding.message}",
    )


def format_error(error: ErrorLike) -> str:
    properties: list[tuple[str, object]] = [("file", error.path)]
    if error.line is not None:
        properties.append(("line", error.line))
    properties.append(("title", "summaryguard: file not analyzed"))
    return _command(properties, error.message)


def write_github(report: Report, stream: TextIO) -> None:
    for finding in report.findings:
        stream.write(format_finding(finding) + "\n")
    for error in report.errors:
        stream.write(format_error(error) + "\n")
    if report.baseline is not None and report.baseline.stale:
        stale = report.baseline.stale
        stream.write(
            f"::notice title=summaryguard baseline::{stale} baseline "
            f"{'entry matches' if stale == 1 else 'entries match'} no finding any more (fixed); "
            f"run with --write-baseline to drop {'it' if stale == 1 else 'them'}\n"
        )
