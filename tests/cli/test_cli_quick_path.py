"""A run whose files the text pre-filter all dismisses imports neither libcst nor the engine
(SPEC §3.1.2), and reports exactly what the full path reports."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from summaryguard.plugins import hookimpl, register, unregister
from summaryguard.plugins.entry_points import may_declare
from summaryguard.plugins.manager import ENTRY_POINT_GROUP
from summaryguard.rules.cli import runner
from summaryguard.rules.cli.config import ConfigError
from summaryguard.rules.cli.runner import CheckOptions, run_check
from summaryguard.rules.engine.base import LintRule

PLAIN = "import os\n\n\ndef add(a, b):\n    return a + b\n"
RELEVANT = "def resume(checkpoint):\n    ctx = checkpoint.resume_context()\n    return ctx['summary']\n"

_PROBE = """
import json, sys
before = set(sys.modules)  # what the interpreter's start imported (a sandbox's .pth may import threading)
from summaryguard.rules.cli import main
status = main(sys.argv[1:])
print(json.dumps({"status": int(status), "libcst": "libcst" in sys.modules,
                  "engine": "summaryguard.rules.engine.analyzer" in sys.modules,
                  "guard": "summaryguard.guard" in sys.modules, "pool": "multiprocessing" in sys.modules,
                  "pathspec": "pathspec" in sys.modules, "metadata": "importlib.metadata" in sys.modules,
                  "formats": sorted(m.rsplit(".", 1)[1] for m in sys.modules
                                    if m.startswith("summaryguard.rules.cli.formats.")),
                  "comments": "summaryguard.rules.cli.suppression" in sys.modules,
                  "plugin_manager": sorted(m for m in ("pluggy", "inspect", "dataclasses") if m in sys.modules),
                  "stdlib": sorted(m for m in ("argparse", "hashlib", "logging", "threading", "tomllib", "traceback")
                                   if m in sys.modules and m not in before)}))
"""


def _probe(tmp_path: Path, *args: str) -> dict[str, object]:
    """Run the real command line in a fresh interpreter; what it printed and what it imported."""
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, *args], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    *report, last = proc.stdout.splitlines()
    return {**json.loads(last), "report": "\n".join(report), "stderr": proc.stderr}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.summaryguard]\n", encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("cache", [[], ["--no-cache"]], ids=["cache", "no-cache"])
def test_a_file_without_summary_vocabulary_imports_no_libcst(project: Path, cache: list[str]) -> None:
    (project / "plain.py").write_text(PLAIN, encoding="utf-8")
    result = _probe(project, "check", *cache, "plain.py")
    assert (result["status"], result["libcst"], result["engine"]) == (0, False, False)
    # Nor the runtime half (the built-in checkpoint plugins' models) or the worker pool; nor
    # pathspec (no pattern is configured, no folder walked) or, when no installed package
    # declares a plugin, importlib.metadata.
    assert (result["guard"], result["pool"], result["pathspec"]) == (False, False, False)
    assert result["metadata"] == may_declare(ENTRY_POINT_GROUP)
    # Only the format it writes (SARIF's rule descriptions are not a pre-commit run's cost).
    assert result["formats"] == ["text"]
    assert result["report"].startswith("All clear: no findings in 1 file")
    # Nor what only a finding, a violation or an internal error needs (SPEC §3.1.2: nothing
    # a run does not use), nor argparse (the plain command line, see
    # command.plain_check_options) or threading (the deep-stack worker starts with _thread
    # when nothing loaded it); the TOML parser, here, reads the project's pyproject.toml.
    assert result["stdlib"] == ["tomllib"]
    assert result["comments"] is False  # no suppression marker: the comment parser is not imported
    # Nor pluggy (the built-ins' vocabulary is asked of their modules, see
    # plugins.manager.builtin_answers), nor ``inspect`` or ``dataclasses`` (the run's records
    # are NamedTuples), unless an installed package declares a plugin.
    assert result["plugin_manager"] == (["inspect", "pluggy"] if may_declare(ENTRY_POINT_GROUP) else [])


def test_a_dismissed_file_outside_any_project_reads_no_toml(tmp_path: Path) -> None:
    folder = tmp_path / "loose"
    folder.mkdir()
    (folder / "plain.py").write_text(PLAIN, encoding="utf-8")
    result = _probe(folder, "check", "plain.py")
    assert (result["status"], result["stdlib"]) == (0, [])


def test_a_finding_is_still_fingerprinted(project: Path) -> None:
    """The other side of the two tests above: hashlib, left out of a clean run, loads for a finding."""
    (project / "agent.py").write_text(RELEVANT, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "summaryguard.rules.cli", "check", "--no-cache", "--format", "sarif", "agent.py"],
        cwd=project, capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode == 1, proc.stderr
    fingerprint = json.loads(proc.stdout)["runs"][0]["results"][0]["partialFingerprints"]
    assert all(len(value.partition(":")[0]) == 20 for value in fingerprint.values())


def test_a_finding_in_a_file_without_a_comment_marker_loads_no_comment_parser(project: Path) -> None:
    """Only a file that may hold a suppression pays for the comment parser's patterns."""
    (project / "agent.py").write_text(RELEVANT, encoding="utf-8")
    result = _probe(project, "check", "--no-cache", "agent.py")
    assert (result["status"], result["engine"], result["comments"]) == (1, True, False)
    (project / "agent.py").write_text(RELEVANT + "# noqa: SG101\n", encoding="utf-8")
    result = _probe(project, "check", "--no-cache", "agent.py")
    assert (result["status"], result["comments"]) == (1, True)


def test_a_configured_exclude_still_applies_to_named_files(project: Path) -> None:
    """pathspec loads when a pattern is compiled: an ``exclude`` is honoured as before."""
    (project / "pyproject.toml").write_text('[tool.summaryguard]\nexclude = ["generated"]\n', encoding="utf-8")
    (project / "generated").mkdir()
    (project / "generated" / "plain.py").write_text(PLAIN, encoding="utf-8")
    (project / "plain.py").write_text(PLAIN, encoding="utf-8")
    result = _probe(project, "check", "--no-cache", "--force-exclude", "generated/plain.py", "plain.py")
    assert (result["status"], result["pathspec"], result["libcst"]) == (0, True, False)
    assert result["report"].startswith("All clear: no findings in 1 file")


def test_an_unknown_code_in_a_suppression_is_reported_without_libcst(project: Path) -> None:
    (project / "plain.py").write_text("import os  # noqa: SG999\nimport re  # noqa: SG203\n", encoding="utf-8")
    result = _probe(project, "check", "--no-cache", "--format", "json", "plain.py")
    assert (result["status"], result["libcst"], result["formats"]) == (1, False, ["json_v1"])
    findings = json.loads(result["report"])["findings"]
    assert [(f["line"], f["code"]) for f in findings] == [(1, "SG001"), (2, "SG001")]
    assert "unknown rule code SG999" in findings[0]["message"]
    # SG203 is the LangGraph room's code, known from its file name: unused, not unknown.
    assert "unused suppression of SG203" in findings[1]["message"]


def test_an_unknown_code_in_the_configuration_is_still_exit_2_naming_it(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.summaryguard]\nselect = ["SG203", "SG777"]\n', encoding="utf-8")
    (project / "plain.py").write_text(PLAIN, encoding="utf-8")
    result = _probe(project, "check", "--no-cache", "plain.py")
    assert result["status"] == 2
    assert "'SG777'" in result["stderr"] and "SG203" in result["stderr"]


def test_a_relevant_file_and_a_file_cpython_rejects_load_the_engine(project: Path) -> None:
    (project / "relevant.py").write_text(RELEVANT, encoding="utf-8")
    relevant = _probe(project, "check", "--no-cache", "relevant.py")
    assert relevant["libcst"] is True
    # importlib.metadata (about 20 ms) is not imported unless an installed package declares
    # a plugin: not without the cache, and not for the cache's key (libcst's version file)
    assert relevant["metadata"] == may_declare(ENTRY_POINT_GROUP)
    # nor pluggy: the built-in rooms' rules are asked of their modules, as their vocabulary is
    assert ("pluggy" in relevant["plugin_manager"]) == may_declare(ENTRY_POINT_GROUP)
    assert _probe(project, "check", "relevant.py")["metadata"] == may_declare(ENTRY_POINT_GROUP)
    (project / "broken.py").write_text("x = (\n", encoding="utf-8")
    result = _probe(project, "check", "--no-cache", "broken.py")
    assert (result["status"], result["libcst"]) == (2, True)
    assert "broken.py:1: error: syntax error" in result["report"]


def test_a_run_the_cache_answers_imports_no_libcst_and_reports_the_same(project: Path) -> None:
    """The full path builds the analyzer only when a file needs it (rules/cli/lazy_analyzer.py):
    a run whose files are all in the result cache reads, digests and looks up, and imports
    neither libcst nor a rule module. An edit brings them back."""
    (project / "relevant.py").write_text(RELEVANT, encoding="utf-8")
    (project / "plain.py").write_text(PLAIN, encoding="utf-8")
    (project / "quiet.py").write_text("import os  # noqa: E401\n", encoding="utf-8")
    first = _probe(project, "check", "--format", "json", ".")
    assert (first["status"], first["libcst"]) == (1, True)
    warm = _probe(project, "check", "--format", "json", ".")
    assert (warm["status"], warm["libcst"], warm["engine"]) == (1, False, False)

    def findings(result: dict[str, object]) -> list[tuple[str, int, str]]:
        report = json.loads(str(result["report"]))
        return [(f["path"], f["line"], f["code"]) for f in report["findings"]]

    assert findings(warm) == findings(first) and {code for _, _, code in findings(warm)} >= {"SG101"}
    # SARIF describes the selected rules: their classes load, but no analyzer is built
    sarif = _probe(project, "check", "--format", "sarif", ".")
    assert (sarif["libcst"], sarif["engine"]) == (True, False)
    assert {rule["id"] for rule in json.loads(str(sarif["report"]))["runs"][0]["tool"]["driver"]["rules"]} >= {
        "SG001", "SG101", "SG304"
    }
    # a new file the pre-filter dismisses and CPython compiles: screened without the engine
    (project / "added.py").write_text("X = 1\n", encoding="utf-8")
    added = _probe(project, "check", "--format", "json", ".")
    assert (added["libcst"], added["engine"], findings(added)) == (False, False, findings(first))
    (project / "relevant.py").write_text(RELEVANT + "# edited\n", encoding="utf-8")
    edited = _probe(project, "check", "--format", "json", ".")
    assert (edited["libcst"], edited["engine"]) == (True, True)
    assert findings(edited) == findings(first)


# -- the quick path reports what the full path reports ---------------------------------------

_LINES = st.sampled_from(
    [
        "import os",
        "x = 1",
        "def f(a):\n    return a",
        "y = f(2)  # noqa: SG201",
        "z = 3  # summaryguard: ignore[SG999] reason: typo",
        "w = 4  # noqa: E501, SG1",
        "# a comment about tools",
        "s = 'summary'",
        "x = (",
        "type Alias = int",  # Python 3.12 grammar: CPython 3.11 rejects it, libcst decides
        "if x:\n\tpass",
        "class C:\n    pass",
    ]
)
_FILES = st.lists(st.lists(_LINES, max_size=5).map(lambda lines: "\n".join(lines) + "\n"), min_size=1, max_size=3)


def _report(root: Path, files: list[str], quick_max: int, fmt: str, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    monkeypatch.setattr(runner, "QUICK_MAX_FILES", quick_max)
    out, err = io.StringIO(), io.StringIO()
    status = run_check(CheckOptions(paths=tuple(files), fmt=fmt, cache=False), out, err, cwd=root)
    text = out.getvalue()
    if fmt == "json":
        data = json.loads(text)
        data.pop("seconds", None)
        data.get("stats", {}).pop("seconds", None)
        text = json.dumps(data, sort_keys=True)
    else:
        text = text.rsplit("(", 1)[0]  # the closing "(0.12s)."
    return int(status), text, err.getvalue()


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=_FILES, fmt=st.sampled_from(["json", "text"]))
def test_the_quick_path_reports_what_the_full_path_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, texts: list[str], fmt: str
) -> None:
    root = tmp_path / "p"
    root.mkdir(exist_ok=True)
    (root / "pyproject.toml").write_text("[tool.summaryguard]\n", encoding="utf-8")
    names = []
    for number, text in enumerate(texts):
        (root / f"m{number}.py").write_text(text, encoding="utf-8")
        names.append(str(root / f"m{number}.py"))
    assert _report(root, names, 64, fmt, monkeypatch) == _report(root, names, 0, fmt, monkeypatch)


# -- a plugin rule from outside summaryguard -------------------------------------------------


class _BreakpointRule(LintRule):
    """## What it does\nFlags breakpoint().\n\n## Why is this bad?\nx\n\n## Example\nx\n\n## Use instead\nx\n\n## Known problems\nx"""

    code = "XQ001"
    name = "breakpoint-call"
    USES_MODEL = False
    PREFILTER = r"breakpoint\("

    def visit_Call(self, node) -> None:  # type: ignore[no-untyped-def]
        if getattr(node.func, "value", None) == "breakpoint":
            self.report(node, "breakpoint() left in")


class _Plugin:
    @hookimpl
    def summaryguard_lint_rules(self) -> list[type]:
        return [_BreakpointRule]


def test_a_third_party_rule_is_known_and_widens_the_prefilter(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its code and its PREFILTER are known from its class only: the run imports it and takes the full path."""
    monkeypatch.chdir(project)
    (project / "a.py").write_text("x = 1\nbreakpoint()\n", encoding="utf-8")
    register(_Plugin(), name="quick-path-rules")
    try:
        out, err = io.StringIO(), io.StringIO()
        status = run_check(CheckOptions(paths=("a.py",), fmt="json", cache=False), out, err, cwd=project)
        assert [f["code"] for f in json.loads(out.getvalue())["findings"]] == ["XQ001"]
        assert int(status) == 1
        (project / "pyproject.toml").write_text('[tool.summaryguard]\nselect = ["XQ0"]\n', encoding="utf-8")
        assert int(run_check(CheckOptions(paths=("a.py",), cache=False), io.StringIO(), err, cwd=project)) == 1
    finally:
        unregister(name="quick-path-rules")
    with pytest.raises(ConfigError, match="XQ0"):
        run_check(CheckOptions(paths=("a.py",), cache=False), io.StringIO(), io.StringIO(), cwd=project)


def test_unreadable_files_are_reported_alike_on_both_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.summaryguard]\n", encoding="utf-8")
    (tmp_path / "latin.py").write_bytes(b"x = '\xe9'\n")  # not UTF-8, no coding cookie
    (tmp_path / "plain.py").write_text(PLAIN, encoding="utf-8")
    names = [str(tmp_path / "latin.py"), str(tmp_path / "missing.py"), str(tmp_path / "plain.py")]
    for fmt in ("json", "text"):
        quick = _report(tmp_path, names, 64, fmt, monkeypatch)
        assert quick[0] == 2
        assert quick == _report(tmp_path, names, 0, fmt, monkeypatch)
