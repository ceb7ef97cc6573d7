"""``--format sarif``: valid SARIF 2.1.0 (the official schema), rules from their docs, stable fingerprints.

The schema is not copied into this repository: it is read from
``../shared/schemas/sarif-schema-2.1.0.json`` beside the checkout, or from
``$SUMMARYGUARD_SARIF_SCHEMA``; where neither exists the validating tests skip
and say so (CI always provides it).
"""

from __future__ import annotations

import io
import json
import os
from email.message import Message
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from summaryguard.rules.cli import main
from summaryguard.rules.engine import all_rules, rule_doc
from summaryguard.rules.engine.findings import FileError, Finding
from summaryguard.rules.cli.exitcodes import ExitCode
from summaryguard.rules.cli.fingerprint import FINGERPRINT_KEY
from summaryguard.rules.cli.catalog import section_text
from summaryguard.rules.cli.formats.sarif import (
    DEFAULT_INFORMATION_URI,
    artifact_location,
    information_uri,
    report_to_sarif,
    write_sarif,
)
from summaryguard.rules.cli.report import ReadError, Report

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_ENV = "SUMMARYGUARD_SARIF_SCHEMA"
DEFAULT_SCHEMA = ROOT.parent / "shared" / "schemas" / "sarif-schema-2.1.0.json"

AGENT = """\
def next_turn(checkpoint):
    ctx = checkpoint.resume_context()
    handle = ctx.get("handle") or search("latest")
    return handle


from summaryguard.guard import tool_guard  # noqa: E402  (below, so the lines above keep their numbers)


@tool_guard
def search(query):
    return query
"""


def _schema_path() -> Path:
    return Path(os.environ.get(SCHEMA_ENV) or DEFAULT_SCHEMA)


@pytest.fixture(scope="module")
def sarif_validator() -> Any:
    path = _schema_path()
    if not path.is_file():
        pytest.skip(
            f"the official SARIF 2.1.0 schema is not at {path} (set {SCHEMA_ENV} to its path; CI provides it)"
        )
    schema = json.loads(path.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def validate(validator: Any, document: dict[str, Any]) -> None:
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.summaryguard]\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run_sarif(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    status = main(["check", "--format", "sarif", *argv])
    return status, json.loads(capsys.readouterr().out)


def test_a_real_run_is_valid_sarif_that_code_scanning_reads(
    project: Path, capsys: pytest.CaptureFixture[str], sarif_validator: Any
) -> None:
    (project / "pkg").mkdir()
    (project / "pkg" / "agent one.py").write_text(AGENT, encoding="utf-8")
    (project / "broken.py").write_text("def resume_from_summary(checkpoint:\n    pass\n", encoding="utf-8")
    status, log = run_sarif(capsys)
    assert status == ExitCode.ERROR  # the unparsable file wins over findings
    validate(sarif_validator, log)

    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "summaryguard"
    assert driver["version"] and driver["informationUri"].startswith("https://")
    rules = driver["rules"]
    assert [r["id"] for r in rules] == sorted(r.code for r in all_rules())

    results = run["results"]
    assert sorted((r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in results) == [
        ("SG101", 2),
        ("SG102", 2),
        ("SG103", 2),
        ("SG201", 3),
    ]
    for result in results:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] == "error" and result["message"]["text"]
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"] == {"uri": "pkg/agent%20one.py", "uriBaseId": "%SRCROOT%"}
        region = location["region"]
        assert region["startColumn"] >= 1 and region["endLine"] >= region["startLine"]
        assert set(result["partialFingerprints"]) == {FINGERPRINT_KEY}
    rederive = next(r for r in results if r["ruleId"] == "SG201")
    assert rederive["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 3,
        "startColumn": 35,
        "endLine": 3,
        "endColumn": 51,
    }
    assert len({r["partialFingerprints"][FINGERPRINT_KEY] for r in results}) == len(results)

    (invocation,) = run["invocations"]
    assert invocation["executionSuccessful"] is False
    (note,) = invocation["toolExecutionNotifications"]
    assert note["level"] == "error" and "syntax error" in note["message"]["text"]
    location = note["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "broken.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"]["startLine"] in (1, 2)  # where exactly is the parser's business
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == project.resolve().as_uri() + "/"
    assert run["columnKind"] == "unicodeCodePoints"


def test_rules_carry_their_own_documentation(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "ok.py").write_text("x = 1\n", encoding="utf-8")
    status, log = run_sarif(capsys, "--select", "SG201,SG001")
    assert status == ExitCode.OK
    run = log["runs"][0]
    assert run["results"] == [] and run["invocations"][0]["executionSuccessful"] is True
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert sorted(rules) == ["SG001", "SG201"]  # only what the run checked
    for code, rule in rules.items():
        cls = next(r for r in all_rules() if r.code == code)
        assert rule["name"] == cls.name
        assert rule["help"]["markdown"] == rule_doc(cls) == rule["help"]["text"]
        assert rule["shortDescription"]["text"].startswith("Flags ")
        assert rule["fullDescription"]["text"].startswith(rule["shortDescription"]["text"])
        assert "\n" not in rule["fullDescription"]["text"]


def test_fingerprints_survive_lines_moving(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    agent = project / "agent.py"
    agent.write_text(AGENT, encoding="utf-8")

    def prints() -> dict[str, str]:
        results = run_sarif(capsys)[1]["runs"][0]["results"]
        return {r["ruleId"]: r["partialFingerprints"][FINGERPRINT_KEY] for r in results}

    before = prints()
    agent.write_text('"""Moved down, re-indented."""\nimport os\n\n\n' + AGENT.replace("    ", "        "), encoding="utf-8")
    assert prints() == before
    agent.write_text(AGENT.replace('"latest"', '"newest"'), encoding="utf-8")
    after_edit = prints()
    assert after_edit["SG201"] != before["SG201"]  # the reported line itself changed: a new finding
    assert after_edit["SG101"] == before["SG101"]


def test_paths_outside_the_current_folder_are_absolute_uris(tmp_path: Path) -> None:
    inside = tmp_path / "repo"
    assert artifact_location(str(inside / "a b.py"), str(inside)) == {"uri": "a%20b.py", "uriBaseId": "%SRCROOT%"}
    assert artifact_location(str(tmp_path / "other.py"), str(inside)) == {"uri": (tmp_path / "other.py").as_uri()}


def test_report_without_rules_or_fingerprints_is_still_valid(sarif_validator: Any) -> None:
    """Formatters accept any Report: a finding whose rule is not listed has no ruleIndex."""
    finding = Finding("a.py", 1, 1, 1, 2, "XP001", "plugin-rule", "50% done\nnext")
    report = Report.build([finding], [ReadError("gone.py", None, "no such file"), FileError("b.py", 0, "odd")], 2, 0.1)
    log = report_to_sarif(report, cwd=os.getcwd())
    validate(sarif_validator, log)
    (result,) = log["runs"][0]["results"]
    assert "ruleIndex" not in result and "partialFingerprints" not in result
    notes = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert [n["locations"][0]["physicalLocation"].get("region") for n in notes] == [None, None]
    stream = io.StringIO()
    write_sarif(report, stream)
    assert json.loads(stream.getvalue())["runs"][0]["results"][0]["message"]["text"] == "50% done\nnext"


def _metadata(**fields: list[str]) -> Message:
    meta = Message()
    for key, values in fields.items():
        for value in values:
            meta[key.replace("_", "-")] = value
    return meta


def test_information_uri_from_core_metadata() -> None:
    assert information_uri(_metadata()) == DEFAULT_INFORMATION_URI
    assert information_uri(_metadata(Home_page=["https://example.org/home"])) == "https://example.org/home"
    urls = ["Documentation, https://example.org/docs", "Source, https://example.org/src", "Homepage, "]
    assert information_uri(_metadata(Project_URL=urls, Home_page=["https://x.invalid"])) == "https://example.org/src"


def test_section_text() -> None:
    class Rule:
        """## What it does
        Flags ``x``.

        Twice.
        ## Known problems
        None known.
        """

    assert section_text(Rule, "What it does") == "Flags `x`. Twice."
    assert section_text(Rule, "Known problems") == "None known."
    assert section_text(Rule, "Example") == ""
