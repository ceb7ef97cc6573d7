"""``--format text`` (the default): one line per finding or error, then a summary.

Lines use the ``path:line:col:`` prefix that editors and terminals turn into
links::

    src/agent.py:12:5: SG201 [rederive-missing-ref] the handle is fetched again ...
    src/broken.py:3: error: cannot parse: ...
    Found 1 finding and 1 error in 10 files (0.12s).

With ``--baseline``, one more line says how many known findings the baseline
hid and how many of its entries are stale (their findings were fixed).

Paths and messages are shown through :func:`escape`: git allows any byte but
``/`` and NUL in a file name, so a pull request can add a file whose name holds
a newline followed by ``::warning ...::`` (GitHub Actions runs a workflow
command from any line of a job's output) or an ESC sequence for the terminal.
Every control character is written as a visible escape instead, and so is the
colon of a line that would start with ``::``; one report line is always one
line of output.
"""

from __future__ import annotations

import os
import re
from typing import TextIO

from ..report import ErrorLike, FindingLike, Report, displayable, step_path

__all__ = ["baseline_line", "escape", "format_error", "format_finding", "summary_line", "visible_controls", "write_text"]

#: C0 controls, DEL, C1 controls, the Unicode line and paragraph separators, and
#: the bidirectional overrides and isolates (text that displays in another order
#: than it reads: "Trojan Source").
#: (Patterns are compiled by ``re``'s own cache when text first needs escaping.)
_CONTROL = "[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
#: A workflow command: ``::`` at the start of a line (GitHub ignores leading blanks).
_COMMAND = r"^(\s*):(?=:)"


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible_controls(text: str) -> str:
    """``text`` with every control character as a visible escape (``\\x1b``, ``\\u202e``)."""
    return text if text.isprintable() else re.sub(_CONTROL, _visible, text)


def escape(text: str) -> str:
    """``text`` for one line of a terminal or a CI log: valid Unicode (see
    :func:`~summaryguard.rules.cli.report.displayable`), control characters as escapes
    (``\\n``, ``\\x1b``, ``\\u202e``), and no ``::`` at its start."""
    text = displayable(text)
    if text.isprintable() and not text.lstrip().startswith("::"):
        return text  # the common case: nothing to do
    text = visible_controls(text)
    return re.sub(_COMMAND, lambda m: m.group(1) + "\\x3a", text)


def _line_start(path: str) -> str:
    """:func:`escape` for a path that starts a line and is followed by ``:``: a path
    ``:`` (or `` :``) would make that line start with ``::`` only once joined."""
    text = escape(path)
    stripped = text.lstrip()
    if stripped.startswith(":"):
        return text[: len(text) - len(stripped)] + "\\x3a" + stripped[1:]
    return text


def format_finding(finding: FindingLike) -> str:
    path, message = _line_start(finding.path), escape(finding.message)
    return f"{path}:{finding.line}:{finding.column}: {escape(finding.code)} [{escape(finding.name)}] {message}"


def format_trace(finding: FindingLike, cwd: str) -> list[str]:
    """The evidence chain under a finding (``--show-trace``), one indented line per step."""
    return [
        f"    {_line_start(step_path(step.path, finding.path, cwd))}:{step.line}: {escape(step.note)}"
        for step in finding.trace
    ]


def format_error(error: ErrorLike) -> str:
    path = _line_start(error.path)
    where = path if error.line is None else f"{path}:{error.line}"
    return f"{where}: error: {escape(error.message)}"


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
    text = f"Baseline {escape(baseline.path)}: {_count(baseline.matched, 'known finding')} not reported"
    if baseline.stale:
        entries, them = ("1 stale entry", "it") if baseline.stale == 1 else (f"{baseline.stale} stale entries", "them")
        text += f"; {entries} (fixed since: run with --write-baseline to drop {them})"
    return text + "."


def write_text(report: Report, stream: TextIO) -> None:
    cwd = os.getcwd() if report.show_trace else ""
    for finding in report.findings:
        stream.write(format_finding(finding) + "\n")
        if report.show_trace:
            for line in format_trace(finding, cwd):
                stream.write(line + "\n")
    for error in report.errors:
        stream.write(format_error(error) + "\n")
    stream.write(summary_line(report) + "\n")
    extra = baseline_line(report)
    if extra is not None:
        stream.write(extra + "\n")
