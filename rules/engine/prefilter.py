"""The text pre-filter: decide from the raw text whether a file can matter.

Most files of a real project never mention summaries, checkpoints and resumes
together, and a file that does not cannot hold a finding. Evidence comes in
groups (a resume word, a summary word, a checkpoint word, a tool word, a
reconciliation error, a deserializer); the file is parsed only when evidence
*co-occurs* (a resume word and a summary or checkpoint word; a tool word and
resumed-state words; ...). A single word is never enough: "summary" alone
appears in docstrings everywhere.

Every group is a handful of literal substrings, tested with ``in`` (a C-speed
scan per literal, no regular-expression backtracking over the whole file), and
groups are only tested until the decision is known.

The same decision runs a second time on the *code words* of a file that
passed (identifiers, attribute names and short string keys, collected from the
stdlib ``ast`` the engine parses first): documentation that talks about
summaries and resumes, like ``pydoc_data/topics.py``, passes the text scan but
not this one, and is never handed to libcst.

A second, cheaper verdict, :meth:`Prefilter.may_lend`, is asked of a file the
scan rejects: a module that defines classes and imports a model library, or is
a factory (a function of it returns an instance of a class it imports: the
factory of provider clients, each calling an SDK), cannot hold a finding, but an
instance of its classes can run a model in a file that can (SPEC §3.1.1: a model
call is known by value, through the class a factory returns). The text says
whether it may; its tree decides (:meth:`..engine.Analyzer.lent_facts`), and no
name of the user's does: a class called ``LLMClient`` lends nothing by its name.
A package's ``__init__`` that imports is context too (:meth:`Prefilter.re_exports`):
importers name the classes through it (``from .llm import LLM``), and the modules it
imports are followed. Such a module is analyzed as context, never checked.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from .host_syntax import host_parse_error
from .vocabulary import Vocabulary

__all__ = ["Prefilter"]

#: Literal evidence in source text, by group.
_TEXT = {
    "E": ("ReconciliationError",),
    "R": ("resum", "rehydrat", "restor", "recover", "invoke(None", "invoke(\n"),
    "S": ("summar", "Summar", "verbatim_refs", "drop_manifest", ".generation", ".partial"),
    "C": ("checkpoint", "Checkpoint", "ckpt"),
    "L": ("from_dict", "from_json", "model_validate", "load(", "loads("),
    "T": ("tool", "Tool"),
    # compaction (SG301-SG304): the conversation or model a summary is made from (the model
    # calls of the SDKs: OpenAI's completions, Anthropic's messages, Gemini's generate_content)
    "K": ("messages", "turns", "transcript", "conversation", "history", "llm", "invoke(", "completions", "compact",
          "generate_content"),
}
#: The same groups spelled as code words (no punctuation).
_WORDS = {
    "E": ("ReconciliationError",),
    "R": ("resum", "rehydrat", "restor", "recover"),
    # "partial" and "generation" alone are functools.partial and GC generations:
    # in code words they only count next to a checkpoint word (see _Groups.decide).
    "S": ("summar", "Summar", "verbatim_refs", "drop_manifest"),
    "C": ("checkpoint", "Checkpoint", "ckpt"),
    "L": ("from_dict", "from_json", "model_validate", "load"),
    # within a function: a summary word and an invariant word (a validator or predicate)
    "G": ("generation", "partial", "verbatim", "complete"),
    "M": ("summar", "Summar", "verbatim_refs", "drop_manifest"),
    "T": ("tool", "Tool"),
    "K": ("messages", "turns", "transcript", "conversation", "history", "llm", "invoke", "completions", "compact",
          "generate_content"),
}


#: A module that lends its classes defines one, and imports a model library or returns
#: instances of a class it imports (a factory: decided on its tree, see ``may_lend``).
_LENDS_CLASS = "class "
#: Words that keep a lending module's function body (see ``lent_function_matters``).
_LENDS_MODEL = (
    "llm", "LLM", "Llm", "openai", "OpenAI", "anthropic", "Anthropic", "litellm", "ollama", "Ollama",
    "mistralai", "cohere", "genai", "langchain",
)
_LIBRARIES = ("openai", "anthropic", "litellm", "ollama", "mistralai", "cohere", "genai", "generativeai", "langchain")


@lru_cache(maxsize=1)
def _library_import() -> re.Pattern[str]:
    """A model library's import (compiled on first use)."""
    libraries = "|".join(_LIBRARIES)
    return re.compile(rf"^[ \t]*(?:import|from)[ \t]+(?:[\w.]*\.)?(?:{libraries})\b", re.MULTILINE)


#: The standard library's ways to start work and not wait for it (what SG304 calls a dispatch).
DISPATCH_CALLS = frozenset({
    "create_task", "ensure_future", "start_soon", "run_coroutine_threadsafe", "to_thread", "Thread",
    "run_in_executor", "submit", "call_soon", "call_soon_threadsafe",
})
#: What a fire-and-forget helper's text shows (see ``may_dispatch``).
_DISPATCH_WORDS = ("create_task(", "ensure_future(", "Thread(", "run_in_executor(", "to_thread(", "submit(", "start_soon(")


@lru_cache(maxsize=1)
def _instance_return() -> re.Pattern[str]:
    """``return Name(`` (compiled on first use); :func:`_returns_instance` checks the word
    boundary before it. A pattern that begins with ``\\b`` loses the regular expression
    engine's scan for its literal prefix: searching the corpus's 2,725 texts that define a
    class took 1.04 s that way, 0.03 s this way."""
    return re.compile(r"return[ \t]+[A-Z]\w*\(")


def _returns_instance(text: str) -> bool:
    """Whether ``text`` shows ``return Name(`` with ``return`` a whole word: what a
    factory's text shows."""
    for found in _instance_return().finditer(text):
        start = found.start()
        if start == 0 or not (text[start - 1].isalnum() or text[start - 1] == "_"):
            return True
    return False


@lru_cache(maxsize=1)
def _tool_word() -> re.Pattern[str]:
    """"tool" must be a word segment: ``search_tool``, ``tools``, not ``setuptools``.
    Compiled on first use: most runs never get as far as asking (SPEC §3.1.2)."""
    return re.compile(r"(?<![a-z])tools?(?![a-z])|Tool\b")


def _word(pattern: str) -> str | None:
    """The longest literal piece of the last meaningful segment of a vocabulary entry."""
    segments = [s for s in pattern.split(".") if s and s != "*"]
    if not segments:
        return None
    pieces = [p for p in re.split(r"[*?\[\]]+", segments[-1]) if p]
    return max(pieces, key=len) if pieces else None


class _Groups:
    """Literal groups, with the vocabulary's own words added."""

    def __init__(
        self, base: dict[str, tuple[str, ...]], resume: set[str], tools: set[str], interrupts: set[str] = frozenset()
    ) -> None:
        self.literals = dict(base)
        self.literals["R"] = base["R"] + tuple(sorted(resume))
        self.extra_tools = tuple(sorted(tools))
        #: A graph node that pauses (``interrupt``) re-runs from its start on resume (SG203).
        self.interrupts = tuple(sorted(interrupts))
        #: The framework models' words, and their summarizers' names (set by :class:`Prefilter`).
        self.framework: tuple[str, ...] = ()
        self.summarizers: tuple[str, ...] = ()

    def has(self, group: str, text: str) -> bool:
        if group == "T":
            if any(w in text for w in self.extra_tools):
                return True
            return ("tool" in text or "Tool" in text) and _tool_word().search(text) is not None
        return any(literal in text for literal in self.literals[group])

    def decide(self, text: str) -> bool:
        if self.has("E", text):
            return True
        if any(w in text for w in self.summarizers) and any(w in text for w in self.framework):
            # a framework's own words next to one of its summarizers (its model says both); the
            # summarizers first: they are rarer (86 of the real-code corpus's 4,727 texts against
            # 2,358), so most texts are scanned for 18 words, not 18 and 34
            return True
        if any(w in text for w in self.interrupts) and any(w in text for w in self.framework):
            return True  # a pause of a framework's node: the node re-runs from its start on resume
        resume = self.has("R", text)
        summary = self.has("S", text)
        checkpoint = summary and resume or self.has("C", text)
        if summary and checkpoint:
            return True
        if resume and (summary or checkpoint):
            return True
        if summary and self.has("L", text):
            return True
        if checkpoint and "G" in self.literals and self.has("G", text):
            return True
        if summary and self.has("K", text) or checkpoint and ("compact" in text or "Compact" in text):
            return True  # compaction, or a checkpoint next to it (SG301-SG304)
        return (resume or summary or checkpoint) and self.has("T", text)


class Prefilter:
    """Built once per run; :meth:`might_matter` is the per-file hot path."""

    def __init__(self, vocabulary: Vocabulary, extra_patterns: Iterable[str] = ()) -> None:
        resume = {_word(p) for c in ("resume-calls", "validators") for p in vocabulary.entries.get(c, ())}
        tools = {_word(p) for c in ("tool-calls", "tool-decorators") for p in vocabulary.entries.get(c, ())}
        resume_words = {w for w in resume if w and len(w) >= 4}
        tool_words = {w for w in tools if w and len(w) >= 4}
        pauses = {_word(p) for p in vocabulary.entries.get("interrupt-calls", ())}
        self._interrupt_words = {w for w in pauses if w and len(w) >= 4}
        self._text = _Groups(_TEXT, resume_words, tool_words, self._interrupt_words)
        self._words = _Groups(_WORDS, resume_words, tool_words, self._interrupt_words)
        for category, group in (("compaction-calls", "K"), ("checkpoint-writes", "C")):
            # Only names that are not reached through an import (``*.persist_state``,
            # ``write_ckpt``): a framework's qualified names bring their module's words.
            words = {_word(p) for p in vocabulary.entries.get(category, ()) if p.startswith("*.") or "." not in p}
            extra_words = tuple(sorted(w for w in words if w and len(w) >= 4))
            for groups in (self._text, self._words):
                groups.literals[group] = groups.literals[group] + extra_words
        # A framework's own checkpoint loads (``get_session``, ``get_state``, ``from_string``):
        # the method is the evidence, whatever the loaded value is called. Generic verbs
        # (``get``, ``load``, ``latest``), pydantic's ``validate_*`` and ``from_*`` (the L group) are no evidence here.
        loads = {_word(p) for p in vocabulary.entries.get("checkpoint-loads", ())}
        load_words = tuple(sorted(
            w for w in loads if w and len(w) >= 8 and "_" in w.strip("_") and not w.startswith(("validate_", "from_"))
        ))
        for groups in (self._text, self._words):
            groups.literals["C"] = groups.literals["C"] + load_words
        framework = tuple(sorted({w for m in vocabulary.frameworks for w in (*m.words, *m.packages)}))
        summarizers = {
            _word(p) for m in vocabulary.frameworks for c in ("compaction-calls", "summary-types")
            for p in m.vocabulary.get(c, ())
        }
        self._resume_methods = frozenset(n for m in vocabulary.frameworks for n in m.resume_methods)
        #: Keywords that hand a framework's run restored state (``message_history=``).
        self._state_keywords = tuple(sorted({k for m in vocabulary.frameworks for k in m.resume_state_keywords}))
        #: Keywords that make a framework's run a resume (``invocation_id=``).
        self._resume_keywords = tuple(sorted({k for m in vocabulary.frameworks for k in m.resume_keywords}))
        #: Words of graph structure the models name: node registrations, resume inputs.
        self._model_words = tuple(sorted(
            {n for m in vocabulary.frameworks for n in m.node_registrations}
            | {w for m in vocabulary.frameworks for p in m.resume_input_types if (w := _word(p))}
        ))
        for groups in (self._text, self._words):
            groups.framework = framework
            groups.summarizers = tuple(sorted(w for w in summarizers if w and len(w) >= 4))
        extra = [p for p in extra_patterns if p]
        #: Plugin rules' own patterns: a file they match is always kept.
        self.extra = re.compile("|".join(f"(?:{p})" for p in extra)) if extra else None

    def might_matter(self, text: str) -> bool:
        """The text scan (raw source)."""
        return self._text.decide(text) or self.wanted_by_plugin(text)

    def settles(self, text: str) -> bool:
        """Whether the text scan dismisses ``text`` and CPython compiles it: then the file
        has no finding and no error, and nothing of the engine (libcst) is needed to say
        so. CPython's refusal is the engine's to judge: libcst decides for the target
        grammar (see :mod:`.grammar`)."""
        return not self.might_matter(text) and host_parse_error(text) is None

    def code_matters(self, words: str) -> bool:
        """The same decision over a file's code words (see module doc)."""
        return self._words.decide(words)

    def function_matters(self, words: str) -> bool:
        """Whether one function's own words are evidence enough to analyze it:
        the file-level co-occurrence, or a summary word with an invariant word."""
        groups = self._words
        if any(w in words for w in self._interrupt_words):
            return True  # whether it is LangGraph's interrupt() is decided by qualified name
        if any(w in words for w in groups.summarizers) and any(w in words for w in self._resume_methods):
            return True  # a framework resume next to a summarizer: the graph values decide (see .graphs)
        if any(w in words for w in self._state_keywords) and any(w in words for w in self._resume_methods):
            return True  # a run handed restored state (`message_history=`): what the state and the agent are decides
        if any(w in words for w in self._resume_keywords) and any(w in words for w in self._resume_methods):
            return True  # a run told to resume (`invocation_id=`): what the runner was built with decides
        return groups.decide(words) or (groups.has("M", words) and groups.has("G", words))

    def any_evidence(self, words: str) -> bool:
        """Whether code words show any evidence group at all, even alone (see :mod:`.outline`)."""
        groups = self._words
        return any(groups.has(group, words) for group in ("E", "R", "S", "C", "K", "G", "T")) or any(
            w in words for w in (*self._interrupt_words, *self._model_words)
        )

    @staticmethod
    def may_lend(text: str) -> bool:
        """Whether a file the text scan rejects may still lend its classes to the analysis
        of others (see module doc): it defines a class, and imports a model library or
        returns an instance built by a call (a factory, which its tree confirms:
        :func:`~.names.returns_imported_instances`). Text alone, like every screening verdict."""
        if _LENDS_CLASS not in text or "import" not in text:
            return False  # two C-speed scans settle most files
        return Prefilter.imports_model_library(text) or _returns_instance(text)

    @staticmethod
    def may_be_context(path: str, text: str) -> bool:
        """Whether a file the text scan rejects may still be context for its importers
        (lends its classes, re-exports, or defines a fire-and-forget helper): its tree
        decides, where it is imported (:meth:`~.analyzer.Analyzer.lent_facts`)."""
        return Prefilter.re_exports(path, text) or Prefilter.lends_by_text(text)

    @staticmethod
    def lends_by_text(text: str) -> bool:
        """:meth:`may_be_context` of a file that is not a package's ``__init__``: what its
        text alone says (the command line caches it with the screening's verdict)."""
        return Prefilter.may_lend(text) or Prefilter.may_dispatch(text)

    @staticmethod
    def may_dispatch(text: str) -> bool:
        """Whether a file the text scan rejects may define a fire-and-forget helper (its
        tree decides: :func:`~.names.dispatches_parameters`): the work its callers hand it
        runs on after it returns (SG304)."""
        return any(word in text for word in _DISPATCH_WORDS)

    @staticmethod
    def re_exports(path: str, text: str) -> bool:
        """Whether a screened-out file is a package's ``__init__`` that imports: what it
        re-exports (``from .llm import LLM``) is how importers name the classes, so it is
        context like a lender, and the modules it imports are followed."""
        return path.endswith("__init__.py") and "import" in text

    @staticmethod
    def imports_model_library(text: str) -> bool:
        """Whether the text imports a model library (``openai``, ``anthropic``, ...)."""
        return any(word in text for word in _LIBRARIES) and _library_import().search(text) is not None

    @staticmethod
    def lent_function_matters(words: str, calls: Iterable[str]) -> bool:
        """Whether a function of a lending module keeps its body: its words name a model
        library or an LLM (an override that calls an SDK), or it builds an instance of a
        class (a factory's return: which class a value is decides what its methods run)."""
        return (
            any(word in words for word in _LENDS_MODEL)
            or any(c[:1].isupper() or c in DISPATCH_CALLS for c in calls)
        )

    def wanted_by_plugin(self, text: str) -> bool:
        return self.extra is not None and self.extra.search(text) is not None
