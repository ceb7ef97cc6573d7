"""Built-in adapter for attribute objects shaped like the design note's checkpoint.

``checkpoint.summary``, ``checkpoint.summary_generation``, ``checkpoint.turn``;
``summary.generation``, ``summary.partial``, ``summary.verbatim_refs``, and
optionally ``summary.drop_manifest`` and ``checkpoint.next_turn_deps``.

A summary without a ``partial`` attribute is taken as complete (most summary
objects do not track it); one without ``verbatim_refs`` holds no references, so
every dependency fails closed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from summaryguard.guard.model import DroppedRef

from .hookspecs import hookimpl


class AttributeCheckpointAdapter:
    name = "attributes"
    #: extract() is the seed's attribute reads: resume_guard may inline them.
    inline_attributes = True

    @staticmethod
    def extract(checkpoint: Any) -> tuple[Any, ...]:
        summary = checkpoint.summary
        if summary is None:
            return (checkpoint.turn, checkpoint.summary_generation, False, None, False, ())
        try:  # the common shape: plain attribute reads, no getattr() calls
            return (
                checkpoint.turn,
                checkpoint.summary_generation,
                True,
                summary.generation,
                summary.partial,
                summary.verbatim_refs or (),
            )
        except AttributeError:
            pass
        return (
            checkpoint.turn,
            checkpoint.summary_generation,
            True,
            summary.generation,
            getattr(summary, "partial", False),
            getattr(summary, "verbatim_refs", None) or (),
        )

    @staticmethod
    def next_turn_deps(checkpoint: Any) -> Iterable[str]:
        return getattr(checkpoint, "next_turn_deps", None) or ()

    @staticmethod
    def drop_manifest(checkpoint: Any) -> Iterable[Any]:
        summary = checkpoint.summary
        return normalize_manifest(getattr(summary, "drop_manifest", None) if summary is not None else None)


def normalize_manifest(manifest: Any) -> tuple[Any, ...]:
    """Accept entries as objects with ``.ref`` or as mappings with a ``ref`` key."""
    if not manifest:
        return ()
    out = []
    for entry in manifest:
        if isinstance(entry, Mapping):
            out.append(
                DroppedRef(
                    ref=str(entry.get("ref", "")),
                    last_known=entry.get("last_known"),
                    tool=entry.get("tool"),
                    turn=entry.get("turn"),
                )
            )
        elif isinstance(entry, str):
            out.append(DroppedRef(ref=entry))
        else:
            out.append(entry)
    return tuple(out)


ADAPTER = AttributeCheckpointAdapter()


@hookimpl(trylast=True)
def summaryguard_checkpoint_adapter(checkpoint_type: type, checkpoint: Any) -> AttributeCheckpointAdapter | None:
    if isinstance(checkpoint, Mapping):
        return None
    if all(hasattr(checkpoint, a) for a in ("summary", "summary_generation", "turn")):
        return ADAPTER
    return None
