"""``CheckpointStore``: checkpoints on disk that are whole or absent.

A write goes to a temporary file in the same folder, is fsynced, renamed over
the final name and the folder is fsynced: a crash at any moment leaves either
the old file or the new one, never a torn one under the final name. Every file
carries a SHA-256 digest of its content that ``load`` verifies, so a torn,
truncated, tampered or malformed file fails closed with a
:class:`CheckpointIntegrityError` naming the file; nothing is half-loaded.

Writes hold the store's :class:`CompactionLock` (a lock file in the folder), so
they are serialized against a :class:`Compactor` sharing that lock across
threads, asyncio tasks and processes.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .errors import CheckpointFormatError, CheckpointIntegrityError
from .lock import CompactionLock
from .model import Checkpoint

__all__ = ["CheckpointStore"]

FORMAT = "summaryguard-checkpoint"
VERSION = 1
LOCK_NAME = ".summaryguard.lock"
_NAME = re.compile(r"^turn-(\d{12})\.json$")
_TMP_PREFIX = ".tmp-"
_TMP_NAME = re.compile(r"^\.tmp-(\d+)-[0-9a-f]+\.json$")
#: A checkpoint file larger than this is refused before it is read.
MAX_BYTES = 256 * 1024 * 1024


class CheckpointStore:
    """A folder of checkpoints, one file per turn (``turn-000000000042.json``)."""

    def __init__(self, folder: str | os.PathLike[str], *, lock: CompactionLock | None = None) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.lock = lock if lock is not None else CompactionLock(self.folder / LOCK_NAME)
        with self.lock:
            self._remove_temporaries()

    # -- writing -------------------------------------------------------------------------

    def save(self, checkpoint: Checkpoint) -> Path:
        """Write ``checkpoint`` atomically (under the lock); returns its path."""
        if not isinstance(checkpoint, Checkpoint):
            raise TypeError(f"CheckpointStore.save() takes a summaryguard Checkpoint, got {type(checkpoint).__name__}")
        with self.lock:
            return self._write(checkpoint)

    def checkpoint(
        self,
        compactor: Any,
        turn: int,
        state: Mapping[str, Any] | None = None,
        next_turn_deps: Iterable[str] = (),
    ) -> Checkpoint:
        """Capture the compactor's latest complete summary and save it, atomically.

        The capture and the write happen under the shared lock, so the summary
        is the complete one of generation G, or of G-1 when a compaction is
        still running: never a partial. The compactor must hold the same lock
        (``Compactor(summarize, lock=store.lock)``); a compactor with a lock
        of its own is refused, since nothing would then order the two.
        """
        if getattr(compactor, "lock", None) is not self.lock:
            raise ValueError(
                "this compactor does not share the store's lock, so a checkpoint could race a compaction: "
                "build it as Compactor(summarize, lock=store.lock)"
            )
        with self.lock:
            summary = compactor.head
            cp = Checkpoint(
                turn=turn,
                summary=summary,
                summary_generation=summary.generation if summary is not None else None,
                state=dict(state or {}),
                next_turn_deps=tuple(next_turn_deps),
            )
            self._write(cp)
            return cp

    def _write(self, checkpoint: Checkpoint) -> Path:
        final = self.path_for(checkpoint.turn)
        payload = json.dumps(
            {"format": FORMAT, "version": VERSION, "checkpoint": checkpoint.to_dict()},
            sort_keys=True,
            ensure_ascii=False,
        ).encode("utf-8")
        tmp = self.folder / f"{_TMP_PREFIX}{os.getpid()}-{secrets.token_hex(4)}.json"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            view = memoryview(payload)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            tmp.unlink(missing_ok=True)
            raise
        os.close(fd)
        try:
            os.replace(tmp, final)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        _fsync_folder(self.folder)
        return final

    # -- reading -------------------------------------------------------------------------

    def path_for(self, turn: int) -> Path:
        if isinstance(turn, bool) or not isinstance(turn, int) or turn < 0 or turn >= 10**12:
            raise ValueError(f"a checkpoint turn is an integer from 0 to 10**12-1, got {turn!r}")
        return self.folder / f"turn-{turn:012d}.json"

    def turns(self) -> list[int]:
        """Turns that have a checkpoint file, oldest first."""
        found = []
        for entry in os.scandir(self.folder):
            match = _NAME.match(entry.name)
            if match:
                found.append(int(match.group(1)))
        return sorted(found)

    def load(self, turn: int) -> Checkpoint:
        """Load and verify the checkpoint of ``turn``.

        The file must hold the checkpoint of that turn: one renamed or copied
        over another turn's name would otherwise pass for the newer state.
        """
        path = self.path_for(turn)
        checkpoint = self.load_path(path)
        if checkpoint.turn != turn:
            raise CheckpointIntegrityError(
                os.fspath(path),
                f"the file of turn {turn} holds the checkpoint of turn {checkpoint.turn} (renamed or copied?)",
                checkpoint_turn=checkpoint.turn,
            )
        return checkpoint

    def latest(self) -> Checkpoint | None:
        """The newest checkpoint, verified; None when the store is empty.

        A newest file that fails verification raises: falling back silently to
        an older one would resume from a state the agent has already left. The
        controller may choose an older turn explicitly with :meth:`load`.
        """
        turns = self.turns()
        return self.load(turns[-1]) if turns else None

    @staticmethod
    def load_path(path: str | os.PathLike[str]) -> Checkpoint:
        """Load and verify one checkpoint file; every failure names the file."""
        where = os.fspath(path)
        try:
            with open(where, "rb") as handle:
                raw = handle.read(MAX_BYTES + 1)
        except FileNotFoundError:
            raise CheckpointIntegrityError(where, "no such checkpoint file") from None
        except OSError as exc:
            raise CheckpointIntegrityError(where, f"cannot be read: {exc.strerror or exc}") from None
        if len(raw) > MAX_BYTES:
            raise CheckpointIntegrityError(where, f"larger than {MAX_BYTES} bytes; not a checkpoint")
        if not raw:
            raise CheckpointIntegrityError(where, "empty file (truncated write?)")
        try:
            document = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise CheckpointIntegrityError(where, f"not UTF-8 text at byte {exc.start}") from None
        except ValueError as exc:
            raise CheckpointIntegrityError(where, f"not valid JSON (truncated or torn?): {exc}") from None
        except RecursionError:
            raise CheckpointIntegrityError(where, "JSON nested too deeply to be a checkpoint") from None
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
        try:
            return Checkpoint.from_dict(body, source=where)
        except CheckpointFormatError as exc:
            raise CheckpointIntegrityError(where, f"malformed checkpoint: {exc}") from None

    # -- housekeeping --------------------------------------------------------------------

    def _remove_temporaries(self) -> None:
        """Remove temporary files of writers that died.

        A writer sharing our lock cannot be mid-write while we hold it; one
        using another lock (a process-local one, say) may be, so a temporary
        file whose writer process is still alive is left alone.
        """
        for entry in os.scandir(self.folder):
            match = _TMP_NAME.match(entry.name)
            if match is None or _alive(int(match.group(1))):
                continue
            try:
                os.unlink(entry.path)
            except FileNotFoundError:  # pragma: no cover - raced with another cleaner
                pass

    def __repr__(self) -> str:
        return f"CheckpointStore({str(self.folder)!r})"


def _fsync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - some file systems refuse
        pass
    finally:
        os.close(fd)


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
