"""Whether a string asks a model for a summary: one test for the screening and the facts.

A model call is a compaction when its input asks for a summary (:mod:`.compaction`),
and a module's prompt constant lends that request to every function reading it
(:mod:`.relevance`). Both ask the same question of prose, so both ask it here: a
chat bot told to "keep your answers compact" must be a chat bot to both.

The words are ``summar*`` and ``condens*`` anywhere in a clause, except the noun
``summary``, which asks only as what a verb makes ("write a summary", "into a
summary"), not as a label ("Summary of the earlier conversation: ..."); ``compress`` in every
form but the technique's name ("gzip compression"); ``compaction`` and the verb forms
of ``compact``; and ``compact`` itself only as a verb (first in its clause, a list
marker aside, after ``to``, ``please`` or a subject, or before its object or what it
makes): "Compact the history" and "a compact version of the conversation" ask, "keep
your answers compact" does not. A denial refuses the word after it across conjunctions
and a few fillers only ("do not summarize or compress", "no need to condense"), not
across other words ("if there is no previous summary, summarize"); "don't just
summarize" still asks. A skill offered ("you can ... summarize a chapter") or a clause
conditioned on a request ("when the user asks, summarize") asks nothing of this call.
Fields of an answer format the prompt lays out (``Summary: [brief explanation]``) are
the model's own text and ask nothing, unless their label itself asks (``Summarize this:
[conversation]``). A bare token (a key, a name) asks nothing, except a template file's
name (``"summarizing_system.j2"``).

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
#: Clause ends: a verb test or a denial never reaches across them.
_CLAUSE_END = str.maketrans({mark: "\n" for mark in ".;:!?"})
#: Punctuation a word carries in prose (``"summarize:"``, ``(compact)``).
_PUNCTUATION = ",:()[]{}\"'*`"
#: What a list item's marker is made of (``-``, ``*``, ``1.``): no word before the verb.
_MARKER = "-*\u2022#>0123456789.)("

#: Words that refuse the summary word after them ("do not summarize", "never condense")...
_DENIALS = frozenset({
    "not", "don't", "don\u2019t", "dont", "never", "no", "nor", "avoid", "without", "cannot", "can't", "shouldn't",
    "mustn't", "won't",
})
#: ...across these ("no need to condense", "without further condensing", "do not summarize or
#: compress"), but not across any other word ("if there is no previous summary, summarize").
_THROUGH = frozenset({"need", "to", "ever", "further", "try", "attempt", "be", "or", "and", "any"})
#: A denial right before these only narrows the request: "don't just summarize, also list".
_NOT_ONLY = frozenset({"just", "only", "merely", "simply"})
#: A summary word up to five words after an ability (``can``, ``could``, ``may``) offers a
#: skill, it asks for nothing: "you can quiz the student or summarize a chapter".
_ABILITY = frozenset({"can", "could", "may"})
#: ...as does a clause conditioned on a request: "when the user asks, summarize ...".
_CONDITIONS = frozenset({"when", "if", "upon", "on", "whenever"})
_REQUESTS = ("ask", "request", "want")

#: The noun asks only as what a verb makes ("write a short summary", "fold them into a
#: summary", "update the running summary"): as a label ("Summary of the earlier
#: conversation: ...", "a line starting with 'Summary:'") it names the text beside it.
_NOUNS = frozenset({"summary", "summaries"})
_MAKES = frozenset({
    "write", "provide", "produce", "create", "give", "generate", "return", "output", "make", "update", "maintain",
    "keep", "extend", "revise", "refine", "rewrite", "draft", "compose", "prepare", "build", "record", "capture",
    "compile", "emit", "deliver", "form", "into", "as",
})
#: ``compress`` asks in every form but the technique's name ("gzip compression")...
_COMPRESS = frozenset({"compress", "compressed", "compresses", "compressing"})
#: ...``compact`` as the other verb forms and the process's name...
_COMPACTING = frozenset({"compacts", "compacting", "compacted", "compaction"})
#: ...and ``compact`` itself only as a verb: first in its clause, after these...
_BEFORE_VERB = frozenset({"to", "please", "then", "now", "you", "we", "i", "must", "should", "will"})
#: ...or before its object ("Compact the history", "compact prior turns"), or before what it
#: makes ("a compact version of the conversation"); "keep your answers compact" asks nothing.
_OBJECTS = frozenset({
    "the", "this", "these", "those", "it", "them", "our", "your", "its", "all", "every", "each", "earlier", "older",
    "prior", "previous", "past", "old", "following", "above", "below", "conversation", "history", "context",
    "messages", "turns", "chat", "transcript", "thread", "dialogue", "log", "events", "memory",
    "version", "summary", "representation", "memo", "digest", "note", "notes", "record", "rewrite",
})


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
    start = 0
    while start < len(tokens) and not tokens[start].strip(_MARKER):
        start += 1  # a list item's marker: the verb after it still comes first
    if _conditional(tokens):
        return False
    for index in range(start, len(tokens)):
        token = tokens[index]
        if token in _NOUNS:
            asked = not _MAKES.isdisjoint(tokens[max(start, index - 4) : index])
        elif "summar" in token or "condens" in token or token in _COMPRESS or token in _COMPACTING:
            asked = True
        elif token == "compact":
            asked = (
                index == start
                or tokens[index - 1] in _BEFORE_VERB
                or (index + 1 < len(tokens) and tokens[index + 1] in _OBJECTS)
            )
        else:
            continue
        if asked and not _denied(tokens, index) and _ABILITY.isdisjoint(tokens[max(start, index - 5) : index]):
            return True
    return False


def _denied(tokens: list[str], index: int) -> bool:
    """A denial stands before ``tokens[index]``, with only other summary words, conjunctions
    and the words of :data:`_THROUGH` between them."""
    before = index - 1
    while before >= 0:
        token = tokens[before]
        if token in _DENIALS:
            return tokens[before + 1] not in _NOT_ONLY
        if token not in _THROUGH and token not in _NOT_ONLY and not _summary_word(token):
            return False
        before -= 1
    return False


def _summary_word(token: str) -> bool:
    return "summar" in token or "condens" in token or token.startswith(("compress", "compact"))


def _conditional(tokens: list[str]) -> bool:
    """A clause conditioned on someone's request ("when the user asks", "if requested")."""
    for index, token in enumerate(tokens):
        if token in _CONDITIONS and any(t.startswith(_REQUESTS) for t in tokens[index + 1 : index + 5]):
            return True
    return False
