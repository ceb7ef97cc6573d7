"""The text pre-filter: decide from the raw text whether a file can matter.

Most files of a real project never mention summaries, checkpoints and resumes
together, and a file that does not cannot hold a finding. One regular
expression with a named group per kind of evidence runs over the text; the
file is parsed only when evidence *co-occurs* (a resume word and a summary or
checkpoint word; a tool word and resumed-state words; ...). A single word is
never enough: "summary" alone appears in docstrings everywhere.

The same decision runs a second time on the *code words* of a file that
passed (identifiers, attribute names and short string keys, collected from the
stdlib ``ast`` the engine parses first): documentation that talks about
summaries and resumes, like ``pydoc_data/topics.py``, passes the text scan but
not this one, and is never handed to libcst.

Both expressions are compiled once per run (per vocabulary) and each scan
stops as soon as the decision is known.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .vocabulary import Vocabulary

__all__ = ["Prefilter"]

#: Evidence in identifiers (punctuation-free spelling of the same groups).
_WORDS = {
    "E": r"ReconciliationError",
    "R": r"resum|rehydrat|restor|recover|langgraph",
    "L": r"from_dict|from_json|model_validate|\bloads?\b",
    "S": r"summar|verbatim_refs|drop_manifest|generation|partial",
    "C": r"checkpoint|ckpt",
    "T": r"\btools?\b|_tools?\b|\btool_|tool_guard|function_tool",
}

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
        resume_words = {_word(p) for c in ("resume-calls", "validators") for p in vocabulary.entries.get(c, ())}
        tool_words = {_word(p) for c in ("tool-calls", "tool-decorators") for p in vocabulary.entries.get(c, ())}
        extra = [p for p in extra_patterns if p]
        self._regex = _compile(_BASE, resume_words, tool_words, extra)
        self._words = _compile(_WORDS, resume_words, tool_words, extra)

    def might_matter(self, text: str) -> bool:
        """The text scan (raw source)."""
        return _scan(self._regex, text)

    def code_matters(self, words: str) -> bool:
        """The same decision over a file's code words (see module doc)."""
        return _scan(self._words, words)


def _compile(base: dict[str, str], resume_words: set, tool_words: set, extra: list[str]) -> re.Pattern[str]:
    groups = dict(base)
    resume = sorted(w for w in resume_words if w)
    tools = sorted(w for w in tool_words if w)
    if resume:
        groups["R"] += "|" + "|".join(resume)
    if tools:
        groups["T"] += "|" + "|".join(tools)
    if extra:
        groups["X"] = "|".join(f"(?:{p})" for p in extra)
    return re.compile("|".join(f"(?P<{name}>{body})" for name, body in groups.items()))


def _scan(regex: re.Pattern[str], text: str) -> bool:
    seen: set[str] = set()
    for match in regex.finditer(text):
        group = match.lastgroup
        if group is None or group in seen:
            continue
        seen.add(group)
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
