"""Validators imported from modules that are not being checked (rules/dependencies.py).

A pre-commit hook passes only the staged files: ``summaryguard check app/agent.py``
must still see the validator that ``app/agent.py`` imports from ``app/recovery.py``
(SPEC §3.1: found "also across modules of the same project"), without reporting
anything in ``app/recovery.py``. And module names come from the packages on
disk, so the folder a run starts from changes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from summaryguard.rules.cli.batch import check_files
from summaryguard.rules.cli.cache import CACHE_DIR_ENV, CACHE_FOLDER, ResultCache
from summaryguard.rules.cli import main
from summaryguard.rules.engine import Analyzer, Vocabulary, all_rules

VALIDATOR = """\
from summaryguard.guard import SummaryReconciliationError


def verify(checkpoint, deps):
    summary = checkpoint.summary
    if summary is None or summary.generation != checkpoint.summary_generation:
        raise SummaryReconciliationError("generation")
    if summary.partial:
        raise SummaryReconciliationError("partial")
    for dep in deps:
        if dep not in summary.verbatim_refs:
            raise SummaryReconciliationError("missing")
"""
AGENT = """\
{import_line}


def recover(store, agent, deps):
    checkpoint = store.load()
    {call}(checkpoint, deps)
    return agent.resume(checkpoint.summary, checkpoint.turn)
"""
IMPORTS = {
    "absolute": ("from app.recovery import verify", "verify"),
    "relative": ("from .recovery import verify", "verify"),
    "module": ("from app import recovery", "recovery.verify"),
    "aliased": ("import app.recovery as rec", "rec.verify"),
}
#: Same module, same function, but it no longer checks anything.
NOT_A_VALIDATOR = VALIDATOR.split("    summary = ")[0] + "    return checkpoint.summary\n"
UNCHECKED = {"SG101", "SG102", "SG103"}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    (root / "app").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.summaryguard]\n", encoding="utf-8")
    (root / "app" / "__init__.py").write_text("")
    (root / "app" / "recovery.py").write_text(VALIDATOR)
    monkeypatch.chdir(root)
    monkeypatch.delenv(CACHE_DIR_ENV, raising=False)
    return root


def write_agent(root: Path, style: str = "absolute") -> Path:
    import_line, call = IMPORTS[style]
    agent = root / "app" / "agent.py"
    agent.write_text(AGENT.format(import_line=import_line, call=call))
    return agent


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    status = main(["check", "--format", "json", *argv])
    report = json.loads(capsys.readouterr().out)
    report["stats"].pop("seconds")
    return status, report


def codes(report: dict) -> set[tuple[str, str]]:  # type: ignore[type-arg]
    return {(Path(f["path"]).name, f["code"]) for f in report["findings"]}


@pytest.mark.parametrize("style", sorted(IMPORTS))
def test_checking_only_the_importer_sees_the_validator(
    project: Path, capsys: pytest.CaptureFixture[str], style: str
) -> None:
    write_agent(project, style)
    status, report = run(capsys, "--no-cache", "app/agent.py")
    assert (status, report["findings"], report["errors"]) == (0, [], [])
    assert report["stats"]["files"] == 1
    assert run(capsys, "--no-cache", ".")[0] == 0


RE_EXPORTS = {
    # the package's public name for a function of one of its modules
    "package-absolute": {"app/__init__.py": "from app.recovery import verify\n"},
    "package-relative": {"app/__init__.py": "from .recovery import verify\n"},
    "aliased": {"app/__init__.py": "from .recovery import verify as check_before_resume\n"},
    # two hops: the package re-exports a subpackage's name, which re-exports the function
    "two-hops": {"app/__init__.py": "from .core import verify\n", "app/core/__init__.py": "from app.recovery import verify\n"},
}


@pytest.mark.parametrize("shape", sorted(RE_EXPORTS))
@pytest.mark.parametrize("validator", ["checks-all", "checks-less"])
def test_a_validator_re_exported_by_its_package_is_followed(
    project: Path, capsys: pytest.CaptureFixture[str], shape: str, validator: str
) -> None:
    # `from app import verify` where app/__init__.py re-exports it from app/recovery.py:
    # the call resolves to the function the package exports, whatever checks it does.
    for name, text in RE_EXPORTS[shape].items():
        (project / name).parent.mkdir(exist_ok=True)
        (project / name).write_text(text)
    if validator == "checks-less":
        (project / "app" / "recovery.py").write_text(VALIDATOR.split("    for dep in deps:")[0])
    call = "check_before_resume" if shape == "aliased" else "verify"
    (project / "user.py").write_text(AGENT.format(import_line=f"from app import {call}", call=call))
    status, report = run(capsys, "--no-cache", "user.py")
    assert report["errors"] == []
    expected = set() if validator == "checks-all" else {("user.py", "SG103")}
    assert codes(report) == expected
    assert status == (0 if not expected else 1)


def test_nothing_is_reported_in_the_imported_module(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_agent(project)
    (project / "app" / "recovery.py").write_text(
        VALIDATOR + "\n\ndef careless(checkpoint, agent):\n    return agent.resume(checkpoint.summary)\n"
    )
    checked_alone = run(capsys, "--no-cache", "app/agent.py")
    assert checked_alone[0] == 0 and checked_alone[1]["findings"] == []
    everything = run(capsys, "--no-cache", ".")
    assert codes(everything[1]) == {("recovery.py", code) for code in UNCHECKED}


def test_a_validator_that_checks_less_still_leaves_findings(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_agent(project)
    recovery = project / "app" / "recovery.py"
    recovery.write_text(VALIDATOR.split("    for dep in deps:")[0])
    status, report = run(capsys, "--no-cache", "app/agent.py")
    assert status == 1 and codes(report) == {("agent.py", "SG103")}


@pytest.mark.parametrize("cache", [False, True])
def test_the_folder_a_run_starts_from_changes_nothing(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, cache: bool
) -> None:
    write_agent(project)
    (project / "app" / "partial.py").write_text(VALIDATOR.split("    for dep in deps:")[0].replace("def verify", "def vet"))
    (project / "app" / "other.py").write_text(
        AGENT.format(import_line="from app.partial import vet", call="vet").replace("recover", "other")
    )
    flags = () if cache else ("--no-cache",)
    from_parent = run(capsys, *flags, "app")
    assert codes(from_parent[1]) == {("other.py", "SG103")}
    monkeypatch.chdir(project / "app")
    assert codes(run(capsys, *flags, ".")[1]) == codes(from_parent[1])
    assert codes(run(capsys, *flags, "agent.py", "other.py")[1]) == codes(from_parent[1])
    assert codes(run(capsys, *flags, "other.py")[1]) == {("other.py", "SG103")}
    assert run(capsys, *flags, "agent.py")[0] == 0


@pytest.mark.parametrize(
    "broken",
    [
        "def verify(checkpoint, deps:\n    summary = checkpoint.summary\n",  # syntax error
        "summary = checkpoint.summary\n" + "(" * 300 + ")" * 300 + "\n",  # too deep
        b"# summary generation\nx = '\xff'\n",  # undecodable
        "# -*- coding: no-such-codec -*-\nsummary = 1\n",  # bad coding cookie
        "",  # empty
        None,  # a folder where the module should be
    ],
    ids=["syntax", "deep", "undecodable", "cookie", "empty", "folder"],
)
def test_a_broken_imported_module_is_skipped_silently(
    project: Path, capsys: pytest.CaptureFixture[str], broken: str | bytes | None
) -> None:
    recovery = project / "app" / "recovery.py"
    recovery.unlink()
    if broken is None:
        recovery.mkdir()
    elif isinstance(broken, bytes):
        recovery.write_bytes(broken)
    else:
        recovery.write_text(broken)
    write_agent(project)
    status, report = run(capsys, "--no-cache", "app/agent.py")
    assert report["errors"] == []
    assert status == 1 and codes(report) == {("agent.py", code) for code in UNCHECKED}


@pytest.mark.parametrize(
    "import_line",
    [
        "from app.nowhere import verify",  # no such module
        "from ..far.away import verify",  # relative, to a module that is not there
        "from os.path import verify",  # the standard library is never looked up
        "import verify",  # a name that is not a module of the project
    ],
)
def test_an_unresolvable_import_changes_nothing(
    project: Path, capsys: pytest.CaptureFixture[str], import_line: str
) -> None:
    (project / "app" / "agent.py").write_text(AGENT.format(import_line=import_line, call="verify"))
    status, report = run(capsys, "--no-cache", "app/agent.py")
    assert report["errors"] == []
    assert status == 1 and codes(report) == {("agent.py", code) for code in UNCHECKED}


def test_imports_are_followed_to_the_validators_helpers(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "app" / "checks.py").write_text(VALIDATOR)
    (project / "app" / "recovery.py").write_text(
        "from app.checks import verify as _verify\n\n\ndef verify(checkpoint, deps):\n    _verify(checkpoint, deps)\n"
        "    return checkpoint.summary\n"
    )
    write_agent(project)
    assert run(capsys, "--no-cache", "app/agent.py")[0] == 0


def test_a_changed_imported_validator_invalidates_the_cache(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_agent(project)
    first = run(capsys, "app/agent.py")
    assert first[0] == 0 and first == run(capsys, "--no-cache", "app/agent.py")
    assert run(capsys, "app/agent.py") == first  # from the cache
    recovery = project / "app" / "recovery.py"
    recovery.write_text(NOT_A_VALIDATOR)
    status, report = run(capsys, "app/agent.py")
    assert status == 1 and codes(report) == {("agent.py", code) for code in UNCHECKED}
    recovery.unlink()  # gone: nothing validates either
    assert run(capsys, "app/agent.py")[0] == 1
    recovery.write_text(VALIDATOR)
    assert run(capsys, "app/agent.py")[0] == 0


def test_the_context_is_cached_and_found_again(project: Path) -> None:
    agent = write_agent(project)
    analyzer = Analyzer(Vocabulary.build(), all_rules())
    cold = check_files([str(agent)], analyzer, ResultCache(project / CACHE_FOLDER, "s"), jobs=1, root=project)
    assert cold.context == [str(project / "app" / "recovery.py")]
    assert cold.analyzed == 1 and not cold.cached_analysis and cold.findings == []
    warm = check_files([str(agent)], analyzer, ResultCache(project / CACHE_FOLDER, "s"), jobs=1, root=project)
    assert warm.cached_analysis and warm.screened == 0 and warm.context == cold.context
    recovery = project / "app" / "recovery.py"
    recovery.write_text(NOT_A_VALIDATOR)
    changed = check_files([str(agent)], analyzer, ResultCache(project / CACHE_FOLDER, "s"), jobs=1, root=project)
    assert not changed.cached_analysis and {f.code for f in changed.findings} == UNCHECKED
    recovery.write_text(VALIDATOR)
    (project / "app" / "__init__.py").unlink()  # app.recovery is now a namespace package's module
    renamed = check_files([str(agent)], analyzer, ResultCache(project / CACHE_FOLDER, "s"), jobs=1, root=project)
    assert not renamed.cached_analysis and renamed.findings == []
