"""The rule set itself: unique codes and names, complete documentation, plugin rules."""

from __future__ import annotations

import re

import libcst as cst
import pytest

from summaryguard.plugins import hookimpl, register, unregister
from summaryguard.rules.engine import DOC_SECTIONS, Analyzer, LintRule, Valid, Vocabulary, all_rules, rule_doc
from summaryguard.rules.engine.registry import builtin_rules

RULES = all_rules()


def test_builtin_rules_are_found_and_sorted() -> None:
    codes = [r.code for r in builtin_rules()]
    assert {"SG101", "SG102", "SG103", "SG104", "SG201", "SG202"} <= set(codes)
    assert codes == sorted(codes)


def test_codes_and_names_are_unique_and_well_formed() -> None:
    codes = [r.code for r in RULES]
    names = [r.name for r in RULES]
    assert len(codes) == len(set(codes))
    assert len(names) == len(set(names))
    for rule in RULES:
        assert re.fullmatch(r"[A-Z]+\d{3}", rule.code)
        assert re.fullmatch(r"[a-z]+(-[a-z]+)+", rule.name)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_documentation_has_every_section(rule: type[LintRule]) -> None:
    doc = rule_doc(rule)
    assert doc.startswith(f"# {rule.code} ({rule.name})")
    positions = [doc.find(f"\n## {section}\n") for section in DOC_SECTIONS]  # headings start a line
    assert all(p >= 0 for p in positions), doc
    assert positions == sorted(positions)
    assert rule.VALID and rule.INVALID


class _PluginRule(LintRule):
    """## What it does
    Flags ``breakpoint()``.
    ## Why is this bad?
    It stops an agent. ## Example ## Use instead ## Known problems
    """

    code = "XP001"
    name = "plugin-breakpoint"
    USES_MODEL = False
    PREFILTER = r"breakpoint\("
    VALID = [Valid("x = 1\n")]

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "breakpoint":
            self.report(node, "breakpoint() left in")


class _Plugin:
    @hookimpl
    def summaryguard_lint_rules(self):
        return [_PluginRule, "not a rule"]


def test_plugin_rules_are_included_and_run() -> None:
    plugin = _Plugin()
    register(plugin, name="test-rules")
    try:
        rules = all_rules()
        assert rules[-1] is _PluginRule
        assert _PluginRule not in all_rules(use_plugins=False)
        analyzer = Analyzer(Vocabulary.build(), rules)
        assert analyzer.might_matter("breakpoint()\n")
        findings, errors = analyzer.analyze([("a.py", "x = 1\nbreakpoint()\n")])
        assert errors == []
        assert [(f.code, f.line, f.column, f.end_column) for f in findings] == [("XP001", 2, 1, 13)]
    finally:
        unregister(name="test-rules")


def test_known_codes_come_from_file_names_and_match_the_rule_classes() -> None:
    """The codes a run knows without importing a rule module are exactly the classes' codes."""
    from summaryguard.rules.engine.registry import builtin_codes, known_codes

    known = known_codes()
    assert known.from_names
    assert known.codes == {rule.code for rule in all_rules()}
    assert builtin_codes() == {rule.code for rule in builtin_rules()}
    assert known_codes(use_plugins=False).codes == builtin_codes()


def test_no_builtin_or_room_rule_widens_the_prefilter() -> None:
    """The quick path of ``check`` (see rules/cli/runner.py) builds the pre-filter without the
    rule classes; a rule shipped with summaryguard that needs PREFILTER must change that first."""
    assert [rule.code for rule in all_rules() if rule.PREFILTER] == []


def test_building_the_vocabulary_and_the_prefilter_imports_no_libcst() -> None:
    import json
    import subprocess
    import sys

    script = (
        "import json, sys\n"
        "from summaryguard.rules.engine.vocabulary import Vocabulary\n"
        "from summaryguard.rules.engine.prefilter import Prefilter\n"
        "from summaryguard.rules.engine.registry import known_codes\n"
        "codes = known_codes().codes\n"
        "Prefilter(Vocabulary.build()).might_matter('x = 1')\n"
        "import summaryguard.rules.engine as engine\n"
        "engine.Vocabulary, engine.CATEGORIES, engine.DOC_SECTIONS\n"
        "print(json.dumps(['libcst' in sys.modules, sorted(codes)]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    loaded, codes = json.loads(proc.stdout)
    assert loaded is False
    assert codes == sorted(rule.code for rule in RULES)


def test_codes_are_read_from_a_folder_as_pkgutil_lists_its_modules(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The codes from file names without pkgutil (which imports inspect): modules of every
    suffix and packages count, other files and folders do not."""
    import pkgutil

    from summaryguard.rules.engine.registry import _codes_in, code_of_module

    (tmp_path / "sg901_plain.py").write_text("")
    (tmp_path / "sg902_compiled.pyc").write_bytes(b"")
    (tmp_path / "sg906_cached.cpython-311.pyc").write_bytes(b"")  # a cache file's name: no module
    (tmp_path / "sg903_package").mkdir()
    (tmp_path / "sg903_package" / "__init__.py").write_text("")
    (tmp_path / "sg904_folder").mkdir()  # no __init__: no module
    (tmp_path / "sg905_notes.txt").write_text("")
    (tmp_path / "helpers.py").write_text("")
    assert _codes_in(str(tmp_path)) == {"SG901", "SG902", "SG903"}
    listed = {code for info in pkgutil.iter_modules([str(tmp_path)]) if (code := code_of_module(info.name))}
    assert listed == _codes_in(str(tmp_path))
    assert _codes_in(str(tmp_path / "missing")) == frozenset()
