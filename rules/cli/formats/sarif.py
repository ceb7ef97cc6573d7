"""``--format sarif``: SARIF 2.1.0, as GitHub code scanning (``upload-sarif``) accepts it.

One run of one tool. ``tool.driver.rules`` describes every rule selected for
the run from the rule's own documentation (the same text as ``summaryguard
explain``); each result points into it with ``ruleId`` and ``ruleIndex``.
Results carry ``partialFingerprints`` (:mod:`..fingerprint`) so code scanning
keeps tracking an alert when lines move. Files that could not be read or
parsed are ``toolExecutionNotifications`` of the invocation, which then is not
``executionSuccessful``.

Paths: a relative path (as summaryguard prints them) becomes a relative URI
against ``%SRCROOT%``, the current folder, which is the repository root in a
CI checkout; a path outside the current folder becomes an absolute ``file:``
URI. Either way the URI percent-encodes the path's bytes, so a file name that
is not UTF-8 still names its file (``%FF.py``); in message texts such bytes
show as ``\\xNN``. Columns count Unicode code points (``columnKind``), as
Python does.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote

from ..fingerprint import FINGERPRINT_KEY
from ..report import ErrorLike, FindingLike, Report, RuleInfo, displayable
from . import writes_utf8

__all__ = ["SARIF_SCHEMA", "SARIF_VERSION", "artifact_location", "information_uri", "report_to_sarif", "write_sarif"]

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
TOOL_NAME = "summaryguard"
#: Where the tool is described when the installed metadata names no home page.
DEFAULT_INFORMATION_URI = "https://pypi.org/project/summaryguard/"


@lru_cache(maxsize=1)
def _tool_metadata() -> tuple[str, str]:
    """The installed version and home page."""
    try:
        meta = metadata.metadata(TOOL_NAME)
    except metadata.PackageNotFoundError:  # pragma: no cover - running from an uninstalled tree
        return "0+unknown", DEFAULT_INFORMATION_URI
    return meta["Version"] or "0+unknown", information_uri(meta)


def information_uri(meta: Any) -> str:
    """The project's home page from its core metadata (``Project-URL``, else ``Home-page``)."""
    for entry in meta.get_all("Project-URL") or ():
        label, _, url = entry.partition(",")
        if label.strip().lower() in {"homepage", "home", "source", "repository"} and url.strip():
            return url.strip()
    return meta.get("Home-page") or DEFAULT_INFORMATION_URI


def artifact_location(path: str, cwd: str | None = None) -> dict[str, str]:
    """A SARIF ``artifactLocation`` for a reported path."""
    cwd = os.path.abspath(os.getcwd() if cwd is None else cwd)
    absolute = os.path.abspath(path)
    prefix = cwd if cwd.endswith(os.sep) else cwd + os.sep
    if absolute.startswith(prefix):
        relative = absolute[len(prefix) :].replace(os.sep, "/")
        return {"uri": quote(os.fsencode(relative)), "uriBaseId": SRCROOT}
    return {"uri": Path(absolute).as_uri()}


def _rule(rule: RuleInfo) -> dict[str, Any]:
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.short_description or rule.name},
        "fullDescription": {"text": rule.full_description or rule.short_description or rule.name},
        "help": {"text": rule.help_markdown, "markdown": rule.help_markdown},
        "defaultConfiguration": {"level": "error"},
        "properties": {"tags": ["summaryguard", "correctness"], "precision": "high", "problem.severity": "error"},
    }


def _result(finding: FindingLike, report: Report, index: dict[str, int], cwd: str) -> dict[str, Any]:
    result: dict[str, Any] = {"ruleId": finding.code}
    if finding.code in index:
        result["ruleIndex"] = index[finding.code]
    result["level"] = "error"
    result["message"] = {"text": displayable(finding.message)}
    result["locations"] = [
        {
            "physicalLocation": {
                "artifactLocation": artifact_location(finding.path, cwd),
                "region": {
                    "startLine": finding.line,
                    "startColumn": finding.column,
                    "endLine": finding.end_line,
                    "endColumn": finding.end_column,
                },
            }
        }
    ]
    if finding.trace:
        result["codeFlows"] = [_code_flow(finding, cwd)]
    fingerprint = report.fingerprints.get(finding)
    if fingerprint is not None:
        result["partialFingerprints"] = {FINGERPRINT_KEY: fingerprint}
    return result


def _code_flow(finding: FindingLike, cwd: str) -> dict[str, Any]:
    """The finding's evidence chain as one SARIF thread flow, source first."""
    locations = [
        {
            "location": {
                "physicalLocation": {
                    "artifactLocation": artifact_location(step.path, cwd),
                    "region": {"startLine": step.line},
                },
                "message": {"text": displayable(step.note)},
            }
        }
        for step in finding.trace
    ]
    return {"threadFlows": [{"locations": locations}]}


def _notification(error: ErrorLike, cwd: str) -> dict[str, Any]:
    location: dict[str, Any] = {"artifactLocation": artifact_location(error.path, cwd)}
    if error.line is not None and error.line >= 1:
        location["region"] = {"startLine": error.line}
    return {
        "level": "error",
        "message": {"text": displayable(f"{error.path}: {error.message}")},
        "locations": [{"physicalLocation": location}],
    }


def report_to_sarif(report: Report, cwd: str | None = None) -> dict[str, Any]:
    """The report as a SARIF 2.1.0 log, ready for :func:`json.dumps`."""
    cwd = os.path.abspath(os.getcwd() if cwd is None else cwd)
    version, information_uri = _tool_metadata()
    index = {rule.code: number for number, rule in enumerate(report.rules)}
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": TOOL_NAME,
                "version": version,
                "informationUri": information_uri,
                "rules": [_rule(rule) for rule in report.rules],
            }
        },
        "invocations": [
            {
                "executionSuccessful": not report.errors,
                "toolExecutionNotifications": [_notification(e, cwd) for e in report.errors],
            }
        ],
        "originalUriBaseIds": {SRCROOT: {"uri": Path(cwd).as_uri().rstrip("/") + "/"}},
        "columnKind": "unicodeCodePoints",
        "results": [_result(f, report, index, cwd) for f in report.findings],
    }
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def write_sarif(report: Report, stream: TextIO) -> None:
    json.dump(report_to_sarif(report), stream, indent=2, ensure_ascii=not writes_utf8(stream))
    stream.write("\n")
