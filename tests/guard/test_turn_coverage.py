"""What a resumed turn covers (SPEC §4.4): the work a resume hands back, nested resumes, a manifest read once.

B2: work the body returns (coroutine, generator, async generator, function)
runs inside the turn when it is awaited, iterated or called. B3: a resume
nested in another adds to the outer turn's drops, never replaces them. B8: the
drop manifest is a snapshot taken when the turn starts, and a dict-shaped one
is refused. B9: the compiled wrapper means the same whatever its parameters
are called.
"""

from __future__ import annotations

import asyncio
import builtins
import collections
import copy
import dis
import functools
import inspect
import io
import itertools
import keyword
import operator
import pickle
import tokenize
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from summaryguard.guard import (
    ReconciliationKind,
    SummaryReconciliationError,
    accept_divergence,
    current_turn,
    in_turn,
    resume_guard,
    tool_guard,
)
from summaryguard.guard import resume as resume_module

RAN: list[str] = []


@tool_guard
def provision_bucket() -> str:
    RAN.append("provision_bucket")
    return "bkt-NEW"


@tool_guard
async def provision_bucket_async() -> str:
    await asyncio.sleep(0)
    RAN.append("provision_bucket_async")
    return "bkt-NEW"


@tool_guard
def fetch_token() -> str:
    RAN.append("fetch_token")
    return "tok-NEW"


@pytest.fixture(autouse=True)
def _clear() -> None:
    RAN.clear()


BUCKET = [("bucket", "bkt-7f3a", "provision_bucket"), ("bucket-a", "bkt-a", "provision_bucket_async")]


@pytest.fixture
def dropped(make_checkpoint: Callable[..., Any]) -> Any:
    """A checkpoint whose summary dropped the bucket (both tools that make one)."""
    return make_checkpoint("native", manifest=BUCKET)


@pytest.fixture
def clean(make_checkpoint: Callable[..., Any]) -> Any:
    return make_checkpoint("native", turn=8)


def refused(run: Callable[[], Any]) -> SummaryReconciliationError:
    with pytest.raises(SummaryReconciliationError) as info:
        run()
    assert info.value.kind is ReconciliationKind.REDERIVATION
    return info.value


def no_deps(checkpoint: Any) -> list[str]:
    return []


# -- B2: the seven bypasses, and the work each hands back --------------------------------


async def continue_agent(checkpoint: Any) -> str:
    return await provision_bucket_async()


async def collect(agen: Any) -> list[Any]:
    return [item async for item in agen]


def sync_resume_returning_a_coroutine() -> tuple[Any, Callable[[Any], Any]]:
    @resume_guard(deps=no_deps)
    def resume(checkpoint: Any) -> Any:
        return continue_agent(checkpoint)  # the common `return agent.arun(cp)`

    return resume, lambda work: asyncio.run(work)


def lambda_returning_a_coroutine() -> tuple[Any, Callable[[Any], Any]]:
    return resume_guard(deps=no_deps)(lambda checkpoint: continue_agent(checkpoint)), lambda work: asyncio.run(work)


def body_returning_a_generator() -> tuple[Any, Callable[[Any], Any]]:
    @resume_guard(deps=no_deps)
    def resume(checkpoint: Any) -> Any:
        return (provision_bucket() for _ in range(1))

    return resume, list


def body_returning_a_closure() -> tuple[Any, Callable[[Any], Any]]:
    @resume_guard(deps=no_deps)
    def resume(checkpoint: Any) -> Any:
        def later() -> str:
            return provision_bucket()

        return later

    return resume, lambda work: work()


def body_returning_an_async_generator() -> tuple[Any, Callable[[Any], Any]]:
    @resume_guard(deps=no_deps)
    def resume(checkpoint: Any) -> Any:
        async def stream() -> Any:
            yield await provision_bucket_async()

        return stream()

    return resume, lambda work: asyncio.run(collect(work))


def callable_object_whose_call_is_a_generator() -> tuple[Any, Callable[[Any], Any]]:
    class Steps:
        def __call__(self, checkpoint: Any) -> Any:
            yield provision_bucket()

    return resume_guard(deps=no_deps)(Steps()), list


def partial_of_an_async_callable_object() -> tuple[Any, Callable[[Any], Any]]:
    class Agent:
        async def __call__(self, checkpoint: Any, mode: str) -> str:
            return await provision_bucket_async()

    return resume_guard(deps=no_deps)(functools.partial(Agent(), mode="fast")), lambda work: asyncio.run(work)


BYPASSES = [
    sync_resume_returning_a_coroutine,
    lambda_returning_a_coroutine,
    body_returning_a_generator,
    body_returning_a_closure,
    body_returning_an_async_generator,
    callable_object_whose_call_is_a_generator,
    partial_of_an_async_callable_object,
]


@pytest.mark.parametrize("make", BYPASSES, ids=[f.__name__ for f in BYPASSES])
def test_work_the_resume_hands_back_runs_in_the_turn(make, dropped, clean) -> None:
    resume, run = make()
    refused(lambda: run(resume(dropped)))
    assert RAN == []
    assert current_turn() is None
    # The same work from a clean checkpoint runs, and leaves no turn behind.
    result = run(resume(clean))
    assert result in ("bkt-NEW", ["bkt-NEW"])
    assert RAN and current_turn() is None


def test_the_check_still_runs_at_the_call(dropped, make_checkpoint) -> None:
    """Handing work back does not postpone the check: a bad checkpoint fails before anything is returned.

    (An ``async`` resume, the partial of an async object among them, checks when it is awaited, as ever.)
    """
    bad = make_checkpoint("native", recorded=9)
    for make in BYPASSES:
        resume, _ = make()
        with pytest.raises(SummaryReconciliationError) as info:
            asyncio.run(resume(bad)) if inspect.iscoroutinefunction(resume) else resume(bad)
        assert info.value.kind is ReconciliationKind.GENERATION_MISMATCH


class Agent:
    def run(self) -> str:
        return provision_bucket()

    async def arun(self) -> str:
        return await provision_bucket_async()

    def steps(self) -> Any:
        yield provision_bucket()


MORE_WORK = {
    "bound method": (lambda: Agent().run, lambda work: work()),
    "async bound method": (lambda: Agent().arun, lambda work: asyncio.run(work())),
    "partial": (lambda: functools.partial(Agent.run, Agent()), lambda work: work()),
    "generator function": (lambda: Agent().steps, lambda work: list(work())),
    "closure returning a coroutine": (lambda: (lambda: continue_agent(None)), lambda work: asyncio.run(work())),
    "generator yielding coroutines": (
        lambda: (continue_agent(None) for _ in range(1)),
        lambda work: [asyncio.run(coroutine) for coroutine in work],
    ),
    "coroutine returning a closure": (lambda: _returns_closure(), lambda work: asyncio.run(work)()),
}


async def _returns_closure() -> Callable[[], str]:
    return lambda: provision_bucket()


@pytest.mark.parametrize("sync", [True, False], ids=["sync-resume", "async-resume"])
@pytest.mark.parametrize("name", list(MORE_WORK))
def test_what_comes_out_of_the_work_is_handed_back_too(name, sync, dropped) -> None:
    make, run = MORE_WORK[name]
    if sync:
        resume = resume_guard(deps=no_deps)(lambda checkpoint: make())
        refused(lambda: run(resume(dropped)))
    else:

        @resume_guard(deps=no_deps)
        async def resume(checkpoint: Any) -> Any:
            return make()

        refused(lambda: run(asyncio.run(resume(dropped))))
    assert RAN == []


def test_an_async_resume_returning_an_async_generator(dropped) -> None:
    @resume_guard(deps=no_deps)
    async def resume(checkpoint: Any) -> Any:
        async def stream() -> Any:
            yield await provision_bucket_async()

        return stream()

    async def main() -> list[Any]:
        return await collect(await resume(dropped))

    refused(lambda: asyncio.run(main()))


def test_a_generator_is_in_the_turn_only_while_it_runs(clean) -> None:
    """The consumer holding an item is outside the turn; send, throw and close reach the generator inside it."""
    seen: list[Any] = []

    @resume_guard(deps=no_deps)
    def resume(checkpoint: Any) -> Any:
        def steps() -> Any:
            try:
                seen.append(("sent", (yield current_turn() is not None), current_turn() is not None))
                yield "second"
            except KeyError:
                seen.append(("thrown", current_turn() is not None))
                yield "after-throw"
            finally:
                seen.append(("closed", current_turn() is not None))
            return "done"

        return steps()

    steps = resume(clean)
    assert next(steps) is True and current_turn() is None
    assert steps.send("hello") == "second" and current_turn() is None
    assert steps.throw(KeyError("k")) == "after-throw"
    steps.close()
    assert seen == [("sent", "hello", True), ("thrown", True), ("closed", True)]

    def delegate() -> Any:
        return (yield from resume(clean))

    with pytest.raises(StopIteration) as stop:
        gen = delegate()
        next(gen)
        gen.send(None)
        next(gen)
    assert stop.value.value == "done"


def test_an_async_generator_is_in_the_turn_only_while_it_runs(clean) -> None:
    seen: list[Any] = []

    @resume_guard(deps=no_deps)
    def resume(checkpoint: Any) -> Any:
        async def stream() -> Any:
            try:
                seen.append(("sent", (yield current_turn() is not None), current_turn() is not None))
                yield "second"
            finally:
                seen.append(("closed", current_turn() is not None))

        return stream()

    async def main() -> None:
        stream = resume(clean)
        assert await stream.__anext__() is True and current_turn() is None
        assert await stream.asend("hello") == "second" and current_turn() is None
        await stream.aclose()

    asyncio.run(main())
    assert seen == [("sent", "hello", True), ("closed", True)]


def test_plain_results_and_objects_come_back_as_they_are(clean) -> None:
    """Only work is wrapped: values, plain objects, classes and asyncio futures are returned untouched."""
    plain_object = SimpleNamespace(run=None)
    values = [None, 3, "s", [1], {"a": 1}, (1,), plain_object, Agent(), Agent, type]
    for value in values:
        assert resume_guard(deps=no_deps)(lambda checkpoint, value=value: value)(clean) is value

    async def main() -> None:
        future = asyncio.get_running_loop().create_future()
        assert resume_guard(deps=no_deps)(lambda checkpoint: future)(clean) is future
        task = asyncio.ensure_future(asyncio.sleep(0))
        assert resume_guard(deps=no_deps)(lambda checkpoint: task)(clean) is task
        await task

    asyncio.run(main())


# -- B2, continued: work that is an object (SPEC 4.4: every callable, awaitable, iterator) --


class CallableAgent:
    """A callable instance: its ``__call__`` is the agent's next step."""

    label = "agent"

    def __init__(self) -> None:
        self.steps = 0

    def __call__(self) -> str:
        self.steps += 1
        return provision_bucket()

    def run(self) -> str:
        return provision_bucket()

    @property
    def fresh(self) -> str:
        return provision_bucket()


class AsyncCallableAgent:
    async def __call__(self) -> str:
        return await provision_bucket_async()


class ToolIterator:
    """A lazy iterator that is not a generator: each ``__next__`` calls the tool."""

    def __init__(self, n: int = 1) -> None:
        self.n = n

    def __iter__(self) -> ToolIterator:
        return self

    def __next__(self) -> str:
        if self.n == 0:
            raise StopIteration
        self.n -= 1
        return provision_bucket()


class ToolAwaitable:
    """An awaitable object that is not a coroutine (``__await__`` a generator that yields to the loop once)."""

    def __init__(self) -> None:
        self.note = "awaitable"

    def __await__(self) -> Any:
        yield  # a bare yield: the event loop runs other work, then resumes us
        return provision_bucket()


class DelegatingAwaitable:
    """``__await__`` hands out a coroutine's own iterator (``coro.__await__()``), as many libraries do."""

    def __await__(self) -> Any:
        return continue_agent(None).__await__()


class ToolAsyncIterator:
    """An async iterator that is not an async generator."""

    def __init__(self) -> None:
        self.done = False

    def __aiter__(self) -> ToolAsyncIterator:
        return self

    async def __anext__(self) -> str:
        if self.done:
            raise StopAsyncIteration
        self.done = True
        return await provision_bucket_async()


class Holder:
    """What a C callable applies to: a method and a property that call the tool."""

    def go(self) -> str:
        return provision_bucket()

    @property
    def value(self) -> str:
        return provision_bucket()


async def _await(work: Any) -> Any:
    return await work


async def _anext(work: Any) -> Any:
    return [item async for item in work]


async def _in_a_task(work: Any) -> Any:
    return await asyncio.ensure_future(work)


OBJECT_WORK: dict[str, tuple[Callable[[], Any], Callable[[Any], Any]]] = {
    "callable instance": (CallableAgent, lambda work: work()),
    "async callable instance": (AsyncCallableAgent, lambda work: asyncio.run(work())),
    "callable instance's method": (CallableAgent, lambda work: work.run()),
    "callable instance's property": (CallableAgent, lambda work: work.fresh),
    "operator.methodcaller": (lambda: operator.methodcaller("go"), lambda work: work(Holder())),
    "operator.attrgetter": (lambda: operator.attrgetter("value"), lambda work: work(Holder())),
    "functools.lru_cache wrapper": (lambda: functools.lru_cache(maxsize=None)(lambda: provision_bucket()), lambda work: work()),
    "builtin bound method": (lambda: collections.defaultdict(lambda: provision_bucket()).__getitem__, lambda work: work("k")),
    "method-wrapper": (lambda: map(lambda _: provision_bucket(), [0]).__next__, lambda work: work()),  # noqa: C417
    "map object": (lambda: map(lambda _: provision_bucket(), [0]), list),  # noqa: C417 - the map object is the point
    "filter object": (lambda: filter(lambda _: provision_bucket(), ["bkt-NEW"]), list),
    "itertools.starmap": (lambda: itertools.starmap(provision_bucket, [()]), lambda work: next(work)),
    "iter(callable, sentinel)": (lambda: iter(provision_bucket, None), lambda work: next(work)),
    "custom iterator": (ToolIterator, list),
    "custom iterator in a for loop": (ToolIterator, lambda work: [item for item in work]),
    "awaitable object": (ToolAwaitable, lambda work: asyncio.run(_await(work))),
    "awaitable object in a task": (ToolAwaitable, lambda work: asyncio.run(_in_a_task(work))),
    "awaitable delegating to a coroutine": (DelegatingAwaitable, lambda work: asyncio.run(_await(work))),
    "async iterator": (ToolAsyncIterator, lambda work: asyncio.run(_anext(work))),
    "iterator of coroutines": (lambda: iter([continue_agent(None)]), lambda work: asyncio.run(next(work))),
}


@pytest.mark.parametrize("sync", [True, False], ids=["sync-resume", "async-resume"])
@pytest.mark.parametrize("name", list(OBJECT_WORK))
def test_an_object_that_is_work_runs_in_the_turn(name, sync, dropped, clean) -> None:
    make, run = OBJECT_WORK[name]
    if sync:
        resume = resume_guard(deps=no_deps)(lambda checkpoint: make())

        def handed(checkpoint: Any) -> Any:
            return resume(checkpoint)

    else:

        @resume_guard(deps=no_deps)
        async def aresume(checkpoint: Any) -> Any:
            return make()

        def handed(checkpoint: Any) -> Any:
            return asyncio.run(aresume(checkpoint))

    refused(lambda: run(handed(dropped)))
    assert RAN == []
    assert current_turn() is None
    result = run(handed(clean))
    assert result in ("bkt-NEW", ["bkt-NEW"])
    assert RAN and current_turn() is None


def test_a_proxy_keeps_the_object_usable(dropped, clean) -> None:
    """What the caller sees: isinstance, attributes (read, written, deleted), ==, hash, repr, callable()."""
    agent = CallableAgent()
    work = resume_guard(deps=no_deps)(lambda checkpoint: agent)(clean)
    assert isinstance(work, CallableAgent) and work.__class__ is CallableAgent
    assert type(work) is not CallableAgent  # the trade-off (README): exact-type checks see the proxy
    assert work.__wrapped__ is agent
    assert work == agent and hash(work) == hash(agent) and repr(work) == repr(agent) and str(work) == str(agent)
    assert callable(work) and work.label == "agent"
    assert work() == "bkt-NEW" and work.steps == 1 == agent.steps
    work.extra = 5
    assert agent.extra == 5
    del work.extra
    assert not hasattr(agent, "extra")
    assert inspect.signature(work) == inspect.signature(agent)
    # An iterator stays an iterator (iter() of it is itself), and not callable unless the object is.
    iterator = resume_guard(deps=no_deps)(lambda checkpoint: ToolIterator(2))(clean)
    assert iter(iterator) is iterator and not callable(iterator)
    assert list(iterator) == ["bkt-NEW", "bkt-NEW"]
    # An awaitable keeps its attributes; an async iterator works in ``async for``.
    awaitable = resume_guard(deps=no_deps)(lambda checkpoint: ToolAwaitable())(clean)
    assert awaitable.note == "awaitable" and inspect.isawaitable(awaitable)
    assert asyncio.run(_await(awaitable)) == "bkt-NEW"
    # Protocols the object lacks fail as they do on it.
    with pytest.raises(TypeError):
        len(work)
    with pytest.raises(TypeError):
        next(work)


class Session:
    """A callable that is also a context manager, has a length, and composes with ``|`` (as runnables do)."""

    def __init__(self, items: list[str]) -> None:
        self.items = items
        self.entered = False

    def __call__(self) -> str:
        return provision_bucket()

    def __enter__(self) -> Session:  # noqa: PYI034
        self.entered = current_turn() is not None
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int) -> str:
        return self.items[i]

    def __or__(self, other: Any) -> Session:
        return Session([*self.items, *(other.items if isinstance(other, Session) else [other])])


def test_a_proxy_forwards_the_protocols_the_object_has(clean, dropped) -> None:
    session = resume_guard(deps=no_deps)(lambda checkpoint: Session(["a", "b"]))(clean)
    with session as entered:
        assert entered is session  # the object itself comes back as the proxy
    assert session.__wrapped__.entered  # __enter__ ran inside the turn
    assert len(session) == 2 and session[1] == "b" and list(session) == ["a", "b"]
    both = session | session
    assert isinstance(both, Session) and both.items == ["a", "b", "a", "b"]
    assert copy.copy(session).items == ["a", "b"]
    elsewhere = resume_guard(deps=no_deps)(lambda checkpoint: Session(["c"]))(dropped)
    refused(elsewhere)
    refused(elsewhere | session)  # what comes out of an operator is handed back too
    assert RAN == []


def test_a_proxy_is_in_the_turn_only_while_each_operation_runs(clean) -> None:
    seen: list[bool] = []

    class Peek:
        def __iter__(self) -> Peek:
            return self

        def __next__(self) -> bool:
            seen.append(current_turn() is not None)
            if len(seen) > 2:
                raise StopIteration
            return True

    for _ in resume_guard(deps=no_deps)(lambda checkpoint: Peek())(clean):
        assert current_turn() is None  # the consumer holds an item outside the turn
    assert seen == [True, True, True]


def test_work_of_a_resume_run_inside_another_turn_through_a_proxy_refuses_both(make_checkpoint) -> None:
    bucket_dropped = make_checkpoint("native", manifest=BUCKET)
    token_dropped = make_checkpoint("native", manifest=[("token", "tok-1", "fetch_token")])

    class Run:
        def __call__(self, tool: Callable[[], str]) -> str:
            return tool()

    later = resume_guard(deps=no_deps)(lambda checkpoint: Run())(bucket_dropped)
    again = resume_guard(deps=no_deps)(lambda checkpoint: later)(token_dropped)  # a proxy handed back by another turn
    refused(lambda: again(provision_bucket))
    refused(lambda: again(fetch_token))
    assert later(fetch_token) == "tok-NEW"


def test_in_turn_binds_work_inside_a_container(dropped, clean) -> None:
    """Work inside a container is not looked for (README); ``in_turn`` binds each piece to the turn."""

    @resume_guard(deps=no_deps)
    def unbound(checkpoint: Any) -> list[Any]:
        return [continue_agent(checkpoint)]

    @resume_guard(deps=no_deps)
    def bound(checkpoint: Any) -> dict[str, Any]:
        agent = in_turn(CallableAgent())
        assert in_turn(agent) is agent  # bound to this turn already: not wrapped twice
        return {"a": in_turn(continue_agent(checkpoint)), "b": agent, "n": in_turn(3)}

    async def gather(coroutines: Any) -> list[Any]:
        return await asyncio.gather(*coroutines)

    assert asyncio.run(gather(unbound(dropped))) == ["bkt-NEW"]  # the documented limit
    RAN.clear()
    work = bound(dropped)
    refused(lambda: asyncio.run(gather([work["a"]])))
    refused(work["b"])
    assert work["n"] == 3 and RAN == []
    work = bound(clean)
    assert asyncio.run(gather([work["a"]])) == ["bkt-NEW"] and work["b"]() == "bkt-NEW"
    # A proxy pickles and copies as its object (which then runs outside any turn, like any copy).
    restored = pickle.loads(pickle.dumps(work["b"]))
    assert type(restored) is CallableAgent and restored.steps == 1
    with pytest.raises(RuntimeError, match="call it in the body of a resume_guard-ed resume"):
        in_turn(CallableAgent())


# Layers of work for the property test: each makes an object whose own work calls ``inner()``
# (the next layer's maker, or the tool), and says how a caller drives it to what it produces.


async def _drive_call(work: Any) -> Any:
    return work()


async def _drive_next(work: Any) -> Any:
    return next(work)


async def _drive_await(work: Any) -> Any:
    return await work


async def _drive_anext(work: Any) -> Any:
    return await anext(work)


class _Layer:
    def __init__(self, inner: Callable[[], Any]) -> None:
        self.inner = inner


class _Call(_Layer):
    def __call__(self) -> Any:
        return self.inner()


class _Next(_Layer):
    def __iter__(self) -> _Next:
        return self

    def __next__(self) -> Any:
        return self.inner()


class _Await(_Layer):
    def __await__(self) -> Any:
        yield
        return self.inner()


class _ANext(_Layer):
    def __aiter__(self) -> _ANext:
        return self

    async def __anext__(self) -> Any:
        await asyncio.sleep(0)
        return self.inner()


def _closure(inner: Callable[[], Any]) -> Any:
    return lambda: inner()


async def _coroutine(inner: Callable[[], Any]) -> Any:
    await asyncio.sleep(0)
    return inner()


async def _agen(inner: Callable[[], Any]) -> Any:
    yield inner()


LAYERS: dict[str, tuple[Callable[[Callable[[], Any]], Any], Callable[[Any], Any]]] = {
    "callable instance": (_Call, _drive_call),
    "function": (_closure, _drive_call),
    "methodcaller": (lambda inner: functools.partial(operator.methodcaller("__call__"), _Call(inner)), _drive_call),
    "lru_cache": (lambda inner: functools.lru_cache(maxsize=None)(lambda: inner()), _drive_call),
    "map": (lambda inner: map(lambda _: inner(), [0]), _drive_next),  # noqa: C417 - a map object, not a generator
    "iterator": (_Next, _drive_next),
    "generator": (lambda inner: (inner() for _ in [0]), _drive_next),
    "awaitable": (_Await, _drive_await),
    "coroutine": (_coroutine, _drive_await),
    "async iterator": (_ANext, _drive_anext),
    "async generator": (_agen, _drive_anext),
}


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(layers=st.lists(st.sampled_from(sorted(LAYERS)), min_size=1, max_size=4), sync=st.booleans())
def test_any_nesting_of_work_runs_in_the_turn(layers, sync, dropped, clean) -> None:
    """Work that hands back work, to any depth and in any order of kinds: the tool at the bottom is refused."""

    def build(depth: int) -> Any:
        if depth == len(layers):
            return provision_bucket()
        make, _ = LAYERS[layers[depth]]
        return make(lambda: build(depth + 1))

    if sync:
        resume = resume_guard(deps=no_deps)(lambda checkpoint: build(0))
    else:

        @resume_guard(deps=no_deps)
        async def resume(checkpoint: Any) -> Any:
            return build(0)

    async def main(checkpoint: Any) -> Any:
        work = resume(checkpoint)
        if not sync:
            work = await work
        for name in layers:
            work = await LAYERS[name][1](work)
        assert current_turn() is None
        return work

    RAN.clear()
    refused(lambda: asyncio.run(main(dropped)))
    assert RAN == []
    assert asyncio.run(main(clean)) == "bkt-NEW"


def test_work_of_one_turn_run_inside_another_refuses_both_turns_drops(make_checkpoint, clean) -> None:
    """A closure from a resume whose summary dropped the bucket, called in a turn that dropped the token."""
    bucket_dropped = make_checkpoint("native", manifest=BUCKET)
    token_dropped = make_checkpoint("native", manifest=[("token", "tok-1", "fetch_token")])
    later = resume_guard(deps=no_deps)(lambda checkpoint: lambda tool: tool())(bucket_dropped)
    inside = resume_guard(deps=no_deps)(lambda checkpoint, tool: later(tool))
    refused(lambda: inside(token_dropped, provision_bucket))
    refused(lambda: inside(token_dropped, fetch_token))
    refused(lambda: later(provision_bucket))
    assert later(fetch_token) == "tok-NEW"  # outside the other turn, only its own drops
    assert inside(clean, fetch_token) == "tok-NEW"


# -- B3: nesting adds drops ---------------------------------------------------------------


def test_a_nested_resume_on_a_clean_checkpoint_keeps_the_outer_drops(dropped, clean) -> None:
    @resume_guard(deps=no_deps)
    def step(checkpoint: Any) -> str:
        return provision_bucket()

    @resume_guard(deps=no_deps)
    def resume(checkpoint: Any) -> str:
        return step(clean)

    err = refused(lambda: resume(dropped))
    assert err.missing_ref == "bucket"
    refused(lambda: step(dropped))
    assert step(clean) == "bkt-NEW"  # on its own, the clean checkpoint refuses nothing


def test_a_resume_nested_in_a_guarded_tool_keeps_the_outer_drops(dropped, clean) -> None:
    @resume_guard(deps=no_deps)
    def step(checkpoint: Any) -> str:
        return provision_bucket()

    @tool_guard
    def run_subagent() -> str:
        return step(clean)

    refused(lambda: resume_guard(deps=no_deps)(lambda checkpoint: run_subagent())(dropped))
    assert RAN == []


def test_async_nesting_keeps_the_outer_drops(dropped, clean) -> None:
    @resume_guard(deps=no_deps)
    async def step(checkpoint: Any) -> str:
        return await provision_bucket_async()

    @resume_guard(deps=no_deps)
    async def resume(checkpoint: Any) -> str:
        return await asyncio.create_task(step(clean))

    refused(lambda: asyncio.run(resume(dropped)))


def test_acceptances_stay_with_the_turn_they_were_made_in(make_checkpoint) -> None:
    """The rule (guard/turn.py): outer acceptances reach inner turns; inner ones do not come back out."""
    outer_cp = make_checkpoint("native", turn=1, manifest=BUCKET)
    inner_cp = make_checkpoint("native", turn=2, manifest=[("token", "tok-1", "fetch_token")])
    log: list[Any] = []

    @resume_guard(deps=no_deps)
    def inner(checkpoint: Any, accept: list[str]) -> Any:
        turn = current_turn()
        assert turn.checkpoint is inner_cp and turn.outers[0].checkpoint is outer_cp
        log.append(sorted(e.ref for e in turn.dropped_refs()))
        if accept:
            accept_divergence(accept, reason="re-provisioned on purpose")
        for tool in (provision_bucket, fetch_token):
            try:
                log.append(tool())
            except SummaryReconciliationError as err:
                log.append(f"refused {err.missing_ref}")
        return [r.ref for r in turn.divergences]

    @resume_guard(deps=no_deps)
    def outer(checkpoint: Any) -> Any:
        log.append(inner(inner_cp, ["bucket", "token"]))  # accepted inside the inner turn only
        try:
            provision_bucket()
        except SummaryReconciliationError:
            log.append("outer still refuses bucket")
        accept_divergence("bucket", reason="the controller re-provisions it")
        log.append(inner(inner_cp, []))  # the outer acceptance covers its drop in the inner turn
        return [r.ref for r in current_turn().divergences]

    assert outer(outer_cp) == ["bucket"]
    assert log == [
        ["bucket", "bucket-a", "token"],
        "bkt-NEW",
        "tok-NEW",
        ["bucket", "token"],
        "outer still refuses bucket",
        ["bucket-a", "token"],  # bucket accepted in the outer turn: no longer refused there
        "bkt-NEW",
        "refused token",  # the inner turn's own drop: the outer acceptance does not reach it
        [],
    ]


def test_nesting_a_turn_in_itself_refuses_each_drop_once(dropped) -> None:
    @resume_guard(deps=no_deps)
    def again(checkpoint: Any, depth: int) -> Any:
        if depth:
            return again(checkpoint, depth - 1)
        return [(e.ref, e.tool) for e in current_turn().dropped_refs()]

    assert again(dropped, 3) == [(r, t) for r, _, t in BUCKET]


# -- B8: the manifest is read when the turn starts -----------------------------------------


def _mapping(cp: Any) -> None:
    cp["summary"] = {"generation": 4, "partial": False, "verbatim_refs": ["h1"]}


MUTATIONS: dict[str, tuple[str, Callable[[Any], None]]] = {
    "mapping: summary replaced": ("mapping", _mapping),
    "mapping: manifest cleared": ("mapping", lambda cp: cp["summary"]["drop_manifest"].clear()),
    "mapping: manifest key deleted": ("mapping", lambda cp: cp["summary"].pop("drop_manifest")),
    "mapping: entry's tool changed": ("mapping", lambda cp: [e.update(tool=None) for e in cp["summary"]["drop_manifest"]]),
    "attributes: summary replaced": (
        "attributes",
        lambda cp: setattr(cp, "summary", SimpleNamespace(generation=4, partial=False, verbatim_refs={"h1"})),
    ),
    "attributes: manifest cleared": ("attributes", lambda cp: cp.summary.drop_manifest.clear()),
    "attributes: manifest replaced": ("attributes", lambda cp: setattr(cp.summary, "drop_manifest", [])),
}


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_changing_the_checkpoint_after_the_turn_starts_changes_nothing(name, make_checkpoint) -> None:
    shape, mutate = MUTATIONS[name]
    if shape == "attributes":
        # Entries as plain objects too: the snapshot freezes what they say now.
        cp = make_checkpoint(shape)
        cp.summary.drop_manifest = [SimpleNamespace(ref="bucket", last_known="bkt-7f3a", tool="provision_bucket")]
    else:
        cp = make_checkpoint(shape, manifest=BUCKET[:1])

    @resume_guard(deps=no_deps)
    def resume(checkpoint: Any) -> str:
        mutate(checkpoint)
        return provision_bucket()

    refused(lambda: resume(cp))
    assert RAN == []


def test_a_mutated_entry_object_changes_nothing(make_checkpoint) -> None:
    entry = SimpleNamespace(ref="bucket", last_known="bkt-7f3a", tool="provision_bucket")
    cp = make_checkpoint("attributes")
    cp.summary.drop_manifest = [entry]

    @resume_guard(deps=no_deps)
    def resume(checkpoint: Any) -> str:
        entry.tool = "something_else"
        return provision_bucket()

    refused(lambda: resume(cp))


TOOLS = {name: tool_guard(name=name)(lambda name=name: name) for name in ("t0", "t1", "t2", "t3")}
entries = st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.sampled_from([*TOOLS, None])), max_size=5)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(manifest=entries, mutation=st.sampled_from(["summary", "clear", "tools", "append", "none"]), shape=st.sampled_from(["mapping", "attributes"]))
def test_what_is_refused_is_what_the_manifest_said_at_the_start(make_checkpoint, manifest, mutation, shape) -> None:
    cp = make_checkpoint(shape, manifest=[(ref, "old", tool) for ref, tool in manifest])

    def mutate() -> None:
        summary = cp["summary"] if shape == "mapping" else cp.summary
        items = summary["drop_manifest"] if shape == "mapping" else summary.drop_manifest
        if mutation == "summary":
            if shape == "mapping":
                cp["summary"] = {"generation": 3, "verbatim_refs": [], "drop_manifest": []}
            else:
                cp.summary = SimpleNamespace(generation=3, partial=False, verbatim_refs=set(), drop_manifest=[])
        elif mutation == "clear":
            items.clear()
        elif mutation == "tools" and shape == "mapping":
            for item in items:
                item["tool"] = "t0"
        elif mutation == "append":
            items.append({"ref": "z", "tool": "t3"} if shape == "mapping" else SimpleNamespace(ref="z", last_known=None, tool="t3"))

    @resume_guard(deps=no_deps)
    def resume(checkpoint: Any) -> set[str]:
        mutate()
        out = set()
        for name, tool in TOOLS.items():
            try:
                tool()
            except SummaryReconciliationError:
                out.add(name)
        return out

    assert resume(cp) == {tool for _, tool in manifest if tool}


@pytest.mark.parametrize("shape", ["mapping", "attributes"])
@pytest.mark.parametrize(
    ("manifest", "shown"),
    [({"bucket": {"tool": "provision_bucket"}}, "got a mapping (keys ['bucket'])"), ("bucket", "got a str")],
    ids=["dict", "str"],
)
def test_a_manifest_that_is_not_a_list_fails_closed_naming_the_field(shape, manifest, shown, make_checkpoint) -> None:
    cp = make_checkpoint(shape)
    field = "checkpoint['summary']['drop_manifest']" if shape == "mapping" else "checkpoint.summary.drop_manifest"
    if shape == "mapping":
        cp["summary"]["drop_manifest"] = manifest
    else:
        cp.summary.drop_manifest = manifest

    @resume_guard(deps=no_deps)
    def resume(checkpoint: Any) -> str:
        return provision_bucket()

    with pytest.raises(SummaryReconciliationError) as info:
        resume(cp)
    assert info.value.kind is ReconciliationKind.NO_SUMMARY
    assert f"drop manifest could not be read by adapter '{shape}': TypeError: {field}: " in info.value.reason
    assert shown in info.value.reason
    assert RAN == []


# -- B9: parameters named like builtins ------------------------------------------------------


def template_builtins() -> list[str]:
    """Every builtin the compiled wrapper's template uses, bound or (if someone adds one) bare."""
    tokens = tokenize.generate_tokens(io.StringIO(resume_module._FAST_TEMPLATE).readline)
    names = {t.string for t in tokens if t.type == tokenize.NAME}  # code only: no comments, no strings
    bound = {n[len("_sg_"):] for n in names if n.startswith("_sg_")}
    used = {n for n in names | bound if hasattr(builtins, n) and not keyword.iskeyword(n) and not n.startswith("_")}
    return sorted(used)


TEMPLATE_BUILTINS = template_builtins()


def test_the_template_names_no_builtin_directly() -> None:
    assert {"list", "tuple", "set", "frozenset", "Exception"} <= set(TEMPLATE_BUILTINS)
    assert set(TEMPLATE_BUILTINS) <= set(resume_module._TEMPLATE_BUILTINS)

    @resume_guard(deps="deps")
    def resume(checkpoint: Any, deps: Any) -> None:
        pass

    assert resume.__code__.co_filename.startswith("<summaryguard resume_guard")  # the compiled wrapper
    globals_read = [i.argval for i in dis.get_instructions(resume) if i.opname in ("LOAD_GLOBAL", "LOAD_NAME")]
    assert globals_read == []


def _resume_with_parameter(name: str) -> Any:
    """A guarded resume with a parameter called ``name`` (its value is returned; ``tool`` is called if given)."""
    scope: dict[str, Any] = {}
    source = f"def resume(checkpoint, deps, {name}=None, tool=None):\n    return tool() if tool else ('resumed', {name})"
    exec(source, scope)  # noqa: S102 - a function whose parameter names are the test's input
    guarded = resume_guard(deps="deps")(scope["resume"])
    assert guarded.__code__.co_filename.startswith("<summaryguard resume_guard"), "expected the compiled wrapper"
    return guarded


def _check_parameter_named(name: str, make_checkpoint: Callable[..., Any]) -> None:
    resume = _resume_with_parameter(name)
    for shape in ("native", "attributes", "mapping"):
        good = make_checkpoint(shape, refs=("bucket",))
        assert resume(good, ["bucket"]) == ("resumed", None)
        assert resume(good, ["bucket"], "given") == ("resumed", "given")
        with pytest.raises(SummaryReconciliationError) as info:
            resume(make_checkpoint(shape, refs=("vm",)), ["bucket"])
        assert info.value.kind is ReconciliationKind.MISSING_DEPENDENCY
        # The turn still refuses a dropped reference.
        refused(lambda: resume(make_checkpoint(shape, refs=("bucket",), manifest=BUCKET), ["bucket"], tool=provision_bucket))
    # Refs held as one string never cover a dependency by substring (attribute and mapping shapes).
    attrs = make_checkpoint("attributes")
    attrs.summary.verbatim_refs = "no bucket here"
    mapping = make_checkpoint("mapping")
    mapping["summary"]["verbatim_refs"] = "no bucket here"
    for cp in (attrs, mapping):
        with pytest.raises(SummaryReconciliationError):
            resume(cp, ["bucket"])
    # Dependencies given as a string or a tuple still take their usual paths.
    with pytest.raises(TypeError, match="not a single str"):
        resume(make_checkpoint("native", refs=("bucket",)), "bucket")
    assert resume(make_checkpoint("native", refs=("bucket",)), ("bucket",)) == ("resumed", None)
    # An unreadable checkpoint is a reconciliation error, not a TypeError from `except Exception`.
    unreadable = SimpleNamespace(turn=7, summary_generation=3, summary=SimpleNamespace())
    with pytest.raises(SummaryReconciliationError) as info:
        resume(unreadable, ["bucket"])
    assert "could not be read" in info.value.reason


@pytest.mark.parametrize("name", TEMPLATE_BUILTINS)
def test_a_parameter_named_like_a_builtin_the_template_uses(name, make_checkpoint) -> None:
    _check_parameter_named(name, make_checkpoint)


OTHER_BUILTINS = sorted(
    n for n in dir(builtins) if n.isidentifier() and not keyword.iskeyword(n) and not n.startswith("_")
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(OTHER_BUILTINS))
def test_a_parameter_named_like_any_builtin(name, make_checkpoint) -> None:
    _check_parameter_named(name, make_checkpoint)
