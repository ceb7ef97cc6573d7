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
_MARKERS = (b"noqa", b"summaryguard")


def may_hold_suppressions(text: str) -> bool:
    """False when ``text`` certainly holds no suppression comment.

    The text is lowered as UTF-8 bytes: ``bytes.lower`` changes only ASCII letters, and
    the markers' letters are ASCII, which no other character's UTF-8 bytes contain (nor
    does any other character lower to them). Lowering the ``str`` gave the same answers
    at 1.7 times the cost (0.16 against 0.095 s over the real-code corpus's 67 MB, every
    run: a warm run's tenth); a case-insensitive regular expression is ~10x slower."""
    if "#" not in text:
        return False
    lowered = text.encode("utf-8", "surrogatepass").lower()
    return any(marker in lowered for marker in _MARKERS)
