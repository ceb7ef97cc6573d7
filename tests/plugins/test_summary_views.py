"""``summary_views``: a framework model's statement that a history type re-inserts earlier
summaries among its events, and the engine's reading of it (SG303), naming no framework."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from summaryguard.plugins.framework import FrameworkModel, FrameworkModelError
from summaryguard.plugins.openhands.model import MODEL as OPENHANDS
from summaryguard.rules.engine import Analyzer, Vocabulary, all_rules

TRAP = Path(__file__).parents[1] / "rules" / "fixtures" / "trap_view_without_reinsertion.py"

FOLD = textwrap.dedent(
    """
    from toyhist import Window
    from openai import OpenAI

    client = OpenAI()

    def fold(window: Window):
        return client.chat.completions.create(
            model="small",
            messages=[{"role": "system", "content": "Summarize these events."},
                      {"role": "user", "content": str(window.events[2:])}],
        )
    """
)


def _sg303(models: list[FrameworkModel], source: str) -> list[int]:
    findings, errors = Analyzer(Vocabulary.build(frameworks=models), all_rules()).analyze([("a.py", source)])
    assert errors == []
    return sorted(f.line for f in findings if f.code == "SG303")


@pytest.mark.parametrize("value", ["toyhist.Window", [""], [3]])
def test_summary_views_must_be_a_list_of_names(value: object) -> None:
    with pytest.raises(FrameworkModelError) as caught:
        FrameworkModel.from_mapping({"name": "toy", "summary_views": value})
    assert caught.value.key == "summary_views"


def test_a_declared_summary_view_makes_its_fold_a_recompaction() -> None:
    toy = FrameworkModel.from_mapping({"name": "toy", "summary_views": ["toyhist.Window"]})
    assert _sg303([toy], FOLD) == [8]
    assert toy.packages == ("toyhist",)  # the pre-filter keeps files that import it


def test_an_undeclared_history_type_is_no_earlier_summary() -> None:
    other = FrameworkModel.from_mapping({"name": "other", "summary_views": ["otherhist.Window"]})
    assert _sg303([other], FOLD) == []
    assert _sg303([], FOLD) == []


def test_the_trap_is_quiet_because_of_the_model_not_by_accident() -> None:
    """Declaring the trap's window a summary view makes exactly its fold fire."""
    source = TRAP.read_text()
    assert _sg303(list(Vocabulary.build().frameworks), source) == []
    window = FrameworkModel.from_mapping({"name": "agentlib", "summary_views": ["agentlib.history.Window"]})
    [line] = _sg303([window], source)
    assert "window.events" in source.splitlines()[line - 1]


def test_the_openhands_room_declares_its_view_and_factory() -> None:
    model = FrameworkModel.from_mapping(OPENHANDS)
    vocabulary = Vocabulary.build(frameworks=[model])
    for name in ("openhands.sdk.context.view.View", "openhands.sdk.context.view.view.View",
                 "openhands.sdk.context.view.View.from_events"):
        assert vocabulary.is_summary_view(name)
    assert not vocabulary.is_summary_view("openhands.sdk.event.condenser.Condensation")
