"""``--baseline FILE`` / ``--write-baseline``: adopt summaryguard on an existing code base.

``summaryguard check --baseline FILE --write-baseline`` records today's
findings in ``FILE``; later runs with ``--baseline FILE`` report only findings
that are not recorded there, so CI fails on new defects while the old ones
are worked off. Entries are matched by fingerprint (:mod:`.fingerprint`: code,
file and the text of the reported line, never the line number), so they
survive code moving around them.

The file is JSON, written with sorted entries so that it diffs well::

    {
      "version": 1,
      "tool": "summaryguard",
      "findings": [
        {"fingerprint": "3f2a...:0", "code": "SG201", "path": "src/agent.py",
         "line": 12, "message": "..."}
      ]
    }

Only ``fingerprint``, ``code`` and ``path`` are read back; ``line`` and
``message`` are for the people reviewing the file. An entry that no finding
matches any more (the defect was fixed) is *stale*: it is counted, and only
for files and codes this run checked, so a pre-commit run over a few files
does not call the rest of the baseline stale.

A baseline that is missing, unreadable or malformed is an error (exit 2),
never an empty baseline: failing open on the file that decides what is
reported is what this tool exists to prevent.
"""

from __future__ import annotations

import json
import os
import re
import stat
import tempfile
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from .config import ConfigError
from .report import FindingLike
from .sources import FileRefused, read_regular_file

__all__ = [
    "BASELINE_VERSION",
    "BaselineEntry",
    "BaselineError",
    "Comparison",
    "compare",
    "entries_for",
    "load_baseline",
    "writable_baseline",
    "write_baseline",
]

BASELINE_VERSION = 1
#: Largest baseline read (about 300,000 entries); a FIFO, a device or a runaway
#: file is refused instead of hanging or filling memory.
MAX_BASELINE_BYTES = 64 * 1024 * 1024

F = TypeVar("F", bound=FindingLike)


class BaselineError(ConfigError):
    """The baseline file cannot be used (exit 2, like a configuration error); says which file and why."""


@dataclass(frozen=True, order=True)
class BaselineEntry:
    """One recorded finding. ``path`` is relative to the configuration's folder."""

    path: str
    code: str
    fingerprint: str
    line: int = 0
    message: str = ""


@dataclass(frozen=True)
class Comparison:
    """The findings a baseline does not hold, and what it did hold."""

    new: list[Any]
    matched: int
    stale: int


def entries_for(
    findings: Iterable[F], fingerprints: Mapping[F, str], paths: Mapping[str, str]
) -> list[BaselineEntry]:
    """Baseline entries for ``findings``; ``paths`` maps a finding's path to its project path."""
    return sorted(
        BaselineEntry(paths[f.path], f.code, fingerprints[f], f.line, f.message) for f in findings
    )


def compare(
    findings: Sequence[F],
    fingerprints: Mapping[F, str],
    entries: Sequence[BaselineEntry],
    checked_paths: Collection[str],
    checked_codes: Collection[str],
) -> Comparison:
    """Split ``findings`` into new ones and recorded ones; count stale entries.

    An entry is stale when it names a file in ``checked_paths`` (project paths
    of the files analyzed without error) and a code in ``checked_codes``, and
    no finding has its fingerprint.
    """
    recorded = {entry.fingerprint for entry in entries}
    new = [f for f in findings if fingerprints[f] not in recorded]
    seen = {fingerprints[f] for f in findings}
    matched = len(findings) - len(new)
    stale = sum(
        1
        for entry in entries
        if entry.fingerprint not in seen and entry.path in checked_paths and entry.code in checked_codes
    )
    return Comparison(new, matched, stale)


def load_baseline(path: Path | str) -> list[BaselineEntry]:
    """The entries of the baseline at ``path``, or :class:`BaselineError` saying what is wrong."""
    path = Path(path)
    try:
        raw = read_regular_file(str(path), MAX_BASELINE_BYTES)
    except FileNotFoundError:
        raise BaselineError(
            path, "baseline file not found (create it with: summaryguard check --baseline FILE --write-baseline)"
        ) from None
    except FileRefused as refused:
        raise BaselineError(path, f"cannot read baseline: {refused.reason}") from None
    except OSError as exc:
        raise BaselineError(path, f"cannot read baseline: {exc.strerror or exc}") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise BaselineError(path, f"not a summaryguard baseline (invalid JSON: {exc})") from None
    except (RecursionError, MemoryError):  # json parses nested arrays and objects recursively
        raise BaselineError(
            path, "not a summaryguard baseline (its JSON is nested too deeply to read)"
        ) from None
    if not isinstance(data, dict) or "version" not in data:
        raise BaselineError(path, "not a summaryguard baseline (expected a JSON object with a \"version\")")
    if data["version"] != BASELINE_VERSION:
        raise BaselineError(
            path,
            f"unsupported baseline version {data['version']!r} (this summaryguard reads version "
            f"{BASELINE_VERSION}; write a new one with --write-baseline)",
        )
    items = data.get("findings")
    if not isinstance(items, list):
        raise BaselineError(path, "baseline \"findings\" must be a list")
    entries = []
    for index, item in enumerate(items):
        if not isinstance(item, dict) or not all(
            isinstance(item.get(key), str) and item[key] for key in ("fingerprint", "code", "path")
        ):
            raise BaselineError(
                path, f"baseline entry {index} must be an object with string \"fingerprint\", \"code\" and \"path\""
            )
        line = item.get("line")
        message = item.get("message")
        entries.append(
            BaselineEntry(
                path=item["path"],
                code=item["code"],
                fingerprint=item["fingerprint"],
                line=line if isinstance(line, int) else 0,
                message=message if isinstance(message, str) else "",
            )
        )
    return entries


def write_baseline(path: Path | str, entries: Iterable[BaselineEntry]) -> None:
    """Write ``entries`` to ``path`` atomically: readers see the old file or the new one, whole.

    A temporary file in the same folder is written, flushed to disk and
    renamed over ``path``. It gets the permissions a new file normally gets
    (the baseline is meant to be committed), or those of the file it replaces.
    """
    path = writable_baseline(Path(path))
    document = {
        "version": BASELINE_VERSION,
        "tool": "summaryguard",
        "findings": [
            {"fingerprint": e.fingerprint, "code": e.code, "path": e.path, "line": e.line, "message": e.message}
            for e in sorted(entries, key=lambda e: (e.path, e.line, e.code, e.fingerprint))
        ],
    }
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    folder = path.parent if str(path.parent) else Path(os.curdir)
    try:
        mode = path.stat().st_mode & 0o777
    except OSError:
        mode = 0o666 & ~_umask()
    try:
        descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise BaselineError(path, f"cannot write baseline: {exc.strerror or exc}") from None
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="\n") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except OSError as exc:
        _remove(temporary)
        raise BaselineError(path, f"cannot write baseline: {exc.strerror or exc}") from None
    _sync_folder(folder)


def writable_baseline(path: Path) -> Path:
    """The file ``--write-baseline`` may replace at ``path``, or :class:`BaselineError`.

    Why: the write renames a new file over ``path``, which would turn a device or a pipe
    into a plain file and wipe whatever file a mistyped path names (a source file, the
    configuration). Only a new path, an empty file or an earlier baseline (any version,
    or one that a merge left with conflict markers: writing it anew is how that is
    fixed) is replaced; a symbolic link is followed to the file it names, which is held
    to the same rule."""
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    try:
        info = target.stat()
    except FileNotFoundError:
        return target
    except OSError as exc:
        raise BaselineError(path, f"cannot write baseline: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise BaselineError(path, "cannot write baseline: not a regular file (refusing to replace it)")
    if info.st_size == 0:
        return target
    raw = b""
    try:
        raw = read_regular_file(str(target), MAX_BASELINE_BYTES)
        data = json.loads(raw.decode("utf-8"))
    except (FileRefused, OSError, UnicodeDecodeError, ValueError, RecursionError, MemoryError):
        data = None
    if _WRITTEN_BY_US in raw and _CONFLICT.search(raw):
        return target  # a baseline git could not merge
    if not (isinstance(data, dict) and "version" in data and isinstance(data.get("findings"), list)):
        raise BaselineError(
            path,
            "cannot write baseline: the file exists and is not a summaryguard baseline "
            "(refusing to overwrite it; remove it or choose another path)",
        )
    return target


#: What every baseline this tool writes holds, and the marker lines a failed ``git merge`` leaves.
_WRITTEN_BY_US = b'"tool": "summaryguard"'
_CONFLICT = re.compile(rb"^(<<<<<<<|>>>>>>>) ", re.MULTILINE)


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:  # pragma: no cover - already gone
        pass


def _sync_folder(folder: Path) -> None:
    """Make the rename durable (POSIX); best effort where folders cannot be opened."""
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - Windows
        return
    try:
        os.fsync(descriptor)
    except OSError:  # pragma: no cover - file systems that refuse to sync a folder
        pass
    finally:
        os.close(descriptor)
