"""Whether any installed distribution may declare an entry point of one group, answered cheaply.

Why: every ``summaryguard check`` loads the plugins that installed packages
declare (SPEC §4.6), and ``importlib.metadata`` costs about 30 ms to import and
25 ms to list the entry points of two hundred installed distributions. A
pre-commit hook on a file with no summary vocabulary has about 40 ms above the
interpreter's own start in all (SPEC §3.1.2: half of flake8's run). Almost
always no distribution declares the group; a look at the metadata folders on
``sys.path`` for the group's section header says so in a few milliseconds.

The answer errs one way only: it is False only where ``importlib.metadata``
would find no entry point of the group. Anything this scan cannot read as
``importlib.metadata`` would (a zip or an egg on the path, a path entry that is
not a string, a finder of ``sys.meta_path`` that lists distributions of its own)
answers True, and then ``importlib.metadata`` decides, so what is loaded is
exactly what it would load.
"""

from __future__ import annotations

import os
import sys
from importlib.machinery import PathFinder

__all__ = ["may_declare"]

_METADATA_SUFFIXES = (".dist-info", ".egg-info")


def may_declare(group: str) -> bool:
    """False only when no distribution on ``sys.path`` declares an entry point of ``group``."""
    if any(_lists_distributions(finder) for finder in sys.meta_path):
        return True
    header = f"[{group}]".encode()
    for entry in sys.path:
        if not isinstance(entry, str):
            return True
        folder = entry or os.curdir
        if folder.lower().endswith(".egg"):
            return True  # an egg's metadata lives in EGG-INFO; importlib.metadata reads it
        try:
            with os.scandir(folder) as found:
                names = [item.name for item in found]
        except NotADirectoryError:
            return True  # a zip file on the path: importlib.metadata reads inside it
        except OSError:
            continue  # a path entry that does not exist lists no distribution
        for name in names:
            if name.lower().endswith(_METADATA_SUFFIXES) and header in _entry_points_text(folder, name):
                return True
    return False


def _lists_distributions(finder: object) -> bool:
    """Whether a meta path finder other than the standard path finder lists distributions."""
    return finder is not PathFinder and getattr(finder, "find_distributions", None) is not None


def _entry_points_text(folder: str, name: str) -> bytes:
    try:
        with open(os.path.join(folder, name, "entry_points.txt"), "rb") as handle:
            return handle.read()
    except OSError:
        return b""
