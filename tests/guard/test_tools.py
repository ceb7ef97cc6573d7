"""tool_guard: no re-deriving a dropped reference inside a resumed turn, whatever the arguments."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import threading
from types import SimpleNamespace
from typing import Any

import pytest

from summaryguard.guard import (
    CheckpointFormatError,
    DivergenceRecord,
    ReconciliationKind,
    SummaryReconciliationError,
    accept_divergence,
    current_turn,
    resume_guard,
    tool_guard,
)
from summaryguard.guard.tools import tool_names
from summaryguard.plugins import hookimpl

CALLS: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []


@tool_guard
def create_bucket(*args: Any, **kwargs: Any) -> str:
    """Create a bucket."""
    CALLS.append(("create_bucket", args, kwargs))
    return "bkt-new"


@tool_guard
def list_files(prefix: str) -> list[str]:
    CALLS.append(("list_files", (prefix,), {}))
    return ["a"]


@tool_guard
async def fetch_token(scope: str) -> str:
    CALLS.append(("fetch_token", (scope,), {}))
    await asyncio.sleep(0)
    return "tok-new"


@tool_guard(name="s3.create_bucket")
def make_bucket(name: str) -> str:
    CALLS.append(("make_bucket", (name,), {}))
    return "bkt-new"


@tool_guard(name=["lookup", "search"])
def find(query: str) -> str:
    CALLS.append(("find", (query,), {}))
    return "found"


MANIFEST = [
    ("bucket", "bkt-old", "create_bucket"),
    ("token", "tok-old", "fetch_token"),
    ("bucket2", "bkt-2", "s3.create_bucket"),
    ("hit", "doc-1", "search"),
    ("note", "n", None),  # producer unknown: blocks nothing
]


@pytest.fixture(autouse=True)
def _clear_calls() -> None:
    CALLS.clear()


@resume_guard
def run_in_turn(checkpoint: Any, body: Any) -> Any:
    """Run ``body()`` inside the resumed turn of ``checkpoint``."""
    return body()


@resume_guard
async def run_in_turn_async(checkpoint: Any, body: Any) -> Any:
    return await body()


def test_outside_a_resumed_turn_tools_run_untouched() -> None:
    assert current_turn() is None
    assert create_bucket("b", region="eu") == "bkt-new"
    assert asyncio.run(fetch_token("s")) == "tok-new"
    assert make_bucket("x") == "bkt-new" and find("q") == "found"
    assert [c[0] for c in CALLS] == ["create_bucket", "fetch_token", "make_bucket", "find"]
    assert CALLS[0][1:] == (("b",), {"region": "eu"})


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((), {}), (("same-name",), {}), (("brand-new-name",), {"region": "us"}), ((), {"name": "other", "force": True})],
)
def test_rederivation_is_refused_whatever_the_arguments(make_checkpoint, shape, spy, args, kwargs) -> None:
    cp = make_checkpoint(shape, turn=30, recorded=6, generation=6, manifest=MANIFEST)
    with pytest.raises(SummaryReconciliationError) as info:
        run_in_turn(cp, lambda: create_bucket(*args, **kwargs))
    err = info.value
    assert err.kind is ReconciliationKind.REDERIVATION
    assert (err.summary_generation, err.checkpoint_turn, err.missing_ref) == (6, 30, "bucket")
    assert err.details == {"tool": "create_bucket", "last_known": "bkt-old"}
    assert "re-derives a new fact" in err.reason
    assert CALLS == []
    assert spy.observed == [(err, cp)]


@pytest.mark.parametrize(
    ("call", "ref"),
    [
        (lambda: make_bucket("b"), "bucket2"),  # name= override
        (lambda: find("q"), "hit"),  # one of several names
    ],
)
def test_name_override(make_checkpoint, call, ref) -> None:
    cp = make_checkpoint("native", manifest=MANIFEST)
    with pytest.raises(SummaryReconciliationError) as info:
        run_in_turn(cp, call)
    assert info.value.missing_ref == ref
    assert CALLS == []


def _provision(region: str, size: int = 1) -> str:
    CALLS.append(("create_bucket", (region,), {"size": size}))
    return "bkt-new"


_provision.__name__ = _provision.__qualname__ = "create_bucket"  # the producer the manifest names


class Buckets:
    @tool_guard
    @staticmethod
    def create_bucket(region: str) -> str:
        CALLS.append(("create_bucket", (region,), {}))
        return "bkt-new"

    @tool_guard
    @classmethod
    def fetch_token(cls, scope: str) -> str:
        CALLS.append(("fetch_token", (scope,), {}))
        return "tok-new"


def test_a_tool_with_arguments_bound_or_above_a_method_decorator_is_the_same_tool(make_checkpoint) -> None:
    # functools.partial has no name of its own: the guard names the function it binds,
    # and a re-derivation with arguments bound in advance is still one (SPEC 4.4).
    bound = tool_guard(functools.partial(functools.partial(_provision, "eu"), size=3))
    assert bound.__summaryguard_tool__ == frozenset({"create_bucket", f"{__name__}.create_bucket"})
    assert Buckets.create_bucket("eu") == Buckets().create_bucket("eu") == "bkt-new"  # the binding is kept
    assert Buckets().fetch_token("s") == "tok-new"
    CALLS.clear()
    cp = make_checkpoint("native", manifest=MANIFEST)
    for call, ref in ((bound, "bucket"), (lambda: Buckets().create_bucket("us"), "bucket"),
                      (lambda: Buckets.fetch_token("s"), "token")):
        with pytest.raises(SummaryReconciliationError) as info:
            run_in_turn(cp, call)
        assert info.value.missing_ref == ref
    assert CALLS == []


def test_tools_the_manifest_does_not_name_run(make_checkpoint, shape) -> None:
    cp = make_checkpoint(shape, manifest=MANIFEST)
    assert run_in_turn(cp, lambda: list_files("p")) == ["a"]

    @tool_guard
    def note() -> str:  # "note" is a ref, not a producer
        return "ran"

    assert run_in_turn(cp, note) == "ran"
    empty = make_checkpoint(shape, manifest=[])
    assert run_in_turn(empty, lambda: create_bucket("b")) == "bkt-new"


def test_qualified_name_matches(make_checkpoint) -> None:
    qualified = f"{list_files.__module__}.list_files"
    cp = make_checkpoint("native", manifest=[("files", ["x"], qualified)])
    with pytest.raises(SummaryReconciliationError) as info:
        run_in_turn(cp, lambda: list_files("p"))
    assert info.value.details["tool"] == qualified


def test_manifest_entries_as_plain_strings_and_objects(make_checkpoint) -> None:
    # mappings may list dropped refs as bare names (no producer) or as objects
    cp = make_checkpoint("mapping")
    cp["summary"]["drop_manifest"] = ["bucket", SimpleNamespace(ref="bucket", last_known="b", tool="create_bucket")]
    with pytest.raises(SummaryReconciliationError):
        run_in_turn(cp, lambda: create_bucket())
    cp["summary"]["drop_manifest"] = ["bucket"]
    assert run_in_turn(cp, lambda: create_bucket()) == "bkt-new"


# -- explicit acceptance -----------------------------------------------------------


def test_accept_divergence_lets_the_tool_through_and_records(make_checkpoint, shape, spy) -> None:
    cp = make_checkpoint(shape, turn=30, recorded=6, generation=6, manifest=MANIFEST)

    def body() -> Any:
        records = accept_divergence("bucket", reason="bucket was deleted upstream", accepted_by="ops")
        handle = create_bucket("again")
        return records, handle, current_turn()

    records, handle, turn = run_in_turn(cp, body)
    assert handle == "bkt-new"
    [record] = records
    assert isinstance(record, DivergenceRecord)
    assert (record.kind, record.ref, record.summary_generation, record.checkpoint_turn) == (
        ReconciliationKind.REDERIVATION,
        "bucket",
        6,
        30,
    )
    assert (record.reason, record.accepted_by) == ("bucket was deleted upstream", "ops")
    assert turn.divergences == [record] and spy.accepted == [record]
    assert "accepted=['bucket']" in repr(turn)
    # the acceptance belongs to that turn only
    with pytest.raises(SummaryReconciliationError):
        run_in_turn(cp, lambda: create_bucket("again"))


def test_acceptance_is_per_reference(make_checkpoint) -> None:
    cp = make_checkpoint(
        "native", manifest=[("bucket", "b1", "create_bucket"), ("bucket-replica", "b2", "create_bucket")]
    )

    def accept_one() -> Any:
        accept_divergence(["bucket"], reason="re-create the primary")
        return create_bucket()

    with pytest.raises(SummaryReconciliationError) as info:
        run_in_turn(cp, accept_one)
    assert info.value.missing_ref == "bucket-replica"

    def accept_both() -> Any:
        records = accept_divergence(("bucket", "bucket-replica"), reason="re-create both")
        return [r.ref for r in records], create_bucket()

    assert run_in_turn(cp, accept_both) == (["bucket", "bucket-replica"], "bkt-new")


def test_accept_divergence_outside_a_turn() -> None:
    with pytest.raises(RuntimeError, match="only meaningful inside a resumed turn"):
        accept_divergence("bucket", reason="why not")


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        ({"reason": ""}, ValueError, "needs a reason"),
        ({"reason": "   "}, ValueError, "needs a reason"),
        ({"reason": None}, TypeError, "takes a reason string, got NoneType"),
        ({"reason": 5}, TypeError, "takes a reason string, got int"),
        ({"reason": "why", "accepted_by": " "}, ValueError, "needs who accepted it"),
        ({"reason": "why", "refs": b"bucket"}, TypeError, "takes reference names"),  # not the bytes 98, 117...
        ({"reason": "why", "refs": ["bucket", None]}, TypeError, "takes reference names"),
    ],
)
def test_accept_divergence_needs_a_reason(make_checkpoint, arguments, error, message) -> None:
    refs = arguments.pop("refs", "bucket")
    with pytest.raises(error, match=message):
        run_in_turn(make_checkpoint("native"), lambda: accept_divergence(refs, **arguments))


# -- async tools, threads, tasks ---------------------------------------------------


def test_async_tools(make_checkpoint) -> None:
    cp = make_checkpoint("native", manifest=MANIFEST)
    with pytest.raises(SummaryReconciliationError) as info:
        asyncio.run(run_in_turn_async(cp, lambda: fetch_token("other-scope")))
    assert info.value.missing_ref == "token"
    assert CALLS == []

    async def accepted() -> str:
        accept_divergence("token", reason="token expired anyway")
        return await fetch_token("s")

    assert asyncio.run(run_in_turn_async(cp, accepted)) == "tok-new"
    assert inspect.iscoroutinefunction(fetch_token)


def test_a_turn_in_one_thread_does_not_reach_another(make_checkpoint) -> None:
    cp = make_checkpoint("native", manifest=MANIFEST)
    inside = threading.Event()
    release = threading.Event()
    results: dict[str, Any] = {}

    def resumed_thread() -> None:
        def body() -> None:
            inside.set()
            release.wait(5)
            try:
                create_bucket("from-resumed-thread")
            except SummaryReconciliationError as err:
                results["resumed"] = err.kind

        run_in_turn(cp, body)

    worker = threading.Thread(target=resumed_thread)
    worker.start()
    assert inside.wait(5)
    # the other thread is inside its resumed turn right now; this one is not
    results["main"] = create_bucket("from-main")
    release.set()
    worker.join(5)
    assert results == {"main": "bkt-new", "resumed": ReconciliationKind.REDERIVATION}


def test_a_thread_started_inside_a_turn_does_not_inherit_it(make_checkpoint) -> None:
    cp = make_checkpoint("native", manifest=MANIFEST)
    results: list[Any] = []

    def body() -> None:
        thread = threading.Thread(target=lambda: results.append(create_bucket("t")))
        thread.start()
        thread.join(5)
        ctx = contextvars.copy_context()  # carrying the context over carries the turn
        with pytest.raises(SummaryReconciliationError):
            ctx.run(create_bucket, "copied")

    run_in_turn(cp, body)
    assert results == ["bkt-new"]


def test_asyncio_tasks_are_isolated_and_children_inherit(make_checkpoint) -> None:
    cp = make_checkpoint("native", manifest=MANIFEST)

    async def main() -> dict[str, Any]:
        inside = asyncio.Event()
        release = asyncio.Event()
        outcome: dict[str, Any] = {}

        async def resumed_body() -> None:
            inside.set()
            await release.wait()
            child = asyncio.create_task(fetch_token("child"))  # created inside: inherits the turn
            try:
                await child
            except SummaryReconciliationError as err:
                outcome["child"] = err.missing_ref

        async def neighbour() -> None:
            await inside.wait()
            outcome["neighbour"] = await fetch_token("neighbour")  # a sibling task: no turn
            release.set()

        await asyncio.gather(run_in_turn_async(cp, resumed_body), neighbour())
        outcome["after"] = await fetch_token("after")
        return outcome

    assert asyncio.run(main()) == {"neighbour": "tok-new", "child": "token", "after": "tok-new"}


# -- wrapping -------------------------------------------------------------------------


def test_wrapper_keeps_identity_and_exposes_names() -> None:
    assert create_bucket.__name__ == "create_bucket"
    assert create_bucket.__doc__ == "Create a bucket."
    assert create_bucket.__summaryguard_tool__ == frozenset({"create_bucket", f"{__name__}.create_bucket"})
    assert make_bucket.__summaryguard_tool__ == frozenset({"s3.create_bucket"})
    assert fetch_token.__summaryguard_tool__ == frozenset({"fetch_token", f"{__name__}.fetch_token"})


def test_tool_names_of_odd_callables() -> None:
    class Tool:
        def __call__(self) -> None:
            pass

    names = tool_names(Tool())
    assert "Tool" in names
    assert tool_names(len) == frozenset({"len", "builtins.len"})


@pytest.mark.parametrize("name", ["", [], [""], ["ok", 3]])
def test_bad_names_are_refused(name) -> None:
    with pytest.raises(TypeError, match="non-empty name"):
        tool_guard(name=name)(lambda: None)


def test_only_callables() -> None:
    with pytest.raises(TypeError, match="wraps a callable, got str"):
        tool_guard("create_bucket")


def test_an_unreadable_manifest_fails_closed(make_checkpoint, use_plugin) -> None:
    class Shaky:
        name = "shaky"

        def extract(self, checkpoint: Any) -> tuple[Any, ...]:
            return (4, 2, True, 2, False, ())

        def next_turn_deps(self, checkpoint: Any) -> tuple[str, ...]:
            return ()

        def drop_manifest(self, checkpoint: Any) -> Any:
            raise OSError("manifest store offline")

    class ShakyCheckpoint:
        pass

    class Plugin:
        @hookimpl
        def summaryguard_checkpoint_adapter(self, checkpoint_type: type, checkpoint: Any) -> Any:
            return Shaky() if checkpoint_type is ShakyCheckpoint else None

    use_plugin(Plugin())
    with pytest.raises(SummaryReconciliationError) as info:
        run_in_turn(ShakyCheckpoint(), lambda: list_files("p"))
    err = info.value
    assert (err.checkpoint_turn, err.summary_generation) == (4, 2)
    assert "drop manifest could not be read by adapter 'shaky': OSError" in err.reason
    assert CALLS == []


@pytest.mark.parametrize("tool", [["create_bucket"], 5])
def test_a_manifest_entry_whose_tool_is_not_a_name_fails_closed(make_checkpoint, shape, tool) -> None:
    # tool=["create_bucket"] failed at the tool call with "unhashable type", and tool=5
    # named no tool, so it refused nothing: either way the entry cannot clear a tool.
    if shape == "native":  # summaryguard's own Summary refuses such an entry when it is built
        with pytest.raises(CheckpointFormatError, match="tool: expected a string"):
            make_checkpoint(shape, manifest=[("bucket", "bkt-old", tool)])
        return
    cp = make_checkpoint(shape, manifest=[("bucket", "bkt-old", tool)])
    with pytest.raises(SummaryReconciliationError, match="names its tool with a string") as info:
        run_in_turn(cp, lambda: list_files("p"))
    assert info.value.kind is ReconciliationKind.NO_SUMMARY
    assert CALLS == []


def test_the_manifest_is_read_once_per_turn(make_checkpoint, use_plugin) -> None:
    reads: list[int] = []

    class Counting:
        name = "counting"

        def extract(self, checkpoint: Any) -> tuple[Any, ...]:
            return (4, 2, True, 2, False, ())

        def next_turn_deps(self, checkpoint: Any) -> tuple[str, ...]:
            return ()

        def drop_manifest(self, checkpoint: Any) -> Any:
            reads.append(1)
            return [SimpleNamespace(ref="files", last_known=[], tool="other_tool")]

    class CountingCheckpoint:
        pass

    class Plugin:
        @hookimpl
        def summaryguard_checkpoint_adapter(self, checkpoint_type: type, checkpoint: Any) -> Any:
            return Counting() if checkpoint_type is CountingCheckpoint else None

    use_plugin(Plugin())

    def body() -> Any:
        results = [list_files("a"), list_files("b"), create_bucket()]
        return results, [e.ref for e in current_turn().dropped_refs()]

    assert run_in_turn(CountingCheckpoint(), body) == ([["a"], ["a"], "bkt-new"], ["files"])
    assert len(reads) == 1  # once, when the turn started: the tools and dropped_refs() use that snapshot
