"""``--format text`` (the default): one line per finding or error, then a summary.

Lines use the ``path:line:col:`` prefix that editors and terminals turn into
links::

    src/agent.py:12:5: SG201 [rederive-missing-ref] the handle is fetched again ...
    src/broken.py:3: error: cannot parse: ...
    Found 1 finding and 1 error in 10 files (0.12s).

With ``--baseline``, one more line says how many known findings the baseline
hid and how many of its entries are stale (their findings were fixed).
"""

from __future__ import annotations

from typing import TextIO

from ..report import ErrorLike, FindingLike, Report, displayable

__all__ = ["baseline_line", "format_error", "format_finding", "summary_line", "write_text"]


def format_finding(finding: FindingLike) -> str:
    path, message = displayable(finding.path), displayable(finding.message)
    return f"{path}:{finding.line}:{finding.column}: {finding.code} [{finding.name}] {message}"


def format_error(error: ErrorLike) -> str:
    path = displayable(error.path)
    where = path if error.line is None else f"{path}:{error.line}"
    return f"{where}: error: {displayable(error.message)}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def summary_line(report: Report) -> str:
    files = _count(report.files, "file")
    seconds = f"{report.seconds:.2f}s"
    if not report.findings and not report.errors:
        return f"All clear: no findings in {files} ({seconds})."
    parts = []
    if report.findings:
        parts.append(_count(len(report.findings), "finding"))
    if report.errors:
        parts.append(_count(len(report.errors), "error"))
    return f"Found {' and '.join(parts)} in {files} ({seconds})."


def baseline_line(report: Report) -> str | None:
    """What the baseline did, or None when the run used none."""
    baseline = report.baseline
    if baseline is None:
        return None
    text = f"Baseline {baseline.path}: {_count(baseline.matched, 'known finding')} not reported"
    if baseline.stale:
        entries, them = ("1 stale entry", "it") if baseline.stale == 1 else (f"{baseline.stale} stale entries", "them")
        text += f"; {entries} (fixed since: run with --write-baseline to drop {them})"
    return text + "."


def write_text(report: Report, stream: TextIO) -> None:
    for finding in report.findings:
        stream.write(format_finding(finding) + "\n")
    for error in report.errors:
        stream.write(format_error(error) + "\n")
    stream.write(summary_line(report) + "\n")
    extra = baseline_line(report)
    if extra is not None:
        stream.write(extra + "\n")
