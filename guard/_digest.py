"""Seals: the digest a checkpoint file (and the store's ledger) carries.

Two kinds, one interface:

* :class:`PlainSeal` (the default): ``sha256:<hex>`` of the canonical body. It
  catches *accidental* damage (a torn write, a flipped bit, a truncated copy).
  It is not authentication: anyone who can write the folder can edit a file
  and compute the digest again.
* :class:`KeyedSeal`: ``hmac-sha256:<hex>``, an HMAC-SHA-256 with a key the
  writer holds, over the same canonical body (which includes the turn). A
  party who can write the folder but does not hold the key cannot alter a
  checkpoint and seal it again, nor forge the store's ledger.

The keyed seal hashes a domain tag before the data, so a checkpoint's MAC can
never be replayed as a ledger's MAC or the other way round.

The key comes from the caller (``CheckpointStore(folder, key=...)``) or, when
the caller passes none, from the environment variable
``SUMMARYGUARD_CHECKPOINT_KEY`` (its UTF-8 bytes; an empty value counts as
unset). An explicit key always wins over the environment, so a test or a tool
can open a store with a key of its own whatever the process inherited.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Iterable

__all__ = ["KEY_ENV", "MIN_KEY_BYTES", "KeyedSeal", "PlainSeal", "Seal", "seal_for"]

#: The environment variable a store reads its key from when given none.
KEY_ENV = "SUMMARYGUARD_CHECKPOINT_KEY"
#: A shorter key is refused: an HMAC is only as strong as its key.
MIN_KEY_BYTES = 16

PLAIN = "sha256"
KEYED = "hmac-sha256"


class Seal:
    """Computes and names the digest of some bytes; subclasses pick the function."""

    #: The scheme written before the colon: ``sha256`` or ``hmac-sha256``.
    scheme: str
    keyed: bool

    def hexdigest(self, domain: bytes, parts: Iterable[bytes | memoryview]) -> str:
        raise NotImplementedError

    def seal(self, domain: bytes, parts: Iterable[bytes | memoryview]) -> str:
        """``<scheme>:<hex>`` of ``parts`` joined (no copy is made of them)."""
        return f"{self.scheme}:{self.hexdigest(domain, parts)}"

    def matches(self, recorded: str, domain: bytes, parts: Iterable[bytes | memoryview]) -> bool:
        """Whether ``recorded`` is this seal of ``parts`` (in constant time)."""
        return hmac.compare_digest(recorded, self.seal(domain, parts))


class PlainSeal(Seal):
    """SHA-256: detects accidental corruption only (see the module docstring)."""

    scheme = PLAIN
    keyed = False

    def hexdigest(self, domain: bytes, parts: Iterable[bytes | memoryview]) -> str:
        # No domain tag: the checkpoint digest predates them (files written by
        # summaryguard 0.1.0 keep theirs), and a plain digest protects nothing
        # that a tag would separate.
        h = hashlib.sha256()
        for part in parts:
            h.update(part)
        return h.hexdigest()


class KeyedSeal(Seal):
    """HMAC-SHA-256 with the writer's key."""

    scheme = KEYED
    keyed = True

    def __init__(self, key: bytes) -> None:
        self._key = key

    def hexdigest(self, domain: bytes, parts: Iterable[bytes | memoryview]) -> str:
        h = hmac.new(self._key, b"summaryguard/" + domain + b"\x00", hashlib.sha256)
        for part in parts:
            h.update(part)
        return h.hexdigest()

    def __repr__(self) -> str:  # never print the key
        return "KeyedSeal(<key>)"


def seal_for(key: bytes | str | None) -> Seal:
    """The seal for ``key`` (given, else from :data:`KEY_ENV`, else plain)."""
    if key is None:
        key = os.environ.get(KEY_ENV) or None
        origin = f"the environment variable {KEY_ENV}"
    else:
        origin = "key="
    if key is None:
        return PlainSeal()
    if isinstance(key, str):
        key = key.encode("utf-8")
    if not isinstance(key, (bytes, bytearray)):
        raise TypeError(f"a checkpoint key is bytes or str, got {type(key).__name__} (from {origin})")
    if len(key) < MIN_KEY_BYTES:
        raise ValueError(
            f"a checkpoint key must be at least {MIN_KEY_BYTES} bytes, got {len(key)} (from {origin}); "
            "make one with: python -c 'import secrets; print(secrets.token_hex(32))'"
        )
    return KeyedSeal(bytes(key))
