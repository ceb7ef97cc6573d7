"""The text pre-filter: decide from the raw text whether a file can matter.

Most files of a real project never mention summaries, checkpoints and resumes
together, and a file that does not cannot hold a finding. One regular
expression with a named group per kind of evidence runs over the text; the
file is parsed only when evidence *co-occurs* (a resume word and a summary or
checkpoint word; a tool word and resumed-state words; ...). A single word is
never enough: "summary" alone appears in docstrings everywhere.

The expression is compiled once per run (per vocabulary) and the scan stops as
soon as the decision is known.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .vocabulary import Vocabulary

__all__ = ["Prefilter"]

_BASE = {
    # Reconciliation errors are only ever mentioned by code that matters.
    "E": r"ReconciliationError",
    "R": r"resum|rehydrat|restor|recover|\.a?invoke\(\s*None|Command\(\s*resume",
    "L": r"from_dict|from_json|model_validate|loads?\(",
    "S": r"summar|verbatim_refs|drop_manifest|\.generation\b|\.partial\b",
    "C": r"checkpoint|ckpt",
    "T": r"\btools?\b|_tools?\b|\btool_|tool_guard|function_tool",
}


def _word(pattern: str) -> str | None:
    """A regex fragment for the last meaningful segment of a vocabulary entry."""
    segments = [s for s in pattern.split(".") if s and s != "*"]
    if not segments:
        return None
    last = segments[-1]
    core = "".join(re.escape(part) for part in re.split(r"[*?\[\]]+", last) if part)
    return core or None


class Prefilter:
    """Compiled once; :meth:`might_matter` is the per-file hot path."""

    def __init__(self, vocabulary: Vocabulary, extra_patterns: Iterable[str] = ()) -> None:
        groups = dict(_BASE)
        resume_words = {_word(p) for c in ("resume-calls", "validators") for p in vocabulary.entries.get(c, ())}
        tool_words = {_word(p) for c in ("tool-calls", "tool-decorators") for p in vocabulary.entries.get(c, ())}
        resume_words.discard(None)
        tool_words.discard(None)
        if resume_words:
            groups["R"] += "|" + "|".join(sorted(w for w in resume_words if w))
        if tool_words:
            groups["T"] += "|" + "|".join(sorted(w for w in tool_words if w))
        extra = [p for p in extra_patterns if p]
        if extra:
            groups["X"] = "|".join(f"(?:{p})" for p in extra)
        self._regex = re.compile("|".join(f"(?P<{name}>{body})" for name, body in groups.items()))

    def might_matter(self, text: str) -> bool:
        seen: set[str] = set()
        for match in self._regex.finditer(text):
            group = match.lastgroup
            if group in seen:
                continue
            seen.add(group)  # type: ignore[arg-type]
            if _decided(seen):
                return True
        return False


def _decided(seen: set[str]) -> bool:
    if "E" in seen or "X" in seen:
        return True
    stateful = "S" in seen or "C" in seen
    if "R" in seen and stateful:
        return True
    if "S" in seen and "C" in seen:
        return True
    if "L" in seen and "S" in seen:
        return True
    return "T" in seen and (stateful or "R" in seen)
