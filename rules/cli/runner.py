"""One ``summaryguard check`` run: configuration, discovery, reading, analysis, filtering, report.

Everything costly is built once per run, never per file (Fixit's weak spot):
the configuration, the rule selection, the vocabulary (which asks every
plugin once) and the analyzer. Files are then read, decoded and handed to the
analyzer as one batch, so the engine can look across modules of the project.

Errors are data: a path that does not exist, a file that cannot be read or
decoded, a file the engine cannot parse are all collected with their cause and
reported next to the findings; the run always goes on to the next file.

The engine (libcst, the rule modules, the analyzer: about half a second to
import) loads only when a file needs it (SPEC §3.1.2). The configuration, the
rule codes (from file names, see :func:`~..engine.registry.known_codes`), the
vocabulary and the text pre-filter come first; a pre-commit run on a few files
that the pre-filter all dismisses and CPython all compiles (see
:func:`_quick_screen`) is reported from there: no findings, no syntax errors,
only SG001's comment check, which needs no engine either. Anything else (a
file the pre-filter keeps, a file CPython rejects, whose verdict libcst gives
for the target grammar, a plugin rule from outside summaryguard, the SARIF
format, which describes the rule classes) takes the full path, where the engine
is still built only when a file needs it (:mod:`.lazy_analyzer`): a run the
result cache answers imports neither libcst, a rule nor the analyzer.
"""

# No ``from __future__ import annotations``: its NamedTuple would compile each
# annotation given as a string (see summaryguard.rules.cli.report).
import os
import time
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TextIO

from .config import TABLE, Config, ConfigError, check_codes, load_config
from .deepstack import call_with_deep_stack
from .discovery import discover
from .exitcodes import ExitCode
from .fingerprint import fingerprints, project_path
from .formats import DEFAULT_FORMAT, write_report
from .markers import may_hold_suppressions
from .report import BaselineStats, ErrorLike, FindingLike, ReadError, Report, RuleInfo, displayable
from .selection import SelectorError, expand, resolve, unknown_selectors
from .sources import decode_source, read_source_bytes
from .unused import CODE as UNUSED_SUPPRESSION
from ..engine.prefilter import Prefilter
from ..engine.registry import known_codes
from ..engine.vocabulary import Vocabulary

if TYPE_CHECKING:  # pragma: no cover
    from .cache import ResultCache
    from .lazy_analyzer import LazyAnalyzer
    from ..engine import Analyzer

__all__ = ["CheckOptions", "UsageError", "run_check"]


class UsageError(Exception):
    """A command-line value is unusable (exit 2, with the message)."""


class CheckOptions(NamedTuple):
    """The ``check`` command's options, as the command line gives them."""

    #: Files and folders; none means the current folder (paths shown without ``./``).
    paths: tuple[str, ...] = ()
    #: ``--select``: replaces the configuration's ``select`` when given.
    select: tuple[str, ...] | None = None
    #: ``--ignore``: added to the configuration's ``ignore``.
    ignore: tuple[str, ...] = ()
    config: str | None = None
    fmt: str = DEFAULT_FORMAT
    #: Worker processes for screening files (default: all cores; see :mod:`.batch`).
    jobs: int | None = None
    #: ``--no-cache`` gives False: results are neither read from nor written to the cache.
    cache: bool = True
    #: ``--baseline FILE``: findings recorded there are not reported.
    baseline: str | None = None
    #: ``--write-baseline``: record this run's findings in the baseline file instead.
    write_baseline: bool = False
    #: ``--force-exclude``: ``exclude`` applies to paths named on the command line too.
    force_exclude: bool = False
    #: ``--show-trace``: the text format prints each finding's evidence chain.
    show_trace: bool = False


def _escape(text: str) -> str:
    """A path as typed, for one line of stderr (see :func:`.formats.text.escape`); imported
    here, on these rare messages, so a run writing another format never loads the text one."""
    from .formats.text import escape

    return escape(text)


def run_check(options: CheckOptions, stdout: TextIO, stderr: TextIO, cwd: Path | None = None) -> ExitCode:
    """Run a check and write its report; the return value is the exit status.

    Raises :class:`ConfigError` or :class:`UsageError` before anything is
    analyzed when the run cannot be set up.
    """
    started = time.perf_counter()
    if cwd is None:
        try:
            cwd = Path.cwd()
        except FileNotFoundError:
            raise UsageError("the current folder no longer exists (deleted?); run from an existing folder") from None
    if options.write_baseline and options.baseline is None:
        raise UsageError("--write-baseline needs --baseline FILE (the file to write)")
    config = load_config(options.config, cwd)

    rule_codes = known_codes(use_plugins=True)  # file names: no rule module, no libcst
    known = rule_codes.codes
    check_codes(config, known)
    codes = _selected_codes(config, options, known)
    baseline_path = None if options.baseline is None else Path(options.baseline)  # like PATHs: as given
    if baseline_path is not None:
        from .baseline import compare, entries_for, load_baseline, writable_baseline, write_baseline

        if options.write_baseline:
            writable_baseline(baseline_path)  # refused before the analysis, not after it
    baseline = None if baseline_path is None or options.write_baseline else load_baseline(baseline_path)
    vocabulary = Vocabulary.build(
        tool_calls=config.tool_calls,
        resume_calls=config.resume_calls,
        validators=config.validators,
        compaction_calls=config.compaction_calls,
        checkpoint_writes=config.checkpoint_writes,
        use_plugins=True,
    )
    for problem in vocabulary.problems:
        stderr.write(f"summaryguard: warning: {problem}\n")
    if vocabulary.model_errors:
        raise ConfigError("plugins", "; ".join(vocabulary.model_errors))

    found = discover(options.paths, root=config.root, exclude=config.exclude_spec, force_exclude=options.force_exclude)
    errors: list[ErrorLike] = list(found.errors)
    for warning in found.warnings:
        stderr.write(f"summaryguard: warning: {_escape(warning)}\n")
    quick = None
    # Built-in rules and the rooms' rules widen no pre-filter (tests/rules/test_rule_registry.py).
    prefilter = Prefilter(vocabulary) if rule_codes.from_names else None
    if prefilter is not None and options.fmt not in _DESCRIBES_RULES and len(found.files) <= QUICK_MAX_FILES:
        quick = _quick_screen(found.files, prefilter)
    rule_infos: list[RuleInfo] = []
    may_suppress: dict[str, bool] = {}  # by path, where the run knows it (see _keep_reported)
    if quick is not None:
        sources, raw_findings = quick
        errors.extend(error for error in sources if isinstance(error, ReadError))
        sources = [item for item in sources if not isinstance(item, ReadError)]
    else:
        from .batch import check_files  # the worker pool (multiprocessing) too

        engine_rules = _EngineRules(codes)
        analyzer: "Analyzer | LazyAnalyzer"
        if prefilter is not None:  # the engine (libcst) loads only when a file needs it
            from .lazy_analyzer import LazyAnalyzer

            analyzer = LazyAnalyzer(vocabulary, prefilter, engine_rules.load, config.target_version)
            cache = _open_cache(config, vocabulary, rule_codes=engine_rules.codes) if options.cache else None
        else:
            from .. import engine

            analyzer = engine.Analyzer(vocabulary, engine_rules.load(), target_version=config.target_version)
            cache = _open_cache(config, vocabulary, rules=analyzer.rule_classes) if options.cache else None
        batch = check_files(found.files, analyzer, cache, options.jobs or os.cpu_count() or 1, root=config.root)
        sources, raw_findings, may_suppress = batch.sources, batch.findings, batch.may_suppress
        errors.extend(batch.errors)
        for warning in dict.fromkeys(batch.warnings):
            stderr.write(f"summaryguard: warning: {warning}\n")
        if options.fmt in _DESCRIBES_RULES:
            rule_infos = engine_rules.infos()
    texts = dict(sources)
    failed = {error.path for error in errors}
    findings = _keep_reported(raw_findings, texts, config, known, codes, failed, may_suppress)
    prints = fingerprints(findings, texts, config.root)

    stats = None
    if baseline_path is not None:
        # As the baseline file (UTF-8 JSON) holds them: a file name that is not UTF-8 shows its bytes as \xNN.
        paths = {path: displayable(project_path(path, config.root)) for path in texts}
        if options.write_baseline:
            baseline = entries_for(findings, prints, paths)
            write_baseline(baseline_path, baseline)
            stderr.write(f"summaryguard: wrote {len(baseline)} findings to baseline {_escape(str(options.baseline))}\n")
        assert baseline is not None
        checked = {paths[path] for path in texts if path not in failed}
        comparison = compare(findings, prints, baseline, checked, codes)
        findings = comparison.new
        stats = BaselineStats(str(options.baseline), comparison.matched, comparison.stale)

    report = Report.build(
        findings,
        errors,
        files=len(found.files),
        seconds=time.perf_counter() - started,
        rules=rule_infos,
        fingerprints=prints,
        baseline=stats,
        show_trace=options.show_trace,
    )
    if not found.files and not found.errors:
        where = _escape(", ".join(options.paths) or os.curdir)
        stderr.write(f"summaryguard: warning: no Python files found in {where}\n")
    write_report(report, options.fmt, stdout)
    if report.errors:
        return ExitCode.ERROR
    return ExitCode.FINDINGS if report.findings else ExitCode.OK


#: Formats that describe the selected rule classes (SARIF's ``tool.driver.rules``): they need them loaded.
_DESCRIBES_RULES = frozenset({"sarif"})
#: Up to this many files, a run first tries :func:`_quick_screen`. A pre-commit hook passes
#: a few staged files; a larger run takes the full path at once, where the result cache and
#: the worker pool pay (and importing the engine is a small part of its cost).
QUICK_MAX_FILES = 64


def _quick_screen(paths: Sequence[str], prefilter: Prefilter) -> tuple[list[tuple[str, str] | ReadError], list[Any]] | None:
    """``(sources and read errors in order, findings)`` of a run that needs no engine, or None.

    That is a run where the text pre-filter dismisses every file and CPython compiles
    each: :mod:`.batch` then reports exactly this (no finding, no syntax error; a
    file CPython rejects may still be valid for the target grammar, which only
    libcst decides, see :mod:`..engine.grammar`). Stops at the first file that
    needs the engine. The result cache is neither read nor written: both checks
    cost less than opening it, and what it holds stays valid (a verdict depends
    on the text and the settings alone)."""

    def work() -> list[tuple[str, str] | ReadError] | None:
        items: list[tuple[str, str] | ReadError] = []
        for path in paths:
            raw = read_source_bytes(path)
            if isinstance(raw, ReadError):
                items.append(raw)
                continue
            text = decode_source(path, raw)
            if isinstance(text, ReadError):
                items.append(text)
                continue
            if not prefilter.settles(text):  # the full path: the engine judges it
                return None
            items.append((path, text))
        return items

    items = call_with_deep_stack(work)  # as deep as the engine's own syntax check (see .batch)
    return None if items is None else (items, [])


class _EngineRules:
    """The rules of a run, imported when first asked for (they import libcst, see
    :mod:`.lazy_analyzer`): ``selected`` are the codes the run reports, ``codes`` those
    the engine runs (SG001 is judged after the analysis, see sg001_unused_suppression)."""

    def __init__(self, selected: Collection[str]) -> None:
        self.selected = frozenset(selected)
        self.codes = self.selected - {UNUSED_SUPPRESSION}

    def load(self) -> list[type]:
        """The classes the engine runs."""
        from .. import engine

        return [rule for rule in engine.all_rules(use_plugins=True) if rule.code in self.codes]

    def infos(self) -> list[RuleInfo]:
        """What the formats that describe rules say of each selected rule, SG001's included."""
        from .. import engine
        from .catalog import rule_info

        return [rule_info(rule, engine.rule_doc) for rule in engine.all_rules(use_plugins=True) if rule.code in self.selected]


def _open_cache(
    config: Config,
    vocabulary: object,
    rules: Sequence[type] | None = None,
    rule_codes: Collection[str] | None = None,
) -> "ResultCache":
    """The cache folder for this configuration and these settings (see :mod:`.cache`):
    the rules named by their classes or, where all ship with summaryguard, their codes."""
    from .cache import ResultCache, cache_folder, settings_key

    key = settings_key(
        rules=rules,
        rule_codes=rule_codes,
        vocabulary_fingerprint=vocabulary.fingerprint(),  # type: ignore[attr-defined]
        config_text=config.source_text,
        config_path=str(config.path or ""),
    )
    return ResultCache(cache_folder(config.root), key)


def _selected_codes(config: Config, options: CheckOptions, known: Collection[str]) -> frozenset[str]:
    """The codes to report; a selection that leaves nothing to check is an error, not a clean run."""
    if options.select is not None and not options.select:
        raise UsageError(
            "--select: no rule code or prefix given, so nothing would be checked; name codes or "
            "prefixes (SG1,SG201 or ALL), or leave --select out to use the configured select"
        )
    for flag, selectors in (("--select", options.select or ()), ("--ignore", options.ignore)):
        bad = unknown_selectors(selectors, known)
        if bad:
            raise UsageError(f"{flag}: {SelectorError(bad, known)}")
    select = config.select if options.select is None else options.select
    codes = resolve(select, [*config.ignore, *options.ignore], known)
    if codes:
        return codes
    if options.select is None and not options.ignore:
        raise ConfigError(
            config.display_path,
            f"{TABLE} ignore: it removes every rule that select chooses, so nothing would be checked",
            config.key_line("ignore"),
        )
    if options.select is not None:
        chosen = "--select"
    elif config.key_line("select") is not None:
        chosen = f"select in {config.display_path}"
    else:
        chosen = "the default selection (ALL)"
    ignores = (("--ignore", options.ignore), (f"ignore in {config.display_path}", config.ignore))
    sources = [where for where, values in ignores if values]
    verb = "remove" if len(sources) > 1 else "removes"
    raise UsageError(f"{' and '.join(sources)} {verb} every rule that {chosen} chooses, so nothing would be checked")


def _keep_reported(
    findings: Sequence[FindingLike],
    texts: dict[str, str],
    config: Config,
    known: Collection[str],
    selected: Collection[str],
    failed: Collection[str],
    may_suppress: Mapping[str, bool],
) -> list[FindingLike]:
    """Drop findings silenced by ``per-file-ignores`` or a comment on their line;
    add SG001 for comments that silence nothing (in files analyzed without error).
    ``may_suppress``: :func:`.markers.may_hold_suppressions` of the texts, where the run
    already knows it (the result cache keeps it); asked of the others."""
    per_file = [(entry.spec, _expand_all(entry.codes, known)) for entry in config.per_file_ignores]
    root = str(config.root)
    by_path: dict[str, list[FindingLike]] = {}
    for finding in findings:
        by_path.setdefault(finding.path, []).append(finding)
    judge_comments = UNUSED_SUPPRESSION in selected
    paths = [*by_path, *(p for p in texts if p not in by_path and p not in failed)] if judge_comments else by_path
    kept: list[FindingLike] = []
    for path in paths:
        group = by_path.get(path, [])
        ignored: set[str] = set()
        if per_file:
            relative = _relative_to(path, root)
            for spec, codes in per_file:
                if spec.match_file(relative):
                    ignored |= codes
        group = [f for f in group if f.code not in ignored]
        text = texts.get(path)
        # A file with neither findings nor suppression comments keeps nothing and gets no SG001:
        # the comment parser, SG001's module and the engine's Finding load only for a file
        # that has either (see .markers).
        if text is not None and (group or judge_comments and _may_suppress(path, text, may_suppress)):
            from .unused import check_comments

            checked = () if path in failed else [code for code in selected if code not in ignored]
            group = check_comments(path, text, group, checked, known)
        kept.extend(group)
    return kept


def _may_suppress(path: str, text: str, known: Mapping[str, bool]) -> bool:
    found = known.get(path)
    return may_hold_suppressions(text) if found is None else found


def _expand_all(selectors: Sequence[str], known: Collection[str]) -> set[str]:
    codes: set[str] = set()
    for selector in selectors:
        codes |= expand(selector, known)
    return codes


def _relative_to(path: str, root: str) -> str:
    """``path`` relative to the configuration's folder, with ``/``; its name alone if outside."""
    absolute = os.path.abspath(path)
    prefix = root if root.endswith(os.sep) else root + os.sep
    relative = absolute[len(prefix) :] if absolute.startswith(prefix) else os.path.basename(absolute)
    return relative.replace(os.sep, "/") if os.sep != "/" else relative

