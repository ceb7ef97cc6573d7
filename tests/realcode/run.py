"""The real-code judge: run ``summaryguard check`` over agent packages nobody here wrote, and compare with the judged findings.

Why: the rule examples and fixtures are written by the people who write the
analyzer, so they test what those people thought of. The real-code corpus
(``../shared/realcode/``: released sources of agent frameworks, one folder per
package) is where precision is measured. Every finding the analyzer reports
there is judged by a person, once, in ``tests/realcode/judged.md`` (TP: the
code really breaks the invariant; FP: it does not); this script reruns the
analyzer and reports what the judgment says about this run:

* per package: files checked, lines (counted here, every ``.py``/``.pyi``
  below the folder), wall seconds, findings by code, errors (syntax errors and
  the like, with the first few);
* judged TP and FP found, precision over the judged findings, overall and for
  library code alone (not tests, examples or docs);
* findings not judged yet (with ready-to-paste table rows), judged findings
  that vanished, judged findings that moved to another line.

It is a report, not a test: it exits 0 whatever the analyzer says, 2 on a
usage error (bad arguments, no corpus, a malformed judged.md, no
``summaryguard``). ``--strict`` exits 1 when a finding is not judged, when
precision over the judged findings is below 0.9, or when the analyzer crashed
on a package.

Standard library only; the analyzer runs as the installed ``summaryguard``
CLI in a subprocess, once per package, with the package folder as working
directory (so the package is "the project": its imports resolve inside it, and
no configuration of this repository applies).

    python tests/realcode/run.py --jobs 2
    python tests/realcode/run.py --packages langchain letta --json /tmp/rc.json
    SG_REALCODE_SRC=/path/to/src python tests/realcode/run.py --strict
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["main"]

#: Where this script lives in the repository: tests/realcode/run.py.
REPO_ROOT = Path(__file__).resolve().parents[2]
#: CI lays out the shared folder beside the clone: <parent>/shared/realcode/fetch.sh.
FETCH_SCRIPT = REPO_ROOT.parent / "shared" / "realcode" / "fetch.sh"
DEFAULT_JUDGED = Path(__file__).resolve().parent / "judged.md"

VERDICTS = ("TP", "FP")
REQUIRED_COLUMNS = ("package", "file", "line", "code", "verdict", "why")
OPTIONAL_COLUMNS = ("text",)
#: How much of the stripped source line the ``text`` column keeps.
TEXT_WIDTH = 60
STRICT_PRECISION = 0.9
#: Errors listed per package (the rest are counted).
ERRORS_SHOWN = 3

#: A file is not library code when one of its folders, or its name, says so.
NON_LIBRARY_FOLDERS = frozenset({"tests", "test", "examples", "example", "docs", "doc"})
_NON_LIBRARY_NAME = re.compile(r"^(test_.*|.*_test|conftest)\.pyi?$")
#: Folders the analyzer never walks into (the line count skips them too).
_SKIPPED_FOLDERS = frozenset({".git", ".hg", ".svn", "__pycache__"})
_PYTHON_SUFFIXES = (".py", ".pyi")


class UsageError(Exception):
    """Bad arguments or inputs: the message says what and where; the exit status is 2."""


# --------------------------------------------------------------------------- data


@dataclass(frozen=True)
class Finding:
    """One analyzer finding, with its file relative to the package folder and the source line's text."""

    package: str
    file: str
    line: int
    code: str
    message: str
    text: str

    @property
    def key(self) -> tuple[str, str, int, str]:
        return (self.package, self.file, self.line, self.code)

    def where(self) -> str:
        return f"{self.package}/{self.file}:{self.line}"


@dataclass(frozen=True)
class JudgedRow:
    """One row of judged.md; ``source_line`` is where the row sits in judged.md (for messages)."""

    package: str
    file: str
    line: int
    code: str
    verdict: str
    why: str
    text: str
    source_line: int


@dataclass
class PackageRun:
    """What one ``summaryguard check`` over one package folder produced."""

    name: str
    files: int = 0
    lines: int = 0
    seconds: float = 0.0
    exit_code: int | None = None
    findings: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    #: Set when there is no report to read (crash, time-out, output that is not JSON).
    failure: str | None = None

    def by_code(self) -> Counter[str]:
        return Counter(f.code for f in self.findings)


@dataclass
class Comparison:
    """The judged rows held against one run's findings."""

    #: (row, finding, how): how is "line" (same line) or "text" (moved; same source text).
    matched: list[tuple[JudgedRow, Finding, str]] = field(default_factory=list)
    unjudged: list[Finding] = field(default_factory=list)
    vanished: list[JudgedRow] = field(default_factory=list)
    #: Rows matched on their line whose ``text`` no longer is that line's text: re-check the verdict.
    text_changed: list[tuple[JudgedRow, Finding]] = field(default_factory=list)
    #: Rows of packages not in this run (not selected, missing, or the analyzer crashed there).
    not_run: list[JudgedRow] = field(default_factory=list)

    def counts(self, library_only: bool = False) -> tuple[int, int]:
        """(TP, FP) among the matched rows."""
        rows = [row for row, finding, _ in self.matched if not library_only or is_library(finding.file)]
        return sum(row.verdict == "TP" for row in rows), sum(row.verdict == "FP" for row in rows)


def precision(tp: int, fp: int) -> float | None:
    """TP / (TP + FP), or None when nothing judged was found."""
    return tp / (tp + fp) if tp + fp else None


def is_library(file: str) -> bool:
    """Whether a package-relative path is library code (not tests, examples or docs)."""
    parts = file.replace("\\", "/").split("/")
    if any(part in NON_LIBRARY_FOLDERS for part in parts[:-1]):
        return False
    return not _NON_LIBRARY_NAME.match(parts[-1])


def normalize_text(text: str) -> str:
    """The form a source line is stored and compared in: whitespace runs collapsed, at most TEXT_WIDTH characters."""
    return " ".join(text.split())[:TEXT_WIDTH].rstrip()


def distribution_name(folder: str) -> str:
    """``langchain_core-1.8.4`` -> ``langchain_core``; ``openhands_sdk-1.58.2-py3-none-any`` -> ``openhands_sdk``."""
    name = re.split(r"-(?=\d)", folder, maxsplit=1)[0]
    return re.sub(r"[-_.]+", "_", name).lower()


# --------------------------------------------------------------------------- judged.md


def parse_judged(path: Path) -> list[JudgedRow]:
    """The rows of the first table in ``path`` whose header has the judged columns.

    Cells may be wrapped in one pair of backticks; ``\\|`` is a literal pipe.
    Raises UsageError naming the file and line of anything malformed: a
    missing column, a bad line number or verdict, the same finding judged twice.
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise UsageError(f"{path}: cannot read the judged findings ({error.strerror or error})") from None
    rows: list[JudgedRow] = []
    columns: list[str] | None = None
    seen: dict[tuple[str, str, int, str], int] = {}
    index = 0
    while index < len(lines):
        stripped = lines[index].strip()
        index += 1
        if columns is None:
            if stripped.startswith("|"):
                header = [cell.lower() for cell in _cells(stripped)]
                if set(REQUIRED_COLUMNS) <= set(header):
                    columns = header
                    if index < len(lines) and _is_separator(lines[index].strip()):
                        index += 1
                    else:
                        raise UsageError(f"{path}:{index}: the table header must be followed by a |---| line")
            continue
        if not stripped.startswith("|"):
            break  # the table ended
        row = _parse_row(path, index, columns, _cells(stripped))
        key = (row.package, row.file, row.line, row.code)
        if key in seen:
            raise UsageError(
                f"{path}:{index}: {row.package}/{row.file}:{row.line} {row.code} is judged twice"
                f" (first at line {seen[key]}); keep one row"
            )
        seen[key] = index
        rows.append(row)
    if columns is None:
        raise UsageError(
            f"{path}: no table with the columns {' | '.join(REQUIRED_COLUMNS)} (optional: {', '.join(OPTIONAL_COLUMNS)})"
        )
    return rows


def _parse_row(path: Path, line_no: int, columns: list[str], cells: list[str]) -> JudgedRow:
    if len(cells) != len(columns):
        raise UsageError(f"{path}:{line_no}: {len(cells)} cells, the header has {len(columns)}")
    values = dict(zip(columns, cells))
    for name in ("package", "file", "code"):
        if not values[name]:
            raise UsageError(f"{path}:{line_no}: the {name} cell is empty")
    try:
        number = int(values["line"])
    except ValueError:
        raise UsageError(f"{path}:{line_no}: line {values['line']!r} is not a number") from None
    if number < 1:
        raise UsageError(f"{path}:{line_no}: line {number} is not a line number (they start at 1)")
    verdict = values["verdict"].upper()
    if verdict not in VERDICTS:
        raise UsageError(f"{path}:{line_no}: verdict {values['verdict']!r} is not TP or FP")
    return JudgedRow(
        package=values["package"],
        file=values["file"].replace("\\", "/").removeprefix("./"),
        line=number,
        code=values["code"].upper(),
        verdict=verdict,
        why=values["why"],
        text=normalize_text(values.get("text", "")),
        source_line=line_no,
    )


def _cells(row: str) -> list[str]:
    """The cells of a Markdown table row: split on unescaped pipes, ``\\|`` unescaped, one backtick pair dropped."""
    inner = row.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    if inner.endswith("|") and not inner.endswith("\\|"):
        inner = inner[:-1]
    cells = []
    for raw in re.split(r"(?<!\\)\|", inner):
        cell = raw.strip().replace("\\|", "|")
        if len(cell) >= 2 and cell.startswith("`") and cell.endswith("`"):
            cell = cell[1:-1].strip()
        cells.append(cell)
    return cells


def _is_separator(row: str) -> bool:
    return row.startswith("|") and all(re.fullmatch(r":?-+:?", cell) for cell in _cells(row))


def table_row(finding: Finding, verdict: str = "?", why: str = "") -> str:
    """A judged.md row for a finding, ready to paste (the verdict and why to be filled in)."""
    cells = [finding.package, finding.file, str(finding.line), finding.code, verdict, why, finding.text]
    return "| " + " | ".join(_cell(cell) for cell in cells) + " |"


def _cell(value: str) -> str:
    """``value`` as a cell that :func:`_cells` reads back unchanged."""
    value = value.replace("|", "\\|")
    if len(value) >= 2 and value.startswith("`") and value.endswith("`"):
        value = f"`{value}`"  # the reader drops one enclosing pair
    return value


# --------------------------------------------------------------------------- comparison


def compare(rows: Sequence[JudgedRow], runs: Sequence[PackageRun]) -> Comparison:
    """Match rows to findings: first by (package, file, line, code), then rows with a
    ``text`` by (package, file, code) and the same source text (the nearest line wins).

    A row names its package by folder (``langchain-1.5.2``) or by distribution
    (``langchain``: any version in the corpus). Findings with the same key
    (two columns of one line) count once.
    """
    result = Comparison()
    reported = [run for run in runs if run.failure is None]
    folders = {run.name for run in reported}
    by_distribution: dict[str, list[str]] = {}
    for name in folders:
        by_distribution.setdefault(distribution_name(name), []).append(name)

    findings: dict[tuple[str, str, int, str], Finding] = {}
    for run in reported:
        for finding in run.findings:
            findings.setdefault(finding.key, finding)
    unmatched = dict(findings)

    pending: list[tuple[JudgedRow, str]] = []
    for row in rows:
        package = row.package if row.package in folders else None
        if package is None:
            candidates = by_distribution.get(distribution_name(row.package), [])
            package = candidates[0] if len(candidates) == 1 else None
        if package is None:
            result.not_run.append(row)
            continue
        finding = unmatched.pop((package, row.file, row.line, row.code), None)
        if finding is None:
            pending.append((row, package))
            continue
        result.matched.append((row, finding, "line"))
        if row.text and row.text != finding.text:
            result.text_changed.append((row, finding))

    for row, package in pending:
        moved = [
            f
            for f in unmatched.values()
            if (f.package, f.file, f.code) == (package, row.file, row.code) and row.text and f.text == row.text
        ]
        if not moved:
            result.vanished.append(row)
            continue
        finding = min(moved, key=lambda f: (abs(f.line - row.line), f.line))
        del unmatched[finding.key]
        result.matched.append((row, finding, "text"))

    result.unjudged = sorted(unmatched.values(), key=lambda f: f.key)
    return result


# --------------------------------------------------------------------------- running the analyzer


def analyzer_command() -> list[str]:
    """The installed ``summaryguard`` CLI: the one on PATH, else this interpreter's module."""
    found = shutil.which("summaryguard")
    if found:
        return [found]
    probe = subprocess.run(
        [sys.executable, "-c", "import summaryguard.rules.cli"], capture_output=True, text=True, check=False
    )
    if probe.returncode == 0:
        return [sys.executable, "-m", "summaryguard.rules.cli"]
    raise UsageError(
        "summaryguard is not installed: no `summaryguard` on PATH and `import summaryguard.rules.cli` fails;"
        " install the project (pip install -e .) first"
    )


def analyzer_version(command: Sequence[str]) -> str:
    """What ``summaryguard --version`` says (recorded with the report, so that two reports can be told apart)."""
    shown = subprocess.run([*command, "--version"], capture_output=True, text=True, check=False)
    return (shown.stdout.strip() or shown.stderr.strip() or f"--version exited {shown.returncode}").splitlines()[-1]


def count_lines(folder: Path) -> int:
    """Lines of every Python file below ``folder`` (not following folder links, skipping VCS folders,
    ``__pycache__`` and virtual environments, as the analyzer does; .gitignore is not read)."""
    total = 0
    for here, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d not in _SKIPPED_FOLDERS and not (Path(here, d) / "pyvenv.cfg").exists()]
        for name in files:
            if name.endswith(_PYTHON_SUFFIXES):
                try:
                    data = Path(here, name).read_bytes()
                except OSError:
                    continue
                total += data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    return total


def run_package(folder: Path, command: Sequence[str], jobs: int | None, timeout: float | None) -> PackageRun:
    """``summaryguard check --no-cache --format json`` with ``folder`` as the working directory."""
    run = PackageRun(name=folder.name, lines=count_lines(folder))
    argv = [*command, "check", "--no-cache", "--format", "json"]
    if jobs is not None:
        argv += ["--jobs", str(jobs)]
    started = time.perf_counter()
    # A session of its own, so that a time-out ends the analyzer's worker processes too.
    process = subprocess.Popen(
        argv, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        run.seconds = time.perf_counter() - started
        run.failure = f"timed out after {timeout:g} s"
        return run
    run.seconds = time.perf_counter() - started
    run.exit_code = process.returncode
    try:
        report = json.loads(stdout)
        if not isinstance(report, dict):
            raise ValueError("not a JSON object")
    except ValueError:
        tail = (stderr.strip().splitlines() or ["(no output)"])[-1]
        run.failure = f"exit {process.returncode}, no JSON report: {tail}"
        return run
    if process.returncode not in (0, 1, 2):
        tail = (stderr.strip().splitlines() or ["(no stderr)"])[-1]
        run.failure = f"exit {process.returncode}: {tail}"
    run.files = int(report.get("stats", {}).get("files", 0))
    sources = _SourceLines(folder)
    for item in report.get("findings", []):
        file = _relative(item.get("path", ""))
        line = int(item.get("line") or 0)
        run.findings.append(
            Finding(
                package=folder.name,
                file=file,
                line=line,
                code=str(item.get("code", "?")),
                message=str(item.get("message", "")),
                text=normalize_text(sources.line(file, line)),
            )
        )
    for item in report.get("errors", []):
        where = _relative(item.get("path", ""))
        if item.get("line"):
            where += f":{item['line']}"
        run.errors.append(f"{where}: {item.get('message', '')}")
    return run


def _relative(path: str) -> str:
    """A report path (relative to the package folder, the working directory) in judged.md's form."""
    return os.path.normpath(path).replace(os.sep, "/").removeprefix("./") if path else path


class _SourceLines:
    """Lines of the package's files, each file read once."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder
        self._files: dict[str, list[str]] = {}

    def line(self, file: str, number: int) -> str:
        if file not in self._files:
            try:
                # Universal newlines, then split on "\n" only: str.splitlines() also splits on form feeds
                # and U+2028, which Python's tokenizer does not count, so line numbers would drift.
                text = (self._folder / file).read_text(encoding="utf-8", errors="replace")
                self._files[file] = text.split("\n")
            except OSError:
                self._files[file] = []
        lines = self._files[file]
        return lines[number - 1] if 0 < number <= len(lines) else ""


# --------------------------------------------------------------------------- corpus


def locate_corpus(given: str | None) -> Path:
    """``--corpus``, else ``$SG_REALCODE_SRC``, else what ../shared/realcode/fetch.sh prints."""
    if given is not None:
        return _existing_folder(given, "--corpus")
    env = os.environ.get("SG_REALCODE_SRC")
    if env:
        return _existing_folder(env, "$SG_REALCODE_SRC")
    if not FETCH_SCRIPT.is_file():
        raise UsageError(
            "no corpus: pass --corpus DIR, set $SG_REALCODE_SRC, or lay out the shared folder beside the clone"
            f" ({FETCH_SCRIPT} does not exist)"
        )
    print(f"corpus: running {FETCH_SCRIPT} (downloads once, then reuses the cache)", file=sys.stderr, flush=True)
    fetched = subprocess.run(["bash", str(FETCH_SCRIPT)], stdout=subprocess.PIPE, text=True, check=False)
    lines = fetched.stdout.strip().splitlines()
    if fetched.returncode != 0 or not lines:
        raise UsageError(
            f"no corpus: {FETCH_SCRIPT} exited {fetched.returncode} (its messages are above);"
            " pass --corpus DIR or set $SG_REALCODE_SRC"
        )
    return _existing_folder(lines[-1], FETCH_SCRIPT.name)


def _existing_folder(path: str, source: str) -> Path:
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise UsageError(f"no corpus: {source} names {path}, which is not a folder")
    return folder.resolve()


def select_packages(corpus: Path, names: Sequence[str] | None) -> list[Path]:
    """The package folders of the corpus, all or those named (by folder or distribution name)."""
    folders = sorted(p for p in corpus.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not folders:
        raise UsageError(f"no corpus: {corpus} has no package folders")
    if not names:
        return folders
    chosen: list[Path] = []
    for name in names:
        hits = [p for p in folders if p.name == name] or [
            p for p in folders if distribution_name(p.name) == distribution_name(name)
        ]
        if not hits:
            raise UsageError(
                f"--packages: no package {name!r} in {corpus}; there are: {', '.join(p.name for p in folders)}"
            )
        chosen.extend(p for p in hits if p not in chosen)
    return chosen


# --------------------------------------------------------------------------- report


def _table(header: Sequence[str], rows: Iterable[Sequence[str]], right: Sequence[bool]) -> list[str]:
    """An aligned Markdown table."""
    body = [list(map(str, row)) for row in rows]
    widths = [max(len(str(h)), *(len(r[i]) for r in body)) if body else len(str(h)) for i, h in enumerate(header)]

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right)) + " |"

    rule = "|" + "|".join(("-" * (w + 1) + ":") if r else ("-" * (w + 2)) for w, r in zip(widths, right)) + "|"
    return [line(header), rule, *(line(row) for row in body)]


def _percent(value: float | None) -> str:
    return "n/a (nothing judged was found)" if value is None else f"{value:.1%}"


def render(
    runs: Sequence[PackageRun], comparison: Comparison, judged: Path, command: Sequence[str], version: str
) -> str:
    out: list[str] = [f"analyzer: {' '.join(command)} ({version})", ""]
    codes = sorted({code for run in runs for code in run.by_code()})
    header = ["package", "files", "lines", "seconds", *codes, "findings", "errors"]
    rows = []
    for run in runs:
        counts = run.by_code()
        errors = "no report" if run.failure else str(len(run.errors))
        rows.append(
            [run.name, run.files, f"{run.lines:,}", f"{run.seconds:.1f}", *(counts.get(c, 0) or "" for c in codes),
             len(run.findings), errors]
        )
    totals = Counter[str]()
    for run in runs:
        totals.update(run.by_code())
    lines = sum(run.lines for run in runs)
    seconds = sum(run.seconds for run in runs)
    rows.append(
        ["total", sum(r.files for r in runs), f"{lines:,}", f"{seconds:.1f}", *(totals[c] for c in codes),
         sum(len(r.findings) for r in runs), sum(len(r.errors) for r in runs)]
    )
    out += _table(header, rows, [False] + [True] * (len(header) - 1))
    rate = f"{lines / seconds:,.0f} lines/s" if seconds else "n/a"
    out += ["", f"Total: {lines:,} lines in {seconds:.1f} s ({rate}); findings by code: "
            + (", ".join(f"{c} {totals[c]}" for c in codes) or "none")]

    failed = [run for run in runs if run.failure or run.errors]
    if failed:
        out += ["", "## Errors"]
        for run in failed:
            if run.failure:
                out.append(f"- {run.name}: the analyzer gave no report: {run.failure}")
            if run.errors:
                more = len(run.errors) - ERRORS_SHOWN
                shown = "; ".join(run.errors[:ERRORS_SHOWN]) + (f"; ... and {more} more" if more > 0 else "")
                out.append(f"- {run.name}: {len(run.errors)} error(s): {shown}")

    tp, fp = comparison.counts()
    ltp, lfp = comparison.counts(library_only=True)
    out += [
        "",
        f"## Against {judged}",
        f"Judged TP found: {tp}",
        f"Judged FP found: {fp}",
        f"Precision over judged findings: {_percent(precision(tp, fp))} ({tp} TP, {fp} FP)",
        f"Precision, library code only (no tests/, examples/, docs/, test_*.py): {_percent(precision(ltp, lfp))}"
        f" ({ltp} TP, {lfp} FP)",
        f"Not judged yet: {len(comparison.unjudged)}; judged but vanished: {len(comparison.vanished)};"
        f" moved: {sum(how == 'text' for _, _, how in comparison.matched)};"
        f" rows of packages not in this run: {len(comparison.not_run)}",
    ]
    if comparison.unjudged:
        out += ["", f"### Not judged yet ({len(comparison.unjudged)}): open each, then paste its row into judged.md"]
        out += [f"- {f.where()} {f.code} {f.message}" for f in comparison.unjudged]
        out += ["", "Rows to paste (set verdict to TP or FP and say why):", ""]
        out += [table_row(f) for f in comparison.unjudged]
    if comparison.vanished:
        out += ["", f"### Judged but vanished ({len(comparison.vanished)})"]
        out += [
            f"- {r.package}/{r.file}:{r.line} {r.code} (was {r.verdict}: {r.why}) [judged.md:{r.source_line}]"
            for r in comparison.vanished
        ]
    moved = [(r, f) for r, f, how in comparison.matched if how == "text"]
    if moved:
        out += ["", f"### Moved: matched by source text, update the line in judged.md ({len(moved)})"]
        out += [f"- {f.package}/{f.file}:{r.line} -> {f.line} {r.code} [judged.md:{r.source_line}]" for r, f in moved]
    if comparison.text_changed:
        out += ["", f"### Same line, other source text: re-check the verdict ({len(comparison.text_changed)})"]
        out += [
            f"- {f.where()} {f.code}: judged {r.text!r}, now {f.text!r} [judged.md:{r.source_line}]"
            for r, f in comparison.text_changed
        ]
    return "\n".join(out) + "\n"


def to_json(
    runs: Sequence[PackageRun], comparison: Comparison, corpus: Path, command: Sequence[str], version: str
) -> dict[str, Any]:
    verdicts = {finding.key: (row.verdict, how) for row, finding, how in comparison.matched}
    tp, fp = comparison.counts()
    ltp, lfp = comparison.counts(library_only=True)
    lines = sum(run.lines for run in runs)
    seconds = sum(run.seconds for run in runs)
    totals = Counter[str]()
    for run in runs:
        totals.update(run.by_code())

    def row_dict(row: JudgedRow) -> dict[str, Any]:
        return {k: getattr(row, k) for k in ("package", "file", "line", "code", "verdict", "why", "text", "source_line")}

    return {
        "corpus": str(corpus),
        "command": list(command),
        "version": version,
        "packages": [
            {
                "name": run.name,
                "files": run.files,
                "lines": run.lines,
                "seconds": round(run.seconds, 3),
                "exit_code": run.exit_code,
                "failure": run.failure,
                "findings_by_code": dict(sorted(run.by_code().items())),
                "errors": run.errors,
                "findings": [
                    {
                        "file": f.file,
                        "line": f.line,
                        "code": f.code,
                        "message": f.message,
                        "text": f.text,
                        "library": is_library(f.file),
                        "verdict": verdicts.get(f.key, (None, None))[0],
                        "matched_by": verdicts.get(f.key, (None, None))[1],
                    }
                    for f in run.findings
                ],
            }
            for run in runs
        ],
        "totals": {
            "files": sum(run.files for run in runs),
            "lines": lines,
            "seconds": round(seconds, 3),
            "lines_per_second": round(lines / seconds, 1) if seconds else None,
            "findings": sum(len(run.findings) for run in runs),
            "findings_by_code": dict(sorted(totals.items())),
            "errors": sum(len(run.errors) for run in runs),
            "no_report": [run.name for run in runs if run.failure],
        },
        "judged": {
            "tp": tp,
            "fp": fp,
            "precision": precision(tp, fp),
            "library": {"tp": ltp, "fp": lfp, "precision": precision(ltp, lfp)},
            "unjudged": [
                {"package": f.package, "file": f.file, "line": f.line, "code": f.code, "message": f.message,
                 "text": f.text}
                for f in comparison.unjudged
            ],
            "vanished": [row_dict(r) for r in comparison.vanished],
            "moved": [{**row_dict(r), "now_line": f.line} for r, f, how in comparison.matched if how == "text"],
            "text_changed": [{**row_dict(r), "now_text": f.text} for r, f in comparison.text_changed],
            "not_run": [row_dict(r) for r in comparison.not_run],
        },
    }


def strict_failures(comparison: Comparison, runs: Sequence[PackageRun]) -> list[str]:
    """Why ``--strict`` fails this run (nothing: it passes)."""
    reasons = []
    if comparison.unjudged:
        reasons.append(f"{len(comparison.unjudged)} finding(s) not judged yet")
    tp, fp = comparison.counts()
    value = precision(tp, fp)
    if value is not None and value < STRICT_PRECISION:
        reasons.append(f"precision {value:.1%} over judged findings is below {STRICT_PRECISION:.0%} ({tp} TP, {fp} FP)")
    reasons += [f"{run.name}: no report ({run.failure})" for run in runs if run.failure]
    return reasons


# --------------------------------------------------------------------------- main


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="run.py",
        description="Run summaryguard over the real-code corpus and compare its findings with judged.md."
        " Exit 0 (a report), 2 on a usage error; --strict: 1 if a finding is not judged, precision < 0.9,"
        " or the analyzer crashed on a package.",
    )
    parser.add_argument("--corpus", metavar="DIR", help="folder with one sub-folder per package"
                        " (default: $SG_REALCODE_SRC, else what ../shared/realcode/fetch.sh prints)")
    parser.add_argument("--jobs", type=int, metavar="N", help="passed to summaryguard check --jobs")
    parser.add_argument("--packages", nargs="+", metavar="NAME",
                        help="only these packages (folder names, or distribution names such as langchain_core)")
    parser.add_argument("--judged", type=Path, default=DEFAULT_JUDGED, metavar="FILE",
                        help="judged findings (default: tests/realcode/judged.md)")
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write the report as JSON to OUT")
    parser.add_argument("--timeout", type=float, metavar="SECONDS", help="give up on a package after this long")
    parser.add_argument("--strict", action="store_true",
                        help=f"exit 1 if a finding is not judged, precision < {STRICT_PRECISION}, or a run crashed")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.jobs is not None and args.jobs < 1:
            raise UsageError(f"--jobs {args.jobs}: give at least 1")
        if args.timeout is not None and args.timeout <= 0:
            raise UsageError(f"--timeout {args.timeout:g}: give a positive number of seconds")
        rows = parse_judged(args.judged)  # before the long run: a typo there should not cost minutes
        command = analyzer_command()
        version = analyzer_version(command)
        corpus = locate_corpus(args.corpus)
        folders = select_packages(corpus, args.packages)
    except UsageError as error:
        print(f"run.py: error: {error}", file=sys.stderr)
        return 2

    runs: list[PackageRun] = []
    for number, folder in enumerate(folders, 1):
        run = run_package(folder, command, args.jobs, args.timeout)
        runs.append(run)
        status = run.failure or f"{len(run.findings)} findings, {len(run.errors)} errors"
        print(f"[{number}/{len(folders)}] {run.name}: {status}, {run.seconds:.1f} s", file=sys.stderr, flush=True)

    comparison = compare(rows, runs)
    sys.stdout.write(render(runs, comparison, args.judged, command, version))
    if args.json is not None:
        report = to_json(runs, comparison, corpus, command, version)
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if args.strict:
        failures = strict_failures(comparison, runs)
        for reason in failures:
            print(f"run.py: --strict: {reason}", file=sys.stderr)
        if failures:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
