"""SG001 unused-suppression: reported by the command line after the analysis, not by the engine.

Whether a suppression comment is used depends on every other rule's findings
on its line, after ``--select`` / ``--ignore`` and ``per-file-ignores``; the
engine's single pass cannot know that, and most files are never parsed at all.
So this rule class carries the code, the name and the documentation (``rules``,
``explain``, SARIF and selection know it like any other rule), never asks for
a visitor pass, and :func:`check_comments` does the work for one file.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, TypeVar

from summaryguard.rules.engine.base import Invalid, LintRule, Valid
from summaryguard.rules.engine.findings import Finding
from summaryguard.rules.suppression import apply_suppressions, parse_suppressions

if TYPE_CHECKING:  # pragma: no cover
    from summaryguard.rules.engine.model import FileModel
    from summaryguard.rules.report import FindingLike

__all__ = ["UnusedSuppressionComment", "check_comments"]


class UnusedSuppressionComment(LintRule):
    """## What it does
    Flags a suppression comment, ``# summaryguard: ignore[CODE]`` or
    ``# noqa: CODE``, that names a rule checked in this run with no finding of
    that rule on the comment's line.

    ## Why is this bad?
    A suppression is an accepted risk written next to the code. Once the code
    is fixed or moved, the comment stays behind and silently accepts the
    *next* defect of that kind on that line: a resume that fails open would
    then never be reported. Removing stale suppressions keeps every accepted
    risk deliberate.

    ## Example
    ```python
    handle = ctx["handle"]  # summaryguard: ignore[SG201] reason: legacy fallback
    ```

    ## Use instead
    ```python
    handle = ctx["handle"]
    ```

    ## Known problems
    Only codes of rules selected for the file in this run are judged (other
    tools' codes in the same ``# noqa`` are left alone, and so are rules that
    ``--select``, ``--ignore`` or ``per-file-ignores`` turned off). A file
    that could not be parsed is not judged. A comment naming ``SG001`` itself
    is never reported; it silences this rule on its line.
    """

    code = "SG001"
    name = "unused-suppression"

    VALID = [
        Valid(
            """
            def next_turn(checkpoint, search_tool):
                ctx = checkpoint.resume_context()  # noqa: SG101, SG102, SG103
                handle = ctx.get("handle") or search_tool("latest")  # summaryguard: ignore[SG201] reason: idempotent
                return handle  # noqa: E501 (another tool's code is left alone)
            """
        ),
    ]
    INVALID = [
        Invalid(
            """
            def next_turn(ctx):
                handle = ctx["handle"]  # summaryguard: ignore[SG201] reason: fixed since  # expect: SG001
                return handle
            """
        ),
        Invalid(
            """
            def next_turn(checkpoint, search_tool):
                ctx = checkpoint.resume_context()  # noqa: SG101, SG102, SG103
                # names the wrong rule: SG202 is unused and SG201 still reported
                handle = ctx.get("handle") or search_tool("latest")  # noqa: SG202  # expect: SG001, SG201
                return handle
            """
        ),
    ]

    def wants(self, model: FileModel) -> bool:
        """Never: the command line reports this rule after the analysis."""
        return False


F = TypeVar("F", bound="FindingLike")


def check_comments(path: str, text: str, findings: Sequence[F], checked: Collection[str]) -> list[F | Finding]:
    """One file's ``findings`` without those its comments silence, plus SG001 findings.

    ``checked`` holds the codes the run reports for this file. When SG001 is
    among them, each suppression comment that names a checked code with no
    finding of that code on its line is reported (once per comment, naming
    every such code); those SG001 findings can themselves be silenced by
    naming SG001 in a comment on the line.
    """
    suppressions = parse_suppressions(text)
    if not suppressions.by_line:
        return list(findings)
    kept: list[F | Finding] = list(apply_suppressions(findings, suppressions))
    rule = UnusedSuppressionComment
    if rule.code in checked:
        judged = set(checked) - {rule.code}
        unused = [
            Finding(
                path=path,
                line=u.line,
                column=u.column,
                end_line=u.line,
                end_column=u.end_column,
                code=rule.code,
                name=rule.name,
                message=(
                    f"unused suppression of {', '.join(u.codes)}: no such finding on this line; "
                    "remove the code from the comment (or the comment)"
                ),
            )
            for u in suppressions.unused(findings, judged)
        ]
        kept.extend(apply_suppressions(unused, suppressions))
    return kept
