"""The LangChain room's boundaries, its model as data, and its stamp as a function of the fold.

Import checks run in a fresh interpreter, so what this test process already
imported cannot hide an import.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from summaryguard.plugins.framework import FrameworkModel
from summaryguard.plugins.langchain.model import MODEL
from summaryguard.plugins.langgraph.model import MODEL as LANGGRAPH_MODEL
from summaryguard.plugins.manager import get_plugin_manager

ROOM = "summaryguard.plugins.langchain"


def _modules_after(code: str) -> list[str]:
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_building_the_plugin_manager_loads_neither_langchain_nor_the_room_runtime() -> None:
    modules = _modules_after(
        "import summaryguard.guard\nfrom summaryguard.plugins.manager import get_plugin_manager\nget_plugin_manager()"
    )
    assert f"{ROOM}.plugin" in modules
    assert [m for m in modules if m.split(".")[0] == "langchain" or m.startswith(f"{ROOM}._")] == []


def test_the_plugin_hands_over_the_room_model_as_data() -> None:
    answers = [m for a in get_plugin_manager().hook.summaryguard_frameworks() for m in a or ()]
    assert MODEL in answers
    model = FrameworkModel.from_mapping(MODEL)
    assert "langchain.agents.create_agent" in model.graph_factories
    assert "langchain.agents.middleware.SummarizationMiddleware" in model.vocabulary["compaction-calls"]
    # The summary message is written with its checkpoint; its fallback texts make completeness the user's.
    assert model.guarantees == ("generation",)


def test_create_agent_belongs_to_this_room_only() -> None:
    langgraph = FrameworkModel.from_mapping(LANGGRAPH_MODEL)
    assert not [n for n in langgraph.graph_factories if n.startswith("langchain.")]
    assert not [n for names in langgraph.vocabulary.values() for n in names if n.startswith("langchain.")]


def _resolve(name: str) -> Any:
    module_name, attrs = name, []
    while module_name:
        try:
            obj: Any = importlib.import_module(module_name)
            break
        except ImportError:
            module_name, _, last = module_name.rpartition(".")
            attrs.insert(0, last)
    for attr in attrs:
        obj = getattr(obj, attr, None)
    return obj


def test_every_name_of_the_model_is_real() -> None:
    names = [n for names in MODEL["vocabulary"].values() for n in names]
    names += [*MODEL["graph_factories"], *MODEL["resume_input_types"]]
    assert [n for n in names if _resolve(n) is None] == []


def test_the_stamping_middleware_is_langchains_with_a_stamp_channel() -> None:
    pytest.importorskip("langchain.agents")
    from langchain.agents.middleware import SummarizationMiddleware

    from summaryguard.plugins.langchain import StampedSummarization

    assert issubclass(StampedSummarization, SummarizationMiddleware)
    assert "summaryguard" in StampedSummarization.state_schema.__annotations__
    with pytest.raises(TypeError, match="refs"):
        StampedSummarization("fake:model", refs="not a function")


def test_an_unknown_name_of_the_room_is_an_attribute_error() -> None:
    import summaryguard.plugins.langchain as room

    with pytest.raises(AttributeError, match="nothing"):
        room.nothing  # noqa: B018
    assert set(room.__all__) <= set(dir(room))


# -- the stamp, as a pure function of the fold ---------------------------------------------------

TOOLS = ("create_vm", "open_port", "lookup")


@settings(max_examples=40, deadline=None)
@given(
    results=st.lists(st.sampled_from(TOOLS), min_size=1, max_size=8),
    quoted=st.sets(st.integers(min_value=0, max_value=7)),
    fallback=st.booleans(),
)
def test_the_stamp_drops_exactly_the_latest_results_the_summary_does_not_quote(
    results: list[str], quoted: set[int], fallback: bool
) -> None:
    pytest.importorskip("langchain.agents")
    from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage
    from langgraph.graph.message import REMOVE_ALL_MESSAGES

    from summaryguard.plugins.langchain._summary import LAYOUT

    messages: list[Any] = [HumanMessage("go", id="h")]
    for i, tool in enumerate(results):
        messages.append(AIMessage("", id=f"a{i}", tool_calls=[{"name": tool, "args": {}, "id": f"c{i}"}]))
        messages.append(ToolMessage(f"handle-{i}", id=f"t{i}", name=tool, tool_call_id=f"c{i}"))
    text = " ".join(f"handle-{i}" for i in sorted(quoted) if i < len(results))
    summary = HumanMessage(f"Here is a summary of the conversation to date:\n\n{text}", id="s",
                           additional_kwargs={"lc_source": "summarization"})
    update = {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), summary]}
    middleware = _middleware()
    stamp = middleware._stamped({"messages": messages}, update, "too long" if fallback else None)["summaryguard"]

    latest = {tool: i for i, tool in enumerate(results)}
    kept = {tool for tool, i in latest.items() if i in quoted}
    assert {e["ref"] for e in stamp["drop_manifest"]} == set(latest) - kept
    assert {e["ref"]: e["last_known"] for e in stamp["drop_manifest"]} == {
        tool: f"handle-{i}" for tool, i in latest.items() if tool not in kept
    }
    assert stamp["verbatim_refs"] == {tool: f"handle-{latest[tool]}" for tool in kept}
    assert (stamp["generation"], stamp["partial"]) == (1, fallback)
    _, generation, present, recorded, partial, refs = LAYOUT.facts({"messages": [summary], "summaryguard": stamp}, 3)
    assert (generation, present, recorded, partial) == (1, True, 1, fallback)
    assert set(refs) == kept


def _middleware() -> Any:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

    from summaryguard.plugins.langchain import StampedSummarization

    return StampedSummarization(GenericFakeChatModel(messages=iter(())), summarizer=lambda messages: "unused")
