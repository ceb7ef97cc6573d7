"""Framework models are data the analyzer validates when it loads them, and the
engine reads them instead of naming any framework."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from summaryguard.plugins.framework import FrameworkModel, FrameworkModelError
from summaryguard.plugins.hookspecs import hookimpl
from summaryguard.plugins.manager import get_plugin_manager


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


@pytest.mark.parametrize("answer", [7, {"name": "single-mapping-not-a-list"}, ["not a mapping"]])
def test_a_plugin_answer_of_the_wrong_shape_is_a_model_error_not_a_crash(answer: object) -> None:
    from summaryguard.rules.engine import Vocabulary

    class Odd:
        @hookimpl
        def summaryguard_frameworks(self):
            return answer

    manager = get_plugin_manager()
    plugin = Odd()
    manager.register(plugin)
    try:
        vocabulary = Vocabulary.build()
    finally:
        manager.unregister(plugin)
    assert len(vocabulary.model_errors) == 1 and "framework model" in vocabulary.model_errors[0]
    assert any(m.name == "langgraph" for m in vocabulary.frameworks)  # the others still load
