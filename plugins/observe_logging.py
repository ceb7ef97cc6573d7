"""Built-in observer: every refused resume and blocked re-derivation is logged.

Logged at WARNING on the ``summaryguard`` logger with the error's fields as
``extra``, so log pipelines can index them.
"""

from __future__ import annotations

import logging
from typing import Any

from .hookspecs import hookimpl

logger = logging.getLogger("summaryguard")
logger.addHandler(logging.NullHandler())


@hookimpl
def summaryguard_observe_violation(error: Any, checkpoint: Any) -> None:
    logger.warning("resume refused: %s", error, extra={"summaryguard": error.as_dict()})


@hookimpl
def summaryguard_divergence_accepted(record: Any) -> None:
    logger.warning("divergence accepted: %s", record, extra={"summaryguard": record.as_dict()})
