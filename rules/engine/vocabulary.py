"""Analyzer vocabulary: which qualified names are resumes, tools, validators...

Three sources, merged once per run: the defaults below, every plugin's
``summaryguard_vocabulary()`` answer, and the user's configuration. Entries
are qualified names or glob patterns. A pattern with a dot is matched against
the whole qualified name (``myapp.tools.*``, ``*.invoke``); a pattern without a
dot against its last segment (``fetch_*``). Each category is a set of names and
two tuples of prefixes and suffixes (:class:`NameMatcher`), so matching costs about
the same however many entries there are.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping

from summaryguard.plugins.framework import FrameworkModel, FrameworkModelError
from summaryguard.plugins.hookspecs import VOCABULARY_CATEGORIES

__all__ = ["CATEGORIES", "DEFAULTS", "NameMatcher", "Vocabulary", "is_name_pattern"]

#: One part of a dotted name, where ``*`` matches within the part: ``tools``, ``*``, ``fetch_*``.
#: Compiled (and cached by ``re``) on first use: a run without configured names never needs it.
_NAME_PART = r"(?:\*+|\**[^\W\d][\w*]*)"


def is_name_pattern(value: str) -> bool:
    """Whether ``value`` is a qualified name or name pattern (``myapp.tools.*``, ``*.invoke``):
    what the configuration and a plugin may add to a vocabulary category. Each part must
    match whole (``re.fullmatch``: ``$`` would let ``"abcd\\n"`` through, and the pre-filter's
    word tests rely on no word holding a line break)."""
    return all(re.fullmatch(_NAME_PART, part) for part in value.split("."))


#: The categories of the ``summaryguard_vocabulary`` hook: one list, kept with
#: the hook's documentation.
CATEGORIES = VOCABULARY_CATEGORIES

_GUARD = "summaryguard.guard"

#: Built-in knowledge. Method-name globs (``*.resume_context``) still need a
#: second vote (a checkpoint- or summary-like receiver) before they count.
DEFAULTS: Mapping[str, tuple[str, ...]] = {
    "resume-calls": (
        "*.resume_context",
        "*.rehydrate",
        "*.rehydrate_summary",
        "*.rehydrate_context",
        "*.resume_from_summary",
        "*.restore_from_summary",
        "rehydrate_summary",
        "resume_from_summary",
    ),
    "resume-inputs": (),
    "summary-types": (f"{_GUARD}.Summary", f"{_GUARD}.model.Summary"),
    "checkpointers": (),
    "interrupt-calls": (),
    "tool-calls": (),
    "tool-decorators": (f"{_GUARD}.tool_guard", f"{_GUARD}.tools.tool_guard"),
    "compaction-calls": ("*.compact", "*.summarize", "summarize_messages", "*.summarize_messages"),
    "checkpoint-writes": (f"{_GUARD}.CheckpointStore.save", "*.save_checkpoint", "*.write_checkpoint"),
    "checkpoint-loads": (
        f"{_GUARD}.Checkpoint.from_json",
        f"{_GUARD}.Checkpoint.from_dict",
        f"{_GUARD}.model.Checkpoint.from_json",
        f"{_GUARD}.model.Checkpoint.from_dict",
        f"{_GUARD}.CheckpointStore.load",
        f"{_GUARD}.CheckpointStore.latest",
        f"{_GUARD}.CheckpointStore.load_path",
        f"{_GUARD}.store.CheckpointStore.load",
        f"{_GUARD}.store.CheckpointStore.latest",
        f"{_GUARD}.store.CheckpointStore.load_path",
        "*.load_checkpoint",
        "*.get_tuple",
        "*.get_state",
    ),
    "validators": (
        f"{_GUARD}.check_resume",
        f"{_GUARD}.check.check_resume",
        f"{_GUARD}.resume_guard",
        f"{_GUARD}.resume.resume_guard",
    ),
}

#: Exception classes whose capture is a reconciliation decision.
RECONCILIATION_ERRORS = (
    f"{_GUARD}.SummaryReconciliationError",
    f"{_GUARD}.errors.SummaryReconciliationError",
    f"{_GUARD}.CheckpointIntegrityError",
    "*ReconciliationError",
)


class NameMatcher:
    """A set of qualified names and globs, matched as :func:`fnmatch.fnmatchcase` would.

    Nearly every entry is a plain name or has one ``*`` at an end (``*.resume_context``,
    ``fetch_*``): 327 of the 328 entries of the 14 matchers of a run with the built-in
    plugins (312 plain names). Those are a set and two tuples for
    ``str.endswith`` / ``str.startswith``, and only the rest is compiled into a
    regular expression. One alternation of every entry cost 18 ms to compile, paid
    by every run that matched a name (a pre-commit hook on one small file), and
    ``re`` tries the alternatives of such a pattern one by one. Prepared on first
    use: a run whose files the text pre-filter all dismisses matches no name."""

    __slots__ = ("_dotted", "_bare", "_compiled", "patterns")

    def __init__(self, patterns: Iterable[str]) -> None:
        self.patterns = tuple(sorted(set(patterns)))
        self._dotted = self._bare = _NO_GLOBS
        self._compiled = False

    def _compile(self) -> None:
        self._dotted = _Globs([p for p in self.patterns if "." in p])
        self._bare = _Globs([p for p in self.patterns if "." not in p])
        self._compiled = True

    def __call__(self, qualified_name: str | None) -> bool:
        if not qualified_name:
            return False
        if not self._compiled:
            self._compile()
        return self._dotted.match(qualified_name) or self._bare.match(qualified_name.rpartition(".")[2])

    def __bool__(self) -> bool:
        return bool(self.patterns)


class _Globs:
    """Globs matched against a whole string: plain names, ``*x`` suffixes, ``x*``
    prefixes, and a regular expression of the rest (``a*b``, ``?``, ``[...]``)."""

    __slots__ = ("exact", "suffixes", "prefixes", "rest")

    def __init__(self, patterns: Iterable[str]) -> None:
        exact: set[str] = set()
        suffixes: list[str] = []
        prefixes: list[str] = []
        rest: list[str] = []
        for pattern in patterns:
            tail, head = pattern.lstrip("*"), pattern.rstrip("*")  # fnmatch reads ``**`` as ``*``
            if not _GLOB_SIGNS.intersection(pattern):
                exact.add(pattern)
            elif not _GLOB_SIGNS.intersection(tail):
                suffixes.append(tail)
            elif not _GLOB_SIGNS.intersection(head):
                prefixes.append(head)
            else:
                rest.append(fnmatch.translate(pattern))
        self.exact = frozenset(exact)
        self.suffixes = tuple(suffixes)
        self.prefixes = tuple(prefixes)
        self.rest = re.compile("|".join(rest)) if rest else None

    def match(self, name: str) -> bool:
        return (
            name in self.exact or name.endswith(self.suffixes) or name.startswith(self.prefixes)
            or (self.rest is not None and self.rest.match(name) is not None)
        )


#: What makes an entry a glob for :func:`fnmatch.fnmatchcase`.
_GLOB_SIGNS = frozenset("*?[")
_NO_GLOBS = _Globs(())


#: The categories whose calls :func:`.solver.solve` looks for in a function's own calls.
_SINKS = ("resume-calls", "resume-inputs", "tool-calls", "interrupt-calls", "validators", "checkpoint-loads")


class Vocabulary:
    """The merged vocabulary of one run; build it once with :meth:`build`.

    A plain class, not a dataclass: every ``check`` builds one, a pre-commit run on a
    dismissed file too (see :mod:`summaryguard.rules.cli.report`). Two vocabularies are
    equal when their entries, problems and models are."""

    __slots__ = ("entries", "problems", "frameworks", "model_errors", "_matchers", "_tool_run_methods",
                 "_tool_factories", "_summary_views", "_known_call_names")

    def __init__(
        self,
        entries: Mapping[str, tuple[str, ...]],
        problems: tuple[str, ...] = (),
        frameworks: tuple[FrameworkModel, ...] = (),
        model_errors: tuple[str, ...] = (),
    ) -> None:
        self.entries = entries
        #: Problems found while merging (an unknown category from a plugin, a bad
        #: pattern); the CLI reports them, the engine goes on without the entry.
        self.problems = problems
        #: The framework models of the run (see :mod:`summaryguard.plugins.framework`).
        self.frameworks = frameworks
        #: Framework models that could not be read (an unknown key...): the run cannot go on.
        self.model_errors = model_errors
        self._matchers = {category: NameMatcher(entries.get(category, ())) for category in CATEGORIES}
        self._matchers["reconciliation-errors"] = NameMatcher(RECONCILIATION_ERRORS)
        self._tool_run_methods = frozenset(n for m in frameworks for n in m.tool_run_methods)
        self._tool_factories = NameMatcher(n for m in frameworks for n in m.tool_factories)
        self._summary_views = NameMatcher(n for m in frameworks for n in m.summary_views)
        self._known_call_names: NameMatcher | None = None

    def _key(self) -> tuple[object, ...]:
        return (self.entries, self.problems, self.frameworks, self.model_errors)

    def __eq__(self, other: object) -> bool:
        return self._key() == other._key() if isinstance(other, Vocabulary) else NotImplemented

    __hash__ = None  # type: ignore[assignment]  # entries is a dict, as a dataclass's would be unhashable

    def __repr__(self) -> str:
        return (
            f"Vocabulary(entries={self.entries!r}, problems={self.problems!r}, "
            f"frameworks={self.frameworks!r}, model_errors={self.model_errors!r})"
        )

    @classmethod
    def build(
        cls,
        *,
        tool_calls: Iterable[str] = (),
        resume_calls: Iterable[str] = (),
        validators: Iterable[str] = (),
        compaction_calls: Iterable[str] = (),
        checkpoint_writes: Iterable[str] = (),
        use_plugins: bool = True,
        frameworks: Iterable[FrameworkModel] | None = None,
    ) -> Vocabulary:
        """Defaults, then framework models and plugin contributions, then the
        user's configured names. ``frameworks`` replaces the plugins' models
        (tests build a vocabulary for a model of their own)."""
        merged: dict[str, list[str]] = {c: list(DEFAULTS.get(c, ())) for c in CATEGORIES}
        problems: list[str] = []
        model_errors: list[str] = []
        models = list(frameworks) if frameworks is not None else _plugin_frameworks(model_errors) if use_plugins else []
        for model in models:
            for category, names in model.vocabulary.items():
                merged[category].extend(names)
        if use_plugins:
            for contribution in _plugin_contributions(problems):
                for category, names in contribution.items():
                    if category not in merged:
                        problems.append(f"plugin vocabulary category {category!r} is unknown")
                        continue
                    if isinstance(names, str):
                        names = (names,)
                    for name in names:
                        if isinstance(name, str) and is_name_pattern(name):
                            merged[category].append(name)
                        else:
                            problems.append(
                                f"plugin vocabulary entry {name!r} in {category!r} is not a qualified name or "
                                "name pattern: left out"
                            )
        merged["tool-calls"].extend(tool_calls)
        merged["resume-calls"].extend(resume_calls)
        merged["validators"].extend(validators)
        merged["compaction-calls"].extend(compaction_calls)
        merged["checkpoint-writes"].extend(checkpoint_writes)
        entries = {c: tuple(sorted(set(v))) for c, v in merged.items()}
        return cls(entries, tuple(problems), tuple(models), tuple(model_errors))

    @property
    def tool_run_methods(self) -> frozenset[str]:
        """Methods that run a framework's tool object (from the framework models)."""
        return self._tool_run_methods

    def is_tool_factory(self, qualified_name: str) -> bool:
        """Whether ``qualified_name`` makes a tool object of a function (a model's ``tool_factories``)."""
        return self._tool_factories(qualified_name)

    def is_summary_view(self, qualified_name: str | None) -> bool:
        """Whether ``qualified_name`` is a class (or builds one) whose instances hold earlier
        summaries among their events (a model's ``summary_views``)."""
        return self._summary_views(qualified_name)

    def may_be_known_call(self, name: str) -> bool:
        """Whether a call whose callee's last name is ``name`` (``invoke`` in ``graph.invoke``)
        may be a source or a sink the analysis knows by its name: in a category of resumes
        (or a resume's input), tool calls, pauses, validators or checkpoint loads; a method
        a framework model names (a resume, a tool run, a run call or its guard); or a verb the
        evidence reads (a generic resume, an agent's run method, a deserializer, see
        :mod:`.lexicon`). Only the qualified name and the value decide; this says where
        looking is worth it (see :func:`.solver.solve`)."""
        matcher = self._known_call_names
        if matcher is None:
            last = {pattern.rpartition(".")[2] for category in _SINKS for pattern in self.entries.get(category, ())}
            from . import lexicon  # the engine's, never needed by a run the pre-filter ends

            last.update(lexicon.WEAK_RESUME_NAMES, lexicon.RUN_METHODS, lexicon.LOAD_METHODS)
            for model in self.frameworks:
                for names in (model.resume_methods, model.tool_run_methods, model.run_calls, model.run_guards):
                    last.update(n.rpartition(".")[2] for n in names)
            matcher = self._known_call_names = NameMatcher(sorted(n for n in last if n))
        return matcher(name)

    def matches(self, category: str, qualified_name: str | None) -> bool:
        """Whether ``qualified_name`` is in ``category`` (exact name or pattern)."""
        return self._matchers[category](qualified_name)

    def fingerprint(self) -> str:
        """A stable digest of the entries (part of the CLI's cache key)."""
        import hashlib  # only a run that opens the cache asks: a pre-commit hook's dismissed file does not

        text = "\n".join(f"{c}={','.join(self.entries.get(c, ()))}" for c in CATEGORIES)
        text += "\n" + "\n".join(repr(model) for model in self.frameworks)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def _hook_answers(hook: str, what: str, problems: list[str]) -> list[object]:
    """Every plugin's non-None answer to ``hook``; a plugin that fails costs its answer, not the run."""
    from summaryguard.plugins.manager import builtin_answers, get_plugin_manager

    try:
        # The built-ins alone are asked without pluggy (a dismissed file's run builds no manager).
        answers = builtin_answers(hook)
        if answers is None:
            answers = getattr(get_plugin_manager().hook, hook)()
    except Exception as exc:  # noqa: BLE001 - a broken plugin costs its answer, not the run
        problems.append(f"plugin {what} failed: {type(exc).__name__}: {exc}")
        return []
    return [answer for answer in answers if answer is not None]


def _plugin_frameworks(problems: list[str]) -> list[FrameworkModel]:
    """Every plugin's framework models, validated; a broken model costs itself, not the run."""
    models = []
    for answer in _hook_answers("summaryguard_frameworks", "framework models", problems):
        if isinstance(answer, Mapping) or not isinstance(answer, (list, tuple)):
            problems.append(f"plugin framework models must be a list of mappings, got {type(answer).__name__}")
            continue
        for data in answer:
            try:
                models.append(FrameworkModel.from_mapping(data))
            except FrameworkModelError as exc:
                problems.append(str(exc))
    return sorted(models, key=lambda m: m.name)


def _plugin_contributions(problems: list[str]) -> list[Mapping[str, Iterable[str]]]:
    contributions = []
    for answer in _hook_answers("summaryguard_vocabulary", "vocabulary", problems):
        if not isinstance(answer, Mapping):
            problems.append(f"plugin vocabulary must be a mapping, got {type(answer).__name__}")
            continue
        contributions.append(answer)
    return contributions
