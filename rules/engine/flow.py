"""The per-function control-flow view: which checks dominate which resume.

A must-analysis over the structured statements of one function: the state at
a point is the set of invariant kinds established on *every* path reaching it
(``hard``), so "in the state" is exactly "dominated by a fail-closed check".
Branches join by intersection; a branch that raises, returns, breaks,
continues or calls a function that always raises does not reach the join.
That covers if/elif/else, try/except/else/finally, with, for/while (+else),
match, early return/raise and break/continue without building an explicit
graph.

A flag or a problem list (``ok = False`` / ``problems.append(...)`` in a
failing branch, acted on by a later ``if not ok: raise``) is followed through
``flags``: what each such name's truthiness proves on the paths reaching a
point (see :mod:`.flags`).

Alongside, ``soft`` remembers checks that exist but cannot stop the resume (a
failing branch that falls through, an ``assert``, a handler that swallows a
validator's error). A resume lacking a kind that a soft check covers consumes
that soft check, so the defect is reported once, at the check (SG104/SG202),
instead of at the resume (SG101-103).

A handler that stores its error (``except E as exc: error = exc``) and lets the
code go on leaves a ``pending`` swallow on the paths from it: a test that shows
the name is None (``if error is not None: raise error`` on its false branch),
a raise or a hand-off settles it; one that reaches a resume or the function's
exit is reported at the handler (SG202). The name is followed as a flag too, so
the kinds the ``try`` checked hold where the test shows it is None.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import libcst as cst

from . import flags as flagging
from . import lexicon
from .conditions import ALL_KINDS, Context, Facts, classify
from .facts import Step, SwallowedError
from .evidence import Evidence, Requirement
from .names import dotted, last_segment
from .behaviour import SOFT_CHECK, SWALLOW, Site, Soft, FunctionSummary
from .syntax import Stmt, bool_literal, calls_in, is_none, iter_exprs, statements, walk_statements

__all__ = ["FlowAnalysis", "State"]

_NONE: frozenset[str] = frozenset()
_BROAD = frozenset({"Exception", "BaseException"})


_NO_FLAGS: Mapping[str, Facts] = {}
_NOTHING = Facts()


@dataclass(frozen=True, eq=False)
class Pending:
    """A handler that stored the caught error in ``name`` instead of raising it:
    it is a swallow (SG202, reported at ``handler``) on every path that reaches a
    resume or the function's exit without raising it first. ``name`` is None once
    the stored error can no longer be told apart (the name was rebound)."""

    handler: cst.CSTNode
    name: str | None
    #: What it caught (``SummaryReconciliationError``, or a broad ``except`` around a resume).
    caught: str
    #: The name it stored the error in (kept when ``name`` is lost).
    stored_as: str

    def __hash__(self) -> int:
        return hash((id(self.handler), self.name))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Pending) and other.handler is self.handler and other.name == self.name


@dataclass(frozen=True)
class State:
    hard: frozenset[str] = _NONE
    soft: frozenset[Soft] = frozenset()
    #: Flag name -> kinds that hold on this path when it is truthy / falsy (beyond ``hard``).
    flags: Mapping[str, Facts] = field(default_factory=lambda: _NO_FLAGS)
    #: Stored errors not yet raised on this path (see :class:`Pending`).
    pending: frozenset[Pending] = frozenset()

    def add(self, kinds: Iterable[str]) -> State:
        kinds = frozenset(kinds)
        return self if kinds <= self.hard else State(self.hard | kinds, self.soft, self.flags, self.pending)

    def add_soft(self, softs: Iterable[Soft]) -> State:
        softs = frozenset(softs)
        return self if not softs else State(self.hard, self.soft | softs, self.flags, self.pending)

    def with_flags(self, flags: Mapping[str, Facts]) -> State:
        return State(self.hard, self.soft, flags, self.pending)

    def with_pending(self, pending: frozenset[Pending]) -> State:
        return self if pending == self.pending else State(self.hard, self.soft, self.flags, pending)

    def settle(self, names: Iterable[str]) -> State:
        """The same state on a path where the errors stored in ``names`` were not caught
        (the name is None there) or were handed on."""
        gone = set(names)
        if not self.pending or not gone:
            return self
        return self.with_pending(frozenset(p for p in self.pending if p.name not in gone))

    def forget(self, names: Iterable[str]) -> State:
        """The same state without what it knew about ``names`` (they may have changed)."""
        if not self.flags:
            return self
        gone = set(names)
        if not gone & self.flags.keys():
            return self
        return self.with_flags({k: v for k, v in self.flags.items() if k not in gone})


def join(states: Iterable[State | None]) -> State | None:
    present = [s for s in states if s is not None]
    if not present:
        return None
    hard = present[0].hard
    soft = present[0].soft
    pending = present[0].pending
    for s in present[1:]:
        hard = hard & s.hard
        soft = soft | s.soft
        pending = pending | s.pending
    return State(hard, soft, _join_flags(present, hard), pending)


def _join_flags(present: list[State], hard: frozenset[str]) -> Mapping[str, Facts]:
    """A flag proves on the join what it proves on every path (or the path proves anyway)."""
    if not any(s.flags for s in present):
        return _NO_FLAGS
    if len(present) == 1:
        return present[0].flags
    joined: dict[str, Facts] = {}
    for name in {n for s in present for n in s.flags}:
        when_true = when_false = ALL_KINDS
        for s in present:
            facts = s.flags.get(name, _NOTHING)
            when_true = when_true & (s.hard | facts.when_true)
            when_false = when_false & (s.hard | facts.when_false)
        facts = Facts(when_true - hard, when_false - hard)
        if facts.when_true or facts.when_false:
            joined[name] = facts
    return joined


class _At(Context):
    """:func:`classify` at one point of the flow: the function's evidence plus the flags there."""

    def __init__(self, evidence: Evidence, flags: Mapping[str, Facts], slots: frozenset[str]) -> None:
        self.ev = evidence
        self.flags = flags
        self.slots = slots

    def definition(self, name: str) -> cst.BaseExpression | None:
        return self.ev.definition(name)

    def flag(self, name: str) -> Facts | None:
        return self.flags.get(name)

    def predicate(self, call: cst.Call) -> frozenset[str] | None:
        return self.ev.predicate(call)

    def nullable(self, name: str) -> bool:
        return name in self.slots


@dataclass
class Outcome:
    fall: State | None
    returns: list[tuple[State, cst.Return]] = field(default_factory=list)
    breaks: list[State] = field(default_factory=list)
    continues: list[State] = field(default_factory=list)

    def absorb(self, other: Outcome) -> None:
        self.returns.extend(other.returns)
        self.breaks.extend(other.breaks)
        self.continues.extend(other.continues)


class FlowAnalysis:
    """Run once per function per fixed-point round; results feed summaries and rules."""

    def __init__(self, evidence: Evidence) -> None:
        self.ev = evidence
        self.fn = evidence.fn
        self.path = evidence.fn.module.path
        self.sites: dict[cst.Call, Site] = {}
        self.site_log: list[cst.Call] = []
        self.consumed: set[Soft] = set()
        #: Swallowed reconciliation errors decided on the spot (not through a resume's requirements).
        self.direct: list[SwallowedError] = []
        self.outcome: Outcome | None = None
        self._flag_names: frozenset[str] | None = None
        self._slot_names: frozenset[str] | None = None
        #: Every node of the function, nested scopes included: one walk for both questions above.
        self._scope_nodes: list[cst.CSTNode] | None = None
        #: Names bound by the ``except ... as`` clauses around the statement being analyzed.
        self._caught_names: list[str] = []
        self._swallows: set[int] = set()

    # -- driver --------------------------------------------------------------------------

    def run(self) -> FlowAnalysis:
        start = State(ALL_KINDS if self.fn.is_guarded else _NONE)
        self.outcome = self.block(self.fn.body, start)
        exits = [(self.outcome.fall, None)] if self.outcome.fall is not None else []
        for state, ret in [*exits, *self.outcome.returns]:
            for pending in state.pending:
                value = ret.value if ret is not None else None
                returned = isinstance(value, cst.Name) and value.value == pending.name
                if not returned:
                    self._swallowed(pending, "the function returns")
        return self

    def _swallowed(self, pending: Pending, where: str) -> None:
        """Report a stored error that reached a resume or an exit without being raised."""
        if id(pending.handler) in self._swallows:
            return
        self._swallows.add(id(pending.handler))
        self.direct.append(
            SwallowedError(
                node=pending.handler, path=self.path, shape="stored", detail=pending.caught, name=pending.stored_as,
                where=where,
            )
        )

    def summary(self) -> FunctionSummary:
        assert self.outcome is not None
        out = self.outcome
        exits = join([out.fall, *(s for s, _ in out.returns)])
        establishes = exits.hard if exits is not None else _NONE
        soft = frozenset(s for s in exits.soft if s.kind not in exits.hard) if exits is not None else frozenset()
        ev = self.ev
        calls = [c for stmt in walk_statements(self.fn.body) for c in _own_calls(stmt)]
        return FunctionSummary(
            establishes=establishes if not self.fn.is_module else _NONE,
            soft=soft if not self.fn.is_module else frozenset(),
            always_raises=exits is None and self._raises_for_real(),
            predicate=self._predicate(),
            resumes=any(site.through is None for site in self.sites.values()) or self.fn.is_guarded,
            needs=frozenset(k for site in self.sites.values() if site.through is None for k in site.missing),
            resumes_through=self._resumes_through(),
            returns_resumed=any(
                ret.value is not None and ev._is_resumed_value(ret.value) for _, ret in out.returns
            ),
            calls_tool=any(ev.known_tool(c) for c in calls),
            pure=not calls,
        )

    def _resumes_through(self) -> frozenset[tuple[str, frozenset[str]]]:
        needs: dict[str, set[str]] = {}
        for site in self.sites.values():
            if site.through is not None and site.missing:
                needs.setdefault(site.through, set()).update(site.missing)
        return frozenset((param, frozenset(kinds)) for param, kinds in needs.items())

    def _raises_for_real(self) -> bool:
        """No normal exit, and not an abstract stub or a generator."""
        if self.fn.is_module:
            return False
        raises = False
        for stmt in walk_statements(self.fn.body):
            if isinstance(stmt, cst.Raise):
                exc = stmt.exc.func if isinstance(stmt.exc, cst.Call) else stmt.exc
                if last_segment(dotted(exc) if exc is not None else None) == "NotImplementedError":
                    return False
                raises = True
            elif isinstance(stmt, cst.Expr) and isinstance(stmt.value, (cst.Yield, cst.Await)):
                return False
            elif isinstance(stmt, cst.Expr) and isinstance(stmt.value, cst.Call):
                raises = raises or self.ev.always_raises(stmt.value)
        return raises

    def _predicate(self) -> frozenset[str]:
        assert self.outcome is not None
        parts = []
        valued = False
        for state, ret in self.outcome.returns:
            if ret.value is None:
                parts.append(ALL_KINDS)
                continue
            valued = True
            parts.append(state.hard | classify(ret.value, self._ctx(state)).when_true)
        if self.outcome.fall is not None:
            parts.append(ALL_KINDS)
        if not valued:
            return _NONE
        result = frozenset.intersection(*parts)
        return _NONE if result == ALL_KINDS and all(
            bool_literal(r.value) is False for _, r in self.outcome.returns if r.value is not None
        ) else result

    # -- flags -------------------------------------------------------------------------

    def _ctx(self, state: State) -> Context:
        """What :func:`classify` asks at ``state``."""
        return _At(self.ev, state.flags, self._slots()) if state.flags else self.ev

    def _candidates(self) -> frozenset[str]:
        if self._flag_names is None:
            self._flag_names = flagging.candidates(self.fn.body, self._nodes())
        return self._flag_names

    def _nodes(self) -> list[cst.CSTNode]:
        if self._scope_nodes is None:
            self._scope_nodes = flagging.scope_nodes(self.fn.body)
        return self._scope_nodes

    def _slots(self) -> frozenset[str]:
        """Flag names that hold None or a caught error (see :func:`.flags.error_slots`)."""
        if self._slot_names is None:
            self._slot_names = flagging.error_slots(self.fn.body, self._nodes()) & self._candidates()
        return self._slot_names

    def _flags_after(self, stmt: Stmt, state: State) -> State:
        """``state`` after a small statement that binds, fills or marks a flag."""
        found = flagging.effects(stmt)
        if not found:
            return state
        names = self._candidates()
        updated = dict(state.flags)
        for name, kind, value in found:
            if name not in names:
                continue
            if kind == flagging.TRUTHY:
                updated[name] = Facts(_NONE, ALL_KINDS)
            elif kind == flagging.FALSY:
                updated[name] = Facts(ALL_KINDS, _NONE)
            elif kind == flagging.GROWS:
                # Falsy still means nothing was added; truthy may be new.
                previous = updated.get(name, _NOTHING)
                updated[name] = Facts(_NONE, previous.when_false)
            elif isinstance(value, cst.Name) and value.value in self._caught_names:
                updated[name] = Facts(_NONE, ALL_KINDS)  # a caught exception is truthy
            else:
                facts = classify(value, self._ctx(state)) if value is not None else _NOTHING
                updated[name] = facts
            if not (updated[name].when_true or updated[name].when_false):
                del updated[name]
        return state.with_flags(updated)

    def _test_facts(self, test: cst.BaseExpression, state: State) -> tuple[Facts, Facts]:
        """What ``test`` proves at ``state``, and what it checks itself. A flag's kinds
        were checked where it was set: if nothing stops the resume, that check is the
        soft one (reported once, there), not the ``if`` on the flag."""
        if not state.flags:
            facts = classify(test, self.ev)
            return facts, facts
        return classify(test, self._ctx(state)), classify(test, self.ev)

    def _loop_entry(self, ways: Mapping[str, str], state: State) -> State:
        """Enter a loop body with what holds on *every* iteration: a flag the body only
        sets one way (``ways``, see :func:`.flags.directions`) keeps what its other
        value proved; any other is forgotten."""
        if not state.flags:
            return state
        kept: dict[str, Facts] = {}
        for name, facts in state.flags.items():
            way = ways.get(name)
            if way is None:
                kept[name] = facts
            elif way == flagging.TRUTHY and facts.when_false:
                kept[name] = Facts(_NONE, facts.when_false)
            elif way == flagging.FALSY and facts.when_true:
                kept[name] = Facts(facts.when_true, _NONE)
        return state.with_flags(kept)

    # -- statements ----------------------------------------------------------------------

    def block(self, stmts: Sequence[Stmt], state: State | None) -> Outcome:
        out = Outcome(state)
        for stmt in stmts:
            if out.fall is None:
                break
            step = self.stmt(stmt, out.fall)
            out.absorb(step)
            out.fall = step.fall
        return out

    def stmt(self, stmt: Stmt, state: State) -> Outcome:
        handler = getattr(self, "_" + type(stmt).__name__, None)
        if handler is not None:
            return handler(stmt, state)
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            return Outcome(state)
        after, raises = self.expr(stmt, state)
        if raises:
            return Outcome(None)
        if after.pending:
            after = self._rebound(stmt, after)
        return Outcome(self._flags_after(stmt, after))

    def _rebound(self, stmt: Stmt, state: State) -> State:
        """A stored error's name bound to something other than a caught error: what it
        held is lost, so no later test on the name can show it was raised."""
        lost = {
            name
            for name, _, value in flagging.effects(stmt)
            if not (isinstance(value, cst.Name) and value.value in self._caught_names)
        }
        if not lost & {p.name for p in state.pending}:
            return state
        return state.with_pending(
            frozenset(Pending(p.handler, None, p.caught, p.stored_as) if p.name in lost else p for p in state.pending)
        )

    def expr(self, node: cst.CSTNode | None, state: State) -> tuple[State, bool]:
        """Record the resumes in ``node`` at ``state``; apply validators it calls."""
        if node is None:
            return state, False
        gained: set[str] = set()
        softs: set[Soft] = set()
        raises = False
        ev = self.ev
        for call in calls_in(node):
            requirement = ev.resume_requirement(call)
            if requirement is not None:
                self._site(call, requirement, state)
            gained |= ev.validator_kinds(call)
            softs.update(s if s.path == self.path else self._rehomed(s, call) for s in ev.validator_softs(call))
            raises = raises or ev.always_raises(call)
            if state.pending:
                state = state.settle(_handed(call, state.pending))
        after = state.add(gained)
        return after.add_soft(s for s in softs if s.kind not in after.hard), raises

    def _rehomed(self, soft: Soft, call: cst.Call) -> Soft:
        """A soft check inside another module's function, seen from its call here: reported
        at the call, so this file's findings depend only on what it imports (locality),
        with the check itself in the trace."""
        name = dotted(call.func) or "the function"
        origin = (*soft.origin, Step(soft.path, soft.node, "the soft check"))
        detail = f"`{name}()` checks it softly ({soft.detail})"
        return Soft(soft.kind, soft.role, call, self.path, detail, origin)

    def _site(self, call: cst.Call, requirement: Requirement, state: State) -> None:
        required = requirement.kinds
        site = self.sites.get(call)
        if site is None:
            site = self.sites[call] = Site(
                call, required, requirement.label, requirement.trace, callee=requirement.callee,
                through=requirement.through,
            )
        if site.through is not None:
            # a resume of a parameter's value: what it lacks here is what a call of this
            # function lacks when a caller passes summary state; nothing is reported here
            site.missing.update(required - state.hard)
            return
        self.site_log.append(call)
        for pending in state.pending:
            self._swallowed(pending, "the resume runs")
        for kind in required - state.hard:
            softs = [s for s in state.soft if s.kind == kind]
            if softs:
                self.consumed.update(softs)
            else:
                site.missing.add(kind)

    def _Return(self, stmt: cst.Return, state: State) -> Outcome:
        after, _ = self.expr(stmt.value, state)
        return Outcome(None, returns=[(after, stmt)])

    def _Raise(self, stmt: cst.Raise, state: State) -> Outcome:
        self.expr(stmt.exc, state)
        return Outcome(None)

    def _Break(self, stmt: cst.Break, state: State) -> Outcome:
        return Outcome(None, breaks=[state])

    def _Continue(self, stmt: cst.Continue, state: State) -> Outcome:
        return Outcome(None, continues=[state])

    def _Assert(self, stmt: cst.Assert, state: State) -> Outcome:
        after, raises = self.expr(stmt.test, state)
        _, own = self._test_facts(stmt.test, after)
        detail = "an `assert` is removed by `python -O`, so it cannot stop the resume"
        softs = [Soft(k, SOFT_CHECK, stmt, self.path, detail) for k in own.when_true - after.hard]
        return Outcome(None if raises else after.add_soft(softs))

    def _If(self, stmt: cst.If, state: State) -> Outcome:
        """An ``if`` and its whole ``elif`` chain, iteratively (chains can be long)."""
        out = Outcome(None)
        falls: list[State | None] = []
        current: cst.If | None = stmt
        entry: State | None = state
        while current is not None and entry is not None:
            st, raises = self.expr(current.test, entry)
            if raises:
                entry = None
                break
            facts, own = self._test_facts(current.test, st)
            detail = "its failing branch does not raise or return, so the resume runs anyway"
            fail_true = [Soft(k, SOFT_CHECK, current, self.path, detail) for k in own.when_false - st.hard]
            fail_false = [Soft(k, SOFT_CHECK, current, self.path, detail) for k in own.when_true - st.hard]
            none_true, none_false = _nulls(current.test, {p.name for p in st.pending if p.name is not None})
            body = self.block(statements(current.body), st.add(facts.when_true).add_soft(fail_true).settle(none_true))
            out.absorb(body)
            falls.append(body.fall)
            entry = st.add(facts.when_false).add_soft(fail_false).settle(none_false)
            orelse = current.orelse
            if isinstance(orelse, cst.If):
                current = orelse
                continue
            if orelse is not None:
                other = self.block(statements(orelse.body), entry)
                out.absorb(other)
                entry = other.fall
            current = None
        falls.append(entry)
        out.fall = join(falls)
        return out

    def _For(self, stmt: cst.For, state: State) -> Outcome:
        st, raises = self.expr(stmt.iter, state)
        if raises:
            return Outcome(None)
        body_stmts = statements(stmt.body)
        ways = flagging.directions(body_stmts) if body_stmts else {}
        body = self.block(body_stmts, self._loop_entry(ways, st))
        # Kinds checked for every element hold after the loop (zero elements: vacuously).
        after = join([body.fall, *body.continues]) or st
        after = State(after.hard, after.soft | st.soft, after.flags, after.pending)
        return self._loop_exit(stmt, body, after, ways)

    def _While(self, stmt: cst.While, state: State) -> Outcome:
        st, raises = self.expr(stmt.test, state)
        if raises:
            return Outcome(None)
        body_stmts = statements(stmt.body)
        ways = flagging.directions(body_stmts) if body_stmts else {}
        body = self.block(body_stmts, self._loop_entry(ways, st))
        infinite = bool_literal(stmt.test) is True
        after = join([] if infinite else [st, body.fall, *body.continues])
        return self._loop_exit(stmt, body, after, ways)

    def _loop_exit(
        self, stmt: cst.For | cst.While, body: Outcome, after: State | None, ways: Mapping[str, str]
    ) -> Outcome:
        # A flag the body sets both ways speaks, after the loop, of the last iteration only.
        mixed = [name for name, way in ways.items() if way == flagging.VALUE]
        if after is not None and mixed:
            after = after.forget(mixed)
        if stmt.orelse is not None and after is not None:
            other = self.block(statements(stmt.orelse.body), after)
        else:
            other = Outcome(after)
        breaks = [s.forget(mixed) for s in body.breaks] if mixed else body.breaks
        out = Outcome(join([other.fall, *breaks]), returns=body.returns + other.returns)
        out.breaks.extend(other.breaks)
        out.continues.extend(other.continues)
        return out

    def _Try(self, stmt: cst.Try | cst.TryStar, state: State) -> Outcome:
        mark = len(self.site_log)
        body = self.block(statements(stmt.body), state)
        body_sites = self.site_log[mark:]
        if stmt.orelse is not None and body.fall is not None:
            other = self.block(statements(stmt.orelse.body), body.fall)
        else:
            other = Outcome(body.fall)
        gained = body.fall.hard - state.hard if body.fall is not None else _NONE
        raised = {last_segment(n) for n in _raised_names(statements(stmt.body))}
        out = Outcome(None)
        out.absorb(body)
        out.absorb(other)
        falls: list[State | None] = [other.fall]
        # A handler runs after any part of the body: flags the body sets may be either way.
        raised_at = state.forget(flagging.touched(statements(stmt.body))) if state.flags else state
        for handler in stmt.handlers:
            falls.append(self._handler(handler, raised_at, gained, raised, body_sites, out))
        fall = join(falls)
        if stmt.finalbody is not None:
            final_stmts = statements(stmt.finalbody.body)
            # Entered while an exception propagates (from any point of the try):
            # only what held before the try is certain there.
            unwinding = state.forget(flagging.touched(_try_blocks(stmt))) if state.flags else state
            self.block(final_stmts, join([unwinding, fall]))
            if fall is not None:
                final = self.block(final_stmts, fall)
                out.absorb(final)
                fall = final.fall
        out.fall = fall
        return out

    _TryStar = _Try

    def _handler(
        self,
        handler: cst.ExceptHandler | cst.ExceptStarHandler,
        state: State,
        gained: frozenset[str],
        raised: set[str],
        body_sites: list[cst.Call],
        out: Outcome,
    ) -> State | None:
        caught = self._caught(handler.type)
        broad = handler.type is None or bool(caught & _BROAD)
        reconciliation = any(self.ev.vocab.matches("reconciliation-errors", q) for q in caught)
        catches_check = broad or reconciliation or bool({last_segment(q) for q in caught} & raised)
        entry = state
        detail = "it swallows the failed resume check and the code goes on to resume"
        if catches_check and gained:
            entry = state.add_soft(Soft(k, SWALLOW, handler, self.path, detail) for k in gained)
        mark = len(self.site_log)
        bound = handler.name.name.value if handler.name is not None and isinstance(handler.name.name, cst.Name) else None
        if bound is not None:
            self._caught_names.append(bound)
        try:
            result = self.block(statements(handler.body), entry)
        finally:
            if bound is not None:
                self._caught_names.pop()
        out.absorb(result)
        handler_sites = self.site_log[mark:]
        hands_off = bound is not None and _hands_off(handler, bound)
        reraises = result.fall is None and not result.returns
        if hands_off:
            return state.add(gained) if result.fall is not None else None
        swallows = reconciliation or (broad and body_sites)
        rederives = swallows and not reraises and any(
            self.ev.known_tool(c) for s in statements(handler.body) for c in _own_calls(s)
        )
        fall = result.fall
        stored = self._stored(handler, bound) if swallows and fall is not None else None
        if fall is not None and stored is not None and not (
            handler_sites or rederives or (reconciliation and result.returns)
        ):
            # `error = exc` and the code goes on: a swallow only on a path that
            # reaches a resume or the function's exit before `raise error`.
            what = "SummaryReconciliationError" if reconciliation else "error of a broad `except` around a resume"
            pending = Pending(handler, stored, what, stored)
            return fall.with_pending(fall.pending | {pending})
        if reconciliation and not reraises:
            self.direct.append(SwallowedError(node=handler, path=self.path, shape="catches-reconciliation"))
        elif broad and body_sites and not reraises:
            if handler_sites or rederives or result.fall is not None:
                what = "resumes anyway" if handler_sites else "re-derives" if rederives else "passes"
                self.direct.append(SwallowedError(node=handler, path=self.path, shape="broad-except", detail=what))
        return result.fall

    def _stored(self, handler: cst.ExceptHandler | cst.ExceptStarHandler, bound: str | None) -> str | None:
        """The name the handler stores its error in on every path (a top-level ``name =
        bound`` of its body, the only binding of ``name`` there), when that name only
        ever holds None or a caught error."""
        if bound is None:
            return None
        body = statements(handler.body)
        stored = None
        for stmt in body:
            if isinstance(stmt, cst.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, cst.Name):
                target = stmt.targets[0].target
                if stmt.value.value == bound and isinstance(target, cst.Name) and target.value in self._slots():
                    stored = target.value
        if stored is None:
            return None
        bindings = [n for s in walk_statements(body) for n, _, _ in flagging.effects(s) if n == stored]
        return stored if len(bindings) == 1 else None

    def _caught(self, expr: cst.BaseExpression | None) -> set[str]:
        if expr is None:
            return set()
        elements = [e.value for e in expr.elements] if isinstance(expr, cst.Tuple) else [expr]
        names = set()
        for element in elements:
            name = dotted(element)
            if name:
                names.add(self.ev.imports.qualify_name(name))
        return names

    def _With(self, stmt: cst.With, state: State) -> Outcome:
        st = state
        suppressed: set[str] = set()
        for item in stmt.items:
            st, raises = self.expr(item.item, st)
            if raises:
                return Outcome(None)
            call = item.item
            if isinstance(call, cst.Call) and last_segment(dotted(call.func)) == "suppress":
                for arg in call.args:
                    suppressed |= self._caught(arg.value)
        mark = len(self.site_log)
        body = self.block(statements(stmt.body), st)
        if not suppressed:
            return body
        reconciliation = any(self.ev.vocab.matches("reconciliation-errors", q) for q in suppressed)
        broad = bool(suppressed & _BROAD)
        if reconciliation:
            self.direct.append(SwallowedError(node=stmt, path=self.path, shape="suppress-reconciliation"))
        elif broad and self.site_log[mark:]:
            self.direct.append(SwallowedError(node=stmt, path=self.path, shape="suppress-broad"))
        gained = body.fall.hard - st.hard if body.fall is not None else _NONE
        detail = "it suppresses the failed resume check and the code goes on to resume"
        cut = st.forget(flagging.touched(statements(stmt.body))).add_soft(
            Soft(k, SWALLOW, stmt, self.path, detail) for k in gained
        )
        out = Outcome(join([body.fall, cut]))
        out.absorb(body)
        return out

    def _Match(self, stmt: cst.Match, state: State) -> Outcome:
        st, raises = self.expr(stmt.subject, state)
        if raises:
            return Outcome(None)
        out = Outcome(None)
        falls: list[State | None] = []
        irrefutable = False
        for case in stmt.cases:
            result = self.block(statements(case.body), st)
            out.absorb(result)
            falls.append(result.fall)
            pattern = case.pattern
            if case.guard is None and isinstance(pattern, cst.MatchAs) and pattern.pattern is None:
                irrefutable = True
        if not irrefutable:
            falls.append(st)
        out.fall = join(falls)
        return out


def _try_blocks(stmt: cst.Try | cst.TryStar) -> list[Stmt]:
    """The statements of a ``try``'s body, handlers and ``else``."""
    blocks = statements(stmt.body) + [s for h in stmt.handlers for s in statements(h.body)]
    return blocks + (statements(stmt.orelse.body) if stmt.orelse is not None else [])


def _own_calls(stmt: Stmt) -> list[cst.Call]:
    from .syntax import expressions_of

    return [c for expr in expressions_of(stmt) for c in calls_in(expr)]


def _raised_names(stmts: Sequence[Stmt]) -> set[str]:
    names = set()
    for stmt in walk_statements(stmts):
        if isinstance(stmt, cst.Raise) and stmt.exc is not None:
            exc = stmt.exc.func if isinstance(stmt.exc, cst.Call) else stmt.exc
            name = dotted(exc)
            if name:
                names.add(name)
    return names


def _hands_off(handler: cst.ExceptHandler | cst.ExceptStarHandler, bound: str) -> bool:
    """The bound error is passed to something that is not a logger, or returned."""
    for stmt in walk_statements(statements(handler.body)):
        if isinstance(stmt, cst.Return) and stmt.value is not None and _mentions(stmt.value, bound):
            return True
        from .syntax import expressions_of

        for expr in expressions_of(stmt):
            for call in calls_in(expr):
                if last_segment(dotted(call.func)) in lexicon.LOG_CALLS:
                    continue
                if any(_mentions(arg.value, bound) for arg in call.args):
                    return True
    return False


def _handed(call: cst.Call, pending: Iterable[Pending]) -> set[str]:
    """The stored errors ``call`` is given (not to a logger): handed to a controller."""
    if last_segment(dotted(call.func)) in lexicon.LOG_CALLS:
        return set()
    names = {p.name for p in pending if p.name is not None}
    return {n for n in names if any(_mentions(arg.value, n) for arg in call.args)}


def _nulls(test: cst.BaseExpression, names: set[str]) -> tuple[set[str], set[str]]:
    """Which of ``names`` (each None exactly when falsy) are None when ``test`` is
    true, and which when it is false."""
    if not names:
        return set(), set()
    if isinstance(test, cst.Name):
        return set(), {test.value} & names
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        when_true, when_false = _nulls(test.expression, names)
        return when_false, when_true
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        for side, other in ((test.left, target.comparator), (target.comparator, test.left)):
            if is_none(other) and isinstance(side, cst.Name) and side.value in names:
                if isinstance(target.operator, (cst.Is, cst.Equal)):
                    return {side.value}, set()
                if isinstance(target.operator, (cst.IsNot, cst.NotEqual)):
                    return set(), {side.value}
        return set(), set()
    if isinstance(test, cst.BooleanOperation):
        left_true, left_false = _nulls(test.left, names)
        right_true, right_false = _nulls(test.right, names)
        if isinstance(test.operator, cst.And):
            return left_true | right_true, left_false & right_false
        return left_true & right_true, left_false | right_false
    return set(), set()


def _mentions(node: cst.CSTNode, name: str) -> bool:
    return any(isinstance(n, cst.Name) and n.value == name for n in iter_exprs(node))
