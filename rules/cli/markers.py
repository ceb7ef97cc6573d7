"""The cheap test that a text may hold a suppression comment, apart from :mod:`.suppression`.

Most files hold none, and a run whose files the text pre-filter all dismisses
(a pre-commit hook's usual one) should not pay for importing the comment parser
(its patterns and classes: about 4 ms of a 110 ms run, SPEC §3.1.2). Both the
run and the parser ask this first, so the two cannot disagree.
"""

from __future__ import annotations

__all__ = ["may_hold_suppressions"]

#: Every suppression comment holds one of these words, in any case (the two forms are
#: in :mod:`.suppression`; written out here, this comment would be one).
_MARKERS = ("noqa", "summaryguard")


def may_hold_suppressions(text: str) -> bool:
    """False when ``text`` certainly holds no suppression comment."""
    if "#" not in text:
        return False
    lowered = text.lower()  # C-speed; a case-insensitive regex scan of every file is ~10x slower
    return any(marker in lowered for marker in _MARKERS)
