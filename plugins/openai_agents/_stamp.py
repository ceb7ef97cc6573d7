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

import contextvars
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
        self._client = _StampingClient(self, self._client)

    async def run_compaction(self, args: Any = None, *, wrapper: Any = None) -> None:
        # The SDK decides inside whether to compact (the trigger, the history it matches);
        # the intent is written only once it calls responses.compact (see _StampingClient),
        # so a turn whose compaction is declined costs no record write.
        attempt = _Attempt()
        token = _attempt.set(attempt)
        try:
            await super().run_compaction(args, wrapper=wrapper)
        except BaseException:
            if attempt.started:
                after = as_dicts(await self.underlying_session.get_items())
                if items_digest(after) == attempt.before_digest:
                    _restore(self.records, self.session_id, attempt.record)  # the SDK put the history back
            raise  # otherwise the intent stays: the history is neither the old one nor a recorded new one
        finally:
            _attempt.reset(token)
        if not attempt.started:
            return  # declined: nothing was compacted, nothing recorded
        after = as_dicts(await self.underlying_session.get_items())
        digest = compaction_digest(after)
        if items_digest(after) == attempt.before_digest or digest is None:
            _restore(self.records, self.session_id, attempt.record)  # skipped after the call: nothing replaced
            return
        generation = attempt.generation
        summary = _stamp(attempt.completed, attempt.before, after)
        self.records.write(
            CompactionRecord(
                self.session_id, "done", generation, attempt.before_digest, Completed(generation, digest, summary)
            )
        )
        turn = current_turn()
        if turn is not None:
            turn.add_dropped(summary.drop_manifest)  # lost to the rest of this resumed run too

    async def _intent(self) -> None:
        """Called as the SDK calls ``responses.compact``: record the intent before the history changes."""
        attempt = _attempt.get()
        if attempt is None:
            attempt = _Attempt()  # a compact call outside run_compaction: recorded all the same
        before = as_dicts(await self.underlying_session.get_items())
        attempt.before, attempt.before_digest = before, items_digest(before)
        attempt.record = self.records.read(self.session_id)
        attempt.completed = _vouch_for(self.session_id, attempt.record, before, attempt.before_digest)
        attempt.generation = (attempt.completed.generation if attempt.completed is not None else 0) + 1
        self.records.write(
            CompactionRecord(self.session_id, "intent", attempt.generation, attempt.before_digest, attempt.completed)
        )
        attempt.started = True

    async def clear_session(self) -> None:
        """Clear the history and its record: a cleared session starts a new conversation."""
        await super().clear_session()
        self.records.remove(self.session_id)


class _Attempt:
    """One ``run_compaction`` call: whether it reached ``responses.compact``, and what it started from."""

    __slots__ = ("before", "before_digest", "completed", "generation", "record", "started")

    def __init__(self) -> None:
        self.started = False
        self.before: list[Any] = []
        self.before_digest = ""
        self.record: CompactionRecord | None = None
        self.completed: Completed | None = None
        self.generation = 0


_attempt: contextvars.ContextVar[_Attempt | None] = contextvars.ContextVar("summaryguard_agents_compaction", default=None)


class _StampingClient:
    """The session's client, whose ``responses.compact`` records the intent first (anything else passes through)."""

    def __init__(self, session: StampedCompactionSession, client: Any) -> None:
        self._session = session
        self._client = client
        self.responses = _StampingResponses(self)

    @property
    def client(self) -> Any:
        if self._client is None:  # the SDK's own default, resolved when first needed (as the SDK does)
            self._client = OpenAIResponsesCompactionSession.client.fget(_Unset())  # type: ignore[attr-defined]
        return self._client

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)


class _Unset:
    _client = None


class _StampingResponses:
    def __init__(self, owner: _StampingClient) -> None:
        self._owner = owner

    async def compact(self, **kwargs: Any) -> Any:
        await self._owner._session._intent()
        return await self._owner.client.responses.compact(**kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._owner.client.responses, name)


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
    stamped._client = _StampingClient(stamped, session._client)
    return stamped
