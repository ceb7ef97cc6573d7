"""The store's file operations: one safe read, one atomic write, one folder fsync.

They are the only code of the runtime that opens checkpoint files, so what
they refuse is refused everywhere:

* a read never follows a symbolic link, never blocks on a FIFO or a device
  (``O_NONBLOCK``), refuses anything but a regular file after ``fstat``, and
  refuses a file larger than the limit *before* reading it;
* a write goes to a fresh temporary (``O_EXCL``, never through a link), is
  fsynced, renamed over the final name, and the folder is fsynced; an I/O error
  of either fsync is a :class:`CheckpointNotDurableError`, never swallowed
  (after a failed fsync the kernel may already have dropped the dirty pages:
  retrying the fsync would "succeed" on data that never reached the disk).
"""

from __future__ import annotations

import errno
import os
import secrets
import stat

from .errors import CheckpointIntegrityError, CheckpointNotDurableError, CheckpointWriteError

__all__ = ["FSYNC_UNSUPPORTED", "TMP_PREFIX", "cannot_write", "fsync_folder", "read_regular", "write_atomic"]

TMP_PREFIX = ".tmp-"
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_TMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)

#: errno values of a directory fsync that mean "this file system cannot sync a
#: directory" rather than "the data did not reach the disk". fsync(2) documents
#: EINVAL for "fd is bound to a special file which does not support
#: synchronization"; some FUSE and network file systems answer it for
#: directories. Nothing can be made more durable there, and the README lists
#: such file systems as unsupported. Every other errno (EIO, ENOSPC, EDQUOT,
#: EROFS...) raises.
FSYNC_UNSUPPORTED = frozenset({errno.EINVAL})


def read_regular(path: str, max_bytes: int) -> bytearray:
    """The bytes of the regular file ``path``, at most ``max_bytes`` of them.

    Every refusal is a :class:`CheckpointIntegrityError` naming ``path``.
    """
    try:
        fd = os.open(path, _READ_FLAGS)
    except FileNotFoundError:
        raise CheckpointIntegrityError(path, "no such checkpoint file") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP and os.path.islink(path):
            raise CheckpointIntegrityError(
                path, "is a symbolic link; a checkpoint must be a regular file in the store's folder (not followed)"
            ) from None
        raise CheckpointIntegrityError(path, f"cannot be read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise CheckpointIntegrityError(path, f"not a regular file ({_file_type(info.st_mode)}); not a checkpoint")
        if info.st_size > max_bytes:
            raise CheckpointIntegrityError(path, f"larger than {max_bytes} bytes; not a checkpoint")
        # One buffer of the announced size (plus one byte, to see a file that grew).
        buffer = bytearray(min(info.st_size, max_bytes) + 1)
        view = memoryview(buffer)
        filled = 0
        try:
            while filled < len(buffer):
                n = os.readv(fd, [view[filled:]])
                if n == 0:
                    break
                filled += n
        except OSError as exc:
            raise CheckpointIntegrityError(path, f"cannot be read: {exc.strerror or exc}") from None
        finally:
            view.release()
        if filled > max_bytes:
            raise CheckpointIntegrityError(path, f"larger than {max_bytes} bytes; not a checkpoint")
        del buffer[filled:]
        return buffer  # not copied into a bytes: a large file is held once
    finally:
        os.close(fd)


def _file_type(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a directory"),
    ):
        if test(mode):
            return name
    return "not a regular file"  # pragma: no cover - every POSIX type is listed


def write_atomic(folder: str, final: str, payload: bytes) -> None:
    """Write ``payload`` to ``final`` atomically and durably (see the module docstring)."""
    tmp = os.path.join(folder, f"{TMP_PREFIX}{os.getpid()}-{secrets.token_hex(4)}.json")
    try:
        fd = os.open(tmp, _TMP_FLAGS, 0o644)
    except OSError as exc:
        raise CheckpointWriteError(folder, cannot_write(exc), errno_=exc.errno) from None
    try:
        view = memoryview(payload)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        try:
            os.fsync(fd)
        except OSError as exc:
            raise CheckpointNotDurableError(final, f"fsync of the new file failed: {exc.strerror or exc}", errno_=exc.errno) from None
    except BaseException:
        os.close(fd)
        _unlink(tmp)
        raise
    os.close(fd)
    try:
        os.replace(tmp, final)
    except OSError as exc:  # the name is a folder, the folder went read-only...: named, nothing left behind
        _unlink(tmp)
        raise CheckpointWriteError(final, cannot_write(exc, "cannot put the new file in place"), errno_=exc.errno) from None
    except BaseException:
        _unlink(tmp)
        raise
    fsync_folder(folder)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def fsync_folder(folder: str | os.PathLike[str]) -> None:
    """Make the folder's entries (a rename) durable; an I/O error raises."""
    if os.name != "posix":  # pragma: no cover - no directory descriptors on Windows
        return
    where = os.fspath(folder)
    try:
        fd = os.open(where, _DIR_FLAGS)
    except OSError as exc:
        raise CheckpointNotDurableError(where, f"the folder cannot be opened to fsync it: {exc.strerror or exc}", errno_=exc.errno) from None
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in FSYNC_UNSUPPORTED:
            raise CheckpointNotDurableError(
                where, f"fsync of the folder failed: {exc.strerror or exc}; the new checkpoint may not survive a power loss",
                errno_=exc.errno,
            ) from None
    finally:
        os.close(fd)


def cannot_write(exc: OSError, what: str = "cannot create a temporary file", cause: str | None = None) -> str:
    """The reason of a failed write, saying so plainly when the folder is read-only
    (``cause``: the system's words for it, when ``exc`` carries a sentence of its own)."""
    cause = cause or exc.strerror
    if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return (
            f"{what} ({cause}): the folder is read-only for this process; "
            "it can still be read (latest(), load()), but not written"
        )
    return f"{what}: {cause or exc}"
