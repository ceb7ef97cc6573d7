"""``resume_guard``: the invariant, enforced at the door of a resume function.

Decide once, run fast (the shape deal's contracts use): the decorator works out
where the checkpoint and the dependencies are in the call when it wraps the
function; each call then does a cached adapter lookup, the checks inline, and
runs the body inside a resumed turn. Plugins are consulted only on a violation:
observers first, then a resolver that may replay from an exact checkpoint or
accept the divergence on record; with no resolution, the error propagates.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import sys
from collections.abc import Callable, Container, Iterable
from typing import Any, TypeVar, overload

from .check import _SETS, _adapters, _frozen_types, _inline_types, adapter_for, check_dep_names, deps_of, facts_of, normalize_deps, notify, violation
from .errors import ReconciliationKind, SummaryReconciliationError
from .handback import PLAIN, hand_back
from .reconcile import AcceptDivergence, DivergenceRecord, Replay
from .turn import ResumedTurn, _current, snapshot_manifest, turn_of

__all__ = ["resume_guard"]

F = TypeVar("F", bound=Callable[..., Any])

#: How many Replay resolutions one call may go through before giving up (a
#: resolver that keeps answering Replay with bad checkpoints must not loop
#: forever). Acceptances are not counted: each one waives a distinct condition
#: (one kind or one missing reference), so they always come to an end, and a
#: checkpoint missing many dependencies can have every one accepted.
MAX_RESOLUTIONS = 16

_PLAIN = (list, tuple, set, frozenset)
_MISSING: Any = object()


@overload
def resume_guard(fn: F, /) -> F: ...


@overload
def resume_guard(
    *, deps: str | Callable[[Any], Iterable[str]] | None = None, checkpoint: str | None = None
) -> Callable[[F], F]: ...


def resume_guard(
    fn: Any = None,
    /,
    *,
    deps: str | Callable[[Any], Iterable[str]] | None = None,
    checkpoint: str | None = None,
) -> Any:
    """Refuse to run a resume function unless its checkpoint may be resumed from.

    ``checkpoint`` names the parameter holding the checkpoint (default: a
    parameter called ``checkpoint``, else the first one that is not ``self`` or
    ``cls``). ``deps`` gives the next turn's dependencies: the name of a
    parameter holding them, a callable taking the checkpoint, or None to read
    them from the checkpoint through its adapter. A deps parameter (or
    callable) whose value is None falls back to the checkpoint's own, as
    :func:`check_resume` does: None never means "check nothing".

    Works on plain and ``async`` functions and methods, generator functions,
    partials and callable objects, keeping name, docstring and signature.
    Raises :class:`SummaryReconciliationError` before the body runs on the
    first failing condition (summary present, generation match, complete,
    every dependency verbatim) unless a plugin resolves it.

    The body runs inside a resumed turn (:mod:`summaryguard.guard.turn`),
    and so does the work it hands back: a coroutine, generator, async
    generator, function, method or partial it returns, or any object whose
    type makes it callable, an iterator, awaitable or an async iterator,
    runs inside the turn when it is awaited, iterated or called (see
    :mod:`summaryguard.guard.handback`; work inside a container is not
    looked for: bind it with :func:`~summaryguard.guard.in_turn`). The turn holds the drop manifest
    as it was when the call was admitted. Called inside another turn, the
    resume adds its checkpoint's drops to that turn's and never replaces
    them: the inner turn refuses its own drops and whatever the outer turn
    has not accepted. Acceptances belong to the turn they are made in (made
    outside, they cover the outer drops inside too; made inside, they end
    with the inner turn), and ``current_turn().divergences`` lists only the
    turn's own records.
    """
    if fn is None:
        return functools.partial(resume_guard, deps=deps, checkpoint=checkpoint)
    if isinstance(fn, (staticmethod, classmethod)):
        # Placed above @staticmethod / @classmethod: guard the function, keep the binding.
        return type(fn)(resume_guard(fn.__func__, deps=deps, checkpoint=checkpoint))
    if not callable(fn):
        raise TypeError(f"resume_guard wraps a function, got {type(fn).__name__}")
    return _Guarded(fn, deps, checkpoint).build()


class _Guarded:
    """Everything decided once about one guarded function."""

    def __init__(self, fn: Callable[..., Any], deps: Any, checkpoint: str | None) -> None:
        # A generator (function, or object whose __call__ is one) is guarded like any
        # sync function: the check runs at the call, and the generator it returns is
        # handed back so that its body runs inside the turn as it is iterated.
        self.fn = fn
        signature = inspect.signature(fn)
        params = list(signature.parameters.values())
        self.cp_name, self.cp_index, self.cp_default = _locate(fn, params, checkpoint, "checkpoint")
        self.deps_mode = "checkpoint"
        self.deps_name = ""
        self.deps_index = -1
        self.deps_default: Any = _MISSING
        self.deps_fn: Callable[[Any], Iterable[str]] | None = None
        if isinstance(deps, str):
            self.deps_mode = "param"
            self.deps_name, self.deps_index, self.deps_default = _locate(fn, params, deps, "deps")
        elif callable(deps):
            self.deps_mode = "callable"
            self.deps_fn = deps
        elif deps is not None:
            raise TypeError(f"resume_guard(deps=...) takes a parameter name or a callable, got {type(deps).__name__}")
        # The generic path's argument readers, built once (not per call).
        self._get_checkpoint = self._checkpoint_getter()
        self._get_deps = self._deps_getter()

    # -- building the wrapper ----------------------------------------------------------

    def build(self) -> Callable[..., Any]:
        """The wrapper: compiled for this signature when possible, generic otherwise.

        The compiled wrapper takes the wrapped function's own parameters, so
        the checkpoint and the dependencies are plain local variables: no
        argument packing, no lookup call. Anything unusual (a violation, an
        adapter that raises, deps that need normalizing) goes to the generic
        path, which decides exactly the same way.

        Either way, work the body hands back (a coroutine, generator, async
        generator, function or other callable, iterator or awaitable, see
        :mod:`summaryguard.guard.handback`) runs
        inside the turn when it is awaited, iterated or called; a sync wrapper
        around a coroutine function (a decorator that did not keep it async)
        is one case of this.
        """
        fn = self.fn
        is_async = _is_async(fn)
        wrapper = _compile(self, is_async)
        if wrapper is None:
            call = self.call_async if is_async else self.call
            if is_async:

                async def wrapper(*args: Any, **kwargs: Any) -> Any:
                    return await call(args, kwargs)

            else:

                def wrapper(*args: Any, **kwargs: Any) -> Any:
                    return call(args, kwargs)

        return functools.wraps(fn)(wrapper)

    # -- the generic path ----------------------------------------------------------------

    def enter(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any], list[Any]]:
        """Check the call; return the (possibly replayed) arguments and the turn cell.

        The cell holds the drop manifest as it is now and the turn this call
        runs inside, if any (see :mod:`summaryguard.guard.turn`).
        """
        cp = self._get_checkpoint(args, kwargs)
        adapter = adapter_for(cp)
        facts, deps, error = self._read(args, kwargs, cp, adapter)
        if error is None and violation(facts, deps) is None:
            return args, kwargs, [cp, adapter, None, snapshot_manifest(adapter, cp), _current.get()]
        return self._slow_path(args, kwargs, cp, adapter, facts, deps, error)

    def _read(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], cp: Any, adapter: Any
    ) -> tuple[tuple[Any, ...], Any, SummaryReconciliationError | None]:
        """Facts and deps of ``cp``; a checkpoint the adapter cannot read is an error to resolve, like any other."""
        try:
            facts = facts_of(adapter, cp)
        except SummaryReconciliationError as error:
            # Nothing can be read, so nothing is resumable: a summary-less view of the
            # checkpoint, in which only an accepted no-summary condition lets it through.
            return (error.checkpoint_turn, None, False, None, False, ()), (), error
        try:
            deps = self._get_deps(args, kwargs, cp, adapter)
        except SummaryReconciliationError as error:
            return facts, (), error
        check_dep_names(deps)
        return facts, deps, None

    def call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        args, kwargs, cell = self.enter(args, kwargs)
        token = _current.set(cell)
        try:
            result = self.fn(*args, **kwargs)
        finally:
            _current.reset(token)
        return result if result.__class__ in PLAIN else hand_back(cell, result)

    async def call_async(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        args, kwargs, cell = self.enter(args, kwargs)
        token = _current.set(cell)
        try:
            result = await self.fn(*args, **kwargs)
        finally:
            _current.reset(token)
        return result if result.__class__ in PLAIN else hand_back(cell, result)

    def _checkpoint_getter(self) -> Callable[[tuple[Any, ...], dict[str, Any]], Any]:
        index, name, default, qualname = self.cp_index, self.cp_name, self.cp_default, _label(self.fn)

        def get_checkpoint(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
            if 0 <= index < len(args):
                return args[index]
            value = kwargs.get(name, default)
            if value is _MISSING:
                raise TypeError(f"{qualname}() missing the checkpoint argument {name!r}")
            return value

        return get_checkpoint

    def _deps_getter(self) -> Callable[..., Any]:
        if self.deps_mode == "param":
            index, name, default, qualname = self.deps_index, self.deps_name, self.deps_default, _label(self.fn)

            def from_param(args: tuple[Any, ...], kwargs: dict[str, Any], cp: Any, adapter: Any) -> Any:
                if 0 <= index < len(args):
                    deps = args[index]
                else:
                    deps = kwargs.get(name, default)
                    if deps is _MISSING:
                        raise TypeError(f"{qualname}() missing the dependencies argument {name!r}")
                if type(deps) in _PLAIN:
                    return deps
                # None means "not given here": the checkpoint's own deps still apply.
                return normalize_deps(deps_of(adapter, cp) if deps is None else deps)

            return from_param
        if self.deps_mode == "callable":
            deps_fn = self.deps_fn
            assert deps_fn is not None

            def from_callable(args: tuple[Any, ...], kwargs: dict[str, Any], cp: Any, adapter: Any) -> Any:
                deps = deps_fn(cp)
                if type(deps) in _PLAIN:
                    return deps
                return normalize_deps(deps_of(adapter, cp) if deps is None else deps)

            return from_callable

        def from_checkpoint(args: tuple[Any, ...], kwargs: dict[str, Any], cp: Any, adapter: Any) -> Any:
            try:
                deps = adapter.next_turn_deps(cp)
            except Exception:  # noqa: BLE001 - unreadable deps fail closed (inline: fast path)
                deps = deps_of(adapter, cp)  # raises a reconciliation error
            return deps if type(deps) in _PLAIN else normalize_deps(deps)

        return from_checkpoint

    # -- the slow path: a violation ----------------------------------------------------

    def _slow_path(
        self,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        cp: Any,
        adapter: Any,
        facts: tuple[Any, ...],
        deps: Any,
        unreadable: SummaryReconciliationError | None = None,
    ) -> tuple[tuple[Any, ...], dict[str, Any], list[Any]]:
        from summaryguard.plugins.manager import get_plugin_manager

        hooks = get_plugin_manager().hook
        waived_kinds: set[ReconciliationKind] = set()
        waived_refs: set[str] = set()
        records: list[DivergenceRecord] = []
        replays = 0
        while True:
            if unreadable is not None:
                error, unreadable = unreadable, None
            else:
                error = violation(facts, deps, waived_kinds, waived_refs)
            if error is None:
                break
            notify(error, cp)
            try:
                resolution = hooks.summaryguard_resolve_violation(error=error, checkpoint=cp)
            except Exception as exc:  # noqa: BLE001 - a crashing resolver resolves nothing: fail closed
                error.details["resolver_error"] = f"{type(exc).__name__}: {exc}"
                raise error from exc
            if resolution is None:
                raise error
            if isinstance(resolution, Replay):
                replays += 1
                if replays > MAX_RESOLUTIONS:
                    error.reason += f" (still unresolved after {MAX_RESOLUTIONS} replays)"
                    raise error
                # settled: a run that remembered it when observed does not raise it at its end
                error.resolution = resolution
                cp = resolution.checkpoint
                args, kwargs = self._substitute(args, kwargs, cp)
                adapter = adapter_for(cp)
                facts, deps, unreadable = self._read(args, kwargs, cp, adapter)
                waived_kinds.clear()
                waived_refs.clear()
                records.clear()
            elif isinstance(resolution, AcceptDivergence):
                error.resolution = resolution  # settled, as a replay is
                record = DivergenceRecord.from_error(error, resolution.reason, resolution.accepted_by)
                records.append(record)
                hooks.summaryguard_divergence_accepted(record=record)
                # Each acceptance waives the condition it answers, so the next
                # round reports a different one: acceptances always terminate.
                if error.kind is ReconciliationKind.MISSING_DEPENDENCY:
                    waived_refs.add(error.missing_ref)
                else:
                    waived_kinds.add(error.kind)
            else:
                raise TypeError(
                    f"a summaryguard_resolve_violation hook returned {resolution!r}; "
                    "expected Replay, AcceptDivergence or None"
                )
        outer = _current.get()
        dropped = snapshot_manifest(adapter, cp)
        turn = ResumedTurn(cp, adapter, facts, dropped=dropped, outers=(turn_of(outer),) if outer is not None else ())
        for record in records:
            turn.record(record)
        return args, kwargs, [cp, adapter, turn, dropped, outer]

    def _substitute(self, args: tuple[Any, ...], kwargs: dict[str, Any], cp: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
        if 0 <= self.cp_index < len(args):
            new_args = list(args)
            new_args[self.cp_index] = cp
            return tuple(new_args), kwargs
        return args, {**kwargs, self.cp_name: cp}


def _label(fn: Any) -> str:
    """How a guarded callable is named in messages (a partial or a callable object has no __qualname__)."""
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__


def _is_async(fn: Any) -> bool:
    """A coroutine function, or an object whose ``__call__`` is one, or a partial of either."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(type(fn), "__call__", None)
    return not inspect.isroutine(fn) and inspect.iscoroutinefunction(call)


def _locate(fn: Callable[..., Any], params: list[inspect.Parameter], wanted: str | None, role: str) -> tuple[str, int, Any]:
    """Find a parameter: (name, positional index or -1, default or _MISSING)."""
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    named = {p.name: p for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    if wanted is None:
        if "checkpoint" in named:
            wanted = "checkpoint"
        else:
            candidates = [p for p in params if p.name not in ("self", "cls") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
            if not candidates:
                raise TypeError(f"resume_guard: {_label(fn)}() takes no parameter that could hold the checkpoint")
            wanted = candidates[0].name
    param = named.get(wanted)
    if param is None:
        raise TypeError(
            f"resume_guard({role}={wanted!r}): {_label(fn)}() has no parameter {wanted!r} "
            f"(it has {', '.join(named) or 'none'})"
        )
    index = positional.index(param) if param in positional else -1
    if param.kind is param.KEYWORD_ONLY:
        index = -1
    default = param.default if param.default is not param.empty else _MISSING
    return param.name, index, default


# -- the compiled fast path ----------------------------------------------------------------

_FAST_TEMPLATE = """
def _sg_make({closure}):
    {define} _sg_wrapper({params}):
        _sg_cp = {cp}
        try:
            _sg_deps = {deps}
            _sg_c = _sg_deps.__class__
            if _sg_c is not _sg_list and _sg_c is not _sg_tuple and _sg_c is not _sg_set and _sg_c is not _sg_frozenset:
                _sg_ok = False  # strings, generators, None...: the generic path normalizes or refuses them
            elif _sg_cp.__class__ in _sg_inline:
                # The seed's attribute shape, read inline (no adapter call);
                # the turn finds its adapter later, if it ever needs it.
                _sg_adapter = None
                _sg_s = _sg_cp.summary
                _sg_gen = _sg_s.generation
                _sg_ok = _sg_gen is not None and _sg_gen == _sg_cp.summary_generation and not _sg_s.partial
                if _sg_ok:
                    # The drop manifest as it is now: the turn must not see later edits.
                    _sg_m = _sg_getattr(_sg_s, "drop_manifest", None)
                    if not _sg_m:
                        _sg_m = ()
                    elif _sg_cp.__class__ not in _sg_frozen:
                        _sg_m = _sg_snap(_sg_get(_sg_cp.__class__) or _sg_adapter_for(_sg_cp), _sg_cp)
                    _sg_refs = _sg_s.verbatim_refs
                    if _sg_refs.__class__ not in _sg_readable and not _sg_learn(_sg_refs.__class__):
                        _sg_ok = False  # "a" in "abc", a str subclass, no container: the generic path refuses
                    else:
                        for _sg_d in _sg_deps:
                            if _sg_d not in _sg_refs:
                                _sg_ok = False
                                break
            else:
                _sg_adapter = _sg_get(_sg_cp.__class__) or _sg_adapter_for(_sg_cp)
                _sg_t, _sg_rec, _sg_has, _sg_gen, _sg_partial, _sg_refs = _sg_adapter.extract(_sg_cp)
                _sg_ok = _sg_has and _sg_gen is not None and _sg_gen == _sg_rec and not _sg_partial
                if _sg_refs.__class__ not in _sg_readable and not _sg_learn(_sg_refs.__class__):
                    _sg_ok = False
                elif _sg_ok and _sg_deps:
                    if _sg_refs.__class__ in _sg_sets:
                        _sg_ok = _sg_refs.issuperset(_sg_deps)
                    else:
                        for _sg_d in _sg_deps:
                            if _sg_d not in _sg_refs:
                                _sg_ok = False
                                break
                if _sg_ok:
                    _sg_m = _sg_snap(_sg_adapter, _sg_cp)
        except _sg_Exception:
            _sg_ok = False
        if not _sg_ok:
            return {awaitc}_sg_slow(({positional}), {{{keywords}}})
        # The turn: checkpoint, adapter, turn object (made on first use), manifest, enclosing turn.
        _sg_cell = [_sg_cp, _sg_adapter, None, _sg_m, _sg_outer()]
        _sg_token = _sg_enter(_sg_cell)
        try:
            _sg_r = {awaitc}_sg_fn({forward})
        finally:
            _sg_leave(_sg_token)
        if _sg_r.__class__ in _sg_plain:
            return _sg_r
        return _sg_hand_back(_sg_cell, _sg_r)  # work still to do (a coroutine, generator, function...)
    return _sg_wrapper
"""

#: Builtins the template uses, bound in its namespace as ``_sg_<name>``: a
#: parameter of the guarded function named ``str`` or ``Exception`` must not
#: change what the wrapper means (the template names no builtin directly).
#: The classes of ``verbatim_refs`` the inline check reads itself, as :func:`.check.facts_of`
#: decides (a container that is not text: a dict, the adapters' own views, an ``OrderedDict``).
#: A ``str`` subclass (``numpy.str_``, a ``StrEnum``), bytes or an object that is no container
#: takes the generic path, which refuses it. A class is added when first seen
#: (:func:`_learn_refs_class`): the fast path pays one set look-up.
_READABLE_REFS: set[type] = {dict, set, frozenset, list, tuple}


def _learn_refs_class(cls: type) -> bool:
    readable = not issubclass(cls, (str, bytes)) and issubclass(cls, Container)
    if readable:
        _READABLE_REFS.add(cls)
    return readable


_TEMPLATE_BUILTINS = ("list", "tuple", "set", "frozenset", "getattr", "Exception")


def _compile(guarded: _Guarded, is_async: bool) -> Callable[..., Any] | None:
    """Generate a wrapper with the wrapped function's own parameter list.

    Returns None (use the generic wrapper) when the signature cannot be
    reproduced faithfully or a parameter name would clash with ours.
    """
    try:
        params = list(inspect.signature(guarded.fn).parameters.values())
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        return None
    if any(p.name.startswith("_sg_") for p in params):
        return None
    namespace: dict[str, Any] = {
        "_sg_fn": guarded.fn,
        "_sg_get": _adapters.get,
        "_sg_inline": _inline_types,
        "_sg_frozen": _frozen_types,
        "_sg_adapter_for": adapter_for,
        "_sg_snap": snapshot_manifest,
        "_sg_outer": _current.get,
        "_sg_enter": _current.set,
        "_sg_leave": _current.reset,
        "_sg_plain": PLAIN,
        "_sg_hand_back": hand_back,
        "_sg_sets": _SETS,
        "_sg_readable": _READABLE_REFS,
        "_sg_learn": _learn_refs_class,
        "_sg_slow": guarded.call_async if is_async else guarded.call,
        "_sg_deps_fn": guarded.deps_fn,
    }
    namespace.update({f"_sg_{name}": getattr(builtins, name) for name in _TEMPLATE_BUILTINS})
    rendered, positional, keywords, forward = [], [], [], []
    star_done = False
    for i, p in enumerate(params):
        default = ""
        if p.default is not p.empty:
            namespace[f"_sg_d{i}"] = p.default
            default = f"=_sg_d{i}"
        if p.kind is p.POSITIONAL_ONLY or p.kind is p.POSITIONAL_OR_KEYWORD:  # "/" is placed afterwards
            rendered.append(p.name + default)
            positional.append(p.name)
            forward.append(p.name)
        elif p.kind is p.VAR_POSITIONAL:
            star_done = True
            rendered.append("*" + p.name)
            positional.append("*" + p.name)
            forward.append("*" + p.name)
        elif p.kind is p.KEYWORD_ONLY:
            if not star_done:
                rendered.append("*")
                star_done = True
            rendered.append(p.name + default)
            keywords.append(f"{p.name!r}: {p.name}")
            forward.append(f"{p.name}={p.name}")
        else:  # VAR_KEYWORD
            rendered.append("**" + p.name)
            keywords.append("**" + p.name)
            forward.append("**" + p.name)
    rendered = _place_slash(params, rendered)
    if guarded.deps_mode == "param":
        deps_expr = guarded.deps_name
    elif guarded.deps_mode == "callable":
        deps_expr = "_sg_deps_fn(_sg_cp)"
    else:
        deps_expr = "(_sg_get(_sg_cp.__class__) or _sg_adapter_for(_sg_cp)).next_turn_deps(_sg_cp)"
    source = _FAST_TEMPLATE.format(
        closure=", ".join(namespace),
        define="async def" if is_async else "def",
        params=", ".join(rendered),
        cp=guarded.cp_name,
        deps=deps_expr,
        awaitc="await " if is_async else "",
        positional="".join(f"{name}, " for name in positional),
        keywords=", ".join(keywords),
        forward=", ".join(forward),
    )
    scope: dict[str, Any] = {}
    exec(compile(source, f"<summaryguard resume_guard of {_label(guarded.fn)}>", "exec"), scope)  # noqa: S102
    wrapper = scope["_sg_make"](**namespace)
    if sys.version_info >= (3, 11):
        # Python's own errors (a missing argument, say) name the code object: name it after the guarded function.
        name = getattr(guarded.fn, "__name__", None) or "resume"
        wrapper.__code__ = wrapper.__code__.replace(co_name=name, co_qualname=_label(guarded.fn))
    return wrapper


def _place_slash(params: list[inspect.Parameter], rendered: list[str]) -> list[str]:
    """Rebuild the rendered list with exactly one "/" after the positional-only block."""
    out = list(rendered)
    count = sum(1 for p in params if p.kind is p.POSITIONAL_ONLY)
    if count:
        out.insert(count, "/")
    return out

