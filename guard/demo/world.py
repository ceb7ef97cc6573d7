"""A simulated outside world whose answers change over time.

It stands for any external system a tool talks to (a cloud API, a database, a
ticketing system): asking it the same question twice, at different times,
gives different answers. Deterministic, so the demo prints the same story on
every run.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class World:
    """Buckets the agent provisions and writes records into."""

    clock: int = 0
    next_bucket: int = 0x7F3A
    buckets: dict[str, list[str]] = field(default_factory=dict)

    def tick(self) -> None:
        """Time passes; other tenants provision buckets meanwhile."""
        self.clock += 1
        self.next_bucket += 0x11

    def create_bucket(self) -> str:
        handle = f"bkt-{self.next_bucket:04x}"
        self.next_bucket += 1
        self.buckets[handle] = []
        return handle

    def write(self, bucket: str, record: str) -> None:
        if bucket not in self.buckets:
            raise KeyError(f"no bucket {bucket}")
        self.buckets[bucket].append(record)
