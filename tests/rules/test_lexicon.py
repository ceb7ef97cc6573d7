"""The name lexicon: which names are one vote for "tool" (and which say otherwise)."""

from __future__ import annotations

import pytest

from summaryguard.rules.engine.lexicon import is_tool_method, is_tool_name


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("search_tool", True),
        ("create_sandbox_tool", True),
        ("call_tool", True),
        ("tools", True),
        ("atool", True),
        ("_tool", True),
        ("searchTool", True),
        # "tool" is one word among others
        ("tool_call", False),
        ("log_model_and_tool_action_error", False),
        ("record_agent_tool_resume_state", False),
        ("_bind_resolved_tool_invocation", False),
        ("setuptools", False),
        # a helper about tools
        ("get_function_tool_lookup_key_for_tool", False),
        ("resolve_tool", False),
        ("as_tool", False),
        ("getTool", False),
        ("", False),
    ],
)
def test_tool_names(name: str, expected: bool) -> None:
    assert is_tool_name(name) is expected


@pytest.mark.parametrize(
    ("receiver", "method", "expected"),
    [
        ("tools", "lookup", True),
        ("search_tool", "invoke", True),
        ("tools", "get", False),
        ("tools", "register", False),
        ("tools", "_cache", False),
        ("tools", "log_call", False),
        ("tool_call", "model_copy", False),
        ("tools", "\u00e9\u00e9", False),  # no ASCII word at all
    ],
)
def test_tool_methods(receiver: str, method: str, expected: bool) -> None:
    assert is_tool_method(receiver, method) is expected


def test_shown_reads_calls_and_subscripts_as_written() -> None:
    from summaryguard.rules.engine.names import shown

    assert shown("run.graph.().invoke") == "run.graph(...).invoke"
    assert shown("state.[].get") == "state[...].get"
    assert shown("agent.resume") == "agent.resume"
