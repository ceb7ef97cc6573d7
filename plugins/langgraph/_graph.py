"""``guard_graph``: a compiled LangGraph graph that checks before it resumes.

A LangGraph resume is ``invoke(None, config)``, ``stream(None, config)`` (and
their async twins), or the same with ``Command(resume=...)``, on a thread
whose latest checkpoint has pending ``next`` nodes. Only the graph sees that
call, so the check sits there: before the run, the thread's state snapshot
goes through :func:`~summaryguard.guard.resume_guard` (observers, then
resolution: replay or accepted divergence); a replay runs from exactly the
checkpoint the resolver chose (its ``checkpoint_id``). The run then executes
inside a resumed turn, so a
:func:`guard_tool`-wrapped tool refuses to re-derive what the summary dropped.

Every error about a LangGraph checkpoint carries ``thread_id`` and
``checkpoint_id`` (and ``checkpoint_ns`` for a subgraph) in ``details``.

What only reads or writes state (``get_state``, ``update_state``,
``get_state_history``, ``get_graph``...) passes through to the wrapped graph
untouched, and a fresh input is not a resume and runs unchecked. A method
that would run the graph past the check (``with_retry``, ``transform``,
``pipe``...) is refused; ``GuardedGraph.graph`` reaches the unguarded graph
on purpose.
"""

from __future__ import annotations

import contextvars
import functools
import sys
from collections.abc import AsyncIterator, Callable, Generator, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from summaryguard.guard.check import declared_deps, reference_names
from summaryguard.guard.errors import ReconciliationKind, SummaryReconciliationError
from summaryguard.guard.reconcile import AcceptDivergence, check_provenance
from summaryguard.guard.resume import resume_guard
from summaryguard.guard.tools import refuse_rederivation, register_refusal_escalation
from summaryguard.guard.turn import ResumedTurn, accept_divergence, current_turn
from ._state import unstamped_note

__all__ = ["GuardedGraph", "GuardedRun", "current_run", "guard_graph", "is_langgraph_checkpoint"]

Deps = Iterable[str] | Callable[[Any], Iterable[str] | None] | None


class GuardedRun:
    """What one guarded resumed run shares with the tools and summarizations inside it.

    ``dropped`` grows when a summarization runs *during* the resumed run (see
    ``stamp_summaries``): a reference folded away after the resume is as lost
    to the rest of the run as one dropped before it. ``refused`` collects
    re-derivations refused in the run, so one that a ``ToolNode`` turned into
    an error message still stops the run after its step.
    """

    __slots__ = ("turn", "context", "acceptance", "refused", "dropped")

    def __init__(self, turn: ResumedTurn, context: contextvars.Context, acceptance: Acceptance | None) -> None:
        self.turn = turn
        #: A copy of the context inside the admitted resume (the resumed turn is entered in it).
        self.context = context
        self.acceptance = acceptance
        self.refused: list[SummaryReconciliationError] = []
        self.dropped: dict[str, list[Any]] = {}  # tool -> drop-manifest entries

    def add_drops(self, entries: Iterable[Any]) -> None:
        for entry in entries:
            tool = getattr(entry, "tool", None)
            if tool:
                known = self.dropped.setdefault(tool, [])
                if all(e.ref != entry.ref for e in known):
                    known.append(entry)

    def enforce(self, names: Iterable[str]) -> None:
        """Refuse a tool that produced a reference dropped during this run (unless accepted)."""
        turn = self.turn
        for tool in names:
            for entry in self.dropped.get(tool, ()):
                ref = entry.ref
                if turn.is_accepted(ref):
                    continue
                acceptance = self.acceptance
                if acceptance is not None and ref in acceptance.refs:
                    # Called from a tool inside the run: the run's turn is the current one.
                    accept_divergence([ref], reason=acceptance.reason, accepted_by=acceptance.accepted_by)
                    continue
                refuse_rederivation(
                    turn, tool, entry, "which a summarization during this resumed run dropped; calling it again"
                )


#: The guarded run the current code belongs to (None outside one).
_run: contextvars.ContextVar[GuardedRun | None] = contextvars.ContextVar("summaryguard_langgraph_run", default=None)


def current_run() -> GuardedRun | None:
    return _run.get()
#: The acceptance in force while a guarded graph admits a resume.
_accepting: contextvars.ContextVar[Acceptance | None] = contextvars.ContextVar(
    "summaryguard_langgraph_accepting", default=None
)


@dataclass(frozen=True)
class Acceptance:
    """A controller's explicit, recorded acceptance of divergence for some references or kinds."""

    refs: frozenset[str]
    kinds: frozenset[ReconciliationKind]
    reason: str
    accepted_by: str

    def covers(self, error: SummaryReconciliationError) -> bool:
        return error.kind in self.kinds or (bool(error.missing_ref) and error.missing_ref in self.refs)


class GuardedGraph:
    """A compiled graph (``CompiledStateGraph`` / ``Pregel``) whose resumes are checked first.

    Build it with :func:`guard_graph`. Attribute access falls through to the
    wrapped graph, so it stands in for it wherever the code calls ``invoke``,
    ``stream``, ``ainvoke``, ``astream``, ``get_state`` and the rest.
    """

    def __init__(
        self, graph: Any, *, deps: Deps = None, acceptance: Acceptance | None = None, bound: Any = None
    ) -> None:
        for method in ("invoke", "get_state"):
            if not callable(getattr(graph, method, None)):
                raise TypeError(f"guard_graph() takes a compiled LangGraph graph, got {type(graph).__name__}")
        self._graph = graph
        self._deps = declared_deps("guard_graph", deps)  # refused here, not at the first resume
        self._acceptance = acceptance
        #: Configuration bound with with_config(), merged under each call's own.
        self._bound = bound
        # With no deps given, the state's own declaration applies: the shared default check.
        self._check = _check_declared if self._deps is None else resume_guard(deps=self._deps_of)(_admitted)

    def _derive(self, *, acceptance: Acceptance | None, bound: Any) -> GuardedGraph:
        """This guarded graph with another acceptance or bound configuration (its check is reused, not rebuilt)."""
        derived = object.__new__(GuardedGraph)
        derived.__dict__.update(self.__dict__, _acceptance=acceptance, _bound=bound)
        return derived

    @property
    def graph(self) -> Any:
        """The wrapped compiled graph."""
        return self._graph

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._graph, name)
        if callable(value) and not name.startswith(_PASSED_PREFIXES) and name not in _PASSED:
            raise AttributeError(
                f"a guarded graph does not pass {name}() through: it could run the graph past the summary check. "
                "Resume with invoke, ainvoke, stream, astream or astream_events (with_config binds "
                "configuration); .graph is the unguarded graph, for what must bypass the check"
            )
        return value

    def with_config(self, config: Any = None, **kwargs: Any) -> GuardedGraph:
        """This guarded graph with configuration bound to every call (``Runnable.with_config``)."""
        return self._derive(acceptance=self._acceptance, bound=_merge(self._bound, {**(config or {}), **kwargs}))

    def __repr__(self) -> str:
        return f"guard_graph({self._graph!r})"

    def accepting(
        self,
        refs: str | Iterable[str] = (),
        *,
        reason: str,
        accepted_by: str = "controller",
        kinds: Iterable[ReconciliationKind | str] = (),
    ) -> GuardedGraph:
        """This graph, accepting divergence for ``refs`` (and violations of ``kinds``) on record.

        The controller's answer to a refused resume: the next resume through
        the returned graph goes on, each accepted violation becomes a
        :class:`~summaryguard.guard.DivergenceRecord` (``summaryguard_divergence_accepted``
        hook, and kept on the resumed turn), and the tools that produced the
        accepted references may run again.
        """
        check_provenance("accepting", reason, accepted_by)  # refused here, not at the resume it was for
        names = frozenset(reference_names("accepting", refs))
        accepted_kinds = frozenset(ReconciliationKind(k) for k in kinds)
        if ReconciliationKind.REDERIVATION in accepted_kinds:
            raise ValueError(
                "accepting(kinds=['rederivation']) would waive every dropped reference at once; "
                "a re-derivation is accepted per reference: pass the references instead"
            )
        acceptance = Acceptance(names, accepted_kinds, reason, accepted_by)
        if not acceptance.refs and not acceptance.kinds:
            raise ValueError("accepting() needs the references (or kinds) whose divergence is accepted")
        return self._derive(acceptance=acceptance, bound=self._bound)

    # -- runs ------------------------------------------------------------------------------

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        config = _merge(self._bound, config)
        admitted = self._admit(input, config, self._state(input, config))
        if admitted is None:
            return self._graph.invoke(input, config, **kwargs)
        run_config, run = admitted
        ctx = run.context
        try:
            result = ctx.run(_stepwise(self._graph, run, "invoke"), input, run_config, **kwargs)
        except SummaryReconciliationError as error:
            raise _surfaced(error, run) from None
        _raise_swallowed(run)
        return result

    async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        config = _merge(self._bound, config)
        snapshot = await self._astate(input, config)
        admitted = await self._aadmit(input, config, snapshot)
        if admitted is None:
            return await self._graph.ainvoke(input, config, **kwargs)
        run_config, run = admitted
        tokens = _enter(run)
        try:
            result = await _stepwise(self._graph, run, "ainvoke")(input, run_config, **kwargs)
        except SummaryReconciliationError as error:
            raise _surfaced(error, run) from None
        finally:
            _leave(tokens)
        _raise_swallowed(run)
        return result

    def stream(self, input: Any, config: Any = None, **kwargs: Any) -> Iterator[Any]:
        config = _merge(self._bound, config)
        admitted = self._admit(input, config, self._state(input, config))
        if admitted is None:
            yield from self._graph.stream(input, config, **kwargs)
            return
        run_config, run = admitted
        ctx = run.context
        chunks = ctx.run(self._graph.stream, input, run_config, **kwargs)
        try:
            while True:
                try:
                    chunk = ctx.run(next, chunks)
                except StopIteration:
                    return
                except SummaryReconciliationError as error:
                    raise _surfaced(error, run) from None
                _raise_swallowed(run)
                yield chunk
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                ctx.run(close)

    def astream(self, input: Any, config: Any = None, **kwargs: Any) -> AsyncIterator[Any]:
        return self._aiterate("astream", input, config, kwargs)

    def astream_events(self, input: Any, config: Any = None, **kwargs: Any) -> AsyncIterator[Any]:
        """``astream_events``, checked like ``astream`` (the events of a refused resume never start)."""
        return self._aiterate("astream_events", input, config, kwargs)

    async def _aiterate(self, method: str, input: Any, config: Any, kwargs: dict[str, Any]) -> AsyncIterator[Any]:
        config = _merge(self._bound, config)
        snapshot = await self._astate(input, config)
        admitted = await self._aadmit(input, config, snapshot)
        if admitted is None:
            async for chunk in getattr(self._graph, method)(input, config, **kwargs):
                yield chunk
            return
        run_config, run = admitted
        tokens = _enter(run)
        try:
            chunks = getattr(self._graph, method)(input, run_config, **kwargs)
        finally:
            _leave(tokens)
        try:
            while True:
                # The turn is set only while the graph runs, never while the caller holds a chunk.
                tokens = _enter(run)
                try:
                    chunk = await chunks.__anext__()
                except StopAsyncIteration:
                    return
                except SummaryReconciliationError as error:
                    raise _surfaced(error, run) from None
                finally:
                    _leave(tokens)
                _raise_swallowed(run)
                yield chunk
        finally:
            await chunks.aclose()

    def batch(self, inputs: Any, config: Any = None, **kwargs: Any) -> Any:
        inputs = _refuse_batched_resume(inputs)
        return self._graph.batch(inputs, _merge_each(self._bound, config), **kwargs)

    async def abatch(self, inputs: Any, config: Any = None, **kwargs: Any) -> Any:
        inputs = _refuse_batched_resume(inputs)
        return await self._graph.abatch(inputs, _merge_each(self._bound, config), **kwargs)

    def batch_as_completed(self, inputs: Any, config: Any = None, **kwargs: Any) -> Iterator[Any]:
        inputs = _refuse_batched_resume(inputs)
        return self._graph.batch_as_completed(inputs, _merge_each(self._bound, config), **kwargs)

    def abatch_as_completed(self, inputs: Any, config: Any = None, **kwargs: Any) -> AsyncIterator[Any]:
        inputs = _refuse_batched_resume(inputs)
        return self._graph.abatch_as_completed(inputs, _merge_each(self._bound, config), **kwargs)

    # -- admission ---------------------------------------------------------------------------

    def _deps_of(self, snapshot: Any) -> Any:
        deps = self._deps
        return deps(snapshot) if callable(deps) else deps

    def _state(self, input: Any, config: Any) -> Any:
        """The thread's state when ``input`` may resume it (None otherwise)."""
        saver = self._reentry_saver(input, config)
        if saver is False:
            return None
        if saver is not None:  # a fresh input: read only what says whether it re-enters the run
            written = saver.get_tuple(config)
            if not _reentered(input, config, written):
                return None
        return self._graph.get_state(config, subgraphs=True)

    async def _astate(self, input: Any, config: Any) -> Any:
        saver = self._reentry_saver(input, config)
        if saver is False:
            return None
        if saver is not None:
            written = await saver.aget_tuple(config)
            if not _reentered(input, config, written):
                return None
        return await self._graph.aget_state(config, subgraphs=True)

    def _reentry_saver(self, input: Any, config: Any) -> Any:
        """False when ``input`` resumes nothing; None when it is a resume (``None``, a
        ``Command``: its thread must be named, a clear error otherwise); else the saver whose
        newest checkpoint of the thread says whether this fresh input re-enters the run that
        wrote it (:func:`_reentered`). A graph that keeps no checkpoints, or a call naming no
        thread, re-enters nothing: its fresh input just starts."""
        if not _is_resume(input, config):
            return False
        if input is None or _is_command(input):
            _require_thread(config)
            return None
        saver = _configurable(config).get(_SAVER)
        if saver is None:
            saver = getattr(self._graph, "checkpointer", None)  # None, False or True: keeps none of its own
        if not _has_thread(config) or not callable(getattr(saver, "get_tuple", None)):
            return False
        return saver

    def _admit(self, input: Any, config: Any, snapshot: Any) -> tuple[Any, GuardedRun] | None:
        """Check a resume; returns the pinned config and the run to enter, or None if not a resume."""
        steps = self._admission(input, config, snapshot)
        try:
            wanted = next(steps)
            while True:
                try:
                    state = self._graph.get_state(wanted, subgraphs=True)
                except Exception as exc:  # noqa: BLE001 - see _unreadable
                    wanted = steps.throw(_unreadable(exc))
                else:
                    wanted = steps.send(state)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]

    async def _aadmit(self, input: Any, config: Any, snapshot: Any) -> tuple[Any, GuardedRun] | None:
        """:meth:`_admit` for the async runs: a replayed state is read with the saver's async API
        (an async saver refuses a synchronous read from its own event loop)."""
        steps = self._admission(input, config, snapshot)
        try:
            wanted = next(steps)
            while True:
                try:
                    state = await self._graph.aget_state(wanted, subgraphs=True)
                except Exception as exc:  # noqa: BLE001 - see _unreadable
                    wanted = steps.throw(_unreadable(exc))
                else:
                    wanted = steps.send(state)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]

    def _admission(self, input: Any, config: Any, snapshot: Any) -> Generator[Any, Any, tuple[Any, GuardedRun] | None]:
        """The admission of a resume, for :meth:`_admit` and :meth:`_aadmit`: it yields the
        config of a checkpoint whose state (with its subgraphs) it needs read, and is sent that
        state; it returns the pinned config and the run to enter, or None if not a resume."""
        if snapshot is None:
            return None
        command = _is_command(input)
        if input is not None and not command and not _reentered(input, config, snapshot):
            return None  # a fresh input under another run_id: LangGraph starts afresh
        if not snapshot.next and not (command and _values(snapshot)):
            # Nothing pending: None (or a re-entry) finds nothing to run, but a Command
            # (goto=, update=) on a thread with state still continues from that state.
            return None
        acceptance = self._acceptance
        token = _accepting.set(acceptance)
        try:
            checked, turn, context = self._check(snapshot)
            full = snapshot
            if checked is not snapshot:
                # A Replay resolution: a checkpoint from the thread's history names a paused
                # subgraph's checkpoint without its state, and what that subgraph dropped must
                # be refused in the replayed run too.
                full = checked
                if any(getattr(task, "state", None) is not None for task in getattr(checked, "tasks", None) or ()):
                    full = yield _pin(config, checked)
            for state in _subgraph_states(full):
                self._admit_subgraph(state, turn)
        except SummaryReconciliationError as error:
            raise _enrich(error, snapshot) from None
        finally:
            _accepting.reset(token)
        if acceptance is not None:
            # References dropped before the resume whose divergence the controller accepted
            # but the admission check did not meet (no declared dependency named them).
            dropped = {getattr(entry, "ref", None) for entry in turn.dropped_refs()}
            pending = sorted(r for r in acceptance.refs if r in dropped and not turn.is_accepted(r))
            if pending:
                context.run(accept_divergence, pending, reason=acceptance.reason, accepted_by=acceptance.accepted_by)
        # A Replay resolution settled on another checkpoint: run from exactly that one. The
        # checkpoint that was fetched is run with the caller's config as it is: pinning it by
        # id would make LangGraph fork a copy of the head on every resume.
        run_config = config if checked is snapshot else _pin(config, checked)
        run = GuardedRun(turn, context, acceptance)
        context.run(_run.set, run)
        # The acceptance answered this admission only: a resume checked later inside the run
        # (another checkpoint, another agent) is not waived by it. Its refs still apply to the
        # run's own tools, through ``run.acceptance`` (see GuardedRun.enforce).
        context.run(_accepting.set, None)
        return run_config, run

    def _admit_subgraph(self, state: Any, turn: ResumedTurn) -> None:
        """Check a pending subgraph's state; its drops and acceptances join the parent's turn."""
        try:
            # Its summary must be vouched for too, and what it dropped is refused like the
            # parent's; only the deps that subgraph's own state declares apply.
            checked, sub_turn, _ = _check_declared(state)
        except SummaryReconciliationError as error:
            raise _enrich(error, state) from None
        if checked is not state:
            raise _enrich(
                SummaryReconciliationError(
                    sub_turn.summary_generation,
                    sub_turn.checkpoint_turn,
                    "",
                    "a Replay cannot pin a subgraph's checkpoint; replay the parent thread from an earlier checkpoint",
                    kind=ReconciliationKind.GENERATION_MISMATCH,
                ),
                state,
            )
        turn.add_dropped(sub_turn.dropped_refs())
        for record in sub_turn.divergences:
            turn.record(record)


def _subgraph_states(snapshot: Any) -> Iterator[Any]:
    """The state snapshots of the subgraphs pending in ``snapshot`` (``get_state(subgraphs=True)``), nested too."""
    for task in getattr(snapshot, "tasks", None) or ():
        state = getattr(task, "state", None)
        if state is not None and is_langgraph_checkpoint(state):
            yield state
            yield from _subgraph_states(state)


def _admitted(checkpoint: Any) -> tuple[Any, ResumedTurn, contextvars.Context]:
    """The body ``resume_guard`` admits: the checkpoint it settled on, the turn, and the context inside it.

    The run executes in (a copy of) that context, so it is inside the resumed
    turn however ``resume_guard`` represents it.
    """
    turn = current_turn()
    assert turn is not None
    return checkpoint, turn, contextvars.copy_context()


#: The admission check with the deps the checked state itself declares (``next_turn_deps``).
_check_declared = resume_guard(_admitted)


def guard_graph(graph: Any, *, deps: Deps = None) -> GuardedGraph:
    """Check every resume of ``graph`` against the summary invariant before it runs.

    ``deps`` are the references the resumed step needs verbatim: names, or a
    function of the thread's ``StateSnapshot`` returning them (None: what the
    state declares under ``next_turn_deps``, top level or in ``context``).
    With none declared, the check still refuses a summary summaryguard cannot
    vouch for, and the resumed run still refuses, tool by tool, to re-derive
    what the summary dropped (see :func:`guard_tool`).
    """
    return GuardedGraph(graph, deps=deps)


# -- helpers ---------------------------------------------------------------------------------


#: LangGraph's configurable key that says a run continues its checkpoint (``CONFIG_KEY_RESUMING``).
_RESUMING = "__pregel_resuming"
#: LangGraph's configurable key for a saver given with the call (a server's, a parent graph's).
_SAVER = "__pregel_checkpointer"


def _is_resume(input: Any, config: Any = None) -> bool:
    """Whether LangGraph may continue the thread's checkpoint rather than start afresh.

    None, or any ``Command`` (``resume=``, ``update=`` and ``goto=`` all continue the thread),
    or the configurable flag LangGraph's own resumes set. Also any input under a
    ``metadata.run_id``: LangGraph takes a run whose ``run_id`` is the checkpoint's as a
    re-entry into that run (a worker retrying a crashed run with its first input) and
    continues it; :func:`_reentered` settles it against the checkpoint."""
    if input is None or _is_command(input):
        return True
    flag = _configurable(config).get(_RESUMING)
    return bool(flag) if flag is not None else _run_id(config) is not None


def _is_command(input: Any) -> bool:
    types = sys.modules.get("langgraph.types")
    command = getattr(types, "Command", None)
    return command is not None and isinstance(input, command)


def _reentered(input: Any, config: Any, checkpoint: Any) -> bool:
    """A fresh input that LangGraph will take as a resume of ``checkpoint`` (a state snapshot
    or a saver's checkpoint tuple; None: the thread has none): the resuming flag, or the
    ``run_id`` that wrote the checkpoint (see :func:`_is_resume`)."""
    if checkpoint is None:
        return False
    flag = _configurable(config).get(_RESUMING)
    if flag is not None:
        return bool(flag)
    run_id = _run_id(config)
    return run_id is not None and run_id == (getattr(checkpoint, "metadata", None) or {}).get("run_id")


def _configurable(config: Any) -> Mapping[str, Any]:
    """The ``configurable`` table of a run's config (empty when there is none)."""
    configurable = config.get("configurable") if isinstance(config, Mapping) else None
    return configurable if isinstance(configurable, Mapping) else {}


def _run_id(config: Any) -> Any:
    metadata = config.get("metadata") if isinstance(config, Mapping) else None
    return metadata.get("run_id") if isinstance(metadata, Mapping) else None


#: Callables of a compiled graph that never run a node: passed through as they are.
_PASSED_PREFIXES = ("get_", "aget_", "update_state", "aupdate_state", "bulk_update_state", "abulk_update_state")
_PASSED = frozenset({"clear_cache", "aclear_cache", "config_schema"})


def _merge(bound: Any, config: Any) -> Any:
    """``config`` over the configuration bound with ``with_config`` (configurable keys merged)."""
    if not bound:
        return config
    if not config:
        return dict(bound)
    merged = {**bound, **config}
    if "configurable" in bound and "configurable" in config:
        merged["configurable"] = {**bound["configurable"], **config["configurable"]}
    return merged


def _has_thread(config: Any) -> bool:
    return _configurable(config).get("thread_id") is not None


def _unreadable(exc: Exception) -> SummaryReconciliationError:
    """A replayed checkpoint whose paused subgraph's state cannot be read vouches for nothing."""
    return SummaryReconciliationError(
        None,
        None,
        "",
        f"the replayed checkpoint has a paused subgraph whose state could not be read to check it ({exc})",
        kind=ReconciliationKind.GENERATION_MISMATCH,
    )


def _require_thread(config: Any) -> None:
    """A resume names its thread: said plainly, before the check reads a state (the saver's
    own refusal was a bare ``KeyError: 'thread_id'``)."""
    if not _has_thread(config):
        raise ValueError(
            "a guarded resume needs the thread to resume: pass config={'configurable': {'thread_id': ...}}"
        )


def _merge_each(bound: Any, config: Any) -> Any:
    if isinstance(config, (list, tuple)):
        return [_merge(bound, c) for c in config]
    return _merge(bound, config)


def _refuse_batched_resume(inputs: Any) -> list[Any]:
    inputs = list(inputs)
    if any(_is_resume(i) for i in inputs):  # None or a Command (a run_id re-entry is not sought in a batch)
        raise TypeError(
            "a guarded graph does not resume threads in a batch (the check could not be pinned per thread); "
            "resume each thread with invoke() or stream()"
        )
    return inputs


def _pin(config: Any, snapshot: Any) -> dict[str, Any]:
    """``config`` pointed at exactly the checkpoint that was checked."""
    config = dict(config or {})
    configurable = dict(config.get("configurable") or {})
    configurable.update((snapshot.config or {}).get("configurable") or {})
    config["configurable"] = configurable
    return config


def _enter(run: GuardedRun) -> list[tuple[contextvars.ContextVar[Any], contextvars.Token[Any]]]:
    """Take the run's context variables (the resumed turn among them) into the current context."""
    missing = object()
    return [(var, var.set(value)) for var, value in run.context.items() if var.get(missing) is not value]


def _leave(tokens: list[tuple[contextvars.ContextVar[Any], contextvars.Token[Any]]]) -> None:
    for var, token in reversed(tokens):
        var.reset(token)


_stop_types: dict[type, type] = {}


def bubbling(error: SummaryReconciliationError) -> SummaryReconciliationError:
    """The refusal as LangGraph must see it inside a guarded run: a ``GraphBubbleUp`` too.

    ``ToolNode(handle_tool_errors=True)`` turns an ordinary exception into a
    message for the model and the run goes on; a ``GraphBubbleUp`` passes
    through it, and through the retry policies, and stops the run at the step
    that refused. So it is in a LangGraph task run inside any resumed turn (a graph run
    by a ``resume_guard``-ed function: the turn follows the context into its tools).
    Elsewhere, the error is returned as it is.
    """
    errors = sys.modules.get("langgraph.errors")
    if errors is None or (_run.get() is None and not (current_turn() is not None and _in_langgraph_task())):
        return error
    base = errors.GraphBubbleUp
    stop = _stop_types.get(base)
    if stop is None:
        stop = _stop_types[base] = type(
            "ReconciliationStop",
            (SummaryReconciliationError, base),
            {
                "__module__": __name__,
                "__doc__": "A reconciliation error travelling through a LangGraph run.",
                # pickled (multiprocessing, a task queue) as the plain error it stands for
                "__reduce__": lambda self: _plain(self).__reduce__(),
            },
        )
    bubble = stop(
        error.summary_generation, error.checkpoint_turn, error.missing_ref, error.reason,
        kind=error.kind, details=error.details,
    )
    return bubble


def _in_langgraph_task() -> bool:
    """Whether the current code runs inside a LangGraph task (a node, or a tool a node
    calls): LangChain's runnable configuration in the context carries LangGraph's own keys."""
    config_module = sys.modules.get("langchain_core.runnables.config")
    variable = getattr(config_module, "var_child_runnable_config", None)
    config = variable.get() if variable is not None else None
    configurable = config.get("configurable") if isinstance(config, Mapping) else None
    return isinstance(configurable, Mapping) and any(
        isinstance(key, str) and key.startswith("__pregel_") for key in configurable
    )


# Every refusal (tool_guard's and this run's own) goes through bubbling: a guarded
# graph exists only once this module is imported, so registering here is in time.
register_refusal_escalation(bubbling)


def _plain(error: SummaryReconciliationError) -> SummaryReconciliationError:
    """A ``ReconciliationStop`` back as the plain error the caller catches (same fields, same traceback)."""
    if type(error) not in _stop_types.values():
        return error
    plain = SummaryReconciliationError(
        error.summary_generation, error.checkpoint_turn, error.missing_ref, error.reason,
        kind=error.kind, details=error.details,
    )
    return plain.with_traceback(error.__traceback__)


def _surfaced(error: SummaryReconciliationError, run: GuardedRun) -> SummaryReconciliationError:
    """An error met inside a guarded run as its caller gets it: plain, and naming the thread and checkpoint."""
    return _enrich(_plain(error), run.turn.checkpoint)


class _StepChecked:
    """The wrapped graph as LangGraph's own ``invoke``/``ainvoke`` see it: its ``stream``
    checks the run after every step, so a refusal a node swallowed stops the run there,
    as it does for a caller of ``stream``, instead of after the later nodes ran."""

    __slots__ = ("_graph", "_run")

    def __init__(self, graph: Any, run: GuardedRun) -> None:
        self._graph = graph
        self._run = run

    def __getattr__(self, name: str) -> Any:
        return getattr(self._graph, name)

    def stream(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
        for chunk in self._graph.stream(*args, **kwargs):
            _raise_swallowed(self._run)
            yield chunk

    async def astream(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        async for chunk in self._graph.astream(*args, **kwargs):
            _raise_swallowed(self._run)
            yield chunk


def _stepwise(graph: Any, run: GuardedRun, method: str) -> Callable[..., Any]:
    """``graph.invoke`` (or ``ainvoke``) stopping at the step a swallowed refusal came from.

    LangGraph's ``Pregel.invoke`` is a loop over the graph's own ``stream``: run with
    :class:`_StepChecked` as the graph, it is that loop over a stream that checks each step.
    A graph whose class runs otherwise is run as it is (the refusal then stops the run
    when it returns)."""
    pregel = sys.modules.get("langgraph.pregel.main")
    base = getattr(getattr(pregel, "Pregel", None), method, None)
    if base is None or getattr(type(graph), method, None) is not base:
        return getattr(graph, method)
    return functools.partial(base, _StepChecked(graph, run))


def _raise_swallowed(run: GuardedRun) -> None:
    """A refusal caught on its way out (``ToolNode(handle_tool_errors=True)``) still stops the run."""
    if run.refused:
        raise _surfaced(run.refused[0], run)


def is_langgraph_checkpoint(checkpoint: Any) -> bool:
    """A LangGraph ``StateSnapshot`` or ``CheckpointTuple`` (without importing LangGraph)."""
    types = sys.modules.get("langgraph.types")
    if types is not None and isinstance(checkpoint, types.StateSnapshot):
        return True
    base = sys.modules.get("langgraph.checkpoint.base")
    return base is not None and isinstance(checkpoint, base.CheckpointTuple)


def _values(checkpoint: Any) -> Any:
    values = getattr(checkpoint, "values", None)
    if isinstance(values, Mapping):
        return values
    inner = getattr(checkpoint, "checkpoint", None)
    return inner.get("channel_values") if isinstance(inner, Mapping) else None


def _enrich(error: SummaryReconciliationError, checkpoint: Any) -> SummaryReconciliationError:
    """Add where it happened (thread, checkpoint, namespace) to an error about a LangGraph checkpoint."""
    if not is_langgraph_checkpoint(checkpoint):
        return error
    configurable = (getattr(checkpoint, "config", None) or {}).get("configurable") or {}
    details = error.details
    for key in ("thread_id", "checkpoint_id"):
        if key in configurable:
            details.setdefault(key, configurable[key])
    if configurable.get("checkpoint_ns"):
        details.setdefault("checkpoint_ns", configurable["checkpoint_ns"])
    if error.kind in (ReconciliationKind.NO_SUMMARY, ReconciliationKind.GENERATION_MISMATCH):
        note = unstamped_note(_values(checkpoint))
        if note is not None:
            details.setdefault("note", note)
    return error


def observe(error: SummaryReconciliationError, checkpoint: Any) -> None:
    """Observer hook body: enrich the error, and remember a refusal made during a guarded run."""
    _enrich(error, checkpoint)
    run = _run.get()
    if run is not None and error.kind is ReconciliationKind.REDERIVATION:
        run.refused.append(error)


def resolve(error: SummaryReconciliationError, checkpoint: Any) -> AcceptDivergence | None:
    """Resolver hook body: the acceptance of the guarded graph now admitting a resume, if it covers the error."""
    acceptance = _accepting.get()
    if acceptance is not None and acceptance.covers(error):
        return AcceptDivergence(reason=acceptance.reason, accepted_by=acceptance.accepted_by)
    return None
