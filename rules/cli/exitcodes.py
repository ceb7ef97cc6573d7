"""Exit statuses of the ``summaryguard`` command.

An :class:`~enum.IntEnum` so that a status is never computed from a count
(a linter whose status is the number of findings exits 0 at 256 findings).
CI systems and pre-commit read only these three values.
"""

from __future__ import annotations

from enum import IntEnum

__all__ = ["ExitCode"]


class ExitCode(IntEnum):
    """What a run of ``summaryguard`` tells its caller."""

    #: Every file was read and analyzed; nothing was found.
    OK = 0
    #: At least one finding, and no error.
    FINDINGS = 1
    #: A usage or configuration error, or a file that could not be read or
    #: parsed (errors win over findings: an unanalyzed file may hide more).
    ERROR = 2
    #: The user interrupted the run (Ctrl-C), as shells report SIGINT.
    INTERRUPTED = 130
