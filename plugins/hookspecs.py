"""Every hook summaryguard calls, in one place.

Both halves share this plugin system: the runtime guard asks plugins how to read
a checkpoint, how to guard a framework's tool object and what to do about a
violation; the analyzer asks them for
vocabulary (framework names) and extra rules. Implement a hook with the
:data:`hookimpl` marker and register the object, or publish it under the
entry-point group ``summaryguard``.

The markers are summaryguard's own (:mod:`.markers`: this module imports no
pluggy); the plugin manager reads them as pluggy's.

Hook calls are never on a hot path: adapters are resolved once per checkpoint
type, a tool object is wrapped once when it is decorated, and the violation
hooks run only when a resume is refused.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .markers import PROJECT_NAME, hookimpl, hookspec

if TYPE_CHECKING:  # pragma: no cover
    from summaryguard.guard.adapter import CheckpointAdapter
    from summaryguard.guard.errors import SummaryReconciliationError
    from summaryguard.guard.reconcile import DivergenceRecord, Resolution

#: The categories of ``summaryguard_vocabulary`` answers (documented on the hook).
VOCABULARY_CATEGORIES = (
    "resume-calls",
    "resume-inputs",
    "tool-calls",
    "tool-decorators",
    "compaction-calls",
    "summary-types",
    "checkpointers",
    "checkpoint-writes",
    "checkpoint-loads",
    "interrupt-calls",
    "validators",
)


# -- runtime guard ----------------------------------------------------------------------


@hookspec(firstresult=True)
def summaryguard_checkpoint_adapter(checkpoint_type: type, checkpoint: Any) -> CheckpointAdapter | None:
    """Return an adapter that reads checkpoints of ``checkpoint_type``, or None.

    Called once per type (the answer is cached for that type), with one instance
    as a sample. The first non-None answer wins; the built-in adapters for
    attribute objects and mappings run last, so a plugin's adapter for a
    specific type always takes precedence.
    """


@hookspec
def summaryguard_observe_violation(error: SummaryReconciliationError, checkpoint: Any) -> None:
    """Observe a refused resume or a blocked re-derivation (log it, count it).

    Runs before resolution; an observer must not raise.
    """


@hookspec(firstresult=True)
def summaryguard_resolve_violation(error: SummaryReconciliationError, checkpoint: Any) -> Resolution | None:
    """Decide what happens instead of the refused resume, or None to raise.

    Return :class:`summaryguard.guard.Replay` with an exact checkpoint to resume
    from instead (it is checked like the first), or
    :class:`summaryguard.guard.AcceptDivergence` to go on with the divergence
    accepted and recorded. Never return something that re-derives silently.
    """


@hookspec
def summaryguard_divergence_accepted(record: DivergenceRecord) -> None:
    """A divergence was accepted explicitly; persist the record (new provenance)."""


@hookspec(firstresult=True)
def summaryguard_wrap_tool(tool: Any, name: str | Iterable[str] | None) -> Any | None:
    """Guard a framework's tool object, or return None if ``tool`` is not one you know.

    ``tool_guard`` calls this when it decorates something that is not a
    function (a framework's tool class, say), once per decoration and never
    when a tool is called. Return the guarded tool, in the form the framework
    takes: it must refuse, in a resumed turn, to re-derive a reference the
    summary dropped, which wrapping the object's run methods with
    ``tool_guard`` does. ``name`` is what ``tool_guard(name=...)`` was given
    (None: the name the framework knows the tool by). The first non-None
    answer wins; with none, ``tool_guard`` wraps the object as a plain
    callable.
    """


# -- static analyzer --------------------------------------------------------------------


@hookspec
def summaryguard_vocabulary() -> Mapping[str, Iterable[str]] | None:
    """Contribute analyzer vocabulary.

    Return a mapping from a category (one of :data:`VOCABULARY_CATEGORIES`) to
    qualified names or glob patterns:

    * ``resume-calls``: calls that continue an agent from restored state;
    * ``resume-inputs``: constructors whose ``resume=`` argument, passed as the
      input of a resume-call, makes it a resume (LangGraph's ``Command``; a
      ``None`` input does the same);
    * ``tool-calls``: calls that run a tool (and so can re-derive a fact);
    * ``tool-decorators``: decorators that make a function a tool;
    * ``compaction-calls``: calls (or node classes) that summarize;
    * ``summary-types``: classes whose instances are summary state (a
      framework's running summary);
    * ``checkpointers``: classes that persist agent state (a graph compiled
      with one of them can be resumed);
    * ``checkpoint-writes`` / ``checkpoint-loads``: calls that write / read a
      checkpoint;
    * ``interrupt-calls``: calls that pause a node for outside input; the
      node re-runs from its start when resumed;
    * ``validators``: functions that enforce the invariant.

    An entry that is not a qualified name or name pattern (dotted Python names, ``*``
    within a part, as the configuration's keys take) is left out, and the command line
    warns of it; so is an unknown category.
    """


@hookspec
def summaryguard_frameworks() -> Iterable[Mapping[str, Any]] | None:
    """Contribute framework models: what a framework's APIs do to summary state, as data.

    Each model is a mapping that :class:`summaryguard.plugins.framework.FrameworkModel`
    validates when the analyzer loads it (an unknown key is an error naming the
    framework and the key): the framework's vocabulary by category (as
    :func:`summaryguard_vocabulary`), how a graph value comes to summarize
    (builders, node registrations, factories), the shapes of its resumes, and
    which checks the framework guarantees on its own. A framework room
    (``plugins/<name>/``) keeps its model in ``model.py`` and returns it here.
    """


@hookspec
def summaryguard_lint_rules() -> Sequence[type] | None:
    """Contribute extra lint rules (subclasses of the analyzer's rule base).

    Plugin rules use their own code prefix; codes and names must be unique.
    """
