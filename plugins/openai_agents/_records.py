"""The compaction record: what summaryguard writes before and after an Agents SDK compaction.

The SDK gives a compaction nothing to hold a stamp: ``responses.compact``
returns opaque (encrypted) items, and ``SQLiteSession`` replaces the history
with a ``clear`` and then an ``add`` in two transactions. So the stamp lives
beside the session, in a record of its own, written twice around each
compaction:

* **intent**, before the compaction touches the history: the generation about
  to be made and the digest of the history as it was (the last completed
  compaction stays in the record too);
* **done**, once the new items are stored: the generation, the digest of the
  compaction items (the summary, as opaque as it is) and the summary's stamp
  (kept references, drop manifest, parent generation).

A record left at *intent* whose session no longer holds the history it
describes is an unfinished compaction: a partial summary. Each write is
atomic and durable (temporary file, fsync, rename, folder fsync: the same
write the checkpoint store uses), one file per session id.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from summaryguard.guard._files import read_regular, write_atomic
from summaryguard.guard.errors import CheckpointFormatError
from summaryguard.guard.model import Summary, canonical_json, parse_json

__all__ = ["CompactionRecord", "Completed", "RecordFolder", "known_folders"]

FORMAT = 1
_MAX_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class Completed:
    """One finished compaction: its generation, the digest of its compaction items, its stamp."""

    generation: int
    summary_digest: str
    summary: Summary

    def to_dict(self) -> dict[str, Any]:
        return {"generation": self.generation, "summary_digest": self.summary_digest, "summary": self.summary.to_dict()}

    @classmethod
    def from_dict(cls, data: Any, where: str) -> Completed:
        if not isinstance(data, Mapping):
            raise CheckpointFormatError(where, "must be an object")
        generation, digest = data.get("generation"), data.get("summary_digest")
        if isinstance(generation, bool) or not isinstance(generation, int) or not isinstance(digest, str):
            raise CheckpointFormatError(where, "needs an int generation and a str summary_digest")
        return cls(generation, digest, Summary.from_dict(data.get("summary"), f"{where}.summary"))


@dataclass(frozen=True)
class CompactionRecord:
    """The record of one session: ``status`` is ``intent`` (a compaction under way) or ``done``.

    ``generation`` is the compaction the status is about; ``before`` the digest
    of the history an intent started from; ``completed`` the latest finished
    compaction (this one when done, the previous one during an intent).
    """

    session_id: str
    status: str
    generation: int
    before: str | None
    completed: Completed | None

    @property
    def finished(self) -> bool:
        return self.status == "done"

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "session_id": self.session_id,
            "status": self.status,
            "generation": self.generation,
            "before": self.before,
            "completed": self.completed.to_dict() if self.completed is not None else None,
        }

    @classmethod
    def from_dict(cls, data: Any, where: str) -> CompactionRecord:
        if not isinstance(data, Mapping) or data.get("format") != FORMAT:
            raise CheckpointFormatError(where, f"not a summaryguard compaction record (format {FORMAT})")
        status, generation = data.get("status"), data.get("generation")
        if status not in ("intent", "done"):
            raise CheckpointFormatError(f"{where}.status", f"must be 'intent' or 'done', got {status!r}")
        if isinstance(generation, bool) or not isinstance(generation, int):
            raise CheckpointFormatError(f"{where}.generation", "must be an int")
        completed = data.get("completed")
        return cls(
            session_id=str(data.get("session_id")),
            status=status,
            generation=generation,
            before=data.get("before") if isinstance(data.get("before"), str) else None,
            completed=None if completed is None else Completed.from_dict(completed, f"{where}.completed"),
        )


class RecordFolder:
    """The folder holding the compaction records of some sessions (one JSON file per session id)."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = os.path.abspath(os.fspath(folder))
        os.makedirs(self.folder, exist_ok=True)
        _remember(self)

    def path(self, session_id: str) -> str:
        # Hashed: a session id may hold any character, a file name may not.
        name = hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:32]
        return os.path.join(self.folder, f"compaction-{name}.json")

    def read(self, session_id: str) -> CompactionRecord | None:
        path = self.path(session_id)
        if not os.path.lexists(path):
            return None
        record = CompactionRecord.from_dict(parse_json(bytes(read_regular(path, _MAX_BYTES))), path)
        if record.session_id != session_id:
            raise CheckpointFormatError(path, f"records session {record.session_id!r}, not {session_id!r}")
        return record

    def write(self, record: CompactionRecord) -> None:
        write_atomic(self.folder, self.path(record.session_id), canonical_json(record.to_dict()))

    def remove(self, session_id: str) -> None:
        try:
            os.unlink(self.path(session_id))
        except FileNotFoundError:
            pass

    def find(self, summary_digest: str) -> CompactionRecord | None:
        """The record whose latest finished compaction wrote these compaction items (for a RunState with no session)."""
        for entry in sorted(os.listdir(self.folder)):
            if not (entry.startswith("compaction-") and entry.endswith(".json")):
                continue
            path = os.path.join(self.folder, entry)
            record = CompactionRecord.from_dict(parse_json(bytes(read_regular(path, _MAX_BYTES))), path)
            if record.completed is not None and record.completed.summary_digest == summary_digest:
                return record
        return None

    def __repr__(self) -> str:
        return f"RecordFolder({self.folder!r})"


_lock = threading.Lock()
_folders: dict[str, RecordFolder] = {}


def _remember(folder: RecordFolder) -> None:
    with _lock:
        _folders.setdefault(folder.folder, folder)


def known_folders() -> list[RecordFolder]:
    """Every record folder this process opened: where a restored RunState's compaction is looked up."""
    with _lock:
        return list(_folders.values())
