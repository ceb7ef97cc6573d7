"""The data model: exact JSON round trips, stable digests, and field-naming errors."""

from __future__ import annotations

import copy
import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from summaryguard.guard import (
    Checkpoint,
    CheckpointFormatError,
    CheckpointIntegrityError,
    DroppedRef,
    ReconciliationKind,
    Summary,
)
from summaryguard.guard.model import content_digest

# -- strategies ---------------------------------------------------------------------------

texts = st.text(max_size=12)
json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | texts
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
dropped_refs = st.builds(
    DroppedRef,
    ref=texts,
    last_known=json_values,
    tool=st.none() | texts,
    turn=st.none() | st.integers(min_value=0, max_value=10**6),
)
turn_spans = st.none() | st.tuples(st.integers(0, 1000), st.integers(0, 1000)).map(lambda t: (min(t), max(t)))
summaries = st.builds(
    Summary,
    generation=st.integers(min_value=0, max_value=10**9),
    content=st.text(max_size=40),
    verbatim_refs=st.dictionaries(texts, texts, max_size=4),
    drop_manifest=st.lists(dropped_refs, max_size=3).map(tuple),
    parent_generation=st.none() | st.integers(min_value=0, max_value=10**9),
    partial=st.booleans(),
    turns=turn_spans,
    provenance=st.dictionaries(texts, texts, max_size=3),
)
checkpoints = st.builds(
    Checkpoint,
    turn=st.integers(min_value=0, max_value=10**9),
    summary=st.none() | summaries,
    summary_generation=st.none() | st.integers(min_value=0, max_value=10**9),
    state=st.dictionaries(texts, json_values, max_size=4),
    next_turn_deps=st.lists(texts, max_size=4).map(tuple),
)


# -- round trips --------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(checkpoints)
def test_checkpoint_json_round_trip_is_exact_and_digest_stable(cp: Checkpoint) -> None:
    text = cp.to_json()
    back = Checkpoint.from_json(text)
    assert back == cp
    assert back.digest == cp.digest
    assert back.to_json() == text  # byte-identical second serialization
    # The digest is the SHA-256 of the canonical body as written, recomputable by anyone.
    written = json.loads(text)
    recorded = written.pop("digest")
    assert recorded == cp.digest == content_digest(written)
    assert Checkpoint.from_dict(json.loads(text)).digest == cp.digest


@settings(max_examples=150, deadline=None)
@given(summaries)
def test_summary_dict_round_trip_is_exact(summary: Summary) -> None:
    data = json.loads(json.dumps(summary.to_dict()))
    assert Summary.from_dict(data) == summary
    assert Summary.from_dict(data).to_dict() == summary.to_dict()


@settings(max_examples=100, deadline=None)
@given(dropped_refs)
def test_dropped_ref_round_trip(entry: DroppedRef) -> None:
    assert DroppedRef.from_dict(json.loads(json.dumps(entry.to_dict()))) == entry


@settings(max_examples=60, deadline=None)
@given(checkpoints, st.data())
def test_digest_changes_with_every_field(cp: Checkpoint, data: st.DataObject) -> None:
    body = cp.to_dict()
    del body["digest"]
    field = data.draw(st.sampled_from(["turn", "summary_generation", "state", "next_turn_deps", "summary"]))
    changed = copy.deepcopy(body)
    if field == "turn":
        changed["turn"] += 1
    elif field == "summary_generation":
        changed["summary_generation"] = (changed["summary_generation"] or 0) + 1
    elif field == "state":
        changed["state"]["\x00extra"] = 1
    elif field == "next_turn_deps":
        changed["next_turn_deps"].append("\x00extra")
    elif changed["summary"] is None:
        changed["summary"] = {"generation": 0}
    else:
        changed["summary"]["content"] += "!"
    assert Checkpoint.from_dict(changed).digest != cp.digest


def test_digest_is_independent_of_key_order() -> None:
    a = Checkpoint(turn=1, summary=None, summary_generation=None, state={"a": 1, "b": {"x": 1, "y": 2}})
    b = Checkpoint(turn=1, summary=None, summary_generation=None, state={"b": {"y": 2, "x": 1}, "a": 1})
    assert a.digest == b.digest
    assert a.digest.startswith("sha256:") and len(a.digest) == len("sha256:") + 64


def test_non_ascii_round_trip() -> None:
    summary = Summary(generation=2, content="résumé ✓ 日本", verbatim_refs={"h": "ハンドル"})
    cp = Checkpoint(turn=3, summary=summary, summary_generation=2, state={"ключ": "значение"})
    assert Checkpoint.from_json(cp.to_json().encode("utf-8")) == cp


def test_tuples_in_json_data_are_normalized_so_round_trips_are_exact() -> None:
    cp = Checkpoint(turn=1, summary=None, summary_generation=None, state={"pair": (1, 2)})
    assert cp.state == {"pair": [1, 2]}
    assert Checkpoint.from_json(cp.to_json()) == cp
    summary = Summary(generation=1, drop_manifest=[DroppedRef("h", last_known=("a", "b"))])
    assert summary.drop_manifest[0].last_known == ["a", "b"]
    assert Summary.from_dict(json.loads(json.dumps(summary.to_dict()))) == summary


def test_helpers() -> None:
    dropped = DroppedRef("h1", "handle-1", tool="open", turn=4)
    summary = Summary(generation=1, drop_manifest=[dropped], turns=[2, 4])
    assert summary.dropped("h1") is dropped
    assert summary.dropped("nope") is None
    assert summary.turns == (2, 4)
    assert isinstance(summary.drop_manifest, tuple)
    cp = Checkpoint(turn=9, summary=Summary(generation=1, content="c", verbatim_refs={"a": "1"}), summary_generation=1, state={"k": 1})
    assert cp.resume_context() == {"turn": 9, "summary": "c", "refs": {"a": "1"}, "state": {"k": 1}}
    empty = Checkpoint(turn=9, summary=None, summary_generation=None)
    assert empty.resume_context() == {"turn": 9, "summary": None, "refs": {}, "state": {}}
    with pytest.raises(TypeError):
        hash(summary)


# -- malformed input: every branch names the field ----------------------------------------


def _valid() -> dict[str, Any]:
    summary = Summary(
        generation=2,
        content="text",
        verbatim_refs={"a": "1"},
        drop_manifest=(DroppedRef("b", "2", tool="t", turn=1),),
        parent_generation=1,
        turns=(1, 3),
        provenance={"a": "t"},
    )
    body = Checkpoint(turn=3, summary=summary, summary_generation=2, state={"k": [1]}, next_turn_deps=("a",)).to_dict()
    del body["digest"]
    return body


def _set(path: str, value: Any) -> Any:
    """A mutation of the valid body: set (or with value _DEL, delete) one nested key."""

    def mutate(body: dict[str, Any]) -> dict[str, Any]:
        *parents, last = path.split("/")
        node: Any = body
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        if value is _DEL:
            del node[last]
        elif isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value
        return body

    return mutate


_DEL = object()

MALFORMED = [
    # (case id, mutation, field path named by the error, words in the problem)
    ("unknown-top-field", _set("bogus", 1), "", "unknown field(s) bogus"),
    ("turn-missing", _set("turn", _DEL), "turn", "expected an integer, got null"),
    ("turn-string", _set("turn", "3"), "turn", "got str"),
    ("turn-bool", _set("turn", True), "turn", "got bool"),
    ("turn-float", _set("turn", 3.0), "turn", "got float"),
    ("summary-generation-recorded-string", _set("summary_generation", "2"), "summary_generation", "integer"),
    ("deps-not-list", _set("next_turn_deps", "a"), "next_turn_deps", "expected a list, got str"),
    ("deps-item", _set("next_turn_deps", ["a", 7]), "next_turn_deps[1]", "expected a string, got int"),
    ("state-not-object", _set("state", [1]), "state", "expected an object, got list"),
    ("state-non-json-value", _set("state", {"k": {1, 2}}), "state.k", "set is not JSON data"),
    ("state-nested-non-json", _set("state", {"k": [1, b"x"]}), "state.k[1]", "bytes is not JSON data"),
    ("state-non-string-key", _set("state", {"k": {1: "x"}}), "state.k", "keys must be strings"),
    ("state-nan", _set("state", {"k": math.nan}), "state.k", "not JSON data"),
    ("state-infinity", _set("state", {"k": [math.inf]}), "state.k[0]", "not JSON data"),
    ("digest-not-string", _set("digest", 5), "digest", "expected a string"),
    ("summary-not-object", _set("summary", "gen 2"), "summary", "expected an object, got str"),
    ("summary-unknown-field", _set("summary/extra", 1), "summary", "unknown field(s) extra"),
    ("generation-missing", _set("summary/generation", _DEL), "summary.generation", "got null"),
    ("generation-string", _set("summary/generation", "2"), "summary.generation", "got str"),
    ("generation-bool", _set("summary/generation", False), "summary.generation", "got bool"),
    ("content-not-string", _set("summary/content", None), "summary.content", "expected a string, got null"),
    ("refs-not-object", _set("summary/verbatim_refs", ["a"]), "summary.verbatim_refs", "expected an object"),
    ("refs-key-not-string", _set("summary/verbatim_refs", {1: "x"}), "summary.verbatim_refs (key)", "got int"),
    ("refs-value-not-string", _set("summary/verbatim_refs/a", 1), "summary.verbatim_refs['a']", "got int"),
    ("provenance-not-object", _set("summary/provenance", "t"), "summary.provenance", "expected an object"),
    ("provenance-key-not-string", _set("summary/provenance", {1: "t"}), "summary.provenance (key)", "got int"),
    ("provenance-value-not-string", _set("summary/provenance/a", None), "summary.provenance['a']", "got null"),
    ("manifest-not-list", _set("summary/drop_manifest", {}), "summary.drop_manifest", "expected a list, got dict"),
    ("manifest-entry-not-object", _set("summary/drop_manifest/0", "b"), "summary.drop_manifest[0]", "expected an object"),
    ("manifest-entry-unknown", _set("summary/drop_manifest/0/why", "x"), "summary.drop_manifest[0]", "unknown field(s) why"),
    ("manifest-ref-missing", _set("summary/drop_manifest/0/ref", _DEL), "summary.drop_manifest[0].ref", "got null"),
    ("manifest-ref-int", _set("summary/drop_manifest/0/ref", 3), "summary.drop_manifest[0].ref", "got int"),
    ("manifest-last-known", _set("summary/drop_manifest/0/last_known", {"x": object()}), "summary.drop_manifest[0].last_known.x", "not JSON data"),
    ("manifest-tool", _set("summary/drop_manifest/0/tool", ["t"]), "summary.drop_manifest[0].tool", "got list"),
    ("manifest-turn", _set("summary/drop_manifest/0/turn", "1"), "summary.drop_manifest[0].turn", "got str"),
    ("parent-generation", _set("summary/parent_generation", 1.5), "summary.parent_generation", "got float"),
    ("partial-not-bool", _set("summary/partial", 0), "summary.partial", "expected true or false, got int"),
    ("partial-null", _set("summary/partial", None), "summary.partial", "got null"),
    ("turns-not-list", _set("summary/turns", "1-3"), "summary.turns", "expected [first, last] or null"),
    ("turns-wrong-length", _set("summary/turns", [1, 2, 3]), "summary.turns", "expected [first, last] or null"),
    ("turns-first", _set("summary/turns", ["1", 3]), "summary.turns[0]", "got str"),
    ("turns-last", _set("summary/turns", [1, None]), "summary.turns[1]", "got null"),
    ("turns-reversed", _set("summary/turns", [4, 3]), "summary.turns", "first turn 4 is after last turn 3"),
]


@pytest.mark.parametrize(("mutate", "where", "words"), [c[1:] for c in MALFORMED], ids=[c[0] for c in MALFORMED])
def test_malformed_checkpoint_names_the_field(mutate: Any, where: str, words: str) -> None:
    body = mutate(_valid())
    with pytest.raises(CheckpointFormatError) as info:
        Checkpoint.from_dict(body)
    assert info.value.where == where
    assert words in info.value.problem
    assert str(info.value) == (f"{where}: {info.value.problem}" if where else info.value.problem)


@pytest.mark.parametrize("data", [None, [], "checkpoint", 3], ids=["null", "list", "str", "int"])
def test_checkpoint_must_be_an_object(data: Any) -> None:
    with pytest.raises(CheckpointFormatError) as info:
        Checkpoint.from_dict(data)
    assert info.value.where == ""
    assert "expected an object" in str(info.value)


def test_valid_body_loads_and_a_missing_digest_is_allowed_in_from_dict() -> None:
    cp = Checkpoint.from_dict(_valid())
    assert cp.summary is not None and cp.summary.dropped("b") == DroppedRef("b", "2", tool="t", turn=1)
    minimal = Checkpoint.from_dict({"turn": 0, "summary": None, "summary_generation": None})
    assert minimal == Checkpoint(turn=0, summary=None, summary_generation=None)
    assert Summary.from_dict({"generation": 1}) == Summary(generation=1)


def test_dropped_ref_default_field_path() -> None:
    with pytest.raises(CheckpointFormatError) as info:
        DroppedRef.from_dict({"ref": 1})
    assert info.value.where == "dropped.ref"


# -- the digest ---------------------------------------------------------------------------


def _signed() -> dict[str, Any]:
    return Checkpoint.from_dict(_valid()).to_dict()


TAMPERING = [
    ("content", _set("summary/content", "other text")),
    ("generation", _set("summary/generation", 3)),
    ("recorded-generation", _set("summary_generation", 3)),
    ("partial-flag-cleared", _set("summary/partial", True)),
    ("verbatim-ref", _set("summary/verbatim_refs/a", "2")),
    ("manifest-entry-removed", _set("summary/drop_manifest", [])),
    ("turn", _set("turn", 4)),
    ("state", _set("state/k", [2])),
    ("deps", _set("next_turn_deps", [])),
    ("digest", _set("digest", "sha256:" + "0" * 64)),
]


@pytest.mark.parametrize("mutate", [c[1] for c in TAMPERING], ids=[c[0] for c in TAMPERING])
def test_digest_mismatch_is_an_integrity_error(mutate: Any) -> None:
    body = mutate(_signed())
    with pytest.raises(CheckpointIntegrityError) as info:
        Checkpoint.from_dict(body, source="cp.json")
    err = info.value
    assert err.path == "cp.json"
    assert err.kind is ReconciliationKind.DIGEST_MISMATCH
    assert err.checkpoint_turn == body["turn"]
    assert "does not match" in err.reason
    assert "cp.json" in str(err)


def test_signed_body_verifies() -> None:
    body = _signed()
    assert Checkpoint.from_dict(body).digest == body["digest"]


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        ("", "not valid JSON"),
        ("{", "not valid JSON"),
        ('{"turn": 1', "not valid JSON"),
        (b"\xff\xfe{}", "not valid JSON"),
        ("[" * 100_000 + "]" * 100_000, "nested"),
    ],
    ids=["empty", "brace", "truncated", "not-utf8", "too-deep"],
)
def test_from_json_rejects_non_json_as_integrity_error(raw: str | bytes, words: str) -> None:
    with pytest.raises(CheckpointIntegrityError) as info:
        Checkpoint.from_json(raw, source="s.json")
    assert info.value.path == "s.json"
    assert words in info.value.reason


def test_deeply_nested_state_is_a_format_error_not_a_crash() -> None:
    deep: Any = 1
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(CheckpointFormatError) as info:
        Checkpoint.from_dict({"turn": 1, "summary": None, "summary_generation": None, "state": {"k": deep}})
    assert info.value.where.startswith("state")
    assert "nested too deeply" in info.value.problem


# -- construction refuses what could not be loaded back ------------------------------------


CONSTRUCTION = [
    ("state-non-json", lambda: Checkpoint(1, None, None, state={"k": object()}), "state.k"),
    ("state-nan", lambda: Checkpoint(1, None, None, state={"k": math.nan}), "state.k"),
    ("state-key", lambda: Checkpoint(1, None, None, state={1: "x"}), "state"),
    ("deps-item", lambda: Checkpoint(1, None, None, next_turn_deps=["a", 1]), "next_turn_deps[1]"),
    ("state-surrogate", lambda: Checkpoint(1, None, None, state={"k": ["ok", "\ud800"]}), "state.k[1]"),
    ("state-surrogate-key", lambda: Checkpoint(1, None, None, state={"\udfff": 1}), "state (key)"),
    ("state-huge-int", lambda: Checkpoint(1, None, None, state={"n": 10**5000}), "state.n"),
    ("turn-huge", lambda: Checkpoint(10**5000, None, None), "turn"),
    ("content-surrogate", lambda: Summary(generation=1, content="a\ud800b"), "summary.content"),
    ("ref-surrogate", lambda: Summary(generation=1, verbatim_refs={"h": "\ud800"}), "summary.verbatim_refs['h']"),
    ("deps-string", lambda: Checkpoint(1, None, None, next_turn_deps="ab"), "next_turn_deps"),
    ("turn", lambda: Checkpoint("1", None, None), "turn"),
    ("recorded-generation", lambda: Checkpoint(1, None, "1"), "summary_generation"),
    ("summary-type", lambda: Checkpoint(1, {"generation": 1}, 1), "summary"),
    ("generation", lambda: Summary(generation="1"), "summary.generation"),
    ("content", lambda: Summary(generation=1, content=None), "summary.content"),
    ("ref-value", lambda: Summary(generation=1, verbatim_refs={"h": 1}), "summary.verbatim_refs['h']"),
    ("ref-key", lambda: Summary(generation=1, verbatim_refs={1: "h"}), "summary.verbatim_refs (key)"),
    ("provenance", lambda: Summary(generation=1, provenance={"h": None}), "summary.provenance['h']"),
    ("manifest-entry", lambda: Summary(generation=1, drop_manifest=["h"]), "summary.drop_manifest[0]"),
    ("manifest-string", lambda: Summary(generation=1, drop_manifest="h"), "summary.drop_manifest"),
    ("manifest-not-iterable", lambda: Summary(generation=1, drop_manifest=3), "summary.drop_manifest"),
    ("partial", lambda: Summary(generation=1, partial="no"), "summary.partial"),
    ("parent", lambda: Summary(generation=1, parent_generation="0"), "summary.parent_generation"),
    ("turns", lambda: Summary(generation=1, turns=(3, 1)), "summary.turns"),
    ("turns-shape", lambda: Summary(generation=1, turns=(1, 2, 3)), "summary.turns"),
    ("turns-item", lambda: Summary(generation=1, turns=(1, "2")), "summary.turns[1]"),
    ("dropped-last-known", lambda: Summary(1, drop_manifest=[DroppedRef("h", {1, 2})]), "summary.drop_manifest[0].last_known"),
    ("dropped-ref", lambda: Summary(1, drop_manifest=[DroppedRef(None)]), "summary.drop_manifest[0].ref"),  # type: ignore[arg-type]
    ("dropped-tool", lambda: Summary(1, drop_manifest=[DroppedRef("h", tool=3)]), "summary.drop_manifest[0].tool"),  # type: ignore[arg-type]
    ("dropped-turn", lambda: Summary(1, drop_manifest=[DroppedRef("h", turn="1")]), "summary.drop_manifest[0].turn"),  # type: ignore[arg-type]
]


@pytest.mark.parametrize(("build", "where"), [c[1:] for c in CONSTRUCTION], ids=[c[0] for c in CONSTRUCTION])
def test_construction_refuses_what_json_cannot_carry(build: Any, where: str) -> None:
    """A checkpoint that could be saved but not loaded back would be lost at recovery."""
    with pytest.raises(CheckpointFormatError) as info:
        build()
    assert info.value.where == where


def test_dropped_ref_alone_stays_permissive() -> None:
    """In memory a foreign manifest entry may carry any last-known object; only a Summary is JSON."""
    handle = object()
    assert DroppedRef("h", last_known=handle).last_known is handle
