"""The README's "Add a rule" and "Add a framework" work as written: their code is
taken from the README itself, dropped where the README says, and run."""

from __future__ import annotations

import io
import re
import textwrap
from pathlib import Path

import pytest

import summaryguard.rules
from summaryguard.plugins.framework import FrameworkModel
from summaryguard.plugins.hookspecs import hookimpl
from summaryguard.plugins.manager import get_plugin_manager
from summaryguard.rules.engine import Analyzer, Vocabulary, all_rules
from summaryguard.rules.engine import registry

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _python_block(section: str, followed_by: str) -> str:
    """The python block under ``### section`` that ends right before the text ``followed_by``
    (the rule example holds fenced examples of its own inside its docstring)."""
    text = README.split(f"### {section}", 1)[1]
    match = re.search(r"^```python\n(.*?\n)^```\n\n" + re.escape(followed_by), text, flags=re.M | re.S)
    assert match, f"no python block under '### {section}' before {followed_by!r}"
    return match.group(1)


@pytest.fixture
def rule_in_rules_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The README's rule, saved as one more module of the rules folder."""
    source = _python_block("Add a rule", "A rule about")
    name = re.search(r'"""(SG\d{3}) ([a-z-]+)', source)
    assert name, "the example module names its code and name in its docstring"
    code, kebab = name.groups()
    folder = tmp_path / "more_rules"
    folder.mkdir()
    (folder / f"{code.lower()}_{kebab.replace('-', '_')}.py").write_text(source, encoding="utf-8")
    monkeypatch.setattr(summaryguard.rules, "__path__", [*summaryguard.rules.__path__, str(folder)])
    registry.builtin_rules.cache_clear()
    yield code
    registry.builtin_rules.cache_clear()


def test_a_rule_added_as_the_readme_says_is_found_and_reports(rule_in_rules_folder: str) -> None:
    code = rule_in_rules_folder
    rules = all_rules(use_plugins=True)
    [rule] = [r for r in rules if r.code == code]
    assert registry.rule_doc(rule).startswith(f"# {code} (")
    analyzer = Analyzer(Vocabulary.build(), rules)
    for example in rule.INVALID:
        findings, errors = analyzer.analyze([("example.py", example.code)])
        assert errors == []
        assert sorted((f.line, f.code) for f in findings) == example.expectations()
        mine = [f for f in findings if f.code == code]
        assert mine and all(f.trace and f.trace[-1].line == f.line for f in mine)
    for example in rule.VALID:
        assert analyzer.analyze([("example.py", example.code)]) == ([], [])


def test_the_rule_example_has_every_documentation_section(rule_in_rules_folder: str) -> None:
    [rule] = [r for r in all_rules(use_plugins=True) if r.code == rule_in_rules_folder]
    doc = registry.rule_doc(rule)
    for section in registry.DOC_SECTIONS:
        assert f"## {section}" in doc


def _readme_model() -> dict:
    namespace: dict = {}
    exec(compile(_python_block("Add a framework", "With it,"), "README.md", "exec"), namespace)  # noqa: S102
    return namespace["MODEL"]


TOY = textwrap.dedent(
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


def test_the_readme_framework_model_is_valid_and_decides_as_the_readme_says() -> None:
    model = FrameworkModel.from_mapping(_readme_model())
    analyzer = Analyzer(Vocabulary.build(frameworks=[model]), all_rules())
    findings, errors = analyzer.analyze([("toy.py", TOY)])
    assert errors == []
    assert [(f.line, f.code) for f in findings] == [(5, "SG103")]


def test_the_readme_framework_registered_through_a_plugin_reaches_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from summaryguard.rules.cli.runner import CheckOptions, run_check

    model = _readme_model()

    class Room:
        @hookimpl
        def summaryguard_frameworks(self):
            return [model]

    (tmp_path / "toy.py").write_text(TOY, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    manager = get_plugin_manager()
    room = Room()
    manager.register(room)
    out = io.StringIO()
    try:
        status = run_check(CheckOptions(paths=("toy.py",), cache=False, fmt="json"), out, io.StringIO(), tmp_path)
    finally:
        manager.unregister(room)
    assert status == 1
    assert '"code": "SG103"' in out.getvalue() and '"line": 5' in out.getvalue()
