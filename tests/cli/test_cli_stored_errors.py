"""SG202 on real files: a handler that stores the reconciliation error and raises it after the ``try``."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from summaryguard.rules.cli.exitcodes import ExitCode

#: The ``lint`` fixture of conftest.py: source -> (exit status, [(line, code)]).
Lint = Callable[[str], tuple[int, list[tuple[int, str]]]]

HEAD = """\
from summaryguard.guard import SummaryReconciliationError, check_resume

def recover(checkpoint, deps, agent, strict=True):
    error = None
    try:
        check_resume(checkpoint, deps)
    except SummaryReconciliationError as exc:
        error = exc
"""
RESUME = "    return agent.resume(checkpoint.summary, checkpoint.turn)\n"


@pytest.mark.parametrize(
    "after",
    [
        "    if error is not None:\n        raise error\n",
        "    if error:\n        raise RuntimeError('recovery refused') from error\n",
        "    if not error:\n        pass\n    else:\n        raise error\n",
    ],
    ids=["is-not-none", "truthy-wrapped", "negated-else"],
)
def test_stored_error_raised_before_the_resume_is_clean(
    lint: Lint, after: str
) -> None:
    assert lint(HEAD + after + RESUME) == (ExitCode.OK, [])


@pytest.mark.parametrize(
    "after",
    [
        "",
        "    if error is not None and strict:\n        raise error\n",
        "    result = agent.resume(checkpoint.summary, checkpoint.turn)\n    if error:\n        raise error\n",
        "    error = None\n    if error is not None:\n        raise error\n",
    ],
    ids=["never-raised", "raised-on-some-paths", "raised-after-the-resume", "cleared-before-the-test"],
)
def test_stored_error_that_can_reach_the_resume_is_sg202(
    lint: Lint, after: str
) -> None:
    status, found = lint(HEAD + after + RESUME)
    assert status == ExitCode.FINDINGS
    assert (7, "SG202") in found


def test_stored_error_never_raised_without_a_resume_is_sg202(
    lint: Lint
) -> None:
    status, found = lint(HEAD + "    return error is None\n")
    assert (status, found) == (ExitCode.FINDINGS, [(7, "SG202")])
