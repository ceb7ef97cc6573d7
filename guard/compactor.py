"""``Compactor``: compaction that says what it did.

It wraps the user's summarizer and makes its output checkable: each summary
gets a generation (parent + 1) and a drop manifest listing every reference of
the input that the output does not keep verbatim, with its last-known value
and the tool that produced it. It refuses to compact a summary it cannot vouch
for (not its own latest output, half-written, or rehydrated after a crash
without passing the resume check): re-summarizing an unreconciled summary
compounds the loss silently.

Compaction holds the :class:`CompactionLock` from start to finish, so a
checkpoint written through a :class:`CheckpointStore` sharing the lock holds
the previous complete summary or the new complete one, never a partial one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .check import check_resume
from .errors import ReconciliationKind, SummaryReconciliationError
from .lock import CompactionLock
from .model import DroppedRef, Summary

__all__ = ["Compactor", "ProducedRef", "Turn"]


@dataclass(frozen=True)
class ProducedRef:
    """A reference a turn produced: its name, its exact value, and which tool."""

    name: str
    value: str
    tool: str | None = None

    def __post_init__(self) -> None:
        # Checked here: a non-str value would surface later as an obscure
        # "'in <string>' requires string" deep inside compact().
        if not isinstance(self.name, str) or not isinstance(self.value, str):
            raise TypeError(
                f"ProducedRef takes a str name and a str value, got {type(self.name).__name__} "
                f"and {type(self.value).__name__} (for {self.name!r})"
            )
        if self.tool is not None and not isinstance(self.tool, str):
            raise TypeError(f"ProducedRef.tool is the producing tool's name (str) or None, got {type(self.tool).__name__}")


@dataclass(frozen=True)
class Turn:
    """One turn of the transcript being compacted."""

    index: int
    content: str
    refs: tuple[ProducedRef, ...] = field(default=())

    def __post_init__(self) -> None:
        if isinstance(self.index, bool) or not isinstance(self.index, int):
            raise TypeError(f"Turn.index is an int, got {type(self.index).__name__}")
        refs = tuple(self.refs)
        for ref in refs:
            if not isinstance(ref, ProducedRef):
                raise TypeError(f"Turn.refs holds ProducedRef items, got {type(ref).__name__}")
        object.__setattr__(self, "refs", refs)


#: ``summarize(previous_summary_text, turns) -> new summary text``
Summarizer = Callable[[str, Sequence[Turn]], str]


class Compactor:
    """Stamp generations and drop manifests on a summarizer's output.

    ``summarize(previous_text, turns)`` returns the new summary text. A
    reference counts as kept when its exact value occurs in that text as a
    whole (``bkt-1`` is not kept by a text that says ``bkt-12``); every
    other reference of the input (the previous summary's kept ones and the new
    turns' ones) goes to the drop manifest, as do the previous manifest's
    entries that stay dropped.
    """

    def __init__(self, summarize: Summarizer, *, lock: CompactionLock | None = None) -> None:
        if not callable(summarize):
            raise TypeError(f"Compactor needs a callable summarizer, got {type(summarize).__name__}")
        self.summarize = summarize
        self.lock = lock if lock is not None else CompactionLock()
        self._head: Summary | None = None

    @property
    def head(self) -> Summary | None:
        """The latest summary this compactor produced or adopted."""
        return self._head

    def adopt(self, checkpoint: Any, deps: Iterable[str] | None = None) -> Summary:
        """Take over the summary of a checkpoint after a crash, once it passes the check.

        The checkpoint must satisfy :func:`check_resume` (for ``deps``); its
        summary then becomes the head that the next compaction may build on.
        """
        from .model import Checkpoint

        check_resume(checkpoint, deps)
        summary = checkpoint.summary if isinstance(checkpoint, Checkpoint) else None
        if summary is None:
            raise TypeError("Compactor.adopt() takes a summaryguard Checkpoint (other shapes carry no Summary)")
        with self.lock:
            self._head = summary
        return summary

    def compact(self, turns: Sequence[Turn], previous: Summary | None = None) -> Summary:
        """Summarize ``turns`` on top of ``previous`` (default: the head)."""
        if isinstance(turns, (str, bytes)):
            raise TypeError("Compactor.compact() takes a sequence of Turn objects, not a string")
        turns = tuple(turns)
        for i, turn in enumerate(turns):
            if not isinstance(turn, Turn):
                raise TypeError(f"Compactor.compact() takes Turn objects; item {i} is {type(turn).__name__}")
        if previous is not None and not isinstance(previous, Summary):
            raise TypeError(f"Compactor.compact(previous=...) takes a Summary, got {type(previous).__name__}")
        with self.lock:
            if previous is None:
                previous = self._head
            else:
                self._vouch_for(previous)
            text = self.summarize(previous.content if previous is not None else "", turns)
            if not isinstance(text, str):
                raise TypeError(f"the summarizer returned {type(text).__name__}; expected the summary text (str)")
            summary = self._stamp(previous, turns, text)
            self._head = summary
            return summary

    # -- internals ----------------------------------------------------------------------

    def _vouch_for(self, previous: Summary) -> None:
        head = self._head
        if previous.partial:
            raise SummaryReconciliationError(
                previous.generation,
                previous.turns[1] if previous.turns else None,
                "",
                "refusing to compact a half-written summary",
                kind=ReconciliationKind.PARTIAL_SUMMARY,
            )
        if head is None or previous != head:
            expected = "none yet" if head is None else f"generation {head.generation}"
            raise SummaryReconciliationError(
                previous.generation,
                previous.turns[1] if previous.turns else None,
                "",
                f"refusing to re-compact a summary this compactor cannot vouch for (its latest is {expected}); "
                "a summary rehydrated from a checkpoint must pass Compactor.adopt(checkpoint) first",
                kind=ReconciliationKind.GENERATION_MISMATCH,
            )

    @staticmethod
    def _stamp(previous: Summary | None, turns: tuple[Turn, ...], text: str) -> Summary:
        # Every reference the input knew, latest value wins, with its provenance.
        known: dict[str, tuple[str, str | None, int | None]] = {}
        carried: dict[str, DroppedRef] = {}
        if previous is not None:
            for name, value in previous.verbatim_refs.items():
                known[name] = (value, previous.provenance.get(name), None)
            for entry in previous.drop_manifest:
                carried[entry.ref] = entry
        for turn in turns:
            for ref in turn.refs:
                known[ref.name] = (ref.value, ref.tool, turn.index)
        kept: dict[str, str] = {}
        provenance: dict[str, str] = {}
        dropped: dict[str, DroppedRef] = {}
        for name, (value, tool, turn_index) in known.items():
            if value and occurs_verbatim(value, text):
                kept[name] = value
                if tool:
                    provenance[name] = tool
            else:
                dropped[name] = DroppedRef(ref=name, last_known=value, tool=tool, turn=turn_index)
        for name, entry in carried.items():
            if name in known:
                continue  # produced again since it was dropped: the newer value decided above
            if isinstance(entry.last_known, str) and entry.last_known and occurs_verbatim(entry.last_known, text):
                kept[name] = entry.last_known  # the summarizer brought it back verbatim
                if entry.tool:
                    # Keep its provenance: if a later compaction drops it again, the
                    # manifest must still name the tool that may not re-derive it.
                    provenance[name] = entry.tool
            else:
                dropped.setdefault(name, entry)
        indices = [t.index for t in turns]
        if previous is not None and previous.turns:
            indices.extend(previous.turns)
        span = (min(indices), max(indices)) if indices else (previous.turns if previous is not None else None)
        return Summary(
            generation=(previous.generation + 1) if previous is not None else 1,
            content=text,
            verbatim_refs=kept,
            drop_manifest=tuple(dropped.values()),
            parent_generation=previous.generation if previous is not None else None,
            partial=False,
            turns=span,
            provenance=provenance,
        )



def occurs_verbatim(value: str, text: str) -> bool:
    """Whether ``value`` stands in ``text`` whole, not as part of a longer word or number.

    A plain substring test would count handle ``bkt-1`` as kept in a summary
    that only mentions ``bkt-12``, and port ``1`` as kept in "turn 10": the
    reference would vanish from the drop manifest while the summary does not
    hold it. Where the value begins or ends with a letter, digit or
    underscore, the text must not continue it on that side.
    """
    size = len(value)
    word_head = _is_word(value[0])
    word_tail = _is_word(value[-1])
    start = text.find(value)
    while start != -1:
        end = start + size
        if (not word_head or start == 0 or not _is_word(text[start - 1])) and (
            not word_tail or end == len(text) or not _is_word(text[end])
        ):
            return True
        start = text.find(value, start + 1)
    return False


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"
