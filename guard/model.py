"""The data model both halves talk about: summaries, drop manifests, checkpoints.

A :class:`Summary` is what compaction produced: a lossy projection of earlier
turns, stamped with its generation and with a drop manifest that says what it
left out. A :class:`Checkpoint` records a turn, the summary it holds and the
generation it *believed* that summary had; the two disagreeing is exactly the
inconsistency recovery must refuse.

Both are frozen dataclasses that hold their own copies of the mappings given
to them, and serialize to plain JSON (never pickle): a checkpoint is input
from disk, and input is validated field by field with an error that names the
field, including anything JSON or UTF-8 could not carry back.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import CheckpointFormatError, CheckpointIntegrityError

__all__ = ["Checkpoint", "DroppedRef", "Summary"]

FORMAT_VERSION = 1


@dataclass(frozen=True)
class DroppedRef:
    """One reference a compaction dropped.

    ``last_known`` is the value (or a locator for it) as it was when dropped, and
    ``tool`` the tool call that produced it, where known: calling that tool again
    after a resume would be a re-derivation, not a recovery.
    """

    ref: str
    last_known: Any = None
    tool: str | None = None
    turn: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"ref": self.ref, "last_known": self.last_known, "tool": self.tool, "turn": self.turn}

    @classmethod
    def from_dict(cls, data: Any, where: str = "dropped") -> DroppedRef:
        data = _expect_mapping(data, where)
        _reject_unknown(data, {"ref", "last_known", "tool", "turn"}, where)
        return cls(
            ref=_expect_str(data.get("ref"), f"{where}.ref"),
            last_known=_expect_json(data.get("last_known"), f"{where}.last_known"),
            tool=_expect_optional_str(data.get("tool"), f"{where}.tool"),
            turn=_expect_optional_int(data.get("turn"), f"{where}.turn"),
        )


@dataclass(frozen=True, eq=True)
class Summary:
    """A compacted summary, stamped.

    ``verbatim_refs`` maps each reference the summary keeps to its verbatim
    value; ``drop_manifest`` lists what it dropped. ``partial`` marks a summary
    captured while it was still being written. ``turns`` is the inclusive range
    of turns it covers.
    """

    generation: int
    content: str = ""
    verbatim_refs: Mapping[str, str] = field(default_factory=dict)
    drop_manifest: tuple[DroppedRef, ...] = ()
    parent_generation: int | None = None
    partial: bool = False
    turns: tuple[int, int] | None = None
    #: Which tool produced each kept reference, so a later compaction that drops
    #: it can still say which tool must not re-derive it.
    provenance: Mapping[str, str] = field(default_factory=dict)

    __hash__ = None  # type: ignore[assignment]  # holds a mapping

    def __post_init__(self) -> None:
        # Refuse at construction what could be written but never loaded back:
        # such a checkpoint would be lost exactly when recovery needs it.
        fields = _summary_fields(
            "summary",
            self.generation,
            self.content,
            self.verbatim_refs,
            self.drop_manifest,
            self.parent_generation,
            self.partial,
            self.turns,
            self.provenance,
        )
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    def dropped(self, ref: str) -> DroppedRef | None:
        """The manifest entry for ``ref``, if this summary dropped it."""
        for entry in self.drop_manifest:
            if entry.ref == ref:
                return entry
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "generation": self.generation,
            "content": self.content,
            "verbatim_refs": dict(self.verbatim_refs),
            "drop_manifest": [d.to_dict() for d in self.drop_manifest],
            "parent_generation": self.parent_generation,
            "partial": self.partial,
            "turns": list(self.turns) if self.turns is not None else None,
            "provenance": dict(self.provenance),
        }

    @classmethod
    def from_dict(cls, data: Any, where: str = "summary") -> Summary:
        data = _expect_mapping(data, where)
        _reject_unknown(
            data,
            {
                "generation",
                "content",
                "verbatim_refs",
                "drop_manifest",
                "parent_generation",
                "partial",
                "turns",
                "provenance",
            },
            where,
        )
        manifest = data.get("drop_manifest", [])
        if not isinstance(manifest, list):
            raise CheckpointFormatError(f"{where}.drop_manifest", f"expected a list, got {_kind(manifest)}")
        fields = _summary_fields(
            where,
            data.get("generation"),
            data.get("content", ""),
            data.get("verbatim_refs", {}),
            [DroppedRef.from_dict(item, f"{where}.drop_manifest[{i}]") for i, item in enumerate(manifest)],
            data.get("parent_generation"),
            data.get("partial", False),
            data.get("turns"),
            data.get("provenance", {}),
        )
        return cls(**fields)


def _summary_fields(
    where: str,
    generation: Any,
    content: Any,
    verbatim_refs: Any,
    drop_manifest: Any,
    parent_generation: Any,
    partial: Any,
    turns: Any,
    provenance: Any,
) -> dict[str, Any]:
    """Validate and normalize the fields of a summary; errors name ``where.field``."""
    if not isinstance(partial, bool):
        raise CheckpointFormatError(f"{where}.partial", f"expected true or false, got {_kind(partial)}")
    if isinstance(drop_manifest, (str, bytes, Mapping)) or not isinstance(drop_manifest, Iterable):
        raise CheckpointFormatError(f"{where}.drop_manifest", f"expected a list, got {_kind(drop_manifest)}")
    return {
        "generation": _expect_int(generation, f"{where}.generation"),
        "content": _expect_str(content, f"{where}.content"),
        "verbatim_refs": _expect_str_map(verbatim_refs, f"{where}.verbatim_refs"),
        "drop_manifest": tuple(_checked_dropped(e, f"{where}.drop_manifest[{i}]") for i, e in enumerate(drop_manifest)),
        "parent_generation": _expect_optional_int(parent_generation, f"{where}.parent_generation"),
        "partial": partial,
        "turns": _expect_span(turns, f"{where}.turns"),
        "provenance": _expect_str_map(provenance, f"{where}.provenance"),
    }


def _checked_dropped(entry: Any, where: str) -> DroppedRef:
    """A manifest entry a summary may hold: its fields must survive JSON exactly."""
    if not isinstance(entry, DroppedRef):
        raise CheckpointFormatError(where, f"expected a DroppedRef, got {_kind(entry)}")
    _expect_str(entry.ref, f"{where}.ref")
    _expect_optional_str(entry.tool, f"{where}.tool")
    _expect_optional_int(entry.turn, f"{where}.turn")
    last_known = _expect_json(entry.last_known, f"{where}.last_known")
    if last_known is entry.last_known:
        return entry
    return DroppedRef(entry.ref, last_known, entry.tool, entry.turn)


@dataclass(frozen=True, eq=True)
class Checkpoint:
    """A durable point to resume from.

    ``summary_generation`` is the generation the checkpoint *recorded* for its
    summary when it was written; ``state`` is the agent's own JSON state;
    ``next_turn_deps`` are the references the next turn is known to need (the
    guard checks them when the resume function names none). ``digest`` is a
    SHA-256 over the canonical JSON of everything else.
    """

    turn: int
    summary: Summary | None
    summary_generation: int | None
    state: Mapping[str, Any] = field(default_factory=dict)
    next_turn_deps: tuple[str, ...] = ()

    __hash__ = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        _expect_int(self.turn, "turn")
        if self.summary is not None and not isinstance(self.summary, Summary):
            raise CheckpointFormatError("summary", f"expected a Summary or None, got {_kind(self.summary)}")
        _expect_optional_int(self.summary_generation, "summary_generation")
        state = _expect_json(_expect_mapping(self.state, "state"), "state")
        deps = self.next_turn_deps
        if isinstance(deps, (str, bytes, Mapping)) or not isinstance(deps, Iterable):
            raise CheckpointFormatError("next_turn_deps", f"expected a list of reference names, got {_kind(deps)}")
        object.__setattr__(self, "state", state)
        object.__setattr__(self, "next_turn_deps", tuple(_expect_str(d, f"next_turn_deps[{i}]") for i, d in enumerate(deps)))

    @property
    def digest(self) -> str:
        """``sha256:<hex>`` of the canonical JSON body, computed when asked.

        Not cached: ``state`` and the summary's mappings are plain dicts a
        caller can still change, and a digest cached before such a change
        would be written beside the new content, making the file unloadable.
        """
        return content_digest(self._body())

    def resume_context(self) -> dict[str, Any]:
        """What a resumed agent starts from: summary text, verbatim refs, state."""
        summary = self.summary
        return {
            "turn": self.turn,
            "summary": summary.content if summary is not None else None,
            "refs": dict(summary.verbatim_refs) if summary is not None else {},
            "state": dict(self.state),
        }

    def canonical_body(self) -> bytes:
        """The canonical JSON of everything but the digest: what the digest covers.

        The store serializes a checkpoint once, with this, and seals those bytes.
        """
        return canonical_json(self._body())

    def _body(self) -> dict[str, Any]:
        return {
            "turn": self.turn,
            "summary": self.summary.to_dict() if self.summary is not None else None,
            "summary_generation": self.summary_generation,
            "state": dict(self.state),
            "next_turn_deps": list(self.next_turn_deps),
        }

    def to_dict(self) -> dict[str, Any]:
        body = self._body()
        body["digest"] = self.digest
        return body

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, ensure_ascii=False, allow_nan=False)

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "<data>") -> Checkpoint:
        """Build and verify a checkpoint; a recorded digest must match.

        Raises :class:`CheckpointFormatError` for a malformed shape and
        :class:`CheckpointIntegrityError` when the digest does not match.
        """
        data = _expect_mapping(data, "")
        _reject_unknown(data, {"turn", "summary", "summary_generation", "state", "next_turn_deps", "digest"}, "")
        summary_data = data.get("summary")
        deps = data.get("next_turn_deps", [])
        if not isinstance(deps, list):
            raise CheckpointFormatError("next_turn_deps", f"expected a list, got {_kind(deps)}")
        checkpoint = cls(
            turn=_expect_int(data.get("turn"), "turn"),
            summary=Summary.from_dict(summary_data) if summary_data is not None else None,
            summary_generation=_expect_optional_int(data.get("summary_generation"), "summary_generation"),
            state=_expect_mapping(data.get("state", {}), "state"),
            next_turn_deps=deps,
        )
        recorded = data.get("digest")
        if recorded is not None:
            _expect_str(recorded, "digest")
            if recorded != checkpoint.digest:
                raise CheckpointIntegrityError(
                    source,
                    f"content digest {recorded} does not match the content ({checkpoint.digest}): "
                    "the checkpoint was modified or torn",
                    checkpoint_turn=checkpoint.turn,
                )
        return checkpoint

    @classmethod
    def from_json(cls, text: str | bytes, *, source: str = "<json>") -> Checkpoint:
        try:
            data = parse_json(text)
        except (ValueError, UnicodeDecodeError) as exc:
            raise CheckpointIntegrityError(source, f"not valid JSON: {exc}") from None
        except RecursionError:
            raise CheckpointIntegrityError(source, "JSON nested too deeply to be a checkpoint") from None
        return cls.from_dict(data, source=source)


def content_digest(body: Mapping[str, Any]) -> str:
    """SHA-256 of canonical JSON (sorted keys, no spaces, UTF-8)."""
    return "sha256:" + hashlib.sha256(canonical_json(body)).hexdigest()


def parse_json(text: str | bytes | bytearray) -> Any:
    """``json.loads``, independent of the caller's stack depth (see :func:`on_fresh_stack`).

    RecursionError still means the text nests deeper than any checkpoint can.
    """
    try:
        return json.loads(text)
    except RecursionError:
        return on_fresh_stack(json.loads, text)


def canonical_json(body: Mapping[str, Any]) -> bytes:
    """The canonical JSON of ``body`` as UTF-8: what digests and keyed seals cover."""
    try:
        text = _CANONICAL.encode(body)
    except RecursionError:  # within MAX_DEPTH, so only the caller's stack was deep
        text = on_fresh_stack(_CANONICAL.encode, body)
    return text.encode("utf-8")


#: Built once: ``json.dumps`` with options builds an encoder on every call.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


# -- validation helpers: each names the field it rejects --------------------------------


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _expect_mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise CheckpointFormatError(where, f"expected an object, got {_kind(value)}")
    return value


def _reject_unknown(data: Mapping[str, Any], known: set[str], where: str) -> None:
    unknown = sorted(str(k) for k in data if k not in known)
    if unknown:
        raise CheckpointFormatError(where, f"unknown field(s) {', '.join(unknown)}")


#: Python refuses to print integers longer than this many digits (and so does
#: its JSON encoder); an integer that could not be written is refused when given.
_MAX_INT_BITS = 14_000


def _expect_int(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise CheckpointFormatError(where, f"expected an integer, got {_kind(value)}")
    if value.bit_length() > _MAX_INT_BITS:
        raise CheckpointFormatError(where, f"integer of {value.bit_length()} bits is too large to write as JSON")
    return value


def _expect_optional_int(value: Any, where: str) -> int | None:
    return None if value is None else _expect_int(value, where)


def _expect_str(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise CheckpointFormatError(where, f"expected a string, got {_kind(value)}")
    return _expect_text(value, where)


def _expect_text(value: str, where: str) -> str:
    """A string that UTF-8 can carry: a lone surrogate (from a ``\\ud800`` JSON escape) cannot be written."""
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise CheckpointFormatError(
                where, f"character {exc.object[exc.start]!r} at index {exc.start} is a lone surrogate, not text"
            ) from None
    return value


def _expect_optional_str(value: Any, where: str) -> str | None:
    return None if value is None else _expect_str(value, where)


def _expect_str_map(value: Any, where: str) -> dict[str, str]:
    for key, item in _expect_mapping(value, where).items():
        _expect_str(key, f"{where} (key)")
        _expect_str(item, f"{where}[{key!r}]")
    return dict(value)


def _expect_span(value: Any, where: str) -> tuple[int, int] | None:
    if value is None:
        return None
    if not (isinstance(value, (list, tuple)) and len(value) == 2):
        raise CheckpointFormatError(where, "expected [first, last] or null")
    first = _expect_int(value[0], f"{where}[0]")
    last = _expect_int(value[1], f"{where}[1]")
    if first > last:
        raise CheckpointFormatError(where, f"first turn {first} is after last turn {last}")
    return (first, last)


def _expect_json(value: Any, where: str) -> Any:
    """Accept only what JSON can carry, so a round trip is exact (tuples become lists).

    Nesting is limited to :data:`MAX_DEPTH` levels, checked without recursion:
    what saves must load, whatever the depth of the loader's stack (a limit
    that came from Python's recursion limit counted the caller's frames too).
    """
    holder: list[Any] = [None]
    # Each item: the value, the container and slot its copy goes to, its
    # location, its depth, and the location of its key when it is a mapping's value.
    stack: list[tuple[Any, Any, Any, str, int, str | None, Any]] = [(value, holder, 0, where, 0, None, None)]
    pop, push = stack.pop, stack.append
    while stack:
        item, parent, slot, at, depth, key_where, key = pop()
        if key_where is not None:
            if not isinstance(key, str):
                raise CheckpointFormatError(key_where, f"keys must be strings, got {_kind(key)}")
            _expect_text(key, f"{key_where} (key)")
        if isinstance(item, (list, tuple)):
            if depth >= MAX_DEPTH:
                raise CheckpointFormatError(at, _TOO_DEEP)
            out: Any = list(item)
            parent[slot] = out
            for i in range(len(out) - 1, -1, -1):
                child = out[i]
                # The common cases are checked in place, without building a location.
                cls = child.__class__
                if cls is int:
                    if child.bit_length() <= _MAX_INT_BITS:
                        continue
                elif cls is str:
                    if child.isascii():
                        continue
                elif child is None or cls is bool:
                    continue
                push((child, out, i, f"{at}[{i}]", depth + 1, None, None))
        elif isinstance(item, Mapping):
            if depth >= MAX_DEPTH:
                raise CheckpointFormatError(at, _TOO_DEEP)
            out = dict.fromkeys(item)  # the order of the keys is kept
            parent[slot] = out
            for k, v in reversed(list(item.items())):
                push((v, out, k, f"{at}.{k}", depth + 1, at, k))
        else:
            parent[slot] = _json_scalar(item, at)
    return holder[0]


def _json_scalar(item: Any, at: str) -> Any:
    if item is None or item is True or item is False:
        return item
    if isinstance(item, str):
        return _expect_text(item, at)
    if isinstance(item, int):
        return _expect_int(item, at)
    if isinstance(item, float):
        if not math.isfinite(item):
            raise CheckpointFormatError(at, f"{item!r} is not JSON data")
        return item
    raise CheckpointFormatError(at, f"{_kind(item)} is not JSON data")


#: Lists and objects nested deeper than this in a checkpoint's JSON data (its
#: ``state``, a dropped reference's ``last_known``) are refused when built and
#: when loaded. A fixed number, so that a checkpoint that saves always loads.
MAX_DEPTH = 100
_TOO_DEEP = f"nested too deeply (more than {MAX_DEPTH} levels of lists and objects)"


def on_fresh_stack(function: Any, *args: Any, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)`` on a new thread's empty stack.

    The json module's C code counts its nesting against the recursion limit
    together with the caller's frames; data within :data:`MAX_DEPTH` that hit
    that limit only because the caller was deep is encoded or decoded again
    here, so the result never depends on who called.
    """
    import threading

    result: list[Any] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            result.append(function(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            failure.append(exc)

    thread = threading.Thread(target=run, name="summaryguard-json")
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return result[0]
