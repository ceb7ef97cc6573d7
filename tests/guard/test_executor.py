"""ContextThreadPoolExecutor and run_in_executor: a pool made at start-up still serves the resumed turn.

Each idiom of the README's table is checked here with the real guards: inside
a resumed turn, a tool that produced a dropped reference must be refused
wherever the turn's context goes, and runs (outside the turn) where it does not.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import queue
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from summaryguard.guard import (
    Checkpoint,
    DroppedRef,
    ReconciliationKind,
    Summary,
    SummaryReconciliationError,
    accept_divergence,
    current_turn,
    resume_guard,
    tool_guard,
)
from summaryguard.guard.executor import ContextThreadPoolExecutor, run_in_executor

CALLS: list[str] = []


@tool_guard
def provision_bucket(label: str = "") -> str:
    CALLS.append(label)
    return "bkt-new"


@pytest.fixture(autouse=True)
def _clear_calls() -> Iterator[None]:
    CALLS.clear()
    yield


@pytest.fixture
def checkpoint() -> Checkpoint:
    """A checkpoint whose summary dropped the bucket that provision_bucket produced."""
    summary = Summary(generation=2, drop_manifest=(DroppedRef("bucket", "bkt-7f3a", tool="provision_bucket"),))
    return Checkpoint(turn=9, summary=summary, summary_generation=2)


@resume_guard
def resume(checkpoint: Any, body: Callable[[], Any]) -> Any:
    return body()


@resume_guard
async def resume_async(checkpoint: Any, body: Callable[[], Any]) -> Any:
    return await body()


def _refused(error: BaseException) -> bool:
    return isinstance(error, SummaryReconciliationError) and error.kind is ReconciliationKind.REDERIVATION


# -- ContextThreadPoolExecutor ---------------------------------------------------------------


def test_a_pool_made_before_the_turn_refuses_in_the_submitters_future(checkpoint: Checkpoint) -> None:
    with ContextThreadPoolExecutor(max_workers=2) as pool:  # made at agent start-up
        pool.submit(lambda: None).result()  # its workers exist before the turn starts

        def body() -> concurrent.futures.Future[str]:
            return pool.submit(provision_bucket, "in-turn")

        future = resume(checkpoint, body)
        with pytest.raises(SummaryReconciliationError) as caught:
            future.result(10)
        assert caught.value.kind is ReconciliationKind.REDERIVATION
        assert (caught.value.missing_ref, caught.value.checkpoint_turn) == ("bucket", 9)
        assert pool.submit(provision_bucket, "after").result(10) == "bkt-new"  # outside the turn it runs
    assert CALLS == ["after"]


def test_map_runs_every_call_in_the_turn_that_called_map(checkpoint: Checkpoint) -> None:
    with ContextThreadPoolExecutor(max_workers=3) as pool:

        def body() -> list[Any]:
            seen = list(pool.map(lambda i: current_turn() is not None, range(6)))
            with pytest.raises(SummaryReconciliationError):
                list(pool.map(provision_bucket, ["a", "b"]))
            return seen

        assert resume(checkpoint, body) == [True] * 6
        assert list(pool.map(provision_bucket, ["x"], timeout=10)) == ["bkt-new"]
    assert CALLS == ["x"]


def test_an_acceptance_in_the_turn_lets_the_pooled_tool_through(checkpoint: Checkpoint) -> None:
    with ContextThreadPoolExecutor(max_workers=1) as pool:

        def body() -> str:
            accept_divergence("bucket", reason="operator approved", accepted_by="oncall")
            return pool.submit(provision_bucket, "accepted").result(10)

        assert resume(checkpoint, body) == "bkt-new"
    assert CALLS == ["accepted"]


def test_as_the_loops_default_executor_run_in_executor_none_carries_the_turn(checkpoint: Checkpoint) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        pool = ContextThreadPoolExecutor(max_workers=2)
        loop.set_default_executor(pool)

        async def body() -> None:
            with pytest.raises(SummaryReconciliationError) as caught:
                await loop.run_in_executor(None, provision_bucket, "default")
            assert _refused(caught.value)

        await resume_async(checkpoint, body)
        assert await loop.run_in_executor(None, provision_bucket, "outside") == "bkt-new"

    asyncio.run(main())
    assert CALLS == ["outside"]


# -- run_in_executor -------------------------------------------------------------------------


@pytest.mark.parametrize("pool_kind", ["plain", "context", "default"])
def test_run_in_executor_carries_the_turn_into_any_thread_pool(checkpoint: Checkpoint, pool_kind: str) -> None:
    async def main() -> None:
        pool: concurrent.futures.ThreadPoolExecutor | None = {
            "plain": concurrent.futures.ThreadPoolExecutor(1),
            "context": ContextThreadPoolExecutor(1),
            "default": None,
        }[pool_kind]

        async def body() -> None:
            with pytest.raises(SummaryReconciliationError) as caught:
                await run_in_executor(pool, provision_bucket, label="kw")
            assert _refused(caught.value)
            assert await run_in_executor(pool, current_turn) is not None

        await resume_async(checkpoint, body)
        assert await run_in_executor(pool, provision_bucket, "outside") == "bkt-new"
        if pool is not None:
            pool.shutdown()

    asyncio.run(main())
    assert CALLS == ["outside"]


# -- the idioms that do not carry the turn (the README's table) ------------------------------


def test_a_plain_pool_made_before_the_turn_runs_the_tool_outside_it(checkpoint: Checkpoint) -> None:
    """The documented limitation: submit/map of a plain ThreadPoolExecutor start in the worker's context."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:

        def body() -> list[str]:
            return [pool.submit(provision_bucket, "submit").result(10), *pool.map(provision_bucket, ["map"])]

        assert resume(checkpoint, body) == ["bkt-new", "bkt-new"]
    assert CALLS == ["submit", "map"]


def test_loop_run_in_executor_with_the_stock_default_pool_runs_outside_the_turn(checkpoint: Checkpoint) -> None:
    async def main() -> list[str]:
        loop = asyncio.get_running_loop()

        async def body() -> list[str]:
            outside = await loop.run_in_executor(None, provision_bucket, "run_in_executor")
            with pytest.raises(SummaryReconciliationError):
                await asyncio.to_thread(provision_bucket, "to_thread")  # copies the context: refused
            return [outside]

        return await resume_async(checkpoint, body)

    assert asyncio.run(main()) == ["bkt-new"]
    assert CALLS == ["run_in_executor"]


def test_threads_and_queue_workers_started_before_the_turn_run_outside_it(checkpoint: Checkpoint) -> None:
    jobs: queue.Queue[Any] = queue.Queue()
    results: queue.Queue[Any] = queue.Queue()

    def worker() -> None:  # started at agent start-up, fed through a queue
        while (job := jobs.get()) is not None:
            results.put(job())

    feeder = threading.Thread(target=worker)
    feeder.start()

    def body() -> list[str]:
        jobs.put(lambda: provision_bucket("queued"))
        started: list[str] = []
        thread = threading.Thread(target=lambda: started.append(provision_bucket("thread")))
        thread.start()
        thread.join(10)
        with pytest.raises(SummaryReconciliationError):
            contextvars.copy_context().run(provision_bucket, "copied")  # copy_context().run carries it
        return [results.get(timeout=10), *started]

    try:
        assert resume(checkpoint, body) == ["bkt-new", "bkt-new"]
    finally:
        jobs.put(None)
        feeder.join(10)
    assert sorted(CALLS) == ["queued", "thread"]


def test_a_sibling_task_created_before_the_turn_runs_outside_it(checkpoint: Checkpoint) -> None:
    async def main() -> None:
        go = asyncio.Event()
        done: list[str] = []

        async def sibling() -> None:
            await go.wait()
            done.append(provision_bucket("sibling"))

        task = asyncio.create_task(sibling())  # before the turn: its context has no turn

        async def child() -> str:
            return provision_bucket("child")

        async def body() -> None:
            go.set()
            await task  # the sibling runs its tool while this turn is on: outside it all the same
            await asyncio.create_task(child())

        with pytest.raises(SummaryReconciliationError):  # a task created inside the turn carries it
            await resume_async(checkpoint, body)
        await task
        assert done == ["bkt-new"]

    asyncio.run(main())
    assert CALLS == ["sibling"]


def test_importing_the_runtime_does_not_import_concurrent_futures() -> None:
    """Why the executor is a submodule: concurrent.futures (and logging) would cost every importer."""
    code = "import sys, summaryguard.guard; print('concurrent.futures' in sys.modules, 'logging' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["False", "False"]
