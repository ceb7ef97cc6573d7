"""The command line and everything around a run of the analyzer.

``summaryguard check`` (:mod:`.command`, :mod:`.runner`): configuration (:mod:`.config`,
:mod:`.targets`), file discovery (:mod:`.discovery`, :mod:`.globs`), reading files
(:mod:`.sources`), screening and analysis in batches (:mod:`.batch`,
:mod:`.dependencies`, :mod:`.deepstack`), the result cache (:mod:`.cache`),
suppressions and baselines (:mod:`.suppression`, :mod:`.baseline`,
:mod:`.fingerprint`), and the report in each format (:mod:`.report`,
:mod:`.formats`). The rules themselves sit one level up, one module each, and the
analysis they decide over in :mod:`summaryguard.rules.engine`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["main"]


def __getattr__(name: str) -> Any:
    # ``main`` loads on first use: the rule modules use this package's suppression
    # parsing without paying for the command line.
    if name == "main":
        from .command import main

        return main
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
