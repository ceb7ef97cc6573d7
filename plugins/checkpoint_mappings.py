"""Built-in adapter for mappings (checkpoints fresh from JSON) with the seed's keys.

``{"turn": 7, "summary_generation": 3, "summary": {"generation": 3,
"partial": false, "verbatim_refs": [...] or {...}, "drop_manifest": [...]},
"next_turn_deps": [...]}``. A missing ``turn`` or ``summary_generation`` key
is read as null, which fails closed at the generation check.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .checkpoint_attributes import normalize_manifest
from .markers import hookimpl


class MappingCheckpointAdapter:
    name = "mapping"

    @staticmethod
    def extract(checkpoint: Mapping[str, Any]) -> tuple[Any, ...]:
        get = checkpoint.get
        summary = get("summary")
        if summary is None:
            return (get("turn"), get("summary_generation"), False, None, False, ())
        refs = summary.get("verbatim_refs") or ()
        if isinstance(refs, list):  # JSON has no sets; membership in a list is O(n)
            refs = frozenset(refs)
        return (
            get("turn"),
            get("summary_generation"),
            True,
            summary.get("generation"),
            summary.get("partial", False),
            refs,
        )

    @staticmethod
    def next_turn_deps(checkpoint: Mapping[str, Any]) -> Iterable[str]:
        return checkpoint.get("next_turn_deps") or ()

    @staticmethod
    def drop_manifest(checkpoint: Mapping[str, Any]) -> Iterable[Any]:
        summary = checkpoint.get("summary")
        return normalize_manifest(
            summary.get("drop_manifest") if isinstance(summary, Mapping) else None, "checkpoint['summary']['drop_manifest']"
        )


ADAPTER = MappingCheckpointAdapter()


@hookimpl(trylast=True)
def summaryguard_checkpoint_adapter(checkpoint_type: type, checkpoint: Any) -> MappingCheckpointAdapter | None:
    if isinstance(checkpoint, Mapping) and ("summary" in checkpoint or "summary_generation" in checkpoint):
        return ADAPTER
    return None
