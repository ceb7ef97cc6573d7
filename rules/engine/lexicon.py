"""The built-in name lexicon: weak evidence the analyzer only uses to corroborate.

Names are the cheapest evidence and the least reliable: ``summary`` can be a
TensorBoard summary or a CV section, ``resume`` a download or a coroutine, and
``x_tool`` a helper (which is why no name here makes a tool: :meth:`.evidence.Evidence.known_tool`).
Every predicate here is therefore *one* vote; the
recognizers in :mod:`.evidence` combine it with qualified names, decorators and
usage before anything is reported. Patterns are compiled once, at import.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = [
    "CHECKPOINT_ATTRS",
    "EXIT_CALLS",
    "GUARANTEE_ATTRS",
    "LOAD_METHODS",
    "LOG_CALLS",
    "RUN_METHODS",
    "STRONG_SUMMARY_ATTRS",
    "WEAK_RESUME_NAMES",
    "is_checkpoint_name",
    "is_resumed_state_name",
    "is_summary_name",
]

_SUMMARY = re.compile(r"summar", re.IGNORECASE)
# TensorBoard / Keras "summaries" are metrics, not agent memory.
_NOT_AGENT_SUMMARY = re.compile(r"writer|scalar|histogram|merge_all|add_summary|tensorboard", re.IGNORECASE)
_CHECKPOINT = re.compile(r"checkpoint|ckpt|snapshot", re.IGNORECASE)
_RESUMED = re.compile(
    r"summar|checkpoint|ckpt|resum|restor|rehydrat|recover|snapshot|verbatim|(^|_)refs?($|_)", re.IGNORECASE
)
#: Attributes whose reading makes the object summary-like on their own.
STRONG_SUMMARY_ATTRS = frozenset(
    {"summary", "summaries", "generation", "summary_generation", "verbatim_refs", "drop_manifest", "dropped_refs"}
)
#: Attributes that are summary evidence only together with another vote
#: (``download.partial`` is a half-finished file, not a half-written summary).
GUARANTEE_ATTRS = frozenset({"partial", "is_partial", "complete", "is_complete", "refs", "references"})
#: Attributes that make an object checkpoint-like.
CHECKPOINT_ATTRS = frozenset({"checkpoint", "summary_generation", "turn", "checkpoint_turn"})

#: Generic resume verbs: a resume only when summary state flows into them.
WEAK_RESUME_NAMES = frozenset(
    {
        "resume",
        "aresume",
        "restore",
        "resume_from",
        "resume_from_checkpoint",
        "resume_run",
        "resume_agent",
        "resume_session",
        "restore_session",
        "continue_from",
        "continue_from_checkpoint",
    }
)
#: Methods that continue an agent when handed restored state (``agent.run(..., ctx=ctx)``).
RUN_METHODS = frozenset(
    {
        "run",
        "arun",
        "invoke",
        "ainvoke",
        "stream",
        "astream",
        "step",
        "astep",
        "chat",
        "achat",
        "continue_run",
        "execute",
        "start",
        "run_turn",
        "next_turn",
    }
)
#: Deserializers: their result is restored state (not a resume by itself).
LOAD_METHODS = frozenset(
    {
        "from_dict",
        "from_json",
        "model_validate",
        "model_validate_json",
        "parse_obj",
        "parse_raw",
        "load",
        "loads",
        "from_checkpoint",
        "deserialize",
        "from_state",
        "get_state",
        "get_tuple",
        "load_checkpoint",
    }
)
#: Calls that never return.
EXIT_CALLS = frozenset({"sys.exit", "os._exit", "exit", "quit", "os.abort", "pytest.fail", "typing.assert_never"})
#: Calls that only record an error (receiving the exception is not a hand-off).
LOG_CALLS = frozenset(
    {
        "debug",
        "info",
        "warning",
        "warn",
        "error",
        "exception",
        "critical",
        "log",
        "print",
        "print_exc",
        "format_exc",
        "capture_exception",
        "append",
        "add",
        "extend",
        "str",
        "repr",
        "format",
        "echo",
        "secho",
    }
)


@lru_cache(maxsize=8192)
def is_summary_name(name: str) -> bool:
    """``summary``, ``last_summary``, ``summaries`` -- but not ``SummaryWriter``."""
    return bool(_SUMMARY.search(name)) and not _NOT_AGENT_SUMMARY.search(name)


@lru_cache(maxsize=8192)
def is_checkpoint_name(name: str) -> bool:
    """``checkpoint``, ``ckpt``, ``snapshot`` (any case, any position)."""
    return bool(_CHECKPOINT.search(name))


@lru_cache(maxsize=8192)
def is_resumed_state_name(name: str) -> bool:
    """A name that says "this came back from a checkpoint or a summary"."""
    return bool(_RESUMED.search(name)) and not _NOT_AGENT_SUMMARY.search(name)

