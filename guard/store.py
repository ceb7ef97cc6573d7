"""``CheckpointStore``: checkpoints on disk that are whole or absent, newest or refused.

A write goes to a temporary file in the same folder, is fsynced, renamed over
the final name and the folder is fsynced: a crash at any moment leaves either
the old file or the new one, never a torn one under the final name. An fsync
that fails raises :class:`CheckpointNotDurableError`: the turn is not saved.

Every file carries a seal over its canonical body (the turn included) that
``load`` verifies over the exact bytes *before* parsing them, so a torn,
truncated or malformed file fails closed with a :class:`CheckpointIntegrityError`
naming the file; nothing is half-loaded. Two seals:

* the default, a plain SHA-256 digest, catches **accidental** corruption
  only: anyone who can write the folder can edit a file and recompute it;
* with a key (``CheckpointStore(folder, key=...)``, or the environment
  variable ``SUMMARYGUARD_CHECKPOINT_KEY`` when no key is passed; an explicit
  key wins), an HMAC-SHA-256: a party without the key cannot alter a
  checkpoint and seal it again. A keyed store refuses plain files (no
  downgrade) and a plain store refuses keyed ones.

The folder's ledger (see :mod:`._ledger`) records the newest turn written, so
``latest()`` refuses an older one (newest file deleted, older copy restored,
every file gone) with :class:`CheckpointRollbackError` unless the caller
chooses to roll back (``latest(allow_rollback=True)``, or
``rollback_to(turn)``, which records the choice). In a keyed store the ledger
is sealed with the key and may not go missing beside checkpoint files.

Writes are fenced. ``store.writer()`` claims the folder for one resumer: it
returns the checkpoint to resume from and a handle whose writes are
compare-and-set on what it extends (the claim's epoch and the newest turn);
once another resumer has claimed the folder, or written past it, a stale
writer's write raises :class:`StaleWriterError` and never lands. The store's
own ``save``/``checkpoint`` are fenced by the epoch the store was opened at,
and take ``expect=<turn>`` for an explicit compare-and-set.

Writes hold the store's :class:`CompactionLock` (a lock file in the folder), so
they are serialized against a :class:`Compactor` sharing that lock across
threads, asyncio tasks and processes; the fencing holds across processes
through that file lock. A read-only folder can be opened and read; writing to
it raises :class:`CheckpointWriteError` when tried.

Supported file systems: local POSIX ones, and NFSv4 with working locks (see
the README for why not others).
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from . import _files
from ._digest import KEY_ENV, Seal, seal_for
from ._ledger import PREFIX as _LEDGER_PREFIX
from ._ledger import Ledger, tag_of
from ._ledger import parse as _parse_ledger
from .check import normalize_deps
from .errors import (
    CheckpointFormatError,
    CheckpointIntegrityError,
    CheckpointRollbackError,
    CheckpointStoreError,
    CheckpointWriteError,
    StaleWriterError,
    UnsafeCheckpointPathError,
)
from .lock import CompactionLock
from .model import Checkpoint, parse_json

__all__ = ["CheckpointStore", "CheckpointWriter"]

FORMAT = "summaryguard-checkpoint"
VERSION = 1
LOCK_NAME = ".summaryguard.lock"
# ASCII digits only: \d would match any Unicode digit, which int() accepts.
_NAME = re.compile(r"turn-([0-9]{12})\.json", re.ASCII)
_TMP_PREFIX = _files.TMP_PREFIX
_TMP_NAME = re.compile(r"\.tmp-([0-9]+)-[0-9a-f]+\.json", re.ASCII)
_ROLLED_BACK = ".rolled-back-"
#: How many times :meth:`CheckpointStore.latest` lists and reads while a writer keeps changing
#: the folder, and the pause before the next try (times the attempts made): about 0.1 s in all.
_READ_ATTEMPTS = 8
_READ_PAUSE = 0.004
#: A checkpoint file larger than this is refused before it is read.
MAX_BYTES = 256 * 1024 * 1024

# The exact layout the store writes: the document's keys sorted, no spaces, the
# digest first in the checkpoint object. The seal covers ``{`` + the body
# after the digest, which is the canonical JSON of the checkpoint without it.
_HEAD = b'{"checkpoint":{"digest":"'
_TAIL = b',"format":"%s","version":%d}' % (FORMAT.encode(), VERSION)
_SEALED = re.compile(rb"(sha256|hmac-sha256):[0-9a-f]{64}", re.ASCII)
_DOMAIN = b"checkpoint"
_ARRAY_START = re.compile(rb"[ \t\r\n]*\[")
_UNSET: Any = object()


class CheckpointStore:
    """A folder of checkpoints, one file per turn (``turn-000000000042.json``).

    ``key`` (bytes or str, at least 16 bytes) seals every file with an
    HMAC-SHA-256; without it the store uses ``SUMMARYGUARD_CHECKPOINT_KEY``
    when that is set, else a plain digest (accidental corruption only).
    """

    def __init__(
        self,
        folder: str | os.PathLike[str],
        *,
        lock: CompactionLock | None = None,
        key: bytes | str | None = None,
    ) -> None:
        self.folder = Path(folder)
        self._dir = os.fspath(self.folder)  # the hot path joins strings, not Paths
        self._prefix = os.path.join(self._dir, "")  # the folder with its separator: prefix + name is the path
        self._seal: Seal = seal_for(key)
        if not self.folder.is_dir():
            if self.folder.exists():
                raise CheckpointStoreError(os.fspath(self.folder), "not a folder: a file has the store's name")
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise CheckpointWriteError(
                    os.fspath(self.folder), f"the folder does not exist and cannot be created: {exc.strerror or exc}",
                    errno_=exc.errno,
                ) from None
        if lock is not None and not (callable(getattr(lock, "acquire", None)) and callable(getattr(lock, "release", None))):
            raise TypeError(f"CheckpointStore(lock=...) takes a lock (store.lock, a CompactionLock), got {type(lock).__name__}")
        try:
            if lock is None:
                self._lock_path: Path | None = self.folder / LOCK_NAME
                self._refuse_unsafe_lock_path()
                lock = CompactionLock(self._lock_path)
            else:
                self._lock_path = None
            self.lock = lock
            #: The ledger name this store last saw under the lock, and what it says.
            self._ledger_seen: tuple[str, Ledger] | None = None
            #: The furthest ledger this store has seen, as (epoch, turn): the ledger only moves
            #: forward (a write raises the turn, a claim or a rollback the epoch), so one that
            #: goes back while the store is open is a rollback too.
            self._seen: tuple[int, int] | None = None
            _, ledger, _ = self._scan()
        except PermissionError as exc:  # the folder cannot be listed (or searched) by this process
            raise CheckpointStoreError(
                os.fspath(self.folder), f"the folder cannot be read: {exc.strerror or exc}", errno_=exc.errno
            ) from None
        #: The epoch this store writes under: a later claim (``writer()``) elsewhere fences it.
        self._epoch = ledger.epoch if ledger is not None else 0
        self._housekeeping()

    @property
    def keyed(self) -> bool:
        """Whether files are sealed with a key (HMAC) rather than a plain digest."""
        return self._seal.keyed

    # -- writing -------------------------------------------------------------------------

    def save(self, checkpoint: Checkpoint, *, expect: int | None = _UNSET) -> Path:
        """Write ``checkpoint`` atomically (under the lock); returns its path.

        ``expect`` makes the write a compare-and-set: it lands only while the
        newest turn the folder recorded is ``expect`` (None: an empty folder).
        Raises :class:`StaleWriterError` otherwise, or when another writer
        claimed the folder since this store opened it.
        """
        if not isinstance(checkpoint, Checkpoint):
            raise TypeError(f"CheckpointStore.save() takes a summaryguard Checkpoint, got {type(checkpoint).__name__}")
        payload, tag = self._serialize(checkpoint)
        self._acquire()
        try:
            return self._commit(checkpoint.turn, payload, tag, self._epoch, expect)
        finally:
            self.lock.release()

    def checkpoint(
        self,
        compactor: Any,
        turn: int,
        state: Mapping[str, Any] | None = None,
        next_turn_deps: Iterable[str] = (),
        *,
        expect: int | None = _UNSET,
    ) -> Checkpoint:
        """Capture the compactor's latest complete summary and save it, atomically.

        The capture and the write happen under the shared lock, so the summary
        is the complete one of generation G, or of G-1 when a compaction is
        still running: never a partial. The compactor must hold the same lock
        (``Compactor(summarize, lock=store.lock)``); a compactor with a lock
        of its own is refused, since nothing would then order the two.
        ``expect`` is as for :meth:`save`.
        """
        return self._checkpoint(compactor, turn, state, next_turn_deps, self._epoch, expect, None)

    def writer(self) -> CheckpointWriter:
        """Claim the folder for one writer (a resumer): every earlier writer is fenced off.

        Under the lock, it verifies the newest checkpoint (as :meth:`latest`)
        and increments the folder's epoch, so that a writer that presumed dead
        but was only stalled can no longer write. The handle's
        :attr:`~CheckpointWriter.resumed` is the checkpoint to resume from;
        its writes land only while nobody else has claimed the folder or
        written past them.
        """
        with self._locked():
            resumed, tag, ledger = self._verified_latest(allow_rollback=False)
            if ledger is None and self._scan()[2]:
                raise self._foreign_ledger()  # another seal's ledger: claiming would replace it
            if ledger is None:
                base = Ledger(0, resumed.turn if resumed else None, (tag,) if tag else ())
            else:
                base = ledger
            if resumed is not None and (base.turn is None or resumed.turn > base.turn):
                # A write that a crash cut off between its file and the ledger: the verified
                # newest file is what this writer resumes from, so it is what the ledger says.
                base = Ledger(base.epoch, resumed.turn, (tag,))
            claimed = Ledger(base.epoch + 1, base.turn, base.digests)
            self._record(claimed, durable=True)
            self._epoch = claimed.epoch
            return CheckpointWriter(self, claimed.epoch, claimed.turn, resumed)

    def rollback_to(self, turn: int | None) -> CheckpointWriter:
        """Resume from the older checkpoint of ``turn`` on purpose, and record that choice.

        The newer checkpoint files are moved aside (renamed
        ``.rolled-back-<epoch>-turn-....json``, not deleted), the ledger's
        newest turn becomes ``turn``, and the folder is claimed as by
        :meth:`writer`. ``turn=None`` starts over from an empty folder. In a
        keyed store this is also how a missing ledger is acknowledged.
        """
        with self._locked():
            resumed, tag = (None, "") if turn is None else self._load_sealed(turn)
            turns, ledger, names = self._scan()
            if ledger is None and names and not self.keyed:
                raise self._foreign_ledger()  # a keyed folder: only a store with its key acknowledges
            epoch = max(ledger.epoch if ledger else 0, self._epoch) + 1
            for newer in turns:
                if turn is None or newer > turn:
                    old = self.path_for(newer)
                    os.replace(old, self.folder / f"{_ROLLED_BACK}{epoch}-{old.name}")
            claimed = Ledger(epoch, turn, (tag,) if tag else ())
            self._record(claimed, durable=True)
            self._epoch = epoch
            return CheckpointWriter(self, epoch, turn, resumed)

    # -- the write path ------------------------------------------------------------------

    def _checkpoint(
        self,
        compactor: Any,
        turn: int,
        state: Mapping[str, Any] | None,
        next_turn_deps: Iterable[str],
        epoch: int,
        expect: Any,
        writer: CheckpointWriter | None,
    ) -> Checkpoint:
        if getattr(compactor, "lock", None) is not self.lock:
            raise ValueError(
                "this compactor does not share the store's lock, so a checkpoint could race a compaction: "
                "build it as Compactor(summarize, lock=store.lock)"
            )
        if state is not None and not isinstance(state, Mapping):
            raise TypeError(f"a checkpoint's state must be a mapping, got {type(state).__name__}")
        deps = tuple(normalize_deps(next_turn_deps))  # "bucket" is one name, not six letters: refused
        with self._locked():
            summary = compactor.head
            cp = Checkpoint(
                turn=turn,
                summary=summary,
                summary_generation=summary.generation if summary is not None else None,
                state=dict(state or {}),
                next_turn_deps=deps,
            )
            payload, tag = self._serialize(cp)
            self._commit(turn, payload, tag, epoch, expect, writer)
            return cp

    def _serialize(self, checkpoint: Checkpoint) -> tuple[bytes, str]:
        """The file's bytes and the ledger tag of its seal: one canonical serialization, one hash."""
        _check_turn(checkpoint.turn)  # refuse a bad turn before any work
        body = checkpoint.canonical_body()
        tail = memoryview(body)[1:]
        recorded = self._seal.seal(_DOMAIN, (body,))
        return b"".join((_HEAD, recorded.encode("ascii"), b'",', tail, _TAIL)), tag_of(recorded)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the store's lock (see :meth:`_acquire`)."""
        self._acquire()
        try:
            yield
        finally:
            self.lock.release()

    def _acquire(self) -> None:
        """Take the store's lock; a folder that cannot hold a lock file is a clear write error.

        The lock file is never opened through a symbolic link and must be a
        regular file (:class:`CompactionLock` refuses anything else when it
        opens it), so the check that names an unsafe lock path
        (:class:`UnsafeCheckpointPathError`) runs only when taking it failed:
        no ``lstat`` on every write.
        """
        try:
            self.lock.acquire()
        except OSError as exc:
            if self._lock_path is not None:
                self._refuse_unsafe_lock_path()
            raise CheckpointWriteError(
                os.fspath(self.folder),
                _files.cannot_write(exc, "cannot take the store's lock", os.strerror(exc.errno) if exc.errno else None),
                errno_=exc.errno,
            ) from None

    def _commit(
        self,
        turn: int,
        payload: bytes,
        tag: str,
        epoch: int,
        expect: Any,
        writer: CheckpointWriter | None = None,
    ) -> Path:
        """Fence, write, record; under the lock (``turn`` was checked by :meth:`_serialize`)."""
        name = f"turn-{turn:012d}.json"
        ledger = self._ledger_for_write()
        self._fence(ledger, turn, epoch, expect, writer)
        if turn == ledger.turn and ledger.digests and tag not in ledger.digests:
            # Rewriting the newest turn: accept both versions until the new one is durable,
            # so that a crash in between is not mistaken for a restored older copy.
            self._record(Ledger(ledger.epoch, turn, (*ledger.digests, tag)))
        _files.write_atomic(self._dir, self._prefix + name, payload)
        if ledger.turn is None or turn >= ledger.turn:
            self._record(Ledger(ledger.epoch, turn, (tag,)))
        if writer is not None:
            writer.turn = max(turn, writer.turn if writer.turn is not None else turn)
        return self.folder / name

    def _fence(self, ledger: Ledger, turn: int, epoch: int, expect: Any, writer: CheckpointWriter | None) -> None:
        if writer is not None:
            expect = writer.turn
        if ledger.epoch == epoch and (expect is _UNSET or ledger.turn == expect):
            if expect is not _UNSET and expect is not None and turn < expect:
                raise ValueError(f"a write extends the newest checkpoint: turn {turn} is older than turn {expect}")
            return  # the common case: nothing to report, nothing built
        where = os.fspath(self.folder)
        fields = {"epoch": epoch, "current_epoch": ledger.epoch, "current_turn": ledger.turn}
        if ledger.epoch != epoch:
            raise StaleWriterError(
                where,
                f"another writer claimed this folder (epoch {ledger.epoch}) after this one (epoch {epoch}); "
                f"the write of turn {turn} is refused",
                expected_turn=writer.turn if writer is not None else (None if expect is _UNSET else expect),
                **fields,
            )
        if writer is not None:
            expect = writer.turn
        if expect is not _UNSET and ledger.turn != expect:
            raise StaleWriterError(
                where,
                f"the write of turn {turn} extends turn {expect}, but the newest turn written here is now "
                f"{ledger.turn} (another writer got there first)",
                expected_turn=expect,
                **fields,
            )
        if expect is not _UNSET and expect is not None and turn < expect:
            raise ValueError(f"a write extends the newest checkpoint: turn {turn} is older than turn {expect}")

    def _ledger_for_write(self) -> Ledger:
        """The folder's ledger, under the lock; created (before any file is written) when missing."""
        seen = self._ledger_seen
        if seen is not None and _exists(self._prefix + seen[0]):
            return seen[1]  # nobody renamed it since: the common case costs one lstat
        turns, ledger, names = self._scan()
        if ledger is not None:
            return ledger
        if self.keyed and turns:
            raise self._missing_ledger(turns[-1])
        if names:  # a ledger this store cannot verify: renaming it over would wipe another's record
            raise self._foreign_ledger()
        # A new folder, or one written before ledgers existed: start one.
        ledger = Ledger(self._epoch, turns[-1] if turns else None)
        self._record(ledger, durable=True)
        return ledger

    def _record(self, ledger: Ledger, *, durable: bool = False) -> None:
        """Make ``ledger`` the folder's: rename the name last seen (or create one)."""
        new = ledger.name(self._seal)
        seen = self._ledger_seen
        try:
            renamed = False
            if seen is not None and seen[0] != new:
                # The common case, a write: rename the name this store last saw. No lstat
                # first: the rename itself says whether that name is still there.
                try:
                    os.rename(self._prefix + seen[0], self._prefix + new)
                    renamed = True
                except FileNotFoundError:
                    seen = None  # renamed or removed by someone else since: look again
            stray: list[str] = []
            if not renamed:
                if seen is not None and _exists(self._prefix + seen[0]):
                    old = seen[0]  # the same name again: nothing to rename
                else:
                    _, _, names = self._scan()
                    old = names[0] if names else None
                    stray = names[1:]
                if old is None:
                    os.close(os.open(self._prefix + new, os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644))
                elif old != new:
                    os.rename(self._prefix + old, self._prefix + new)
            for name in stray:
                with contextlib.suppress(FileNotFoundError, IsADirectoryError, PermissionError):
                    os.unlink(self.folder / name)
        except OSError as exc:
            raise CheckpointWriteError(
                os.fspath(self.folder / new), _files.cannot_write(exc, "cannot record the store's ledger"), errno_=exc.errno
            ) from None
        if durable:
            _files.fsync_folder(self.folder)
        self._ledger_seen = (new, ledger)
        self._note(ledger)

    # -- reading -------------------------------------------------------------------------

    def path_for(self, turn: int) -> Path:
        _check_turn(turn)
        return self.folder / f"turn-{turn:012d}.json"

    def turns(self) -> list[int]:
        """Turns that have a checkpoint file, oldest first."""
        return self._scan()[0]

    @property
    def high_water(self) -> int | None:
        """The newest turn the folder's ledger records (None: nothing written yet)."""
        _, ledger, _ = self._scan()
        return ledger.turn if ledger is not None else None

    def load(self, turn: int) -> Checkpoint:
        """Load and verify the checkpoint of ``turn`` (an explicit choice: no rollback check).

        The file must hold the checkpoint of that turn: one renamed or copied
        over another turn's name would otherwise pass for the newer state.
        """
        return self._load_sealed(turn)[0]

    def latest(self, *, allow_rollback: bool = False) -> Checkpoint | None:
        """The newest checkpoint, verified; None when nothing was ever written here.

        A newest file that fails verification raises: falling back silently to
        an older one would resume from a state the agent has already left. For
        the same reason a newest file older than the ledger's newest turn (or
        no file left at all) raises :class:`CheckpointRollbackError`, unless
        ``allow_rollback`` is true; :meth:`rollback_to` makes the choice
        lasting, and :meth:`load` reads any turn explicitly.
        """
        return self._verified_latest(allow_rollback)[0]

    def _verified_latest(self, allow_rollback: bool) -> tuple[Checkpoint | None, str, Ledger | None]:
        """:meth:`latest`, with the listing and the ledger it was verified against.

        Why the attempts: a reader takes no lock, so a writer can rename the ledger or
        add a file while the folder is listed (a listing can catch the two halves of one
        write), or rewrite the newest file between the listing and its read. A refusal
        stands only when the folder did not change under it: the listing is taken again
        and, when anything differs, the whole read is. A real rollback shows on every
        listing of a folder nobody is writing."""
        for attempt in range(_READ_ATTEMPTS):
            if attempt:
                time.sleep(_READ_PAUSE * attempt)  # a writer's rename and fsync take about a millisecond
            last = attempt == _READ_ATTEMPTS - 1
            # What this store saw *before* listing: a write it makes meanwhile (another
            # thread on the same store) moves the folder forward, not back.
            seen = self._seen
            turns, ledger, _ = self._scan()
            try:
                self._check_rollback(turns, ledger, allow_rollback, seen)
            except CheckpointRollbackError:
                if last or self._scan()[:2] == (turns, ledger):
                    raise
                continue
            if not turns:
                return None, "", ledger
            newest = turns[-1]
            checkpoint, tag = self._load_sealed(newest)
            if ledger is None or newest != ledger.turn or ledger.accepts(tag) or allow_rollback:
                return checkpoint, tag, ledger
            again = self._scan()[1]  # the newest turn rewritten while we read it?
            if again is not None and again.turn == newest and again.accepts(tag):
                return checkpoint, tag, again
            if last or again == ledger:
                raise CheckpointRollbackError(
                    os.fspath(self.folder),
                    f"the file of turn {newest} is not the version of it last written here (an older copy restored?); "
                    f"resume from it on purpose with rollback_to({newest})",
                    high_water=ledger.turn,
                    found_turn=newest,
                )
        raise AssertionError("unreachable: the last attempt returns or raises")  # pragma: no cover

    def _check_rollback(
        self, turns: list[int], ledger: Ledger | None, allow_rollback: bool, seen: tuple[int, int] | None
    ) -> None:
        """Raise when the listing (``turns``, ``ledger``) is older than ``seen`` (what this
        store had seen before it listed) or than its own ledger."""
        where = os.fspath(self.folder)
        if allow_rollback:
            return
        if ledger is None:
            if self.keyed and turns:
                raise self._missing_ledger(turns[-1])
            high = seen[1] if seen is not None and seen[1] >= 0 else None  # deleted while this store was open
        else:
            point = (ledger.epoch, -1 if ledger.turn is None else ledger.turn)
            if seen is not None and point < seen:
                raise CheckpointRollbackError(
                    where,
                    f"the store's ledger went back (epoch {ledger.epoch}, turn {ledger.turn}) from what this store saw "
                    f"(epoch {seen[0]}, turn {seen[1]}): an older copy of the folder restored?",
                    high_water=seen[1],
                    found_turn=turns[-1] if turns else None,
                )
            self._note(ledger)
            high = ledger.turn
        if high is None:
            return
        if not turns:
            raise CheckpointRollbackError(
                where,
                f"no checkpoint file is left, but turn {high} was written here (deleted?); "
                "start over on purpose with rollback_to(None)",
                high_water=high,
                found_turn=None,
            )
        if turns[-1] < high:
            raise CheckpointRollbackError(
                where,
                f"the newest checkpoint file is turn {turns[-1]}, but turn {high} was written here "
                f"(newer files deleted?); resume from turn {turns[-1]} on purpose with rollback_to({turns[-1]})",
                high_water=high,
                found_turn=turns[-1],
            )

    def _foreign_ledger(self) -> CheckpointWriteError:
        return CheckpointWriteError(
            os.fspath(self.folder),
            "the folder's ledger does not verify with this store's seal (written by a store with a key? "
            f"open this one with the same key, or set {KEY_ENV}); nothing was written",
        )

    def _missing_ledger(self, newest: int) -> CheckpointRollbackError:
        return CheckpointRollbackError(
            os.fspath(self.folder),
            f"this keyed store's ledger is missing or does not verify, beside checkpoint files up to turn {newest} "
            f"(deleted, or sealed with another key?); acknowledge on purpose with rollback_to({newest})",
            high_water=None,
            found_turn=newest,
        )

    def _load_sealed(self, turn: int) -> tuple[Checkpoint, str]:
        path = self.path_for(turn)
        try:
            checkpoint, recorded = _read(os.fspath(path), self._seal)
        except CheckpointIntegrityError as exc:
            # the file could not be read: the turn is the one its name says, which the
            # controller needs to choose the checkpoint to replay from
            if exc.checkpoint_turn is None:
                exc.checkpoint_turn = turn
            raise
        if checkpoint.turn != turn:
            raise CheckpointIntegrityError(
                os.fspath(path),
                f"the file of turn {turn} holds the checkpoint of turn {checkpoint.turn} (renamed or copied?)",
                checkpoint_turn=checkpoint.turn,
            )
        return checkpoint, tag_of(recorded)

    @staticmethod
    def load_path(path: str | os.PathLike[str], *, key: bytes | str | None = None) -> Checkpoint:
        """Load and verify one checkpoint file; every failure names the file.

        ``key`` is as for the store (a keyed file needs it; a plain one is
        refused with it).
        """
        return _read(os.fspath(path), seal_for(key))[0]

    # -- the folder ----------------------------------------------------------------------

    def _scan(self) -> tuple[list[int], Ledger | None, list[str]]:
        """One listing: the checkpoint turns (oldest first), the ledger, and the ledger names (best first)."""
        found = []
        ledgers: list[tuple[int, int, str, Ledger | None]] = []
        with os.scandir(self.folder) as entries:
            for entry in entries:
                name = entry.name
                match = _NAME.fullmatch(name)
                if match:
                    found.append(int(match.group(1)))
                elif name.startswith(_LEDGER_PREFIX):
                    ledger = _parse_ledger(name, self._seal)
                    rank = (ledger.epoch, -1 if ledger.turn is None else ledger.turn) if ledger else (-1, -1)
                    ledgers.append((*rank, name, ledger))
        ledgers.sort(key=lambda item: (item[0], item[1]), reverse=True)
        best = ledgers[0][3] if ledgers else None
        return sorted(found), best, [item[2] for item in ledgers]

    def _note(self, ledger: Ledger) -> None:
        point = (ledger.epoch, -1 if ledger.turn is None else ledger.turn)
        if self._seen is None or point > self._seen:
            self._seen = point

    def _refuse_unsafe_lock_path(self) -> None:
        assert self._lock_path is not None
        try:
            info = os.lstat(self._lock_path)
        except FileNotFoundError:
            return
        if not stat.S_ISREG(info.st_mode):
            what = "a symbolic link" if stat.S_ISLNK(info.st_mode) else "not a regular file"
            raise UnsafeCheckpointPathError(
                os.fspath(self._lock_path),
                f"the store's lock file is {what}: taking the lock would open (or create) whatever it points to",
            )

    def _housekeeping(self) -> None:
        """Remove temporary files of writers that died, when the folder lets us.

        Never blocks (the lock is tried, not waited for) and never fails: a
        read-only folder, or one where another process holds the lock, is
        left as it is; readers ignore temporaries anyway.

        A writer sharing our lock cannot be mid-write while we hold it; one
        using another lock (a process-local one, say) may be, so a temporary
        file whose writer process is still alive is left alone.
        """
        try:
            if not self.lock.acquire(blocking=False):
                return
        except (OSError, RuntimeError):
            return  # read-only folder, or this thread already holds the lock
        try:
            with os.scandir(self.folder) as entries:
                for entry in entries:
                    match = _TMP_NAME.fullmatch(entry.name)
                    if match is None or _alive(int(match.group(1))):
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        continue  # not ours: a directory is never a temporary we wrote
                    with contextlib.suppress(OSError):  # raced with another cleaner, or not ours to remove
                        os.unlink(entry.path)
        finally:
            self.lock.release()

    def __repr__(self) -> str:
        return f"CheckpointStore({str(self.folder)!r})"


class CheckpointWriter:
    """A claim on a store's folder: writes that are compare-and-set on what they extend.

    Made by :meth:`CheckpointStore.writer` (or :meth:`~CheckpointStore.rollback_to`).
    ``epoch`` is its fencing token, ``turn`` the newest turn it has written
    or resumed from (None: an empty folder), ``resumed`` the verified
    checkpoint it resumed from. A write raises :class:`StaleWriterError`, and
    writes nothing, once another writer has claimed the folder or written a
    turn past ``turn``.
    """

    def __init__(self, store: CheckpointStore, epoch: int, turn: int | None, resumed: Checkpoint | None) -> None:
        self.store = store
        self.epoch = epoch
        self.turn = turn
        self.resumed = resumed

    def save(self, checkpoint: Checkpoint) -> Path:
        """Write ``checkpoint`` (a turn not older than :attr:`turn`) if this writer still owns the folder."""
        if not isinstance(checkpoint, Checkpoint):
            raise TypeError(f"CheckpointWriter.save() takes a summaryguard Checkpoint, got {type(checkpoint).__name__}")
        store = self.store
        payload, tag = store._serialize(checkpoint)
        store._acquire()
        try:
            return store._commit(checkpoint.turn, payload, tag, self.epoch, _UNSET, self)
        finally:
            store.lock.release()

    def checkpoint(
        self,
        compactor: Any,
        turn: int,
        state: Mapping[str, Any] | None = None,
        next_turn_deps: Iterable[str] = (),
    ) -> Checkpoint:
        """As :meth:`CheckpointStore.checkpoint`, fenced by this writer's claim."""
        return self.store._checkpoint(compactor, turn, state, next_turn_deps, self.epoch, _UNSET, self)

    def __repr__(self) -> str:
        return f"<CheckpointWriter {str(self.store.folder)!r} epoch={self.epoch} turn={self.turn}>"


# -- reading one file ----------------------------------------------------------------------


def _read(where: str, seal: Seal) -> tuple[Checkpoint, str]:
    """Load and verify one checkpoint file; returns it and its recorded seal."""
    raw = _files.read_regular(where, MAX_BYTES)
    if not raw:
        raise CheckpointIntegrityError(where, "empty file (truncated write?)")
    recorded = _verify_sealed_layout(where, raw, seal)
    if recorded is None and seal.keyed:
        raise CheckpointIntegrityError(
            where, "not a checkpoint this store sealed (a keyed store reads only the exact bytes it writes)"
        )
    if recorded is None and _ARRAY_START.match(raw):
        # Refused before parsing: an array is never a checkpoint, and parsing a large one costs ~20x its size.
        raise CheckpointIntegrityError(where, f"not a summaryguard checkpoint (a JSON array; no \"format\": \"{FORMAT}\")")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CheckpointIntegrityError(where, f"not UTF-8 text at byte {exc.start}") from None
    del raw  # the bytes are not needed once decoded: hold the file once, not twice, while parsing
    try:
        document = parse_json(text)
    except ValueError as exc:
        raise CheckpointIntegrityError(where, f"not valid JSON (truncated or torn?): {exc}") from None
    except RecursionError:
        raise CheckpointIntegrityError(where, "JSON nested too deeply to be a checkpoint") from None
    del text
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise CheckpointIntegrityError(where, f"not a summaryguard checkpoint (no \"format\": \"{FORMAT}\")")
    version = document.get("version")
    if type(version) is not int or version != VERSION:  # true == 1 and 1.0 == 1 are not our version
        raise CheckpointIntegrityError(
            where, f"checkpoint format version {document.get('version')!r} is not supported (expected {VERSION})"
        )
    body = document.get("checkpoint")
    if not isinstance(body, dict) or not isinstance(body.get("digest"), str):
        # A null or missing digest would skip verification: a file on disk must carry one.
        raise CheckpointIntegrityError(where, "the checkpoint or its digest is missing")
    if recorded is None:
        recorded = body["digest"]
        if not recorded.startswith("sha256:"):
            raise CheckpointIntegrityError(where, _scheme_refusal(recorded, seal))
    else:
        del body["digest"]  # verified over the exact bytes already: no second canonicalization
    try:
        return Checkpoint.from_dict(body, source=where), recorded
    except CheckpointFormatError as exc:
        raise CheckpointIntegrityError(where, f"malformed checkpoint: {exc}") from None


def _verify_sealed_layout(where: str, raw: bytearray, seal: Seal) -> str | None:
    """Verify the seal of a file in the store's own layout, before parsing it.

    Returns the recorded seal, or None when the file is not in that layout
    (one written by hand or by another tool: a plain store then parses it and
    checks its digest the old way). A seal that does not verify raises here,
    so a damaged or forged file is refused before its JSON costs anything.
    """
    if not (raw.startswith(_HEAD) and raw.endswith(_TAIL)):
        return None
    start = len(_HEAD)
    end = raw.find(b'",', start, start + 100)
    match = _SEALED.fullmatch(raw, start, end) if end > 0 else None
    if match is None or end + 2 > len(raw) - len(_TAIL):
        return None
    recorded = match.group().decode("ascii")
    if not recorded.startswith(seal.scheme + ":"):
        raise CheckpointIntegrityError(where, _scheme_refusal(recorded, seal))
    with memoryview(raw) as view:
        parts = (b"{", view[end + 2 : len(raw) - len(_TAIL)])
        if not seal.matches(recorded, _DOMAIN, parts):
            actual = seal.seal(_DOMAIN, parts)
            if seal.keyed:
                reason = "its HMAC seal does not verify: the checkpoint was modified (or sealed with another key)"
            else:
                reason = f"content digest {recorded} does not match the content ({actual}): the checkpoint was modified or torn"
            raise CheckpointIntegrityError(where, reason)
    return recorded


def _scheme_refusal(recorded: str, seal: Seal) -> str:
    if seal.keyed:
        return (
            f"sealed with a plain digest ({recorded.partition(':')[0]}), but this store has a key: a keyed store "
            "never loads an unkeyed file (anyone could have written it)"
        )
    return (
        "sealed with a key (HMAC), but this store has none: open it with CheckpointStore(folder, key=...) "
        "or set SUMMARYGUARD_CHECKPOINT_KEY"
    )


def _check_turn(turn: int) -> None:
    if turn.__class__ is not int and (isinstance(turn, bool) or not isinstance(turn, int)):
        raise ValueError(f"a checkpoint turn is an integer from 0 to 10**12-1, got {turn!r}")
    if turn < 0 or turn >= 10**12:
        raise ValueError(f"a checkpoint turn is an integer from 0 to 10**12-1, got {turn!r}")


def _exists(path: str) -> bool:
    try:
        os.lstat(path)
    except FileNotFoundError:
        return False
    return True


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists (ours counts: another thread may be writing)."""
    if pid == os.getpid():
        return True
    if os.name != "posix":  # pragma: no cover - os.kill(pid, 0) would terminate it on Windows
        return False
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # no such process; not even a pid
        return False
    except OSError:  # pragma: no cover - PermissionError: another user's live process (never as root)
        return True
    return True

