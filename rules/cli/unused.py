"""SG001's work for one file: which suppression comments silence nothing.

Kept apart from the rule's class (:mod:`summaryguard.rules.sg001_unused_suppression`,
which imports the engine's rule base and so libcst) because it runs after every
check, also one whose files the text pre-filter all dismissed: that run imports
neither libcst nor the engine (SPEC §3.1.2). The comments are read with
:mod:`.suppression` (the tokenizer), the findings are the engine's plain
:class:`~summaryguard.rules.engine.findings.Finding`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:  # pragma: no cover
    from summaryguard.rules.engine.findings import Finding

    from .report import FindingLike

__all__ = ["CODE", "NAME", "check_comments"]

#: SG001's code and name (the rule class takes them from here).
CODE = "SG001"
NAME = "unused-suppression"

F = TypeVar("F", bound="FindingLike")


def check_comments(
    path: str,
    text: str,
    findings: Sequence[F],
    checked: Collection[str],
    known: Collection[str] | None = None,
) -> list[F | Finding]:
    """One file's ``findings`` without those its comments silence, plus SG001 findings.

    ``checked`` holds the codes the run reports for this file, ``known`` every
    rule code of the run (default: ``checked``). When SG001 is among the
    checked codes, each suppression comment that names a checked code with no
    finding of that code on its line, or a code that no known rule has, is
    reported (once per comment, naming every such code); those SG001 findings
    can themselves be silenced by naming SG001 in a comment on the line.
    """
    from .markers import may_hold_suppressions

    if not may_hold_suppressions(text):  # no comment can silence or be reported: nothing to parse
        return list(findings)
    # imported here: the run asks :data:`CODE` of every check, the comment parser only of a
    # file that may hold a suppression comment (see .markers; its patterns cost 4 ms to build)
    from .suppression import apply_suppressions, letter_prefixes, parse_suppressions

    suppressions = parse_suppressions(text, letter_prefixes(checked if known is None else known))
    if not suppressions.by_line and not suppressions.malformed:
        return list(findings)
    from summaryguard.rules.engine.findings import Finding  # only for a file with suppression comments
    kept: list[F | Finding] = list(apply_suppressions(findings, suppressions))
    if CODE in checked:
        judged = set(checked) - {CODE}
        unused = {u.line: u for u in suppressions.unused(findings, judged)}
        unknown = {u.line: u for u in suppressions.unknown(checked if known is None else known)}
        nameless = {u.line: u for u in suppressions.nameless()}
        reported = []
        for line in sorted(unused.keys() | unknown.keys() | nameless.keys()):
            parts = []
            if line in nameless:
                parts.append(
                    "this suppression names no rule code, so it silences nothing: name each code in "
                    "brackets, `# summaryguard: ignore[SG201]`"
                )
            if line in unused:
                parts.append(f"unused suppression of {', '.join(unused[line].codes)}: no such finding on this line")
            if line in unknown:
                codes = unknown[line].codes
                parts.append(
                    f"unknown rule code{'s' if len(codes) > 1 else ''} {', '.join(codes)} in this suppression: "
                    "no rule has such a code or code prefix (see `summaryguard rules`)"
                )
            where = unused.get(line) or unknown.get(line) or nameless[line]
            if line in unused or line in unknown:
                parts.append("remove the code from the comment (or the comment)")
            reported.append(
                Finding(
                    path=path,
                    line=line,
                    column=where.column,
                    end_line=line,
                    end_column=where.end_column,
                    code=CODE,
                    name=NAME,
                    message="; ".join(parts),
                )
            )
        kept.extend(apply_suppressions(reported, suppressions))
    return kept
