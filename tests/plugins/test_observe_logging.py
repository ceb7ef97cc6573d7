"""The built-in logging observer: what a refused resume writes to the log.

A dropped reference's last-known value may be a secret (a token, a signed
URL); by default the log line names the reference, its kind and the tool, and
leaves the value out. ``SUMMARYGUARD_LOG_VALUES=1`` puts it back.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from summaryguard.guard import (
    Checkpoint,
    DroppedRef,
    Summary,
    SummaryReconciliationError,
    check_resume,
    resume_guard,
    tool_guard,
)
from summaryguard.plugins import observe_logging

SECRET = "tok-SECRET-7f3a"


@tool_guard
def issue_token() -> str:
    return "tok-new"


@resume_guard
def resume(checkpoint: Any) -> str:
    return issue_token()


@pytest.fixture
def checkpoint() -> Checkpoint:
    summary = Summary(generation=4, drop_manifest=(DroppedRef("token", SECRET, tool="issue_token"),))
    return Checkpoint(turn=12, summary=summary, summary_generation=4)


@pytest.fixture(autouse=True)
def _values_not_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SUMMARYGUARD_LOG_VALUES", raising=False)


def _refusal_logged(caplog: pytest.LogCaptureFixture, checkpoint: Checkpoint) -> tuple[logging.LogRecord, SummaryReconciliationError]:
    with caplog.at_level(logging.WARNING, logger="summaryguard"):
        with pytest.raises(SummaryReconciliationError) as caught:
            resume(checkpoint)
    [record] = [r for r in caplog.records if r.name == "summaryguard"]
    return record, caught.value


def test_by_default_the_log_names_the_reference_and_kind_but_not_its_value(
    caplog: pytest.LogCaptureFixture, checkpoint: Checkpoint
) -> None:
    record, error = _refusal_logged(caplog, checkpoint)
    line = record.getMessage()
    assert "'token'" in line and "[rederivation]" in line and "issue_token" in line
    assert SECRET not in line
    assert "last_known=<redacted>" in line
    fields = record.summaryguard  # type: ignore[attr-defined]
    assert fields["kind"] == "rederivation" and fields["missing_ref"] == "token"
    assert fields["details"] == {"tool": "issue_token", "last_known": "<redacted>"}
    assert SECRET not in repr(record.__dict__)  # nothing a formatter could reach holds it
    assert error.details["last_known"] == SECRET  # the caller's error keeps it: only the log is redacted


@pytest.mark.parametrize("value", ["1", "true", "YES", "on"])
def test_the_environment_variable_puts_the_value_back(
    caplog: pytest.LogCaptureFixture, checkpoint: Checkpoint, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("SUMMARYGUARD_LOG_VALUES", value)
    record, error = _refusal_logged(caplog, checkpoint)
    assert record.getMessage() == f"resume refused: {error}"
    assert SECRET in record.getMessage()
    assert record.summaryguard["details"]["last_known"] == SECRET  # type: ignore[attr-defined]


@pytest.mark.parametrize("value", ["", "0", "no", "false"])
def test_other_values_of_the_variable_keep_it_redacted(
    caplog: pytest.LogCaptureFixture, checkpoint: Checkpoint, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("SUMMARYGUARD_LOG_VALUES", value)
    record, _ = _refusal_logged(caplog, checkpoint)
    assert SECRET not in repr(record.__dict__)


def test_a_violation_without_values_is_logged_as_it_is(caplog: pytest.LogCaptureFixture) -> None:
    checkpoint = Checkpoint(turn=3, summary=Summary(generation=2), summary_generation=1)
    with caplog.at_level(logging.WARNING, logger="summaryguard"):
        with pytest.raises(SummaryReconciliationError) as caught:
            check_resume(checkpoint)
    [record] = [r for r in caplog.records if r.name == "summaryguard"]
    assert record.getMessage() == f"resume refused: {caught.value}"
    assert record.summaryguard == caught.value.as_dict()  # type: ignore[attr-defined]


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "b", "last_known"]), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(details=st.dictionaries(st.sampled_from(["tool", "path", "refs", "last_known"]), _json, max_size=4))
def test_no_last_known_value_reaches_the_log_at_any_depth(caplog: pytest.LogCaptureFixture, details: dict[str, Any]) -> None:
    """Whatever shape the details take, a value under a ``last_known`` key is never logged."""
    planted = {**details, "nested": [{"last_known": SECRET}], "last_known": {"inner": SECRET}}
    error = SummaryReconciliationError(1, 2, "ref", "why", kind="rederivation", details=planted)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="summaryguard"):
        observe_logging.summaryguard_observe_violation(error=error, checkpoint=None)
    [record] = caplog.records
    assert SECRET not in record.getMessage() and SECRET not in repr(record.summaryguard)  # type: ignore[attr-defined]
    assert error.details == planted  # the error itself is untouched
