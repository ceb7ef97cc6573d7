"""SG304 unserialized-checkpoint-write."""

from __future__ import annotations

from summaryguard.rules.engine.facts import Fact, UnserializedWrite
from summaryguard.rules.engine.base import Invalid, LintRule, Valid


class UnserializedCheckpointWrite(LintRule):
    """## What it does
    Flags a checkpoint write (``json.dump`` to a checkpoint file, a
    checkpoint store's ``save``, a LangGraph saver's ``put``, a configured
    write) that can run while compaction runs concurrently -- dispatched in
    the same class or module to ``threading.Thread``, ``asyncio.create_task``
    / ``ensure_future`` / ``TaskGroup.create_task`` / ``gather``,
    ``loop.run_in_executor`` / ``asyncio.to_thread``, a
    ``concurrent.futures`` executor, or a callback (``add_done_callback``,
    ``call_soon``) -- without holding a lock that the compaction also holds.

    ## Why is this bad?
    A checkpoint taken while compaction is writing the summary can capture a
    half-written summary, or a summary whose turn range does not match the
    messages saved beside it. Resuming from it continues from a context that
    never existed. A checkpoint must hold the complete summary of generation
    G or the complete one of G-1, never a partial one.

    ## Example
    ```python
    import json
    import threading

    class Agent:
        def compact(self):
            self.summary = self.llm.invoke(f"Summarize: {self.messages}")

        def on_turn(self):
            threading.Thread(target=self.compact).start()
            with open("checkpoint.json", "w") as fh:
                json.dump({"summary": self.summary, "messages": self.messages}, fh)
    ```

    ## Use instead
    Hold one lock (``threading.Lock``, ``asyncio.Lock``, ``filelock.FileLock``,
    ``summaryguard.guard.CompactionLock``) around both the compaction and the
    write:
    ```python
    import json
    import threading

    class Agent:
        def __init__(self):
            self._lock = threading.Lock()

        def compact(self):
            with self._lock:
                self.summary = self.llm.invoke(f"Summarize: {self.messages}")

        def on_turn(self):
            threading.Thread(target=self.compact).start()
            with self._lock:
                with open("checkpoint.json", "w") as fh:
                    json.dump({"summary": self.summary, "messages": self.messages}, fh)
    ```
    or use ``summaryguard.guard.Compactor`` with a ``CheckpointStore`` sharing
    its lock.

    A write is a checkpoint write by what it stores, too: a serializer call
    (``json.dump``, ``fh.write``, ``store.save``, ...) that stores a ``self``
    attribute the dispatched compaction assigns, or a value the dispatching
    function hands the compaction, whatever the functions around it are called.

    Across modules: a function that dispatches a compaction and returns
    without waiting for it (directly, or through a function that returns what
    such a call returns) leaves the compaction running for its callers. So
    does one that trims a window of messages, returns one slice of the list and
    hands another slice, as chat messages or under a summarization
    instruction, to work it does not wait for. A caller's checkpoint write
    after the call, or a call that stores a value computed from the window it
    returned, is reported at the write (see ``summaryguard.rules.engine.inflight``).

    ## Known problems
    Dispatch and writes are matched within one module, and across modules
    through the calls described above; a lock is matched by
    how it is spelled (``self._lock`` in one class, a module-level name, the
    same ``FileLock(path)``, any ``fcntl.flock``). Writes through
    ``summaryguard.guard.CheckpointStore`` are taken as serialized; that the
    store and the compactor really share a lock is not checked. Order is
    understood inside the dispatching function only (a write before the
    dispatch, or after a ``join()`` / ``result()`` / ``await``, is safe).
    """

    code = "SG304"
    name = "unserialized-checkpoint-write"

    VALID = [
        Valid(
            """
            import json
            import threading

            class Agent:
                def __init__(self, llm):
                    self.llm = llm
                    self.lock = threading.Lock()
                    self.messages = []
                    self.summary = ""

                def compact(self):
                    with self.lock:
                        self.summary = self.llm.invoke(f"Summarize: {self.messages}")

                def on_turn(self):
                    threading.Thread(target=self.compact).start()
                    with self.lock:
                        with open("checkpoint.json", "w") as fh:
                            json.dump({"summary": self.summary, "messages": self.messages}, fh)
            """
        ),
    ]
    INVALID = [
        Invalid(
            """
            import json
            import threading

            class Agent:
                def compact(self):
                    self.summary = self.llm.invoke(f"Summarize: {self.messages}")

                def on_turn(self):
                    threading.Thread(target=self.compact).start()
                    with open("checkpoint.json", "w") as fh:
                        json.dump({"summary": self.summary, "messages": self.messages}, fh)  # expect: SG304
            """
        ),
    ]

    FACT = UnserializedWrite

    def message(self, fact: Fact) -> str:
        assert isinstance(fact, UnserializedWrite)
        return (
            f"this checkpoint write can run while a compaction is still running (dispatched through {fact.detail}), "
            "and no lock is held by both: the checkpoint can capture a half-written summary; hold the same lock around "
            "the write and the compaction (threading.Lock, asyncio.Lock, a file lock, or "
            "summaryguard.guard.CompactionLock shared with the Compactor and CheckpointStore)"
        )
