"""The two registries framework rooms fill: tool objects (a hook) and refusal escalation.

The core names no framework: ``tool_guard`` asks the plugins to guard an
object that is not a function, and ``refuse_rederivation`` raises what the
registered escalations make of a refusal.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from summaryguard.guard import ReconciliationKind, SummaryReconciliationError, resume_guard, tool_guard
from summaryguard.guard import tools as tools_module
from summaryguard.guard.tools import register_refusal_escalation
from summaryguard.plugins import hookimpl

GUARD = Path(tools_module.__file__).resolve().parent
MANIFEST = [("bucket", "bkt-old", "create_bucket")]


def _modules_after(code: str) -> list[str]:
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


@resume_guard
def run_in_turn(checkpoint: Any, body: Callable[[], Any]) -> Any:
    return body()


def create_bucket(region: str = "eu") -> str:
    return f"bkt-new-{region}"


# -- tool objects: summaryguard_wrap_tool ---------------------------------------------------


@dataclasses.dataclass
class FunctionTool:
    """A tool object that is not callable (like the OpenAI Agents SDK's): only its plugin can guard it."""

    name: str
    on_invoke_tool: Callable[..., Any]


class FunctionTools:
    """A framework plugin that guards FunctionTool objects by wrapping their run function."""

    def __init__(self) -> None:
        self.asked: list[tuple[Any, Any]] = []

    @hookimpl
    def summaryguard_wrap_tool(self, tool: Any, name: Any) -> Any:
        self.asked.append((tool, name))
        if not isinstance(tool, FunctionTool):
            return None
        guarded = tool_guard(tool.on_invoke_tool, name=name if name is not None else tool.name)
        return dataclasses.replace(tool, on_invoke_tool=guarded)


@pytest.fixture
def function_tools(use_plugin: Callable[..., Any]) -> FunctionTools:
    return use_plugin(FunctionTools(), name="test-function-tools")


def test_a_plugin_guards_a_tool_object_that_is_not_callable(make_checkpoint, function_tools) -> None:
    tool = FunctionTool("create_bucket", create_bucket)
    guarded = tool_guard(tool)
    assert isinstance(guarded, FunctionTool) and guarded is not tool
    assert function_tools.asked == [(tool, None)]
    assert guarded.on_invoke_tool("us") == "bkt-new-us"  # outside a resumed turn: untouched
    cp = make_checkpoint("native", manifest=MANIFEST)
    with pytest.raises(SummaryReconciliationError) as caught:
        run_in_turn(cp, lambda: guarded.on_invoke_tool("us"))
    assert caught.value.kind is ReconciliationKind.REDERIVATION
    assert caught.value.details["tool"] == "create_bucket"


def test_the_name_given_to_tool_guard_reaches_the_plugin(function_tools) -> None:
    tool_guard(FunctionTool("create_bucket", create_bucket), name="s3.create_bucket")
    assert function_tools.asked[-1][1] == "s3.create_bucket"


def test_a_tool_object_no_plugin_knows_is_wrapped_as_a_callable(make_checkpoint, function_tools) -> None:
    partial = functools.partial(create_bucket, "us")
    guarded = tool_guard(partial, name="create_bucket")
    assert function_tools.asked == [(partial, "create_bucket")]
    assert guarded() == "bkt-new-us"
    with pytest.raises(SummaryReconciliationError):
        run_in_turn(make_checkpoint("native", manifest=MANIFEST), guarded)


def test_a_non_callable_no_plugin_knows_is_refused(function_tools) -> None:
    with pytest.raises(TypeError, match="tool_guard wraps a callable, got int"):
        tool_guard(42)
    assert function_tools.asked == [(42, None)]


def test_a_function_is_guarded_without_asking_any_plugin(function_tools) -> None:
    tool_guard(create_bucket)
    tool_guard(name="x")(create_bucket)
    assert function_tools.asked == []


def test_guarding_functions_never_loads_the_plugin_manager() -> None:
    modules = _modules_after(
        "from summaryguard.guard import tool_guard\n"
        "def f(): pass\n"
        "async def g(): pass\n"
        "tool_guard(f); tool_guard(g); tool_guard(name='h')(f)\n"
    )
    assert "pluggy" not in modules
    assert [m for m in modules if m.startswith("summaryguard.plugins")] == []


def test_a_tool_object_of_no_framework_loads_no_framework_runtime() -> None:
    """The LangGraph plugin answers None for a partial without loading its graph module (or LangGraph)."""
    modules = _modules_after(
        "import functools\n"
        "from summaryguard.guard import tool_guard\n"
        "guarded = tool_guard(functools.partial(print, 'x'), name='p')\n"
        "assert callable(guarded) and guarded.__summaryguard_tool__ == frozenset({'p'})\n"
    )
    assert "summaryguard.plugins.langgraph._graph" not in modules
    assert [m for m in modules if m.split(".")[0] in ("langgraph", "langchain_core")] == []


# -- refusal escalation --------------------------------------------------------------------


class Escalated(SummaryReconciliationError):
    """What a framework's run lets through."""


@pytest.fixture
def escalations(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The registry as it was, after the test (rooms registered at import stay registered)."""
    monkeypatch.setattr(tools_module, "_escalations", tools_module._escalations)
    yield


def _escalate(error: SummaryReconciliationError) -> SummaryReconciliationError:
    return Escalated(
        error.summary_generation, error.checkpoint_turn, error.missing_ref, error.reason,
        kind=error.kind, details=error.details,
    )


def _refused(make_checkpoint: Any) -> SummaryReconciliationError:
    guarded = tool_guard(create_bucket)
    with pytest.raises(SummaryReconciliationError) as caught:
        run_in_turn(make_checkpoint("native", manifest=MANIFEST), guarded)
    return caught.value


def test_a_registered_escalation_decides_what_a_refusal_raises(make_checkpoint, escalations) -> None:
    assert type(_refused(make_checkpoint)) is SummaryReconciliationError
    register_refusal_escalation(_escalate)
    error = _refused(make_checkpoint)
    assert type(error) is Escalated
    assert (error.kind, error.missing_ref, error.details["tool"]) == (ReconciliationKind.REDERIVATION, "bucket", "create_bucket")


def test_an_escalation_that_returns_the_error_lets_the_next_one_answer(make_checkpoint, escalations) -> None:
    seen: list[SummaryReconciliationError] = []

    def outside_my_runs(error: SummaryReconciliationError) -> SummaryReconciliationError:
        seen.append(error)
        return error

    register_refusal_escalation(outside_my_runs)
    assert type(_refused(make_checkpoint)) is SummaryReconciliationError
    register_refusal_escalation(_escalate)
    assert type(_refused(make_checkpoint)) is Escalated
    assert len(seen) == 2


def test_registering_the_same_function_again_replaces_it(escalations) -> None:
    before = len(tools_module._escalations)
    register_refusal_escalation(_escalate)
    register_refusal_escalation(_escalate)
    assert len(tools_module._escalations) == before + 1


def test_an_escalation_must_be_callable(escalations) -> None:
    with pytest.raises(TypeError, match="takes a function error -> error, got str"):
        register_refusal_escalation("bubbling")  # type: ignore[arg-type]


def test_the_langgraph_room_registers_its_escalation_when_its_graph_module_loads() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from summaryguard.guard import tools\n"
            "assert tools._escalations == ()\n"
            "from summaryguard.plugins.langgraph import _graph\n"
            "assert tools._escalations == (_graph.bubbling,)\n",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr


# -- the core names no framework -----------------------------------------------------------


def test_no_module_of_the_runtime_core_names_a_framework() -> None:
    """Only the compatibility shim guard/langgraph/ may (it re-exports the LangGraph room)."""
    shim = GUARD / "langgraph"
    naming = [
        f"{path.relative_to(GUARD)}:{number}"
        for path in sorted(GUARD.rglob("*.py"))
        if shim not in path.parents
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if any(word in line.lower() for word in ("langgraph", "langchain", "langmem"))
    ]
    assert naming == []
