"""A framework's analyzer model: what its APIs do to summary state, as data.

Pysa and CodeQL keep framework knowledge as models read by one engine that
names no framework; this is ours. A framework room (``plugins/<name>/``)
describes its framework with one mapping (``model.py`` in the room) and returns
it from the ``summaryguard_frameworks`` hook; the analyzer validates it when it
loads (an unknown key or a value of the wrong shape is an error naming the
framework and the key) and reads nothing else about the framework.

Pure data: importing this module costs nothing (no libcst, no pluggy), so the
runtime may read the same models. A model is a NamedTuple, not a dataclass: every
``check`` builds the rooms' models, a pre-commit run on a dismissed file too, and a
frozen dataclass of this size costs several million instructions to create.
"""

# No ``from __future__ import annotations``: its NamedTuple would compile each
# annotation given as a string (see summaryguard.rules.cli.report).
from collections.abc import Mapping
from typing import Any, NamedTuple

__all__ = ["FrameworkModel", "FrameworkModelError", "KINDS"]

#: The checks of the resume invariant, as a model names them in ``guarantees``.
KINDS = ("generation", "partial", "deps")


class FrameworkModelError(ValueError):
    """A framework model that cannot be read: names the framework and the key."""

    def __init__(self, framework: str, key: str, problem: str) -> None:
        super().__init__(f"framework model {framework!r}: {key}: {problem}")
        self.framework = framework
        self.key = key
        self.problem = problem


class FrameworkModel(NamedTuple):
    """What the analyzer knows about one framework.

    Qualified names are matched like vocabulary entries (exact, or glob
    patterns with ``*``); method names are bare."""

    #: The framework's name (the room's name).
    name: str
    #: Analyzer vocabulary by category (see ``hookspecs.VOCABULARY_CATEGORIES``).
    #: (The default is one shared dict, never mutated; not a ``MappingProxyType``, which
    #: cannot be pickled, and the worker pools of ``--jobs`` pickle the vocabulary where
    #: processes are spawned.)
    vocabulary: Mapping[str, tuple[str, ...]] = {}
    #: Classes whose instances collect graph nodes (``langgraph.graph.StateGraph``).
    graph_builders: tuple[str, ...] = ()
    #: Builder methods that add a node: ``add_node(name, fn)``.
    node_registrations: tuple[str, ...] = ()
    #: Methods of a graph or builder that return the same graph, compiled or
    #: reconfigured (``compile``, ``with_config``).
    graph_derivations: tuple[str, ...] = ()
    #: Calls that build a runnable graph from parts (``create_agent``): the graph
    #: summarizes when one of its arguments is a summarizer (``middleware=[...]``).
    graph_factories: tuple[str, ...] = ()
    #: Methods of a graph that continue a thread from its checkpoint when given a
    #: resume input (``invoke``, ``stream``).
    resume_methods: tuple[str, ...] = ()
    #: ``None`` as the first positional argument is a resume input (``invoke(None, config)``).
    resume_none_input: bool = False
    #: Classes whose instance is a resume input (``Command``) when built with one of
    #: :attr:`resume_input_keywords` (``Command(resume=...)``).
    resume_input_types: tuple[str, ...] = ()
    resume_input_keywords: tuple[str, ...] = ()
    #: Keyword arguments of a :attr:`resume_methods` call that make it a resume input when given
    #: a value other than ``None``, whatever the value's origin: ADK's
    #: ``runner.run_async(..., invocation_id=inv)`` resumes the invocation ``inv``.
    resume_keywords: tuple[str, ...] = ()
    #: Keyword arguments of a :attr:`resume_methods` call that hand it restored state: the call
    #: is a resume input when one of them is given a value loaded from a checkpoint (a
    #: ``checkpoint-loads`` call, directly or through a name), as pydantic-ai's
    #: ``agent.run(prompt, message_history=ModelMessagesTypeAdapter.validate_json(data))``.
    #: A live value (the previous run's ``all_messages()``) restores nothing.
    resume_state_keywords: tuple[str, ...] = ()
    #: Checks the framework guarantees on its own resumes: in LangGraph a summary held
    #: in graph state is written atomically with its checkpoint (generation, partial).
    guarantees: tuple[str, ...] = ()
    #: Methods that run one of the framework's tool objects (``create_vm.invoke({})``
    #: where ``create_vm`` is a ``@tool`` function or a name bound to a tool factory).
    tool_run_methods: tuple[str, ...] = ()
    #: Calls that make a tool object of a function (``StructuredTool.from_function(f)``);
    #: the vocabulary's tool decorators do too when called (``tool(f)``).
    tool_factories: tuple[str, ...] = ()
    #: Classes (and the calls that build one, ``View.from_events``) whose instances hold
    #: the events a compaction folds *with each earlier compaction's summary put back
    #: among them*: OpenHands' ``View`` re-inserts every ``Condensation``'s ``summary`` at
    #: its ``summary_offset``. Such a value carries an earlier summary (SG303), whatever
    #: it is called; a history type that only drops events is not listed.
    summary_views: tuple[str, ...] = ()
    #: Calls that run an agent and continue what their arguments hold (``Runner.run(agent,
    #: state, session=session)``): a resume from summary state when an argument is a value
    #: one of the vocabulary's ``compaction-calls`` built (a session that compacts), directly
    #: or through a name. The resume is this call, not the load of what it is handed.
    run_calls: tuple[str, ...] = ()
    #: Calls that install a checked runner for the whole process (``guard_runner()``): called
    #: at the top level of a module, every ``run_calls`` call in that module is checked.
    run_guards: tuple[str, ...] = ()
    #: Words that make the text pre-filter keep a file for this framework.
    words: tuple[str, ...] = ()

    @property
    def packages(self) -> tuple[str, ...]:
        """The top-level packages the model's qualified names live in (``langgraph``)."""
        names = [*self.graph_builders, *self.graph_factories, *self.resume_input_types, *self.summary_views, *self.run_calls]
        names += [n for entries in self.vocabulary.values() for n in entries]
        return tuple(sorted({n.partition(".")[0] for n in names if "." in n and not n.startswith("*")}))

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> "FrameworkModel":
        """Validate ``data`` (a room's model) and build the model; unknown keys are errors."""
        if not isinstance(data, Mapping):
            raise FrameworkModelError("?", "(model)", f"must be a mapping, got {type(data).__name__}")
        name = data.get("name")
        if not isinstance(name, str) or not name:
            raise FrameworkModelError(str(name), "name", "must be a non-empty string")
        known = cls._fields
        values: dict[str, Any] = {"name": name, "vocabulary": {}}
        for key, value in data.items():
            if key == "name":
                continue
            if key not in known:
                raise FrameworkModelError(name, key, f"unknown key (known: {', '.join(sorted(known))})")
            if key == "vocabulary":
                values[key] = _vocabulary(name, value)
            elif key == "resume_none_input":
                if not isinstance(value, bool):
                    raise FrameworkModelError(name, key, "must be true or false")
                values[key] = value
            else:
                values[key] = _names(name, key, value)
        for kind in values.get("guarantees", ()):
            if kind not in KINDS:
                raise FrameworkModelError(name, "guarantees", f"unknown check {kind!r} (known: {', '.join(KINDS)})")
        return cls(**values)


def _names(framework: str, key: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise FrameworkModelError(framework, key, "must be a list of names")
    for item in value:
        if not isinstance(item, str) or not item:
            raise FrameworkModelError(framework, key, f"must hold non-empty strings, got {item!r}")
    return tuple(value)


def _vocabulary(framework: str, value: Any) -> Mapping[str, tuple[str, ...]]:
    from .hookspecs import VOCABULARY_CATEGORIES

    if not isinstance(value, Mapping):
        raise FrameworkModelError(framework, "vocabulary", "must be a mapping of category to names")
    result: dict[str, tuple[str, ...]] = {}
    for category, names in value.items():
        if category not in VOCABULARY_CATEGORIES:
            raise FrameworkModelError(
                framework, f"vocabulary.{category}", f"unknown category (known: {', '.join(VOCABULARY_CATEGORIES)})"
            )
        result[category] = _names(framework, f"vocabulary.{category}", names)
    return result
