"""The run's analyzer, built when a file first needs it.

Why: building an :class:`~..engine.Analyzer` imports every rule module, the
engine and libcst (about 0.2 s), and a run whose files the result cache answers
needs none of them: it reads files, digests them and looks the digests up. A warm
check of the real-code corpus (4,729 files) spent 0.2 of its 1.4 s importing
what it never used. The command line hands :func:`~.batch.check_files` a
:class:`LazyAnalyzer`: its text pre-filter is built at once (it imports no
libcst), a file the pre-filter dismisses and CPython compiles is screened without
the engine (as :func:`.runner._quick_screen` does), and the engine is built the
first time a file is screened in, is rejected by CPython, lends its facts, or is
analyzed.

Only where the rules are known by their file names (every rule ships with
summaryguard, see :func:`~..engine.registry.known_codes`): a plugin rule from
elsewhere may widen the pre-filter (``PREFILTER``), which only its class says, so
such a run builds its :class:`~..engine.Analyzer` at once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from ..engine import Analyzer, LintRule, Vocabulary
    from ..engine.prefilter import Prefilter

__all__ = ["LazyAnalyzer"]


class LazyAnalyzer:
    """What :func:`~.batch.check_files` asks of an analyzer, with the
    :class:`~..engine.Analyzer` built on first need from ``load_rules()`` (the rule
    classes; called once). ``prefilter`` is ``Prefilter(vocabulary)``, which equals the
    analyzer's own when no rule widens it (tests/rules/test_rule_registry.py)."""

    def __init__(
        self,
        vocabulary: Vocabulary,
        prefilter: Prefilter,
        load_rules: Callable[[], Sequence[type[LintRule]]],
        target_version: str | None = None,
    ) -> None:
        self.vocabulary = vocabulary
        self.prefilter = prefilter
        self.target_version = target_version
        self._load_rules = load_rules
        self._built: Analyzer | None = None

    @property
    def built(self) -> bool:
        """Whether the analyzer was needed (and built) so far."""
        return self._built is not None

    def analyzer(self) -> Analyzer:
        """The run's analyzer, built on the first call."""
        if self._built is None:
            from ..engine import Analyzer

            self._built = Analyzer(self.vocabulary, self._load_rules(), target_version=self.target_version)
        return self._built

    @property
    def rule_classes(self) -> tuple[type[LintRule], ...]:
        """The engine's rule classes: this builds the analyzer (a pool's workers are handed
        them, see :mod:`.workers`)."""
        return self.analyzer().rule_classes

    def might_matter(self, text: str) -> bool:
        return self.prefilter.might_matter(text)

    def screen_facts(self, path: str, text: str) -> Any:
        """:meth:`~..engine.Analyzer.screen_facts`. A text the pre-filter settles
        (:meth:`~..engine.prefilter.Prefilter.settles`) is answered here as the engine
        answers it (no finding, no error, no facts): a new or edited file of that kind
        (most files) does not build the analyzer."""
        if self._built is None and self.prefilter.settles(text):
            return False, [], None
        return self.analyzer().screen_facts(path, text)

    def lent_facts(self, path: str, text: str) -> Any:
        """:meth:`~..engine.Analyzer.lent_facts`; None at once for a text that cannot lend
        (its first test, on the text alone)."""
        if self._built is None and not self.prefilter.may_be_context(path, text):
            return None
        return self.analyzer().lent_facts(path, text)

    def analyze(
        self,
        sources: Sequence[tuple[str, str]],
        facts: Mapping[str, Any] | None = None,
        context: Sequence[tuple[str, str]] = (),
    ) -> Any:
        return self.analyzer().analyze(sources, facts, context)
