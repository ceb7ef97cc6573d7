"""Errors are data: stable fields, actionable messages, and they survive pickling."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from summaryguard.guard import (
    CheckpointFormatError,
    CheckpointIntegrityError,
    ReconciliationKind,
    SummaryReconciliationError,
    UnsupportedCheckpointError,
)


def test_kind_values_are_the_spec_spellings() -> None:
    assert [k.value for k in ReconciliationKind] == [
        "no-summary",
        "generation-mismatch",
        "partial-summary",
        "missing-dependency",
        "rederivation",
        "digest-mismatch",
    ]
    assert str(ReconciliationKind.PARTIAL_SUMMARY) == "partial-summary"
    assert f"{ReconciliationKind.REDERIVATION}" == "rederivation"
    assert ReconciliationKind("no-summary") is ReconciliationKind.NO_SUMMARY
    assert ReconciliationKind.NO_SUMMARY == "no-summary"  # a str enum: compares with its spelling


# kind, generation, turn, missing_ref, reason, what the message must say next
MESSAGES = [
    ("no-summary", None, 3, "", "checkpoint carries no summary", "replay from an earlier exact checkpoint"),
    ("generation-mismatch", 4, 9, "", "gen 4 vs 5", "replay from the checkpoint that recorded this generation"),
    ("partial-summary", 5, 9, "", "half-written", "replay from the previous complete checkpoint"),
    ("missing-dependency", 5, 9, "bucket", "not verbatim", "accept the divergence explicitly"),
    ("rederivation", 5, 9, "bucket", "tool again", "accept the divergence for this reference"),
    ("digest-mismatch", None, None, "", "tampered", "this file cannot be trusted"),
]


@pytest.mark.parametrize(("kind", "gen", "turn", "ref", "reason", "next_step"), MESSAGES, ids=[m[0] for m in MESSAGES])
def test_message_says_what_where_and_what_next(kind, gen, turn, ref, reason, next_step) -> None:
    err = SummaryReconciliationError(gen, turn, ref, reason, kind=kind)
    text = str(err)
    assert text.startswith(f"summary gen={gen} vs checkpoint turn={turn}: cannot resume [{kind}]")  # where, what
    assert f"({reason})" in text
    assert (f"missing {ref!r}" in text) is bool(ref)
    assert next_step in text.split("; next: ", 1)[1]  # what to do next, last
    assert isinstance(err, RuntimeError)
    assert err.args == (gen, turn, ref, reason)


def test_details_appear_in_message_and_dict() -> None:
    err = SummaryReconciliationError(
        2, 8, "h", "r", kind=ReconciliationKind.REDERIVATION, details={"tool": "create_bucket"}
    )
    assert "; tool=create_bucket;" in str(err)
    assert err.as_dict() == {
        "kind": "rederivation",
        "summary_generation": 2,
        "checkpoint_turn": 8,
        "missing_ref": "h",
        "reason": "r",
        "details": {"tool": "create_bucket"},
    }


def test_as_dict_without_details_and_default_kind() -> None:
    err = SummaryReconciliationError(1, 2, "x", "why")
    assert err.kind is ReconciliationKind.MISSING_DEPENDENCY
    assert err.details == {}
    assert err.as_dict() == {
        "kind": "missing-dependency",
        "summary_generation": 1,
        "checkpoint_turn": 2,
        "missing_ref": "x",
        "reason": "why",
    }


def test_details_are_copied() -> None:
    details = {"path": "a"}
    err = SummaryReconciliationError(1, 2, "", "r", kind="no-summary", details=details)
    details["path"] = "b"
    assert err.details == {"path": "a"}


def test_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError):
        SummaryReconciliationError(1, 2, "", "r", kind="retry-until-it-works")


def fields(err: Any) -> dict[str, Any]:
    return {k: v for k, v in vars(err).items() if not k.startswith("__")}


PICKLED = [
    SummaryReconciliationError(3, 14, "bucket", "dropped", kind="missing-dependency"),
    SummaryReconciliationError(None, 2, "", "none", kind="no-summary", details={"thread": "t-1"}),
    CheckpointIntegrityError("/tmp/cp-7.json", "digest does not match", checkpoint_turn=7),
    CheckpointIntegrityError("/tmp/cp.json", "not valid JSON"),
    CheckpointFormatError("summary.generation", "expected an integer, got null"),
    CheckpointFormatError("", "expected an object, got list"),
    UnsupportedCheckpointError(dict),
]


@pytest.mark.parametrize("err", PICKLED, ids=lambda e: f"{type(e).__name__}:{str(e)[:30]}")
def test_pickling_keeps_type_fields_and_message(err) -> None:
    copy = pickle.loads(pickle.dumps(err))
    assert type(copy) is type(err)
    assert fields(copy) == fields(err)
    assert str(copy) == str(err)
    assert copy.args == err.args


def test_integrity_error_is_a_reconciliation_error() -> None:
    err = CheckpointIntegrityError("/data/cp-3.json", "truncated", checkpoint_turn=3)
    assert isinstance(err, SummaryReconciliationError)
    assert (err.kind, err.path, err.checkpoint_turn, err.summary_generation) == (
        ReconciliationKind.DIGEST_MISMATCH,
        "/data/cp-3.json",
        3,
        None,
    )
    assert "path=/data/cp-3.json" in str(err) and "(truncated)" in str(err)


def test_format_error_names_the_field() -> None:
    err = CheckpointFormatError("summary.partial", "expected true or false, got str")
    assert isinstance(err, ValueError)
    assert str(err) == "summary.partial: expected true or false, got str"
    assert str(CheckpointFormatError("", "expected an object")) == "expected an object"


def test_unsupported_checkpoint_says_which_type_and_how_to_register() -> None:
    class Snapshot:
        pass

    err = UnsupportedCheckpointError(Snapshot)
    assert isinstance(err, TypeError)
    assert err.checkpoint_type is Snapshot
    assert err.type_name == f"{__name__}.test_unsupported_checkpoint_says_which_type_and_how_to_register.<locals>.Snapshot"
    text = str(err)
    assert err.type_name in text
    assert "'summary', 'summary_generation', 'turn'" in text
    assert "summaryguard_checkpoint_adapter" in text and "entry-point group 'summaryguard'" in text
    # a local class cannot be pickled by reference: its name travels instead
    copy = pickle.loads(pickle.dumps(err))
    assert (copy.checkpoint_type, copy.type_name, str(copy)) == (None, err.type_name, text)
