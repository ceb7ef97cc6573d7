"""resume_guard as a decorator: where it finds things, what it keeps, what it refuses."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import pytest

from summaryguard.guard import (
    ReconciliationKind,
    ResumedTurn,
    SummaryReconciliationError,
    current_turn,
    resume_guard,
)

# -- where the dependencies come from --------------------------------------------------


@resume_guard(deps="next_deps")
def by_param(checkpoint: Any, next_deps: Any) -> Any:
    return ("ran", list(next_deps))


@resume_guard(deps="next_deps")
def by_param_with_default(checkpoint: Any, next_deps: Any = ("h1", "h2")) -> Any:
    return ("ran", list(next_deps))


@resume_guard(deps="next_deps")
def by_param_default_none(checkpoint: Any, next_deps: Any = None) -> Any:
    return ("ran", next_deps)


@resume_guard(deps="next_deps")
def by_keyword_only(checkpoint: Any, *, next_deps: Any) -> Any:
    return ("ran", list(next_deps))


@resume_guard(deps=lambda cp: ["h2"])
def by_callable(checkpoint: Any) -> Any:
    return ("ran", None)


@resume_guard
def from_checkpoint(checkpoint: Any) -> Any:
    return ("ran", None)


# refs in the checkpoint: h1 only; the checkpoint's own next_turn_deps: ["h3"]
DEPS_CASES = [
    ("param-positional-ok", lambda cp: by_param(cp, ["h1"]), None),
    ("param-positional-missing", lambda cp: by_param(cp, ["h1", "h2"]), "h2"),
    ("param-keyword-missing", lambda cp: by_param(checkpoint=cp, next_deps=["h2"]), "h2"),
    ("param-all-keywords-ok", lambda cp: by_param(next_deps=("h1",), checkpoint=cp), None),
    ("param-set", lambda cp: by_param(cp, {"h9"}), "h9"),
    ("param-generator", lambda cp: by_param(cp, (d for d in ["h1", "h4"])), "h4"),
    ("param-dict-keys", lambda cp: by_param(cp, {"h1": 1, "h5": 2}.keys()), "h5"),
    ("default-used", lambda cp: by_param_with_default(cp), "h2"),
    ("default-overridden", lambda cp: by_param_with_default(cp, ["h1"]), None),
    ("none-falls-back-to-checkpoint", lambda cp: by_param_default_none(cp), "h3"),
    ("explicit-empty-checks-nothing", lambda cp: by_param_default_none(cp, []), None),
    ("keyword-only", lambda cp: by_keyword_only(cp, next_deps=["h6"]), "h6"),
    ("callable", lambda cp: by_callable(cp), "h2"),
    ("from-checkpoint", lambda cp: from_checkpoint(cp), "h3"),
]


@pytest.mark.parametrize(("name", "call", "missing"), DEPS_CASES, ids=[c[0] for c in DEPS_CASES])
def test_where_deps_come_from(make_checkpoint, shape, name, call, missing) -> None:
    cp = make_checkpoint(shape, refs=["h1"], next_turn_deps=["h3"])
    if missing is None:
        assert call(cp)[0] == "ran"
    else:
        with pytest.raises(SummaryReconciliationError) as info:
            call(cp)
        assert info.value.kind is ReconciliationKind.MISSING_DEPENDENCY
        assert info.value.missing_ref == missing


@pytest.mark.parametrize(
    ("value", "message"),
    [("h1", "not a single str"), (b"h1", "not a single bytes"), (7, "got int"), (3.5, "got float")],
)
def test_bad_deps_value_is_a_type_error_and_the_body_does_not_run(make_checkpoint, value, message) -> None:
    ran = []

    @resume_guard(deps="deps")
    def resume(checkpoint: Any, deps: Any) -> None:
        ran.append(True)

    with pytest.raises(TypeError, match=message):
        resume(make_checkpoint("native"), value)

    @resume_guard(deps=lambda cp: value)
    def resume_cb(checkpoint: Any) -> None:
        ran.append(True)

    with pytest.raises(TypeError, match=message):
        resume_cb(make_checkpoint("native"))
    assert ran == []


def test_missing_arguments_are_type_errors(make_checkpoint) -> None:
    # The compiled wrapper has the function's own signature, so Python itself
    # refuses the call, naming the missing parameter.
    with pytest.raises(TypeError, match=r"by_param\(\) missing 1 required positional argument: 'checkpoint'"):
        by_param(next_deps=[])
    with pytest.raises(TypeError, match=r"by_param\(\) missing 1 required positional argument: 'next_deps'"):
        by_param(make_checkpoint("native"))


# -- where the checkpoint comes from -----------------------------------------------------


@resume_guard(checkpoint="snapshot")
def named(agent: str, snapshot: Any) -> Any:
    return (agent, snapshot)


@resume_guard
def first_param(state: Any, note: str = "") -> Any:
    return state


@resume_guard
def checkpoint_not_first(agent: str, checkpoint: Any) -> Any:
    return checkpoint


@resume_guard
def checkpoint_with_default(agent: str = "a", checkpoint: Any = {"summary": None, "turn": 2}) -> Any:  # noqa: B006
    return checkpoint


@resume_guard(checkpoint="cp")
def keyword_only_checkpoint(*args: Any, cp: Any) -> Any:
    return cp


@resume_guard
def positional_only(cp: Any, /) -> Any:
    return cp


CHECKPOINT_CASES = [
    ("named-positional", lambda good, bad: named("a", good), lambda good, bad: named("a", bad)),
    ("named-keyword", lambda good, bad: named("a", snapshot=good), lambda good, bad: named(snapshot=bad, agent="a")),
    ("first-param", lambda good, bad: first_param(good), lambda good, bad: first_param(bad, note="x")),
    ("called-checkpoint", lambda good, bad: checkpoint_not_first(bad, good), lambda good, bad: checkpoint_not_first(good, bad)),
    ("keyword-only", lambda good, bad: keyword_only_checkpoint(1, 2, cp=good), lambda good, bad: keyword_only_checkpoint(cp=bad)),
    ("positional-only", lambda good, bad: positional_only(good), lambda good, bad: positional_only(bad)),
]


@pytest.mark.parametrize(("name", "passes", "fails"), CHECKPOINT_CASES, ids=[c[0] for c in CHECKPOINT_CASES])
def test_which_parameter_holds_the_checkpoint(make_checkpoint, name, passes, fails) -> None:
    good = make_checkpoint("native")
    bad = make_checkpoint("native", has_summary=False)
    passes(good, bad)
    with pytest.raises(SummaryReconciliationError) as info:
        fails(good, bad)
    assert info.value.kind is ReconciliationKind.NO_SUMMARY


def test_a_defaulted_checkpoint_is_checked_too() -> None:
    with pytest.raises(SummaryReconciliationError) as info:
        checkpoint_with_default()
    assert info.value.checkpoint_turn == 2


class Agent:
    def __init__(self) -> None:
        self.resumed: list[Any] = []

    @resume_guard
    def resume(self, checkpoint: Any) -> str:
        self.resumed.append(checkpoint)
        return "method"

    @resume_guard(deps="deps")
    def resume_with(self, snapshot: Any, deps: Any) -> str:
        self.resumed.append(snapshot)
        return "method-deps"

    @classmethod
    @resume_guard
    def from_checkpoint(cls, checkpoint: Any) -> str:
        return cls.__name__

    @staticmethod
    @resume_guard
    def static(checkpoint: Any) -> str:
        return "static"

    @resume_guard
    async def resume_async(self, checkpoint: Any) -> str:
        self.resumed.append(checkpoint)
        return "async-method"


def test_methods(make_checkpoint) -> None:
    agent = Agent()
    good = make_checkpoint("attributes", refs=["h1"])
    bad = make_checkpoint("attributes", refs=[], next_turn_deps=["h1"])
    assert agent.resume(good) == "method"
    assert agent.resume_with(good, ["h1"]) == "method-deps"
    assert Agent.from_checkpoint(good) == "Agent"
    assert Agent.static(good) == "static"
    assert asyncio.run(agent.resume_async(good)) == "async-method"
    assert agent.resumed == [good, good, good]
    for call in (
        lambda: agent.resume(bad),
        lambda: agent.resume_with(good, ["missing"]),
        lambda: Agent.from_checkpoint(bad),
        lambda: Agent.static(bad),
        lambda: asyncio.run(agent.resume_async(bad)),
    ):
        with pytest.raises(SummaryReconciliationError):
            call()
    assert agent.resumed == [good, good, good]


# -- async -------------------------------------------------------------------------------


def test_async_functions(make_checkpoint, shape) -> None:
    ran = []

    @resume_guard(deps="deps")
    async def resume(checkpoint: Any, deps: Any) -> Any:
        ran.append(current_turn())
        await asyncio.sleep(0)
        assert current_turn() is ran[-1]
        return "resumed"

    cp = make_checkpoint(shape, refs=["h1"])
    assert asyncio.run(resume(cp, ["h1"])) == "resumed"
    assert isinstance(ran[0], ResumedTurn) and ran[0].checkpoint is cp
    with pytest.raises(SummaryReconciliationError) as info:
        asyncio.run(resume(cp, ["h2"]))
    assert info.value.missing_ref == "h2"
    assert len(ran) == 1
    assert current_turn() is None


# -- what the wrapper keeps ------------------------------------------------------------


def documented(checkpoint: Any, deps: list[str], *, verbose: bool = False) -> int:
    """Resume the agent."""
    return 1


async def documented_async(checkpoint: Any, deps: list[str], *, verbose: bool = False) -> int:
    """Resume the agent, asynchronously."""
    return 1


@pytest.mark.parametrize("fn", [documented, documented_async])
@pytest.mark.parametrize("decorate", [resume_guard, resume_guard(deps="deps"), resume_guard(checkpoint="checkpoint")])
def test_metadata_is_kept(fn, decorate) -> None:
    wrapped = decorate(fn)
    assert wrapped.__name__ == fn.__name__
    assert wrapped.__qualname__ == fn.__qualname__
    assert wrapped.__doc__ == fn.__doc__
    assert wrapped.__wrapped__ is fn
    assert inspect.signature(wrapped) == inspect.signature(fn)
    assert inspect.iscoroutinefunction(wrapped) is inspect.iscoroutinefunction(fn)


# -- the body never runs on a violation; the turn is scoped ----------------------------


@pytest.mark.parametrize(
    "facts",
    [
        {"has_summary": False},
        {"generation": 2},
        {"partial": True},
        {"refs": []},
    ],
    ids=["no-summary", "generation-mismatch", "partial-summary", "missing-dependency"],
)
def test_the_body_never_runs_on_a_violation(make_checkpoint, shape, facts) -> None:
    ran = []

    @resume_guard
    def resume(checkpoint: Any) -> None:
        ran.append(True)

    with pytest.raises(SummaryReconciliationError):
        resume(make_checkpoint(shape, next_turn_deps=["h1"], **facts))
    assert ran == []


def test_resumed_turn_is_set_for_the_body_only_and_nests(make_checkpoint) -> None:
    outer_cp = make_checkpoint("native", turn=1)
    inner_cp = make_checkpoint("mapping", turn=2)
    seen: list[Any] = []

    @resume_guard
    def inner(checkpoint: Any) -> None:
        seen.append(current_turn().checkpoint_turn)

    @resume_guard
    def outer(checkpoint: Any) -> None:
        turn = current_turn()
        seen.append((turn.checkpoint_turn, turn.summary_generation, turn.checkpoint is outer_cp))
        inner(inner_cp)
        seen.append(current_turn().checkpoint_turn)
        raise KeyError("body failed")

    with pytest.raises(KeyError):
        outer(outer_cp)
    assert seen == [(1, 3, True), 2, 1]
    assert current_turn() is None


# -- refused at decoration time ------------------------------------------------------------


def gen(checkpoint: Any) -> Any:
    yield checkpoint


async def agen(checkpoint: Any) -> Any:
    yield checkpoint


def test_generator_functions_are_checked_at_the_call_and_iterated_in_the_turn(make_checkpoint) -> None:
    """Once refused at decoration (their body ran outside the turn); now handed back inside it."""
    good, bad = make_checkpoint("native"), make_checkpoint("native", recorded=9)
    with_options = resume_guard(deps="deps")(lambda checkpoint, deps: gen(checkpoint))
    for guarded in (resume_guard(gen), resume_guard(checkpoint="checkpoint")(gen)):
        assert list(guarded(good)) == [good]
        with pytest.raises(SummaryReconciliationError):
            guarded(bad)  # at the call, before anything is iterated
    assert list(with_options(good, ["h1"])) == [good]

    async def drain() -> list[Any]:
        return [item async for item in resume_guard(agen)(good)]

    assert asyncio.run(drain()) == [good]
    with pytest.raises(SummaryReconciliationError):
        resume_guard(agen)(bad)


def no_params() -> None:
    pass


def only_self(self: Any) -> None:
    pass


def takes(checkpoint: Any, deps: Any) -> None:
    pass


DECORATION_ERRORS = [
    ("no-parameters", lambda: resume_guard(no_params), "takes no parameter that could hold the checkpoint"),
    ("only-self", lambda: resume_guard(only_self), "takes no parameter"),
    ("unknown-checkpoint-name", lambda: resume_guard(checkpoint="snap")(takes), r"has no parameter 'snap' \(it has checkpoint, deps\)"),
    ("unknown-deps-name", lambda: resume_guard(deps="needs")(takes), r"resume_guard\(deps='needs'\)"),
    ("deps-not-name-or-callable", lambda: resume_guard(deps=["h1"])(takes), "takes a parameter name or a callable, got list"),
    ("not-callable", lambda: resume_guard(42), "wraps a function, got int"),
]


@pytest.mark.parametrize(("name", "decorate", "message"), DECORATION_ERRORS, ids=[c[0] for c in DECORATION_ERRORS])
def test_refused_at_decoration(name, decorate, message) -> None:
    with pytest.raises(TypeError, match=message):
        decorate()


# -- found by an adversarial review ---------------------------------------------------------


class _Text(str):
    """A ``str`` subclass (``numpy.str_``, a ``StrEnum``): the inline check once took only
    ``str`` itself for a string, and let "b" in "bucket-handle" pass."""


@pytest.mark.parametrize("refs", ["bucket-handle", "abc", _Text("bucket-handle"), b"bucket-handle"])
def test_a_string_of_refs_never_covers_a_dependency_by_substring(refs: str) -> None:
    """A string is a container of its substrings; it must not pass "b" in "bucket-handle"."""
    from types import SimpleNamespace

    from summaryguard.guard import check_resume

    mapping = {"turn": 1, "summary_generation": 1, "summary": {"generation": 1, "verbatim_refs": refs}}
    attributes = SimpleNamespace(
        turn=1, summary_generation=1, summary=SimpleNamespace(generation=1, partial=False, verbatim_refs=refs)
    )

    @resume_guard(deps="deps")
    def resume(checkpoint: Any, deps: Any) -> str:
        return "ran"

    for cp in (mapping, attributes):
        for attempt in (lambda: check_resume(cp, ["b"]), lambda: resume(cp, ["b"]), lambda: resume(cp, ("a",))):
            with pytest.raises(SummaryReconciliationError, match=f"collection of reference names, got {type(refs).__name__}"):
                attempt()


def test_refs_of_any_container_class_stay_on_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only text and non-containers leave the inline check: an adapter's own view of the refs
    or an ``OrderedDict`` once took the generic path on every call (3-5x slower)."""
    import collections
    import types
    from types import SimpleNamespace

    from summaryguard.guard import resume as resume_module

    class View(collections.abc.Collection):  # what the framework adapters return
        def __init__(self, names: set[str]) -> None:
            self.names = names

        def __contains__(self, name: object) -> bool:
            return name in self.names

        def __iter__(self) -> Any:
            return iter(self.names)

        def __len__(self) -> int:
            return len(self.names)

    generic: list[Any] = []
    real_call = resume_module._Guarded.call
    monkeypatch.setattr(resume_module._Guarded, "call", lambda self, a, k: (generic.append(a), real_call(self, a, k))[1])

    @resume_guard(deps="deps")
    def resume(checkpoint: Any, deps: Any) -> str:
        return "ran"

    readable = [
        collections.OrderedDict(h="v"), collections.defaultdict(str, h="v"), types.MappingProxyType({"h": "v"}), View({"h"}),
    ]
    for refs in readable:
        cp = SimpleNamespace(
            turn=1, summary_generation=1, summary=SimpleNamespace(generation=1, partial=False, verbatim_refs=refs)
        )
        assert resume(cp, ["h"]) == "ran"
    assert generic == []
    cp = SimpleNamespace(
        turn=1, summary_generation=1, summary=SimpleNamespace(generation=1, partial=False, verbatim_refs=_Text("h"))
    )
    with pytest.raises(SummaryReconciliationError):
        resume(cp, ["h"])
    assert len(generic) == 1


def test_an_unreadable_checkpoint_is_observed_and_can_be_replayed(use_plugin, make_checkpoint) -> None:
    """Every violation goes to the observers, then to a resolver: an unreadable checkpoint too."""
    from summaryguard.guard import Replay, check_resume
    from summaryguard.plugins import hookimpl

    good = make_checkpoint("mapping", refs=["h1"])
    seen: list[Any] = []

    class Controller:
        @hookimpl
        def summaryguard_observe_violation(self, error: Any, checkpoint: Any) -> None:
            seen.append((error.kind, error.checkpoint_turn))

        @hookimpl
        def summaryguard_resolve_violation(self, error: Any, checkpoint: Any) -> Any:
            return Replay(good) if checkpoint is not good else None

    use_plugin(Controller())
    broken = {"turn": 3, "summary_generation": 1, "summary": "not a summary"}

    @resume_guard(deps="deps")
    def resume(checkpoint: Any, deps: Any) -> Any:
        return checkpoint

    assert resume(broken, ["h1"]) is good
    assert seen == [(ReconciliationKind.NO_SUMMARY, 3)]  # the turn is read from the mapping
    with pytest.raises(SummaryReconciliationError) as info:
        check_resume(broken, ["h1"])
    assert info.value.kind is ReconciliationKind.NO_SUMMARY and info.value.checkpoint_turn == 3
    assert seen == [(ReconciliationKind.NO_SUMMARY, 3)] * 2  # check_resume told the observers too


def test_accepting_an_unreadable_checkpoint_lets_it_through_on_record(use_plugin) -> None:
    from summaryguard.guard import AcceptDivergence
    from summaryguard.plugins import hookimpl

    accepted: list[Any] = []

    class Controller:
        @hookimpl
        def summaryguard_resolve_violation(self, error: Any, checkpoint: Any) -> Any:
            return AcceptDivergence("operator: start from nothing")

        @hookimpl
        def summaryguard_divergence_accepted(self, record: Any) -> None:
            accepted.append(record.kind)

    use_plugin(Controller())

    @resume_guard(deps="deps")
    def resume(checkpoint: Any, deps: Any) -> str:
        return "ran"

    assert resume({"turn": 3, "summary_generation": 1, "summary": 7}, ["h1"]) == "ran"
    assert accepted == [ReconciliationKind.NO_SUMMARY]


@pytest.mark.parametrize("deps", [[["h1"]], [{"a": 1}], ["h1", {"x"}]])
def test_an_unhashable_dependency_is_a_clear_type_error(make_checkpoint, deps: Any) -> None:
    from summaryguard.guard import check_resume

    cp = make_checkpoint("native", refs=["h1"])

    @resume_guard(deps="deps")
    def resume(checkpoint: Any, deps: Any) -> str:
        return "ran"

    for attempt in (lambda: resume(cp, deps), lambda: check_resume(cp, deps)):
        with pytest.raises(TypeError, match="next-turn dependencies are reference names; item"):
            attempt()


def test_a_sync_wrapper_around_a_coroutine_function_runs_its_body_in_the_turn(make_checkpoint) -> None:
    import functools

    from summaryguard.guard import tool_guard

    calls: list[str] = []

    @tool_guard(name="create")
    def create() -> str:
        calls.append("create")
        return "new"

    def plain_decorator(fn: Any) -> Any:
        @functools.wraps(fn)
        def inner(*args: Any, **kwargs: Any) -> Any:
            return fn(*args, **kwargs)  # returns the coroutine: not async itself

        return inner

    @resume_guard
    @plain_decorator
    async def resume(checkpoint: Any) -> Any:
        await asyncio.sleep(0)
        assert current_turn() is not None
        return create()

    cp = make_checkpoint("native", manifest=[("h", "old", "create")])
    with pytest.raises(SummaryReconciliationError) as info:
        asyncio.run(resume(cp))
    assert info.value.kind is ReconciliationKind.REDERIVATION
    assert calls == []
    assert not inspect.iscoroutinefunction(resume)  # shaped like what it wraps


def test_a_sync_wrapper_that_returns_a_plain_value_is_left_alone(make_checkpoint) -> None:
    import functools

    def runs_it(fn: Any) -> Any:
        @functools.wraps(fn)
        def inner(*args: Any, **kwargs: Any) -> Any:
            return asyncio.run(fn(*args, **kwargs))

        return inner

    @resume_guard
    @runs_it
    async def resume(checkpoint: Any) -> str:
        return "ran"

    assert resume(make_checkpoint("native")) == "ran"


def test_static_and_class_methods_under_the_guard(make_checkpoint) -> None:
    class Agent:
        @resume_guard
        @staticmethod
        def static(checkpoint: Any) -> str:
            return "static"

        @resume_guard
        @classmethod
        def klass(cls, checkpoint: Any) -> str:
            return cls.__name__

    good, bad = make_checkpoint("native"), make_checkpoint("native", recorded=9)
    for call in (Agent.static, Agent().static):
        assert call(good) == "static"
        with pytest.raises(SummaryReconciliationError):
            call(bad)
    assert Agent.klass(good) == Agent().klass(good) == "Agent"
    with pytest.raises(SummaryReconciliationError):
        Agent.klass(bad)


def test_partials_and_callable_objects_can_be_guarded(make_checkpoint) -> None:
    import functools

    def resume(checkpoint: Any, tag: str) -> str:
        return tag

    class Resumer:
        def __call__(self, checkpoint: Any) -> str:
            return "object"

    class AsyncResumer:
        async def __call__(self, checkpoint: Any) -> str:
            assert current_turn() is not None
            return "async object"

    good, bad = make_checkpoint("native"), make_checkpoint("native", recorded=9)
    guarded_partial = resume_guard(functools.partial(resume, tag="partial"))
    guarded_object = resume_guard(Resumer())
    guarded_async = resume_guard(AsyncResumer())
    assert guarded_partial(good) == "partial"
    assert guarded_object(good) == "object"
    assert asyncio.run(guarded_async(good)) == "async object"
    for call in (guarded_partial, guarded_object):
        with pytest.raises(SummaryReconciliationError):
            call(bad)
    with pytest.raises(SummaryReconciliationError):
        asyncio.run(guarded_async(bad))


def test_a_call_missing_an_argument_names_the_guarded_function(make_checkpoint) -> None:
    """Python's own message, about the function the user wrote, not about the generated wrapper."""

    @resume_guard
    def resume_agent(checkpoint: Any, mode: str) -> str:
        return mode

    with pytest.raises(TypeError) as info:
        resume_agent(make_checkpoint("native"))  # type: ignore[call-arg]
    assert "resume_agent() missing 1 required positional argument: 'mode'" in str(info.value)
    assert "_sg_" not in str(info.value)
