"""Framework models are data the analyzer validates when it loads them, and the
engine reads them instead of naming any framework."""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

import pytest

from summaryguard.plugins.framework import FrameworkModel, FrameworkModelError
from summaryguard.plugins.hookspecs import hookimpl
from summaryguard.plugins.manager import get_plugin_manager
from summaryguard.rules.engine import Analyzer, Vocabulary, all_rules


def test_a_model_reads_its_keys() -> None:
    model = FrameworkModel.from_mapping(
        {"name": "toy", "vocabulary": {"resume-calls": ["toy.Agent.go"]}, "resume_methods": ["go"],
         "resume_none_input": True, "guarantees": ["generation"]}
    )
    assert model.name == "toy" and model.vocabulary == {"resume-calls": ("toy.Agent.go",)}
    assert model.resume_methods == ("go",) and model.resume_none_input and model.guarantees == ("generation",)


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"name": "toy", "resume_metods": ["go"]}, "resume_metods"),
        ({"name": "toy", "vocabulary": {"resume-cals": ["x"]}}, "vocabulary.resume-cals"),
        ({"name": "toy", "vocabulary": {"resume-calls": "toy.go"}}, "vocabulary.resume-calls"),
        ({"name": "toy", "guarantees": ["atomicity"]}, "guarantees"),
        ({"name": "toy", "resume_none_input": "yes"}, "resume_none_input"),
        ({"name": "toy", "graph_builders": [""]}, "graph_builders"),
        ({"name": ""}, "name"),
    ],
)
def test_a_bad_model_is_an_error_naming_the_key(data: dict, key: str) -> None:
    with pytest.raises(FrameworkModelError) as caught:
        FrameworkModel.from_mapping(data)
    assert caught.value.key == key and key in str(caught.value)


def test_a_plugin_with_a_bad_model_fails_the_check_with_exit_2(tmp_path: Path) -> None:
    from summaryguard.rules.cli.runner import CheckOptions, run_check
    from summaryguard.rules.cli.config import ConfigError

    class Broken:
        @hookimpl
        def summaryguard_frameworks(self):
            return [{"name": "broken", "resume_metods": ["go"]}]

    (tmp_path / "a.py").write_text("x = 1\n")
    manager = get_plugin_manager()
    plugin = Broken()
    manager.register(plugin)
    try:
        with pytest.raises(ConfigError) as caught:
            run_check(CheckOptions(paths=(str(tmp_path / "a.py"),), cache=False), io.StringIO(), io.StringIO(), tmp_path)
    finally:
        manager.unregister(plugin)
    assert "framework model 'broken': resume_metods: unknown key" in caught.value.render()


def test_a_new_framework_is_a_model_only() -> None:
    """A framework the engine never heard of: its model alone makes its resume of a
    summarizing graph a finding, and of a graph without a summarizer no finding."""
    toy = FrameworkModel.from_mapping(
        {
            "name": "toyflow",
            "vocabulary": {"compaction-calls": ["toyflow.Condense"]},
            "graph_factories": ["toyflow.make_agent"],
            "resume_methods": ["proceed"],
            "resume_none_input": True,
            "guarantees": ["generation", "partial"],
        }
    )
    analyzer = Analyzer(Vocabulary.build(use_plugins=False, frameworks=[toy]), all_rules(use_plugins=False))
    source = textwrap.dedent(
        """
        from toyflow import Condense, make_agent

        def resume(config):
            agent = make_agent(steps=[Condense(limit=10)])
            return agent.proceed(None, config)

        def plain(config):
            agent = make_agent(steps=[])
            return agent.proceed(None, config)
        """
    ).lstrip()
    findings, errors = analyzer.analyze([("toy.py", source)])
    assert errors == []
    assert [(f.line, f.code) for f in findings] == [(5, "SG103")]
    assert [step.line for step in findings[0].trace] == [4, 5, 5]
    assert "Condense" in findings[0].trace[0].note
