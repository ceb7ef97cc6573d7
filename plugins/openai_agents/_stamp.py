"""``stamp_compactions``: every Agents SDK compaction leaves a generation and a drop manifest.

``OpenAIResponsesCompactionSession`` folds the history into opaque items
through ``responses.compact`` (manually with ``run_compaction()``, or
automatically after a turn: both go through ``run_compaction``). The stamped
session runs it unchanged and writes the compaction record around it (see
:mod:`._records`): *intent* before, *done* after, with the digest of the new
compaction items and a drop manifest. A reference (a tool result, named after
its tool) is kept only if its value still stands verbatim in a readable item
afterwards: what went into the encrypted item cannot be shown to be there.

It refuses to compact on top of a summary it cannot vouch for (an unfinished
compaction, or compaction items no record describes): folding a summary of
unknown provenance compounds a loss nobody recorded.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

from agents.memory import OpenAIResponsesCompactionSession

from summaryguard.guard.compactor import Compactor, Turn
from summaryguard.guard.errors import ReconciliationKind, SummaryReconciliationError
from summaryguard.guard.turn import current_turn
from ._items import as_dicts, compaction_digest, items_digest, readable_text, tool_refs
from ._records import CompactionRecord, Completed, RecordFolder

__all__ = ["StampedCompactionSession", "stamp_compactions"]


class StampedCompactionSession(OpenAIResponsesCompactionSession):
    """An ``OpenAIResponsesCompactionSession`` whose compactions are recorded (intent, then done).

    Takes the same arguments, plus ``records``: the folder of the compaction
    records (default: ``<db_path>.summaryguard`` beside a file-backed
    ``SQLiteSession``).
    """

    records: RecordFolder

    def __init__(self, session_id: str, underlying_session: Any, *, records: Any = None, **kwargs: Any) -> None:
        super().__init__(session_id, underlying_session, **kwargs)
        self.records = _folder_for(records, underlying_session)

    async def run_compaction(self, args: Any = None, *, wrapper: Any = None) -> None:
        before = as_dicts(await self.underlying_session.get_items())
        before_digest = items_digest(before)
        record = self.records.read(self.session_id)
        completed = _vouch_for(self.session_id, record, before, before_digest)
        generation = (completed.generation if completed is not None else 0) + 1
        self.records.write(CompactionRecord(self.session_id, "intent", generation, before_digest, completed))
        try:
            await super().run_compaction(args, wrapper=wrapper)
        except BaseException:
            after = as_dicts(await self.underlying_session.get_items())
            if items_digest(after) == before_digest:
                _restore(self.records, self.session_id, record)  # the SDK put the history back
            raise  # otherwise the intent stays: the history is neither the old one nor a recorded new one
        after = as_dicts(await self.underlying_session.get_items())
        digest = compaction_digest(after)
        if items_digest(after) == before_digest or digest is None:
            _restore(self.records, self.session_id, record)  # declined or skipped: nothing was compacted
            return
        summary = _stamp(completed, before, after)
        self.records.write(
            CompactionRecord(self.session_id, "done", generation, before_digest, Completed(generation, digest, summary))
        )
        turn = current_turn()
        if turn is not None:
            turn.add_dropped(summary.drop_manifest)  # lost to the rest of this resumed run too

    async def clear_session(self) -> None:
        """Clear the history and its record: a cleared session starts a new conversation."""
        await super().clear_session()
        self.records.remove(self.session_id)


def _stamp(completed: Completed | None, before: list[Any], after: list[Any]) -> Any:
    turns = tuple(Turn(index=index, content="", refs=(ref,)) for index, ref in tool_refs(before))
    summary = Compactor._stamp(completed.summary if completed is not None else None, turns, readable_text(after))
    # The readable text is the session's to keep; the record holds the stamp only.
    return dataclasses.replace(summary, content="")


def _vouch_for(session_id: str, record: CompactionRecord | None, before: list[Any], before_digest: str) -> Completed | None:
    """The finished compaction this one builds on; refuses a base nobody can vouch for."""
    if record is not None and not record.finished and record.before != before_digest:
        raise SummaryReconciliationError(
            record.generation,
            len(before),
            "",
            f"session {session_id!r}: compaction generation {record.generation} was started and never recorded "
            "done; refusing to compact a half-written summary",
            kind=ReconciliationKind.PARTIAL_SUMMARY,
            details={"session_id": session_id},
        )
    completed = record.completed if record is not None else None
    digest = compaction_digest(before)
    if digest is not None and (completed is None or completed.summary_digest != digest):
        raise SummaryReconciliationError(
            completed.generation if completed is not None else None,
            len(before),
            "",
            f"session {session_id!r} holds compaction items no summaryguard record describes; refusing to extend "
            "them: summarizing a summary of unknown provenance compounds the loss",
            kind=ReconciliationKind.GENERATION_MISMATCH,
            details={"session_id": session_id},
        )
    return completed


def _restore(records: RecordFolder, session_id: str, record: CompactionRecord | None) -> None:
    if record is None:
        records.remove(session_id)
    else:
        records.write(record)


def _folder_for(records: Any, underlying: Any) -> RecordFolder:
    if isinstance(records, RecordFolder):
        return records
    if records is not None:
        return RecordFolder(records)
    db_path = getattr(underlying, "db_path", None)
    if db_path is not None and str(db_path) != ":memory:":
        return RecordFolder(f"{os.fspath(db_path)}.summaryguard")
    raise TypeError(
        "stamp_compactions(session, records=FOLDER): the session's store has no file to keep the compaction "
        "records beside; name a folder that lives as long as the session's history"
    )


def stamp_compactions(session: Any, *, records: Any = None) -> StampedCompactionSession:
    """``session`` (an ``OpenAIResponsesCompactionSession``) with every compaction recorded.

    Use the returned session in place of the original one (same history, same
    client, same trigger). ``records`` is the folder of the compaction records
    (default: beside a file-backed ``SQLiteSession``).
    """
    if isinstance(session, StampedCompactionSession):
        return session
    if not isinstance(session, OpenAIResponsesCompactionSession):
        raise TypeError(
            f"stamp_compactions() takes an OpenAIResponsesCompactionSession, got {type(session).__name__}"
        )
    stamped = object.__new__(StampedCompactionSession)
    stamped.__dict__.update(session.__dict__)  # the same history, client, lock and trigger
    stamped.records = _folder_for(records, session.underlying_session)
    return stamped
