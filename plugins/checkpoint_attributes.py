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

from .markers import hookimpl


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
        return normalize_manifest(
            getattr(summary, "drop_manifest", None) if summary is not None else None, "checkpoint.summary.drop_manifest"
        )


def normalize_manifest(manifest: Any, where: str = "drop_manifest") -> tuple[Any, ...]:
    """Accept entries as objects with ``.ref`` or as mappings with a ``ref`` key.

    The manifest itself must be a list (or other iterable) of entries: a
    mapping such as ``{"bucket": {...}}`` would be iterated by its keys into
    entries that name no tool, so it would refuse nothing; it is refused
    instead (``TypeError`` naming ``where``), and the resumed turn fails closed.
    """
    if not manifest:
        return ()
    if isinstance(manifest, (str, bytes, Mapping)):
        shape = f"a mapping (keys {sorted(map(str, manifest))[:5]})" if isinstance(manifest, Mapping) else f"a {type(manifest).__name__}"
        raise TypeError(
            f"{where}: expected a list of entries like {{'ref': ..., 'last_known': ..., 'tool': ...}}, got {shape}; "
            "write one entry per dropped reference"
        )
    from summaryguard.guard.model import DroppedRef  # not at import: the analyzer loads this plugin too

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
