"""SG001 unused-suppression: reported by the command line after the analysis, not by the engine.

Whether a suppression comment is used depends on every other rule's findings
on its line, after ``--select`` / ``--ignore`` and ``per-file-ignores``; the
engine's single pass cannot know that, and most files are never parsed at all.
So this rule class carries the code, the name and the documentation (``rules``,
``explain``, SARIF and selection know it like any other rule), never asks for
a visitor pass, and :func:`check_comments` (in :mod:`summaryguard.rules.cli.unused`,
free of libcst) does the work for one file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from summaryguard.rules.cli.unused import CODE, NAME, check_comments
from summaryguard.rules.engine.base import Invalid, LintRule, Valid

if TYPE_CHECKING:  # pragma: no cover
    from summaryguard.rules.engine.model import FileModel

__all__ = ["UnusedSuppressionComment", "check_comments"]


class UnusedSuppressionComment(LintRule):
    """## What it does
    Flags a suppression comment, ``# summaryguard: ignore[CODE]`` or
    ``# noqa: CODE``, that names a rule checked in this run with no finding of
    that rule on the comment's line, or that names a code no rule has
    (``SG999``; a prefix such as ``SG1`` names the rules it starts, as in
    ``--select``, and is unknown only when it starts none), or that is in
    summaryguard's own form but names no code in brackets
    (``# summaryguard: ignore SG201``, ``ignore[]``).

    ## Why is this bad?
    A suppression is an accepted risk written next to the code. Once the code
    is fixed or moved, the comment stays behind and silently accepts the
    *next* defect of that kind on that line: a resume that fails open would
    then never be reported. Removing stale suppressions keeps every accepted
    risk deliberate. A code no rule has is a typo: the comment does not
    accept the risk its author meant to accept, and nothing said so.

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
    ``--select``, ``--ignore`` or ``per-file-ignores`` turned off). A code is
    unknown when no rule of the run, selected or not, has it: every entry of
    ``summaryguard: ignore[...]``, but in ``# noqa`` only codes with a known
    rule's letters (``SG...``, a plugin's prefix), since ``E501`` belongs to
    another tool. A blanket entry (``SG``, ``ALL``) silences nothing and is
    reported as unknown. A file that could not be parsed is not judged. A
    comment naming ``SG001`` itself is never reported; it silences this rule
    on its line.
    """

    code = CODE
    name = NAME

    VALID = [
        Valid(
            """
            from agents import function_tool

            @function_tool
            def search_tool(query: str) -> str:
                return query

            def next_turn(checkpoint):
                ctx = checkpoint.resume_context()  # noqa: SG101, SG102, SG103
                handle = ctx.get("handle") or search_tool("latest")  # summaryguard: ignore[SG201] reason: idempotent
                return handle  # noqa: E501 (another tool's code is left alone)
            """
        ),
        Valid(
            """
            def next_turn(checkpoint):
                return checkpoint.resume_context()  # summaryguard: ignore[SG10] reason: a prefix, as in --select
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
            from agents import function_tool

            @function_tool
            def search_tool(query: str) -> str:
                return query

            def next_turn(checkpoint):
                ctx = checkpoint.resume_context()  # noqa: SG101, SG102, SG103
                # names the wrong rule: SG202 is unused and SG201 still reported
                handle = ctx.get("handle") or search_tool("latest")  # noqa: SG202  # expect: SG001, SG201
                return handle
            """
        ),
        Invalid(
            """
            from agents import function_tool

            @function_tool
            def search_tool(query: str) -> str:
                return query

            def next_turn(checkpoint):
                ctx = checkpoint.resume_context()  # noqa: SG101, SG102, SG103
                # no rule SG999 (a typo for SG201): reported, and SG201 still is
                handle = ctx.get("handle") or search_tool("latest")  # noqa: SG999  # expect: SG001, SG201
                size = len(handle)  # summaryguard: ignore[SG9] reason: a prefix of no rule  # expect: SG001
                return size
            """
        ),
        Invalid(
            """
            def next_turn(ctx):
                # the codes must be in brackets: this comment names none and silences nothing
                return ctx["handle"]  # summaryguard: ignore SG201  # expect: SG001
            """
        ),
    ]

    def wants(self, model: FileModel) -> bool:
        """Never: the command line reports this rule after the analysis."""
        return False
