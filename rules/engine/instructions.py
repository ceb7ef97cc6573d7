"""Whether a string asks a model for a summary: one test for the screening and the facts.

A model call is a compaction when its input asks for a summary (:mod:`.compaction`),
and a module's prompt constant lends that request to every function reading it
(:mod:`.relevance`). Both ask the same question of prose, so both ask it here: a
chat bot told to "keep your answers compact" must be a chat bot to both.

The words are ``summar*`` and ``condens*`` anywhere in a clause, and ``compress`` /
``compact`` only where they are verbs (first in their clause, after ``to``, ``please``
or a subject, or before their object): "Compact the history" asks, "a compact answer"
does not. A word a denial stands just before ("do not summarize", "no need to
condense", "without compressing") asks for the opposite. Fields of an answer format
the prompt lays out (``Summary: [brief explanation]``) are the model's own text and ask
nothing, unless their label itself asks (``Summarize this: [conversation]``). A bare
token (a key, a name) asks nothing, except a template file's name
(``"summarizing_system.j2"``).

Pure string work with no libcst: the screening imports it in worker processes.
"""

from __future__ import annotations

import re

__all__ = ["asks_for_summary"]

#: Any of the words, before the clause test decides (most strings have none).
_WORD = re.compile(r"summar|condens|compress|compact", re.IGNORECASE)
#: A field of an answer format a prompt lays out: a bracketed placeholder, with the label it
#: fills (``Summary: [brief explanation]``, ``Reasoning: [summary of findings]``).
_FORMAT_FIELD = re.compile(r"(?:([\w ]*):[^\S\n]*)?\[[^\]\n]*\]")
#: A label that itself asks (``Summarize this: [conversation]``): kept, whatever fills it.
_ASKING_LABEL = re.compile(r"summari[sz]e|condense|compress|compact", re.IGNORECASE)
#: A key or a name: no spaces, no prose.
_TOKEN = re.compile(r"[\w.\-/]*")
#: ...but a prompt template's file name is a prompt.
_TEMPLATE_FILE = re.compile(r"\.(j2|jinja2?|prompt|tmpl|txt|md)$")
#: Clause ends: a denial or a verb test never reaches across them.
_CLAUSE_END = str.maketrans({mark: "\n" for mark in ".;!?"})
#: Punctuation a word carries in prose (``"summarize:"``, ``(compact)``).
_PUNCTUATION = ",:()[]{}\"'*`"

#: Words that turn a summary word up to three words after them into a refusal (``without``:
#: up to two, "without further condensing").
_DENIALS = frozenset({"not", "don't", "don\u2019t", "dont", "never", "no", "nor", "avoid"})
#: ``compress`` / ``compact`` are verbs after these (``to compact``, ``you compress``)...
_BEFORE_VERB = frozenset({"to", "please", "then", "now", "you", "we", "i", "must", "should", "will", "can"})
#: ...and before their object (``Compress the history``).
_OBJECTS = frozenset(
    {"the", "this", "these", "those", "it", "them", "our", "your", "its", "all", "every", "earlier", "older", "each"}
)
_VERB_FORMS = frozenset({"compress", "compact", "compressing", "compacting"})


def asks_for_summary(text: str) -> bool:
    """Whether ``text`` asks a model for a summary (see the module's documentation)."""
    if _WORD.search(text) is None:
        return False
    if _TOKEN.fullmatch(text):
        return _TEMPLATE_FILE.search(text) is not None
    if "[" in text:
        text = _FORMAT_FIELD.sub(lambda m: m.group(1) if m.group(1) and _ASKING_LABEL.search(m.group(1)) else "", text)
    for clause in text.lower().translate(_CLAUSE_END).split("\n"):
        if _WORD.search(clause) is not None and _clause_asks(clause):
            return True
    return False


def _clause_asks(clause: str) -> bool:
    tokens = [t.strip(_PUNCTUATION) for t in clause.split()]
    for index, token in enumerate(tokens):
        if "summar" in token or "condens" in token:
            asked = True
        elif token in _VERB_FORMS:
            asked = (
                index == 0
                or tokens[index - 1] in _BEFORE_VERB
                or (index + 1 < len(tokens) and tokens[index + 1] in _OBJECTS)
            )
        else:
            continue
        before = tokens[max(0, index - 3) : index]
        if asked and _DENIALS.isdisjoint(before) and "without" not in before[-2:]:
            return True
    return False
