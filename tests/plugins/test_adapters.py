"""The built-in plugins: adapters for our Checkpoint, attribute objects and mappings; the logging observer."""

from __future__ import annotations

import json
import logging
from collections import OrderedDict
from types import MappingProxyType, SimpleNamespace
from typing import Any

import pytest

from summaryguard.guard import (
    AcceptDivergence,
    Checkpoint,
    DroppedRef,
    Summary,
    SummaryReconciliationError,
    resume_guard,
)
from summaryguard.guard.check import adapter_for
from summaryguard.plugins import hookimpl
from summaryguard.plugins import checkpoint_attributes, checkpoint_mappings, checkpoint_native, observe_logging

NATIVE = checkpoint_native.ADAPTER
ATTRS = checkpoint_attributes.ADAPTER
MAPPING = checkpoint_mappings.ADAPTER


class SubCheckpoint(Checkpoint):
    pass


class AttrMapping(dict):
    """A mapping that also has the attribute names: still read as a mapping."""

    summary = None
    summary_generation = 1
    turn = 1


# -- which adapter reads what ------------------------------------------------------------

SELECTION = [
    ("native", Checkpoint(turn=1, summary=None, summary_generation=None), "summaryguard.Checkpoint"),
    ("native-subclass", SubCheckpoint(turn=1, summary=None, summary_generation=None), "summaryguard.Checkpoint"),
    ("attribute-object", SimpleNamespace(turn=1, summary=None, summary_generation=None), "attributes"),
    ("dict-with-summary", {"summary": None}, "mapping"),
    ("dict-with-generation-only", {"summary_generation": 2}, "mapping"),
    ("ordered-dict", OrderedDict(summary=None), "mapping"),
    ("mapping-proxy", MappingProxyType({"summary": None}), "mapping"),
    ("mapping-with-attributes", AttrMapping(summary=None), "mapping"),
]


@pytest.mark.parametrize(("name", "checkpoint", "adapter"), SELECTION, ids=[s[0] for s in SELECTION])
def test_adapter_selection(name, checkpoint, adapter) -> None:
    assert adapter_for(checkpoint).name == adapter


NOT_READ = [
    ("attributes-incomplete", SimpleNamespace(summary=None, turn=1)),
    ("dict-without-keys", {"turn": 1}),
    ("empty-dict", {}),
    ("a-string", "checkpoint"),
]


@pytest.mark.parametrize(("name", "checkpoint"), NOT_READ, ids=[s[0] for s in NOT_READ])
def test_builtins_decline(name, checkpoint) -> None:
    hook_args = {"checkpoint_type": type(checkpoint), "checkpoint": checkpoint}
    assert checkpoint_native.summaryguard_checkpoint_adapter(**hook_args) is None
    assert checkpoint_attributes.summaryguard_checkpoint_adapter(**hook_args) is None
    assert checkpoint_mappings.summaryguard_checkpoint_adapter(**hook_args) is None


# -- what each adapter reads ---------------------------------------------------------------

MANIFEST = (DroppedRef("bucket", "bkt-1", "create_bucket", 3),)


def test_native_adapter() -> None:
    summary = Summary(generation=2, verbatim_refs={"h": "v"}, drop_manifest=MANIFEST, partial=True)
    cp = Checkpoint(turn=9, summary=summary, summary_generation=2, next_turn_deps=("h", "g"))
    assert NATIVE.extract(cp) == (9, 2, True, 2, True, {"h": "v"})
    assert tuple(NATIVE.next_turn_deps(cp)) == ("h", "g")
    assert tuple(NATIVE.drop_manifest(cp)) == MANIFEST
    empty = Checkpoint(turn=9, summary=None, summary_generation=2)
    assert NATIVE.extract(empty) == (9, 2, False, None, False, ())
    assert tuple(NATIVE.drop_manifest(empty)) == ()


ATTRIBUTE_CASES = [
    (
        "full",
        SimpleNamespace(generation=2, partial=True, verbatim_refs={"h"}, drop_manifest=list(MANIFEST)),
        (9, 2, True, 2, True, {"h"}),
        MANIFEST,
    ),
    ("no-partial-attribute-means-complete", SimpleNamespace(generation=2, verbatim_refs=["h"]), (9, 2, True, 2, False, ["h"]), ()),
    ("no-verbatim-refs-holds-nothing", SimpleNamespace(generation=2), (9, 2, True, 2, False, ()), ()),
    ("none-verbatim-refs", SimpleNamespace(generation=2, verbatim_refs=None), (9, 2, True, 2, False, ()), ()),
    (
        "manifest-as-mappings-and-names",
        SimpleNamespace(generation=2, drop_manifest=[{"ref": "bucket", "last_known": "bkt-1", "tool": "create_bucket", "turn": 3}, "token"]),
        (9, 2, True, 2, False, ()),
        (MANIFEST[0], DroppedRef("token")),
    ),
]


@pytest.mark.parametrize(("name", "summary", "facts", "manifest"), ATTRIBUTE_CASES, ids=[c[0] for c in ATTRIBUTE_CASES])
def test_attribute_adapter(name, summary, facts, manifest) -> None:
    cp = SimpleNamespace(turn=9, summary_generation=2, summary=summary)
    assert ATTRS.extract(cp) == facts
    assert tuple(ATTRS.drop_manifest(cp)) == manifest
    assert tuple(ATTRS.next_turn_deps(cp)) == ()


def test_attribute_adapter_without_summary_and_with_deps() -> None:
    cp = SimpleNamespace(turn=9, summary_generation=None, summary=None, next_turn_deps=["a"])
    assert ATTRS.extract(cp) == (9, None, False, None, False, ())
    assert tuple(ATTRS.drop_manifest(cp)) == ()
    assert ATTRS.next_turn_deps(cp) == ["a"]


MAPPING_CASES = [
    (
        "full-json",
        {
            "turn": 9,
            "summary_generation": 2,
            "summary": {"generation": 2, "partial": True, "verbatim_refs": ["h", "g"], "drop_manifest": [MANIFEST[0].to_dict()]},
            "next_turn_deps": ["h"],
        },
        (9, 2, True, 2, True, frozenset({"h", "g"})),
        MANIFEST,
        ["h"],
    ),
    (
        "refs-as-object",
        {"turn": 1, "summary_generation": 1, "summary": {"generation": 1, "verbatim_refs": {"h": "v"}}},
        (1, 1, True, 1, False, {"h": "v"}),
        (),
        (),
    ),
    (
        "missing-keys-read-as-null",
        {"summary": {"verbatim_refs": None}},
        (None, None, True, None, False, ()),
        (),
        (),
    ),
    ("no-summary", {"summary_generation": 3, "summary": None}, (None, 3, False, None, False, ()), (), ()),
    (
        "manifest-refs-as-strings",
        {"summary": {"generation": 1, "drop_manifest": [{"ref": 7}, "token", {"tool": "t"}]}},
        (None, None, True, 1, False, ()),
        (DroppedRef("7"), DroppedRef("token"), DroppedRef("", tool="t")),
        (),
    ),
]


@pytest.mark.parametrize(("name", "cp", "facts", "manifest", "deps"), MAPPING_CASES, ids=[c[0] for c in MAPPING_CASES])
def test_mapping_adapter(name, cp, facts, manifest, deps) -> None:
    assert MAPPING.extract(cp) == facts
    assert tuple(MAPPING.drop_manifest(cp)) == manifest
    assert MAPPING.next_turn_deps(cp) == deps


def test_mapping_with_a_non_mapping_summary_fails_closed() -> None:
    @resume_guard
    def resume(checkpoint: Any) -> None:
        raise AssertionError("must not run")

    cp = {"turn": 4, "summary_generation": 1, "summary": "a summary as plain text"}
    assert tuple(MAPPING.drop_manifest(cp)) == ()
    with pytest.raises(SummaryReconciliationError) as info:
        resume(cp)
    assert "adapter 'mapping'" in info.value.reason


def test_json_round_trip_reads_the_same() -> None:
    summary = Summary(generation=2, verbatim_refs={"h": "v"}, drop_manifest=MANIFEST)
    cp = Checkpoint(turn=9, summary=summary, summary_generation=2, next_turn_deps=("h",))
    data = json.loads(cp.to_json())
    native, mapping = NATIVE.extract(cp), MAPPING.extract(data)
    assert native[:5] == mapping[:5] and set(native[5]) == set(mapping[5])
    assert tuple(MAPPING.drop_manifest(data)) == tuple(NATIVE.drop_manifest(cp))
    assert list(MAPPING.next_turn_deps(data)) == list(NATIVE.next_turn_deps(cp))


# -- the logging observer ------------------------------------------------------------------


def test_violations_and_acceptances_are_logged(make_checkpoint, use_plugin, caplog) -> None:
    class Accept:
        @hookimpl
        def summaryguard_resolve_violation(self, error: Any, checkpoint: Any) -> Any:
            return AcceptDivergence("logged acceptance", accepted_by="ops")

    @resume_guard(deps="deps")
    def resume(checkpoint: Any, deps: Any) -> str:
        return "resumed"

    cp = make_checkpoint("native", turn=11, refs=[])
    caplog.set_level(logging.WARNING, logger="summaryguard")
    with pytest.raises(SummaryReconciliationError) as info:
        resume(cp, ["h1"])
    [refused] = caplog.records
    assert refused.name == "summaryguard" and refused.levelno == logging.WARNING
    assert refused.getMessage() == f"resume refused: {info.value}"
    assert refused.summaryguard == info.value.as_dict()

    caplog.clear()
    use_plugin(Accept())
    assert resume(cp, ["h1"]) == "resumed"
    refused, accepted = caplog.records
    assert accepted.getMessage().startswith("divergence accepted: missing-dependency 'h1' at checkpoint turn 11")
    assert accepted.summaryguard["accepted_by"] == "ops"
    assert accepted.summaryguard["reason"] == "logged acceptance"


def test_the_logger_is_silent_by_default() -> None:
    observe_logging._logger()
    observe_logging._logger()  # made twice: one handler, never a second
    handlers = logging.getLogger("summaryguard").handlers
    assert [type(h) for h in handlers].count(logging.NullHandler) == 1
