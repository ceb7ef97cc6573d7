"""The invariant, checked: the shared core of ``check_resume`` and ``resume_guard``.

Order matters and follows the design note: a summary must be present, its
generation must equal the one the checkpoint recorded, it must be complete, and
every next-turn dependency must be present verbatim. The first failure is the
one reported.

The success path is plain attribute reads and one C-level membership scan; the
plugin manager is consulted only to resolve an adapter for a new checkpoint
type (then cached) and when the invariant fails.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Collection, Container, Iterable, Mapping
from typing import Any

from .adapter import CheckpointAdapter
from .errors import ReconciliationKind, SummaryReconciliationError, UnsupportedCheckpointError

__all__ = ["adapter_for", "check_resume", "normalize_deps"]

_adapters: dict[type, CheckpointAdapter] = {}
_adapters_lock = threading.Lock()
_listening = False
#: Checkpoint types whose adapter declares ``inline_attributes``: resume_guard's
#: compiled wrapper reads the seed's attributes itself for these.
_inline_types: set[type] = set()
#: Checkpoint types whose adapter declares ``immutable``: a checkpoint of one
#: cannot change once made (summaryguard's frozen ``Checkpoint``), so a turn
#: may hold its drop manifest as it is instead of copying it.
_frozen_types: set[type] = set()


def _forget_adapters() -> None:
    _adapters.clear()
    _inline_types.clear()
    _frozen_types.clear()


def adapter_for(checkpoint: Any) -> CheckpointAdapter:
    """The adapter for ``checkpoint``'s type, resolved through plugins once."""
    adapter = _adapters.get(type(checkpoint))
    if adapter is None:
        adapter = _resolve(checkpoint)
    return adapter


def _resolve(checkpoint: Any) -> CheckpointAdapter:
    global _listening
    from summaryguard.plugins.manager import get_plugin_manager, on_plugins_changed

    with _adapters_lock:
        if not _listening:
            on_plugins_changed(_forget_adapters)
            _listening = True
    checkpoint_type = type(checkpoint)
    try:
        adapter = get_plugin_manager().hook.summaryguard_checkpoint_adapter(
            checkpoint_type=checkpoint_type, checkpoint=checkpoint
        )
    except Exception as exc:  # noqa: BLE001 - a plugin that crashes cannot vouch for anything: fail closed
        raise SummaryReconciliationError(
            None,
            None,
            "",
            f"no adapter could read the checkpoint: a summaryguard_checkpoint_adapter hook raised "
            f"{type(exc).__name__}: {exc} for a {checkpoint_type.__name__}",
            kind=ReconciliationKind.NO_SUMMARY,
        ) from exc
    if adapter is None:
        raise UnsupportedCheckpointError(checkpoint_type)
    _adapters[checkpoint_type] = adapter
    if getattr(adapter, "inline_attributes", False) is True:
        _inline_types.add(checkpoint_type)
    if getattr(adapter, "immutable", False) is True:
        _frozen_types.add(checkpoint_type)
    return adapter


def normalize_deps(deps: Any) -> Collection[str]:
    """Dependencies as a re-iterable collection; a bare string is refused.

    A string would be iterated character by character and "pass" on single
    letters: fail loudly instead.
    """
    if deps is None:
        return ()
    if isinstance(deps, (str, bytes)):
        raise TypeError(
            f"next-turn dependencies must be a collection of reference names, not a single {type(deps).__name__} "
            f"({deps!r}); wrap it in a list"
        )
    if isinstance(deps, Collection):
        return deps
    if isinstance(deps, Iterable):
        return tuple(deps)
    raise TypeError(f"next-turn dependencies must be an iterable of names, got {type(deps).__name__}")


def facts_of(adapter: CheckpointAdapter, checkpoint: Any) -> tuple[Any, ...]:
    """Extract and validate facts; an adapter that cannot read the object fails closed.

    The slow-path twin of the inline read in ``resume_guard``: an answer that
    is not six facts, or whose references are not a container, is refused
    here with a reconciliation error instead of an AttributeError later.
    """
    try:
        facts = adapter.extract(checkpoint)
        turn, recorded, has_summary, generation, partial, refs = facts
        if refs is None:
            facts = (turn, recorded, has_summary, generation, partial, ())
        elif isinstance(refs, (str, bytes)) or not isinstance(refs, Container):
            # A string is a container of its substrings: "b" in "bucket" would pass.
            raise TypeError(f"verbatim_refs must be a collection of reference names, got {type(refs).__name__}")
    except Exception as exc:  # noqa: BLE001 - unreadable means not resumable
        raise unreadable(adapter, checkpoint, exc, "the checkpoint") from exc
    return facts


def deps_of(adapter: CheckpointAdapter, checkpoint: Any) -> Any:
    """The checkpoint's own next-turn dependencies; unreadable ones fail closed."""
    try:
        return adapter.next_turn_deps(checkpoint)
    except Exception as exc:  # noqa: BLE001 - unknown deps cannot be shown present
        raise unreadable(adapter, checkpoint, exc, "the next turn's dependencies") from exc


def unreadable(
    adapter: CheckpointAdapter, checkpoint: Any, exc: Exception, what: str, facts: tuple[Any, ...] | None = None
) -> SummaryReconciliationError:
    """The error for an adapter that raised while reading ``what`` (``facts`` if already read)."""
    if facts is not None:
        generation, turn = facts[3], facts[0]
    else:
        generation = None
        try:
            turn = checkpoint.get("turn") if isinstance(checkpoint, Mapping) else getattr(checkpoint, "turn", None)
        except Exception:  # noqa: BLE001 - only a detail of the message; the error is raised regardless
            turn = None
    return SummaryReconciliationError(
        generation,
        turn if isinstance(turn, int) else None,
        "",
        f"{what} could not be read by adapter {getattr(adapter, 'name', type(adapter).__name__)!r}: "
        f"{type(exc).__name__}: {exc}",
        kind=ReconciliationKind.NO_SUMMARY,
    )


def violation(
    facts: tuple[Any, ...],
    deps: Collection[str],
    waived_kinds: Collection[ReconciliationKind] = (),
    waived_refs: Collection[str] = (),
) -> SummaryReconciliationError | None:
    """The first violated condition as an error, or None when resumable."""
    turn, recorded, has_summary, generation, partial, refs = facts
    if not has_summary:
        if ReconciliationKind.NO_SUMMARY not in waived_kinds:
            return SummaryReconciliationError(
                None, turn, "", "checkpoint carries no summary", kind=ReconciliationKind.NO_SUMMARY
            )
        return None  # nothing further can be checked without a summary
    if (generation is None or generation != recorded) and ReconciliationKind.GENERATION_MISMATCH not in waived_kinds:
        return SummaryReconciliationError(
            generation,
            turn,
            "",
            "the summary carries no generation stamp, so nothing shows it is the one the checkpoint recorded"
            if generation is None
            else f"summary generation {generation} does not match the generation {recorded} the checkpoint recorded",
            kind=ReconciliationKind.GENERATION_MISMATCH,
        )
    if partial and ReconciliationKind.PARTIAL_SUMMARY not in waived_kinds:
        return SummaryReconciliationError(
            generation,
            turn,
            "",
            "checkpoint captured a half-written summary",
            kind=ReconciliationKind.PARTIAL_SUMMARY,
        )
    if refs is None:
        refs = ()
    if deps and not covers(refs, deps):
        for ref in deps:
            if ref not in waived_refs and ref not in refs:
                return SummaryReconciliationError(
                    generation,
                    turn,
                    ref,
                    "dependency not present verbatim in the summary; re-deriving it would be a new fact, not recovery",
                    kind=ReconciliationKind.MISSING_DEPENDENCY,
                )
    return None


_SETS = (set, frozenset)


def declared_deps(who: str, deps: Any) -> Any:
    """Dependencies a framework integration is given once, for every resume (``guard_graph``,
    ``guard_runner``, ``GuardResumes``): None, a function of the checkpoint, or reference names,
    made a tuple here. A string, a number or a name that is not a non-empty string is refused
    when given, naming ``who``, not at the first resume as a missing dependency ``5``."""
    if deps is None or callable(deps):
        return deps
    if isinstance(deps, (str, bytes, bytearray)):
        raise TypeError(f"{who}(deps=...) takes a collection of reference names, not the string {deps!r}")
    return _names(f"{who}(deps=...)", deps)


def reference_names(who: str, refs: object) -> tuple[str, ...]:
    """The references an acceptance names (``accept_divergence``, a room's own acceptance):
    one name, or an iterable of names, each a non-empty string. Bytes are refused: a bytes
    object iterates as numbers (``b"vm"`` accepted the references 118 and 109, that is nothing)."""
    return _names(f"{who}()", (refs,) if isinstance(refs, str) else refs)


def _names(call: str, values: object) -> tuple[str, ...]:
    """``values`` as reference names for ``call`` (as its messages name it), or TypeError."""
    if isinstance(values, (bytes, bytearray)) or not isinstance(values, Iterable):
        raise TypeError(f"{call} takes reference names, got {type(values).__name__}")
    names = tuple(values)
    for i, name in enumerate(names):
        if not isinstance(name, str) or not name:
            raise TypeError(f"{call} takes reference names; item {i} is {name!r}")
    return names


def check_dep_names(deps: Iterable[Any]) -> None:
    """Refuse a dependency that cannot be a reference name (an unhashable list, say) with a clear message."""
    for i, dep in enumerate(deps):
        if not isinstance(dep, str):
            try:
                hash(dep)
            except TypeError:
                raise TypeError(
                    f"next-turn dependencies are reference names; item {i} is {type(dep).__name__} {dep!r}"
                ) from None


def covers(refs: Any, deps: Collection[str]) -> bool:
    """Every dependency is among the references (a C-level scan for sets)."""
    if type(refs) in _SETS:
        return refs.issuperset(deps)
    return all(map(refs.__contains__, deps))


def notify(error: SummaryReconciliationError, checkpoint: Any) -> None:
    """Run observer hooks (logging, metrics). Slow path only.

    An observer that raises is reported as a warning: it must not replace the
    reconciliation error the controller is waiting for.
    """
    from summaryguard.plugins.manager import get_plugin_manager

    try:
        get_plugin_manager().hook.summaryguard_observe_violation(error=error, checkpoint=checkpoint)
    except Exception as exc:  # noqa: BLE001 - a broken observer must not change the outcome
        warnings.warn(
            f"summaryguard: an observer of summaryguard_observe_violation raised {type(exc).__name__}: {exc}; "
            f"the {error.kind} error is raised as usual",
            RuntimeWarning,
            stacklevel=2,
        )


def check_resume(checkpoint: Any, deps: Iterable[str] | None = None) -> None:
    """Raise :class:`SummaryReconciliationError` unless ``checkpoint`` may be resumed.

    ``deps`` are the references the next turn needs; when None they come from
    the checkpoint (through its adapter). Observers are told of a violation;
    resolution is the business of :func:`resume_guard`, which owns the resume.
    """
    adapter = adapter_for(checkpoint)
    try:
        deps = normalize_deps(deps_of(adapter, checkpoint) if deps is None else deps)
        check_dep_names(deps)
        facts = facts_of(adapter, checkpoint)
    except SummaryReconciliationError as unreadable:  # the observers hear of it like any violation
        notify(unreadable, checkpoint)
        raise
    error = violation(facts, deps)
    if error is not None:
        notify(error, checkpoint)
        raise error
