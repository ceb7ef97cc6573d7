"""Built-in observer: every refused resume and blocked re-derivation is logged.

Logged at WARNING on the ``summaryguard`` logger with the error's fields as
``extra``, so log pipelines can index them.

The last-known value of a dropped reference (``details["last_known"]``) is a
handle, a token, a URL with credentials: whatever the agent held. Logs travel
further than checkpoints, so the value is written as ``<redacted>``; the
reference's name, its kind and the tool stay. Set the environment variable
``SUMMARYGUARD_LOG_VALUES=1`` to log the values (read at each violation).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from .markers import hookimpl

if TYPE_CHECKING:  # pragma: no cover
    import logging

#: The environment variable that lets the log carry last-known values.
LOG_VALUES_ENV = "SUMMARYGUARD_LOG_VALUES"
REDACTED = "<redacted>"
_SECRET_KEYS = frozenset({"last_known"})


def _logger() -> logging.Logger:
    """The ``summaryguard`` logger, with a :class:`logging.NullHandler` (added once, as a
    library should). Made at the first violation, not at import: building the plugin
    manager registers this module, and a check of a file with no summary vocabulary
    must not import :mod:`logging` (SPEC §3.1.2)."""
    import logging

    logger = logging.getLogger("summaryguard")
    if not any(isinstance(h, logging.NullHandler) for h in logger.handlers):
        logger.addHandler(logging.NullHandler())
    return logger


@hookimpl
def summaryguard_observe_violation(error: Any, checkpoint: Any) -> None:
    message, fields = _loggable(error)
    _logger().warning("resume refused: %s", message, extra={"summaryguard": fields})


@hookimpl
def summaryguard_divergence_accepted(record: Any) -> None:
    _logger().warning("divergence accepted: %s", record, extra={"summaryguard": record.as_dict()})


def log_values() -> bool:
    """Whether the operator asked for last-known values in the log."""
    return os.environ.get(LOG_VALUES_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def _loggable(error: Any) -> tuple[Any, dict[str, Any]]:
    """The message and fields to log: the error's own, with last-known values redacted unless asked for."""
    fields = error.as_dict()
    if log_values():
        return error, fields
    details = getattr(error, "details", None)
    if not isinstance(details, dict):
        return error, fields
    redacted, changed = _redact(details)
    if not changed:
        return error, fields
    from summaryguard.guard.errors import SummaryReconciliationError

    # The message is the error's own format, built from a copy with the values taken out.
    copy = SummaryReconciliationError(
        error.summary_generation, error.checkpoint_turn, error.missing_ref, error.reason, kind=error.kind, details=redacted
    )
    return str(copy), {**fields, "details": redacted}


def _redact(value: Any) -> tuple[Any, bool]:
    """``value`` with every ``last_known`` entry of its mappings (at any depth) redacted; and whether any was."""
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        changed = False
        for key, item in value.items():
            if key in _SECRET_KEYS:
                out[key], changed = REDACTED, True
            else:
                out[key], inner = _redact(item)
                changed = changed or inner
        return out, changed
    if isinstance(value, (list, tuple)):
        items = [_redact(item) for item in value]
        if any(inner for _, inner in items):
            redacted = [item for item, _ in items]
            return (tuple(redacted) if isinstance(value, tuple) else redacted), True
    return value, False
