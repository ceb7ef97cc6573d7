"""The engine's entry point: pre-filter, parse, summarize, then one rule pass per file.

Order of work, cheapest first, so that cost is paid only where it can matter:

1. the text pre-filter (one compiled regex per run) rejects most files
   (CPython's parser only checks their syntax);
2. libcst parses the rest, without metadata, and the project index records
   imports and functions (a context module is indexed from what the screening
   recorded of CPython's tree, :mod:`.module_index`, and converted to libcst's
   nodes only when the analysis reads one: :meth:`.project.Project.add_outline`);
3. function summaries are solved across all parsed modules (a validator in
   ``recovery.py`` protects a resume in ``loop.py``), callees first, and in
   context modules only for what the checked modules reach (see :mod:`.solver`);
   then the semantic model of each file is built;
4. only files whose model holds something a selected rule reports (or that a
   model-independent plugin rule wants) get position metadata and the single
   batched visitor pass of all rules.

Nothing here raises for bad input: syntax errors, too-deep nesting, a file
too large to analyze (:data:`MAX_LINES`, :data:`MAX_CHARS`, decided on the
text before any parse; :data:`MAX_DEPTH`, on CPython's tree before libcst is paid) and a rule failing on one
file become :class:`FileError` entries and the run goes on.

Syntax errors are reported for every file, the ones the text pre-filter
rejects included (SPEC 3.2: a file that could not be parsed is an error, exit
2): a rejected file goes through CPython's parser alone
(:meth:`Analyzer.syntax_errors`, no scan, no libcst unless CPython rejects it), which costs about 2 ms
per file (4.5-6 s of CPU for the 2,411 files of the benchmark corpus it
rejects, spread over the worker processes by the CLI; a full cold run of the
corpus stays within its run-to-run noise). Only CPython's syntax errors count
there: a rejected file that merely nests too deeply for CPython's compiler is
not reported, since it is never analyzed. What CPython's parser rejects is
decided by libcst for the grammar the project targets (SPEC 3.1.1 "Python
versions", :mod:`.grammar`): a file libcst parses is never a syntax error because
the running interpreter is older, and it is analyzed from a lowered tree.
The size limits are checked before any parse (:func:`_size_error`).
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from .base import LintRule, RuleContext
from .bodies import defer_bodies
from .bodies import positions as body_positions
from .collector import collector_paused
from .cpython_cst import is_converted, names_as_written
from .facts import Step
from .findings import FileError, Finding, TraceStep, describe, is_too_deep
from .grammar import Shifts, after_host_rejection, exact_tree, map_column, parse_module
from .positions import tree_positions
from .host_syntax import host_parse_error
from .model import FileModel, build_models
from .module_index import JSON_ARRAYS, Entry, entries_from_json, index_entries, kept
from .prefilter import Prefilter
from .names import dispatches_parameters, imported_modules, module_name_for, returns_imported_instances
from .outline import Skeleton, outline_skeleton, skeleton
from .project import ModuleInfo, Project
from .relevance import FileScan, FunctionWords, relevance, scan
from .solver import solve
from .syntax import forget_walks
from .vocabulary import Vocabulary

__all__ = ["Analyzer", "ScreenFacts"]

_TOO_DEEP = "too deeply nested to analyze (Python's recursion limit was reached)"
#: Syntax-tree depth beyond which a file is reported instead of analyzed. Real
#: code stays far below (the stdlib's deepest module is under 40); libcst's
#: parser slows down sharply and can exhaust the C stack on such input.
MAX_DEPTH = 200
#: Size beyond which a file that would reach libcst is reported instead. The
#: largest real module the corpus hands to libcst has 8,550 lines; a relevant
#: 50,000-line file costs libcst about 3 s to parse and 30-60 s of metadata
#: and analysis, which no user waits for in a pre-commit hook.
MAX_LINES = 20_000
MAX_CHARS = 2_000_000


@dataclass
class ScreenFacts:
    """What :meth:`Analyzer.analyze` needs of a screened-in file's CPython tree,
    so that the tree is parsed once (in :meth:`Analyzer.screen_facts`, maybe in a
    worker process) and never pickled: small, plain, picklable data."""

    #: The relevance scan (its ``words`` dropped: only the screening reads them).
    scan: FileScan
    #: Names this file passes to a node registration (``add_node(...)``) of a framework model.
    nodes: set[str]
    #: What the outline reads of the tree.
    skeleton: Skeleton
    #: The modules it imports, as written (see :func:`.names.imported_modules`).
    imports: tuple[str, ...] = ()
    #: Screened out, but it lends its classes (see :meth:`Analyzer.lent_facts`): context only.
    lends: bool = False
    #: What the project's index reads of the module (:mod:`.module_index`), or None when its
    #: text is for libcst to read whole (names CPython spells otherwise, tabs).
    index: tuple[Entry, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        """Data the JSON encoder writes as it is (tuples become arrays), for the result
        cache: a module that did not change is not parsed by CPython again in the next
        run that analyzes it (:meth:`from_json`)."""
        return {
            "depth": self.scan.depth,
            "functions": {q: [list(w.words), list(w.calls)] for q, w in self.scan.functions.items()},
            "nodes": list(self.nodes),
            "skeleton": self.skeleton,  # tuples all the way down: JSON arrays as they are
            "imports": list(self.imports),
            "lends": self.lends,
            "index": None if self.index is None else list(self.index),
        }

    @classmethod
    def from_json(cls, data: object, text: str) -> ScreenFacts | None:
        """:meth:`to_json`'s data back for the module whose text is ``text``, or None when it
        does not have that shape or its outline points past the text (a damaged cache entry
        is a miss, never an error, and never a wrong type deep in an analysis)."""
        if not isinstance(data, dict):
            return None
        depth, functions, nodes = data.get("depth"), data.get("functions"), data.get("nodes")
        imports, lends = data.get("imports"), data.get("lends")
        if type(depth) is not int or type(lends) is not bool or not isinstance(functions, dict):
            return None
        if not (_is_str_list(nodes) and _is_str_list(imports)):
            return None
        table: dict[str, FunctionWords] = {}
        for qualname, entry in functions.items():
            if not (isinstance(entry, list) and len(entry) == 2 and _is_str_list(entry[0]) and _is_str_list(entry[1])):
                return None
            table[qualname] = FunctionWords(set(entry[0]), set(entry[1]))
        outline_of = _skeleton_from_json(data.get("skeleton"), text.count("\n") + 1)
        if outline_of is None:
            return None
        index = data.get("index")
        if index is not None:
            index = entries_from_json(index)
            if index is None:
                return None
        return cls(FileScan(depth, "", table), set(nodes), outline_of, tuple(imports), lends, index)


def _is_str_list(value: object) -> bool:
    return isinstance(value, list) and all(type(item) is str for item in value)


def _is_line_range(value: object, lines: int) -> bool:
    """``[first, last]``: 0-based lines of a text of ``lines`` lines, in order."""
    return (
        isinstance(value, JSON_ARRAYS) and len(value) == 2 and type(value[0]) is int and type(value[1]) is int
        and 0 <= value[0] <= value[1] < lines
    )


def _skeleton_from_json(data: object, lines: int) -> Skeleton | None:
    """A :data:`~.outline.Skeleton` of a text of ``lines`` lines from its JSON arrays (or
    its own tuples: a cache entry stored and read back in one run), or None.

    :meth:`ScreenFacts.to_json` hands the skeleton over as it is, since the JSON encoder
    writes tuples as arrays: a copy into lists first was three quarters of the cost of
    storing a file's facts, which the main process pays alone between the screening and
    the analysis (0.7 of the real-code corpus's 1 s, profiled)."""
    if not isinstance(data, JSON_ARRAYS):
        return None
    items = []
    for item in data:
        if not (isinstance(item, JSON_ARRAYS) and len(item) == 6):
            return None
        is_def, name, imports, span, children, import_lines = item
        if type(is_def) is not bool or type(name) is not str or type(imports) is not bool:
            return None
        if span is not None:
            if not (isinstance(span, JSON_ARRAYS) and len(span) == 3 and type(span[2]) is str):
                return None
            if type(span[0]) is not int or type(span[1]) is not int or not 0 <= span[0] <= span[1] < lines:
                return None
            span = (span[0], span[1], span[2])
        if import_lines is not None:
            if not isinstance(import_lines, JSON_ARRAYS) or not all(_is_line_range(r, lines) for r in import_lines):
                return None
            import_lines = tuple((r[0], r[1]) for r in import_lines)
        inner = _skeleton_from_json(children, lines)
        if inner is None:
            return None
        items.append((is_def, name, imports, span, inner, import_lines))
    return tuple(items)


def _failure_message(exc: BaseException) -> str:
    """A checked file's error for an analysis that raised ``exc``."""
    return _TOO_DEEP if is_too_deep(exc) else f"could not be analyzed: internal error {describe(exc)}"


def _facts(text: str, tree: ast.Module, file_scan: FileScan, lends: bool = False) -> ScreenFacts:
    return ScreenFacts(
        FileScan(file_scan.depth, "", file_scan.functions), file_scan.nodes,
        skeleton(text, tree), imported_modules(tree), lends, _index(text, tree),
    )


def _index(text: str, tree: ast.Module) -> tuple[Entry, ...] | None:
    """:func:`.module_index.index_entries` of a text libcst reads as CPython does (names
    spelled alike, no tabs or form feeds: :func:`.cpython_cst.convert`'s own conditions,
    and no carriage return, which the outline does not blank), else None."""
    if "\t" in text or "\f" in text or "\r" in text or not names_as_written(text, tree):
        return None
    try:
        return index_entries(tree)
    except RecursionError:
        return None


def _calls_and_words(scans: Sequence[FileScan]) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """The names each function calls and the words it uses, by qualified name, as
    :attr:`.project.Project.calls` and :attr:`~.project.Project.words` hold them: two
    modules of one name (folders without ``__init__.py``) give one qualified name two
    functions, whose sets are joined (a cut by them must hold for both)."""
    calls: dict[str, set[str]] = {}
    words: dict[str, set[str]] = {}
    for file_scan in scans:
        for qualname, found in file_scan.functions.items():
            if qualname in calls:
                calls[qualname] = calls[qualname] | found.calls
                words[qualname] = words[qualname] | found.words
            else:
                calls[qualname], words[qualname] = found.calls, found.words
    return calls, words


def _syntax_error(path: str, text: str, exc: SyntaxError | ValueError) -> FileError:
    """CPython's refusal as a row: its line and message (a null byte: the line it is on)."""
    line, message = (exc.lineno, exc.msg) if isinstance(exc, SyntaxError) else (None, str(exc))
    nul = text.find("\0") if line is None else -1
    if nul >= 0:
        line = text.count("\n", 0, nul) + 1
    return FileError(path, line, f"syntax error: {message}")


def _size_error(path: str, text: str) -> FileError | None:
    """The error of a text over :data:`MAX_LINES` or :data:`MAX_CHARS`, before any parse."""
    if len(text) <= MAX_CHARS and text.count("\n") < MAX_LINES:
        return None
    lines = text.count("\n") + 1
    size = f"{lines:,} lines" if lines > MAX_LINES else f"{len(text):,} characters"
    limit = f"{MAX_LINES:,} lines" if lines > MAX_LINES else f"{MAX_CHARS:,} characters"
    return FileError(
        path, None, f"too large to analyze ({size}, at most {limit}); split the module, "
        "or exclude it in [tool.summaryguard] if it is generated",
    )


class Analyzer:
    """Built once per run: compiled pre-filter, rule instances, vocabulary."""

    def __init__(
        self, vocabulary: Vocabulary, rules: Sequence[type[LintRule]], target_version: str | None = None
    ) -> None:
        self.vocabulary = vocabulary
        #: The Python grammar files are written in ("3.12"; None: the newest libcst knows):
        #: see :mod:`.grammar` and :mod:`summaryguard.rules.cli.targets`.
        self.target_version = target_version
        #: Column shifts of the files whose tab indentation libcst could only read expanded.
        self._shifts: dict[str, Shifts] = {}
        self.rule_classes = tuple(rules)
        self.rules = [rule() for rule in self.rule_classes]
        self.prefilter = Prefilter(vocabulary, [r.PREFILTER for r in self.rule_classes if r.PREFILTER])
        #: The framework models' node registrations (``add_node``): graph nodes are found by them.
        self.registrations = frozenset(n for m in vocabulary.frameworks for n in m.node_registrations)
        #: Whether a context module's bodies are parsed only when read (see :mod:`.bodies`);
        #: off, every body the outline keeps is parsed with its module (the tests compare both).
        self.defer_context_bodies = True
        #: Whether a context module is indexed from its screening's data and converted to
        #: libcst's nodes only when read (see :meth:`.project.Project.add_outline`); off, every one is
        #: converted with the others (the tests compare both).
        self.build_context_on_demand = True

    def might_matter(self, text: str) -> bool:
        """Cheap text scan; False means the file cannot hold a finding."""
        return self.prefilter.might_matter(text)

    def analyze(
        self,
        sources: Sequence[tuple[str, str]],
        facts: Mapping[str, ScreenFacts] | None = None,
        context: Sequence[tuple[str, str]] = (),
    ) -> tuple[list[Finding], list[FileError]]:
        """Analyze ``(display path, text)`` pairs together (summaries cross modules).

        ``facts`` holds :meth:`screen_facts` of files already screened in (by
        path): those are not parsed by CPython again. Every other file is.
        ``context`` holds modules that are analyzed with the others but not
        checked (the project modules the checked files import): their facts
        count, their findings and errors are never reported. The cyclic garbage
        collector is paused meanwhile (see :mod:`.collector`), and the walks the
        analysis remembered are dropped before it comes back on (see
        :func:`.syntax.forget_walks`)."""
        with collector_paused():
            try:
                return self._analyze(sources, facts, context)
            except Exception as exc:  # noqa: BLE001 - one file's failure is that file's error, never the run's
                return self._analyze_apart(sources, facts, context, exc)
            finally:
                forget_walks()

    def _analyze_apart(
        self,
        sources: Sequence[tuple[str, str]],
        facts: Mapping[str, ScreenFacts] | None,
        context: Sequence[tuple[str, str]],
        exc: Exception,
    ) -> tuple[list[Finding], list[FileError]]:
        """What :meth:`analyze` gives when the analysis of ``sources`` together raised
        ``exc`` (a recursion the depth limits did not foresee, a fault of the engine).

        Each checked file is tried alone (with the same context) to find the ones that
        fail on their own; they are reported as errors, and the others are analyzed
        together again, with the failing ones as context where that works: a file that
        imports a broken one keeps the findings it has with it (or, if even that raises,
        without it). Files that fail only together are all reported."""
        if len(sources) > 1:
            broken: list[tuple[str, Exception]] = []
            for source in sources:
                try:
                    self._analyze([source], facts, context)
                except Exception as failure:  # noqa: BLE001 - the file to report
                    broken.append((source[0], failure))
            if broken:
                bad = {path for path, _ in broken}
                rest = [source for source in sources if source[0] not in bad]
                errors = [FileError(path, None, _failure_message(failure)) for path, failure in broken]
                findings: list[Finding] = []
                if rest:
                    with_bad = [*context, *(source for source in sources if source[0] in bad)]
                    try:
                        findings, more = self._analyze(rest, facts, with_bad)
                    except Exception:  # noqa: BLE001 - the broken files break their importers too
                        try:
                            findings, more = self._analyze(rest, facts, context)
                        except Exception as again:  # noqa: BLE001 - these fail only together
                            findings, more = self._analyze_apart(rest, facts, context, again)
                    errors.extend(more)
                errors.sort(key=lambda e: (e.path, e.line or 0, e.message))
                return findings, errors
        return [], [FileError(path, None, _failure_message(exc)) for path, _ in sources]

    def _analyze(
        self,
        sources: Sequence[tuple[str, str]],
        facts: Mapping[str, ScreenFacts] | None,
        context: Sequence[tuple[str, str]],
    ) -> tuple[list[Finding], list[FileError]]:
        errors: list[FileError] = []
        project = Project(self.vocabulary)
        # CPython's parse of every file first: which functions can matter is known
        # before libcst is paid, and libcst parses only their bodies (see .outline).
        screened: list[tuple[str, str, ScreenFacts, bool]] = []
        unchecked = {path for path, _ in context} - {path for path, _ in sources}
        for index, (path, text) in enumerate([*sources, *context]):
            is_context = index >= len(sources)
            sink = [] if is_context else errors  # a module not being checked reports nothing
            known = facts.get(path) if facts is not None else None
            if known is None:
                found = None
                if not self.might_matter(text):
                    sink.extend(self.syntax_errors(path, text))
                else:
                    found = self._scan_tree(path, text, sink)
                known = _facts(text, *found) if found is not None else self.lent_facts(path, text)
                del found
                if known is None:
                    continue
            if known.lends and not is_context:  # it lends its classes; nothing in it is checked
                is_context = True
                unchecked.add(path)
            screened.append((path, text, known, is_context))
        scans = [f.scan for _, _, f, _ in screened]
        seeds, relevant = relevance(scans, self.prefilter.function_matters)
        # graph nodes, and what relevant functions call (their evidence reads a callee's body)
        nodes: set[str] = set()
        for _, _, f, _ in screened:
            nodes |= f.nodes
        nodes.update(n for s in scans for q, fw in s.functions.items() if q in relevant for n in fw.calls)
        parsed_scans = []
        for path, text, file_facts, is_context in screened:
            sink = [] if is_context else errors
            deferred: dict[str, tuple[int, int, str]] = {}
            blanked: list[tuple[int, int]] = []
            outlined = outline_skeleton(
                text, file_facts.skeleton, file_facts.scan, module_name_for(path)[0], relevant,
                self.prefilter.any_evidence, nodes, self.prefilter.lent_function_matters if file_facts.lends else None,
                deferred if is_context and self.defer_context_bodies else None, blanked,
            )
            if is_context and self.build_context_on_demand and file_facts.index is not None:
                project.add_outline(
                    path, kept(file_facts.index, blanked), text, self._builder(path, outlined),
                    self._deferrer(text, deferred),
                )
                parsed_scans.append(file_facts.scan)
                continue
            tree = self._parse_cst(path, outlined, sink)
            if tree is None:
                continue
            try:
                module = project.add_module(path, tree, text, context=is_context)
            except RecursionError:
                sink.append(FileError(path, None, _TOO_DEEP))
                continue
            defer_bodies(module, text, deferred, self.target_version)
            parsed_scans.append(file_facts.scan)
        del screened
        project.calls, project.words = _calls_and_words(parsed_scans)
        project.finish()
        if len(parsed_scans) != len(scans):  # a module failed to parse: its functions are not there
            seeds, relevant = relevance(parsed_scans, self.prefilter.function_matters)
        graph_nodes = project.graph_nodes()
        project.relevant, project.seeds = relevant | graph_nodes, seeds | graph_nodes
        failed: dict[str, str] = {}
        results = solve(project, failed, project.demand_roots())
        for path, message in failed.items():
            if path not in unchecked:
                errors.append(FileError(path, None, message))
        models = build_models(project, results)
        places = _Places(project, self.target_version)
        findings: list[Finding] = []
        for module in project.modules:
            if module.path in failed or module.context:
                continue
            findings.extend(self._run_rules(models[module.path], errors, places))
        findings.sort(key=lambda f: f.sort_key)
        errors.sort(key=lambda e: (e.path, e.line or 0, e.message))
        project.release()
        return findings, errors

    def syntax_errors(self, path: str, text: str) -> list[FileError]:
        """The syntax error of a file the text pre-filter rejected (:meth:`might_matter`):
        same rows as :meth:`analyze` gives. CPython's parser screens (cheap); what it
        rejects, libcst decides for the target grammar (see :mod:`.grammar`)."""
        refusal = host_parse_error(text)  # nesting too deep is none: the file is never analyzed
        if refusal is None:
            return []
        if isinstance(refusal, SyntaxError):
            verdict = after_host_rejection(text, self.target_version, refusal, lower=False)
            if verdict.error is None:  # libcst reads it for the target grammar
                return []
        return [_syntax_error(path, text, refusal)]  # the host's verdict stands: its row

    def screen(self, path: str, text: str) -> tuple[bool, list[FileError]]:
        """Whether :meth:`analyze` would hand this file to libcst, and the errors
        found on the way (syntax errors, too deep nesting), without libcst.

        The answer depends on the text alone, never on other files (the CLI
        caches it by content and computes it in worker processes); a file
        screened out contributes nothing to the analysis of the others, unless
        it lends its classes (:meth:`lent_facts`, decided on its text too)."""
        screened_in, errors, _ = self.screen_facts(path, text)
        return screened_in, errors

    def screen_facts(self, path: str, text: str) -> tuple[bool, list[FileError], ScreenFacts | None]:
        """:meth:`screen`, and for a file screened in, what :meth:`analyze` needs of it."""
        if not self.might_matter(text):
            return False, self.syntax_errors(path, text), None
        errors: list[FileError] = []
        found = self._scan_tree(path, text, errors)
        if found is None:
            return False, errors, None
        return True, errors, _facts(text, *found)

    def lent_facts(self, path: str, text: str) -> ScreenFacts | None:
        """What :meth:`analyze` needs of a file screened out that still lends its classes,
        or None: it defines a class, and imports a model library or is a factory (a
        function of it returns an instance of a class it imports,
        :func:`~.names.returns_imported_instances`); or it re-exports; or it defines a
        fire-and-forget helper (:func:`~.names.dispatches_parameters`). Such a module is analyzed as context
        only: its classes, a factory's returns and the overrides that call a model count
        for the files that import it (a value's class decides what its methods run, see
        :mod:`.classes`). Its text and tree decide, never a name of the user's; nothing in
        it is reported, errors included (its syntax errors are the screening's)."""
        if not self.prefilter.may_be_context(path, text):
            return None
        re_exports = self.prefilter.re_exports(path, text)
        found = self._scan_tree(path, text, [], gate=False)
        if found is None:
            return None
        if re_exports and found[1] is not None and imported_modules(found[0]):
            return _facts(text, *found, lends=True)  # the names it re-exports
        if self.prefilter.may_dispatch(text) and dispatches_parameters(found[0]):
            return _facts(text, *found, lends=True)  # a fire-and-forget helper
        if not (self.prefilter.imports_model_library(text) or returns_imported_instances(found[0])):
            return None
        lent = _facts(text, *found, lends=True)
        # no class after all ("class " in a docstring): nothing to lend
        return lent if any(not item[0] for item in lent.skeleton) else None

    def _builder(self, path: str, outlined: str) -> Callable[[], cst.Module | None]:
        """How a context module indexed from its screening's data builds its tree (see
        :meth:`.project.Project.add_outline`): libcst's nodes of its outline, as the whole
        path parses it (its errors are a context module's: never reported)."""
        return lambda: self._parse_cst(path, outlined, [])

    def _deferrer(self, text: str, deferred: dict[str, tuple[int, int, str]]) -> Callable[[ModuleInfo], None]:
        """What follows a build: the bodies the outline kept for later (see :mod:`.bodies`)."""
        return lambda module: defer_bodies(module, text, deferred, self.target_version)

    def _parse_cst(self, path: str, text: str, errors: list[FileError]) -> cst.Module | None:
        """Parse with libcst, after CPython's parser (10x cheaper) has vouched for
        the text (see :meth:`_scan_tree`): syntax errors and nesting that would crash or
        stall libcst's native parser are reported from there."""
        try:
            tree, shifts = parse_module(text, self.target_version)
            if shifts:
                self._shifts[path] = shifts
            else:
                self._shifts.pop(path, None)
            return tree
        except cst.ParserSyntaxError as exc:
            errors.append(FileError(path, exc.editor_line, f"syntax error: {exc.message}"))
        except RecursionError:
            errors.append(FileError(path, None, _TOO_DEEP))
        except Exception as exc:  # noqa: BLE001 - the parser's own failures must not stop the run
            message = _TOO_DEEP if is_too_deep(exc) else f"could not parse: {describe(exc)}"
            errors.append(FileError(path, None, message))
        return None

    def _scan_tree(
        self, path: str, text: str, errors: list[FileError], gate: bool = True
    ) -> tuple[ast.Module, FileScan] | None:
        """CPython's parse and the code-word gate: the tree and the scan, or None (errors added).

        The size limits come first: counting lines costs a pass over the text, a
        parse of a 50 MB file gigabytes. A text CPython's parser rejects is judged
        by libcst for the target grammar, and analyzed from its lowered tree when
        libcst accepts it (see :mod:`.grammar`)."""
        too_large = _size_error(path, text)
        if too_large is not None:
            errors.append(too_large)
            return None
        try:
            with warnings.catch_warnings():  # CPython's SyntaxWarnings are not ours to print
                warnings.simplefilter("ignore")
                try:
                    tree = ast.parse(text)
                except SyntaxError as exc:
                    verdict = after_host_rejection(text, self.target_version, exc)
                    if verdict.error is not None:  # the host's verdict stands: its row
                        errors.append(_syntax_error(path, text, exc))
                    if verdict.tree is None:
                        return None
                    tree = verdict.tree
            file_scan = scan(tree, module_name_for(path)[0], self.registrations)
        except ValueError as exc:
            errors.append(_syntax_error(path, text, exc))
            return None
        except (RecursionError, MemoryError):
            errors.append(FileError(path, None, _TOO_DEEP))
            return None
        if file_scan.depth > MAX_DEPTH:
            errors.append(
                FileError(path, None, f"too deeply nested to analyze ({file_scan.depth} levels, at most {MAX_DEPTH})")
            )
            return None
        if gate and not self.prefilter.code_matters(file_scan.words) and not self.prefilter.wanted_by_plugin(text):
            return None
        return tree, file_scan

    def _run_rules(self, model: FileModel, errors: list[FileError], place: _Places) -> list[Finding]:
        reporting = [r for r in self.rules if r.FACT is not None and any(True for _ in model.of(r.FACT))]
        visiting = [rule for rule in self.rules if rule.wants(model)]
        if not reporting and not visiting:
            return []
        context = RuleContext(model.path, model, self.vocabulary)
        for rule in (*reporting, *visiting):
            rule.begin(context)
        try:
            return self._pass(model, reporting, visiting, errors, place)
        finally:
            for rule in (*reporting, *visiting):
                rule.end()

    def _pass(
        self,
        model: FileModel,
        reporting: list[LintRule],
        visiting: list[LintRule],
        errors: list[FileError],
        place: _Places,
    ) -> list[Finding]:
        """The rules' pass over one file (begun by :meth:`_run_rules`): their findings,
        with their failures and the pass's own added to ``errors``."""
        try:
            if reporting:
                positions = place.positions(model.module)
                for kind in {rule.FACT for rule in reporting}:  # resolved here: libcst's failure is the file's
                    for fact in model.of(kind):
                        positions.get(fact.node)
                        for step in fact.trace:
                            if step.path == model.path:
                                positions.get(step.node)
                for rule in reporting:
                    rule.metadata = {PositionProvider: positions}
                    try:
                        rule.report_facts(model, place.step)
                    except Exception as exc:  # noqa: BLE001 - one rule's failure is this file's error
                        rule.failure = exc
            if visiting:
                self._visit(model, visiting, place)
        except RecursionError:
            errors.append(FileError(model.path, None, _TOO_DEEP))
            return []
        except Exception as exc:  # noqa: BLE001 - metadata failures are the file's, not the run's
            message = _TOO_DEEP if is_too_deep(exc) else f"internal error: {describe(exc)}"
            errors.append(FileError(model.path, None, message))
            return []
        findings: list[Finding] = []
        for rule in (*reporting, *visiting):
            if rule.failure is not None:
                errors.append(
                    FileError(
                        model.path, None, f"internal error in {rule.code}: {describe(rule.failure)}"
                    )
                )
                continue
            findings.extend(rule.findings)
        shifts = self._shifts.get(model.path)
        if shifts:  # columns of the tab-expanded text, back to the file's own
            findings = [
                dataclasses.replace(
                    f, column=map_column(shifts, f.line, f.column), end_column=map_column(shifts, f.end_line, f.end_column)
                )
                for f in findings
            ]
        return findings

    def _visit(self, model: FileModel, visiting: list[LintRule], place: _Places) -> None:
        """The visitor rules' pass (plugins' rules that walk the tree themselves). They get
        libcst's own tree of the file, layout and comments included, with every metadata
        provider they declare; a node of the engine's facts (the model's tree, which
        may be converted from CPython's, see :mod:`.cpython_cst`) is placed too."""
        tree = model.module.tree
        if is_converted(tree):
            tree = exact_tree(tree, self.target_version)
        wrapper = MetadataWrapper(tree, unsafe_skip_copy=True)
        with contextlib.ExitStack() as stack:
            for rule in visiting:
                stack.enter_context(rule.resolve(wrapper))
                if tree is not model.module.tree and PositionProvider in rule.metadata:
                    rule.metadata = {
                        **rule.metadata,
                        PositionProvider: _Either(rule.metadata[PositionProvider], place.positions(model.module)),
                    }
            cst.visit_batched(tree, visiting)


class _Either(Mapping[cst.CSTNode, CodeRange]):
    """Positions of two trees of one file: libcst's own, then the engine's."""

    def __init__(self, first: Mapping[cst.CSTNode, CodeRange], second: Mapping[cst.CSTNode, CodeRange]) -> None:
        self._first, self._second = first, second

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        found = self._first.get(node)
        return self._second[node] if found is None else found

    def __iter__(self) -> Iterator[cst.CSTNode]:
        yield from self._first
        yield from self._second

    def __len__(self) -> int:
        return len(self._first) + len(self._second)


class _Places:
    """Lines of trace steps, for the modules of one analysis: each module's
    positions are resolved once, and only for modules a trace passes through."""

    def __init__(self, project: Project, target: str | None) -> None:
        self._modules = {m.path: m for m in project.modules}
        self._positions: dict[str, Mapping[cst.CSTNode, CodeRange]] = {}
        self._target = target

    def positions(self, module: ModuleInfo) -> Mapping[cst.CSTNode, CodeRange]:
        found = self._positions.get(module.path)
        if found is None:
            found = self._positions[module.path] = body_positions(
                module, tree_positions(module.tree, self._target), self._target
            )
        return found

    def step(self, step: Step) -> TraceStep | None:
        module = self._modules.get(step.path)
        if module is None:
            return None
        position = self.positions(module).get(step.node)
        if position is None:
            return None
        return TraceStep(step.path, position.start.line, step.note, step.basis)
