"""``stamp_summaries``: every LangGraph summarization leaves a generation and a drop manifest.

langmem's ``SummarizationNode`` (or your own node calling
``summarize_messages``) writes a ``RunningSummary`` into graph state; all it
records of what it folded away is ``summarized_message_ids``. The wrapper runs
the node unchanged, then compares the new running summary with the one it
replaced: the messages it newly folded are read for references (tool results,
or what your extractor finds), each reference is kept if its value occurs
verbatim in the new summary text and dropped otherwise, and the result is
stamped into the same state update (see :mod:`._state`), so LangGraph writes
summary and stamp in one checkpoint.

It refuses to extend a summary it cannot vouch for (one with no stamp, or
whose stamp no longer matches it): summarizing a summary of unknown
provenance compounds a loss nobody recorded.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from summaryguard.guard.compactor import Compactor, Turn
from summaryguard.guard.errors import ReconciliationKind, SummaryReconciliationError
from summaryguard.guard.model import Summary
from ._graph import current_run
from ._refs import Extractor, message_text, register_extractor, tool_message_refs
from ._state import CONTEXT_KEY, MESSAGES_KEY, STAMP_KEY, locate, make_stamp, read_stamp, unstamped_note

__all__ = ["Stamper", "stamp_summaries"]


class Stamper:
    """Computes the stamp for one summarization step (pure: state and update in, update out)."""

    def __init__(self, extract: Extractor = tool_message_refs, messages_key: str = MESSAGES_KEY) -> None:
        self.extract = extract
        self.extractor = register_extractor(extract)
        self.messages_key = messages_key

    def stamp(self, state: Any, update: Any) -> Any:
        """``update`` with the stamp for the summary it writes (unchanged if it writes none)."""
        if not isinstance(update, Mapping):
            return update  # a Command or None: nothing summarized here that we can see
        running, _, where = locate(update)
        if running is None:
            return update
        values = _as_mapping(state)
        old_running, old_stamp, _ = locate(values)
        old_ids = set(getattr(old_running, "summarized_message_ids", None) or ())
        new_ids = set(running.summarized_message_ids or ())
        if old_running is not None and running.summary == old_running.summary and new_ids == old_ids:
            if old_stamp is None:
                return update  # nothing new was folded; an unstamped summary stays unstamped
            return _write(update, where, old_stamp)
        previous = self._previous(values, old_running, old_stamp)
        messages = values.get(self.messages_key) or []
        folded = new_ids - old_ids
        turns = tuple(
            Turn(index=i, content=message_text(m), refs=tuple(self.extract(m)))
            for i, m in enumerate(messages)
            if getattr(m, "id", None) in folded
        )
        # The Compactor's stamping rules, shared so both paths drop the same way.
        summary = Compactor._stamp(previous, turns, running.summary)
        run = current_run()
        if run is not None:
            run.add_drops(summary.drop_manifest)  # lost to the rest of this resumed run too
        return _write(update, where, make_stamp(summary, running.summary, self.extractor, self.messages_key))

    @staticmethod
    def _previous(values: Mapping[str, Any], running: Any, stamp: Any) -> Summary | None:
        if running is None and stamp is None:
            return None
        if adopts_unstamped(unstamped_note(values), stamp):
            return None
        summary, _ = read_stamp(stamp, running.summary)
        return summary


def adopts_unstamped(note: str | None, stamp: Any) -> bool:
    """Whether to start a fresh lineage on a summary whose provenance is unknown (``note``
    says why; None: it is stamped, go on). True when the controller accepted it on record
    when it admitted the resume (it becomes generation 1's base); otherwise refuse to
    extend it, since summarizing a summary of unknown provenance compounds the loss."""
    if note is None:
        return False
    if _adopted(current_run()):
        return True
    generation = stamp.get("generation") if isinstance(stamp, Mapping) else None
    raise SummaryReconciliationError(
        generation if isinstance(generation, int) else None,
        None,
        "",
        f"{note}; refusing to extend it: summarizing a summary of unknown provenance compounds the loss",
        kind=ReconciliationKind.GENERATION_MISMATCH,
    )


def _adopted(run: Any) -> bool:
    """Whether the resumed run accepted, on record, a summary it could not vouch for."""
    if run is None:
        return False
    unvouched = (ReconciliationKind.NO_SUMMARY, ReconciliationKind.GENERATION_MISMATCH)
    return any(record.kind in unvouched for record in run.turn.divergences)


def _as_mapping(state: Any) -> Mapping[str, Any]:
    """The channels of a state: a mapping, a dataclass (slots too), a pydantic model or any object."""
    if isinstance(state, Mapping):
        return state
    if dataclasses.is_dataclass(state):
        return {f.name: getattr(state, f.name) for f in dataclasses.fields(state) if hasattr(state, f.name)}
    values = getattr(state, "__dict__", None)
    if isinstance(values, Mapping):
        return dict(values)
    names = [n for cls in type(state).__mro__ for n in getattr(cls, "__slots__", ())]
    return {n: getattr(state, n) for n in names if isinstance(n, str) and hasattr(state, n)}


def _write(update: Mapping[str, Any], where: str | None, stamp: Any) -> dict[str, Any]:
    if where == CONTEXT_KEY:
        return {**update, CONTEXT_KEY: {**update[CONTEXT_KEY], STAMP_KEY: stamp}}
    return {**update, STAMP_KEY: stamp}


def stamp_summaries(node: Any, *, refs: Extractor | None = None, messages_key: str | None = None) -> Any:
    """Wrap a summarization node so each summary it writes is stamped.

    ``node`` is langmem's ``SummarizationNode`` or any node (function or
    runnable) that returns a ``RunningSummary`` in its update, under
    ``context["running_summary"]`` or at the top level (then the state needs a
    ``summaryguard`` key for the stamp). ``refs`` extracts references from a
    message (default: tool results, named after their tool); ``messages_key``
    is the state key of the messages the node summarizes (default: the node's
    ``input_messages_key``, else ``"messages"``).

    Returns a runnable to pass to ``StateGraph.add_node``; sync and async
    invocation both stamp.
    """
    from langchain_core.runnables import Runnable, RunnableLambda

    if refs is not None and not callable(refs):
        raise TypeError(f"stamp_summaries(refs=...) takes a function message -> references, got {type(refs).__name__}")
    key = messages_key or getattr(node, "input_messages_key", None) or MESSAGES_KEY
    stamper = Stamper(refs or tool_message_refs, key)
    runnable: Any = node if isinstance(node, Runnable) else RunnableLambda(node)
    name = getattr(node, "name", None) or getattr(node, "__name__", None) or "summarize"

    def stamped(state: Any, config: Any) -> Any:
        return stamper.stamp(state, runnable.invoke(state, config))

    async def astamped(state: Any, config: Any) -> Any:
        return stamper.stamp(state, await runnable.ainvoke(state, config))

    return RunnableLambda(stamped, afunc=astamped, name=name)
