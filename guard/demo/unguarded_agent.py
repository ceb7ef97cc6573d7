"""The demo's agent, written the way many agents resume today: trustingly.

It provisions a bucket (a tool returns a handle), writes a record into it on
every turn, compacts its history into a lossy summary, checkpoints, and after
a crash resumes from the latest checkpoint. Its resume path looks fine and is
wrong twice over: it continues from the summary without checking that the
summary still holds what the next turn needs, and when the handle is missing
it calls the tool again, which hands out a *new* bucket. ``summaryguard check``
flags both; ``summaryguard demo`` replays what they cost.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from summaryguard.guard import Checkpoint, CheckpointStore, Compactor, ProducedRef, Turn

from .world import World


def provision_bucket(world: World) -> str:
    """Tool: ask the outside world for a new bucket; returns its handle."""
    return world.create_bucket()


def put_record(world: World, bucket: str, record: str) -> None:
    """Tool: write one record into a bucket."""
    world.write(bucket, record)


def salient_summary(previous: str, turns: Any) -> str:
    """A lossy summarizer: keeps what sounds important, drops identifiers."""
    words = [t.content.split(":", 1)[0] for t in turns]
    return (previous + " " if previous else "") + "progress: " + ", ".join(words)


class Agent:
    """Writes one record per turn into the bucket it provisioned."""

    def __init__(
        self,
        world: World,
        store: CheckpointStore,
        compactor: Compactor,
        provision: Callable[[World], str] = provision_bucket,
        put: Callable[[World, str, str], None] = put_record,
    ) -> None:
        self.world = world
        self.store = store
        self.compactor = compactor
        self.provision = provision
        self.put = put
        self.bucket: str | None = None
        self.lineage: list[tuple[int, str]] = []
        self.pending: list[Turn] = []

    def run_turn(self, turn: int) -> None:
        refs: tuple[ProducedRef, ...] = ()
        if self.bucket is None:
            self.bucket = self.provision(self.world)
            refs = (ProducedRef("bucket", self.bucket, tool="provision_bucket"),)
        self.put(self.world, self.bucket, f"record {turn}")
        self.lineage.append((turn, self.bucket))
        self.pending.append(Turn(turn, f"wrote record {turn}: into {self.bucket}", refs))
        self.world.tick()

    def compact_and_checkpoint(self, turn: int) -> Checkpoint:
        self.compactor.compact(self.pending)
        self.pending = []
        return self.store.checkpoint(self.compactor, turn, state={"records": turn})

    def resume(self, checkpoint: Checkpoint) -> str:
        """Continue after a crash from the latest checkpoint's summary."""
        context = checkpoint.resume_context()
        bucket = context["refs"].get("bucket")
        if bucket is None:
            # The summary lost the handle: just ask again. (This is the bug.)
            bucket = self.provision(self.world)
        self.bucket = bucket
        return bucket
