"""The store's ledger: the newest turn a folder has held, and who may write it.

A folder of checkpoint files cannot say by itself that its newest file was
deleted, or that an older copy was restored over a newer one: the ledger
remembers. It records

* ``epoch``: the fencing token. ``store.writer()`` (a resumer claiming the
  thread) increments it; a write from an earlier epoch is stale and refused;
* ``turn``: the high-water mark, the highest turn written to the folder;
* ``digests``: tags (32 hex digits of the seal) of the checkpoint written at
  that turn, so that an older version of the same turn is refused too.

The ledger is the *name* of an empty file, sealed like a checkpoint (an
HMAC with the store's key when it has one):
``.summaryguard-ledger.<epoch>.<turn>.<digests>.<seal>``. A name changes by
``rename``, which is atomic and needs no data to reach the disk: no torn
ledger exists, the listing that finds the checkpoint files finds the ledger
too, and a rename of the exact name a writer last saw is a compare-and-set.

A writer renames the ledger *after* the checkpoint file is durable, so a
crash in between leaves the ledger behind the files, never ahead: a file
newer than the ledger is accepted, one older than it is a rollback.
"""

from __future__ import annotations

import hmac
import re
from dataclasses import dataclass

from ._digest import Seal

__all__ = ["PREFIX", "Ledger", "parse", "tag_of"]

PREFIX = ".summaryguard-ledger."
_DOMAIN = b"ledger"
_MAX_DIGESTS = 3
_NAME = re.compile(
    r"\.summaryguard-ledger\.([0-9]{1,12})\.([0-9]{12}|none)\.([0-9a-f]{32}(?:\+[0-9a-f]{32}){0,2}|none)\.([0-9a-f]{64})",
    re.ASCII,
)


@dataclass(frozen=True)
class Ledger:
    epoch: int
    turn: int | None
    digests: tuple[str, ...] = ()

    def fields(self) -> str:
        turn = "none" if self.turn is None else f"{self.turn:012d}"
        digests = "+".join(self.digests[-_MAX_DIGESTS:]) or "none"
        return f"{self.epoch}.{turn}.{digests}"

    def name(self, seal: Seal) -> str:
        fields = self.fields()
        return f"{PREFIX}{fields}.{seal.hexdigest(_DOMAIN, [fields.encode('ascii')])}"

    def accepts(self, tag: str) -> bool:
        """Whether a checkpoint sealed with ``tag`` may be the one at :attr:`turn`."""
        return not self.digests or tag in self.digests


def parse(name: str, seal: Seal) -> Ledger | None:
    """The ledger a file name records; None when it is not one, or its seal does not verify."""
    match = _NAME.fullmatch(name)
    if match is None:
        return None
    epoch, turn, digests, recorded = match.groups()
    ledger = Ledger(
        int(epoch),
        None if turn == "none" else int(turn),
        () if digests == "none" else tuple(digests.split("+")),
    )
    if ledger.fields() != f"{epoch}.{turn}.{digests}":  # not in canonical form (leading zeros)
        return None
    return ledger if hmac.compare_digest(recorded, seal.hexdigest(_DOMAIN, [ledger.fields().encode("ascii")])) else None


def tag_of(recorded_seal: str) -> str:
    """The ledger's tag of a checkpoint's seal (``sha256:<hex>`` or ``hmac-sha256:<hex>``)."""
    return recorded_seal.rpartition(":")[2][:32]
