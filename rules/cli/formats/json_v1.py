"""``--format json``: one JSON object, the schema of SPEC §3.2 (``"version": 1``, hence the module name).

Machine readers depend on this shape; it changes only with a new ``version``.
Keys are written in a fixed order and ``line`` of an error is ``null`` when
the cause has no line (a file that does not exist). The output is always
valid UTF-8: the bytes of a file name that is not UTF-8 are written as
``\\xNN`` (see :func:`~summaryguard.rules.cli.report.displayable`).
"""

from __future__ import annotations

import json
import os
from typing import Any, TextIO

from ..report import Report, displayable, step_path
from . import writes_utf8

__all__ = ["SCHEMA_VERSION", "report_to_dict", "write_json"]

SCHEMA_VERSION = 1


def report_to_dict(report: Report) -> dict[str, Any]:
    """The report as plain data, ready for :func:`json.dumps`."""
    cwd = os.getcwd()
    return {
        "version": SCHEMA_VERSION,
        "findings": [
            {
                "path": displayable(f.path),
                "line": f.line,
                "column": f.column,
                "end_line": f.end_line,
                "end_column": f.end_column,
                "code": f.code,
                "name": f.name,
                "message": displayable(f.message),
                "trace": [
                    {
                        "path": displayable(step_path(step.path, f.path, cwd)),
                        "line": step.line,
                        "note": displayable(step.note),
                    }
                    for step in f.trace
                ],
            }
            for f in report.findings
        ],
        "errors": [
            {"path": displayable(e.path), "line": e.line, "message": displayable(e.message)} for e in report.errors
        ],
        "stats": {
            "files": report.files,
            "findings": len(report.findings),
            "seconds": round(report.seconds, 3),
        },
    }


def write_json(report: Report, stream: TextIO) -> None:
    json.dump(report_to_dict(report), stream, indent=2, ensure_ascii=not writes_utf8(stream))
    stream.write("\n")
