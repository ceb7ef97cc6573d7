"""Finding identities that survive lines moving: SARIF ``partialFingerprints`` and baseline entries.

One function, used by both, so a finding recorded in a baseline and the same
finding uploaded to code scanning are recognised by the same facts::

    sha256(code, project path, normalized text of the finding's first line)[:20] + ":" + occurrence

- *project path*: the file relative to the configuration's folder (the
  ``pyproject.toml`` that holds ``[tool.summaryguard]``, else the current
  folder), with ``/``; so the identity does not depend on the folder the
  command is run from or on how the path was spelled on the command line.
- *normalized text*: the source line with runs of whitespace collapsed and
  the ends stripped; re-indenting, or lines added or removed above, change
  nothing. Editing the reported line itself makes it a new finding, which is
  what a reviewer wants.
- *occurrence*: the finding's index among the findings of the same code in
  the same file whose lines have the same normalized text, in file order.
  Counting only such findings (not every line with that text) keeps an
  identical but harmless line added above from shifting the index.

The line number is deliberately not part of it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TypeVar

from .report import FindingLike

__all__ = ["FINGERPRINT_KEY", "fingerprints", "normalize_line", "project_path"]

#: The ``partialFingerprints`` key in SARIF (versioned: a new scheme gets a new key).
FINGERPRINT_KEY = "summaryguardFingerprint/v1"

# Line breaks as Python (and libcst's line numbers) count them; str.splitlines
# would also split on form feeds and other characters Python does not. Compiled by
# ``re``'s own cache when a finding is first fingerprinted, never at import (SPEC §3.1.2).
_LINE_BREAK = r"\r\n|\r|\n"

F = TypeVar("F", bound=FindingLike)


def normalize_line(text: str) -> str:
    """``text`` with runs of whitespace made one space and the ends stripped."""
    return " ".join(text.split())


def project_path(path: str, root: Path | str) -> str:
    """``path`` relative to ``root`` with ``/``; its absolute form when it lies outside."""
    absolute = os.path.abspath(path)
    root_text = os.path.abspath(root)
    prefix = root_text if root_text.endswith(os.sep) else root_text + os.sep
    relative = absolute[len(prefix) :] if absolute.startswith(prefix) else absolute
    return relative.replace(os.sep, "/")


def fingerprints(findings: Iterable[F], texts: Mapping[str, str], root: Path | str) -> dict[F, str]:
    """The fingerprint of each finding; ``texts`` maps a finding's path to its file's text."""
    lines_of: dict[str, list[str]] = {}
    seen: dict[tuple[str, str, str], int] = {}
    result: dict[F, str] = {}
    ordered = sorted(findings, key=lambda f: (f.path, f.line, f.column, f.code, f.message))
    if not ordered:
        return result  # a clean run (a pre-commit hook's usual one) does not import hashlib
    import hashlib

    for finding in ordered:
        lines = lines_of.get(finding.path)
        if lines is None:
            lines = lines_of[finding.path] = re.split(_LINE_BREAK, texts.get(finding.path, ""))
        text = normalize_line(lines[finding.line - 1]) if 0 < finding.line <= len(lines) else ""
        where = project_path(finding.path, root)
        digest = hashlib.sha256("\0".join((finding.code, where, text)).encode("utf-8", "surrogatepass")).hexdigest()
        key = (finding.code, where, text)
        occurrence = seen.get(key, 0)
        seen[key] = occurrence + 1
        result[finding] = f"{digest[:20]}:{occurrence}"
    return result
