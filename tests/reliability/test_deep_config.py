"""B16: deeply nested TOML in pyproject.toml and deeply nested baseline JSON are
configuration errors naming the file (exit 2), never "internal error: RecursionError".

Property-based: any nesting of arrays and inline tables (or JSON arrays and objects),
at any depth up to 20,000, wherever it sits in the file, gives a clean result.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from summaryguard.rules.cli.baseline import BaselineError, load_baseline
from summaryguard.rules.cli import main
from summaryguard.rules.cli.config import ConfigError, load_config

#: (opening, closing) of one level of nesting.
TOML_LEVELS = {"array": ("[", "]"), "table": ("{a = ", "}"), "array-of-tables": ("[{b = ", "}]")}
JSON_LEVELS = {"array": ("[", "]"), "object": ('{"a": ', "}")}

# Where the nested value sits: a key of ours, another tool's table, a per-file-ignores value.
TOML_PLACES = [
    "[tool.summaryguard]\nselect = {value}\n",
    "[tool.summaryguard]\nper-file-ignores = {{\"tests/*\" = {value}}}\n",
    "[tool.other]\nsetting = {value}\n\n[tool.summaryguard]\n",
    "[project]\nname = \"x\"\nclassifiers = {value}\n\n[tool.summaryguard]\n",
]


def nested(levels: list[tuple[str, str]], leaf: str) -> str:
    return "".join(o for o, _ in levels) + leaf + "".join(c for _, c in reversed(levels))


def shapes(kinds: dict[str, tuple[str, str]]) -> st.SearchStrategy[list[tuple[str, str]]]:
    level = st.sampled_from(sorted(kinds)).map(kinds.__getitem__)
    depth = st.one_of(st.integers(1, 50), st.integers(200, 3_000), st.just(20_000))
    pattern = st.lists(level, min_size=1, max_size=6)  # repeated to the depth: mixed shapes at any depth
    return st.tuples(depth, pattern).map(lambda drawn: (drawn[1] * (drawn[0] // len(drawn[1]) + 1))[: drawn[0]])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(levels=shapes(TOML_LEVELS), place=st.sampled_from(TOML_PLACES), leaf=st.sampled_from(['"SG1"', "1", "[]"]))
def test_nested_toml_is_a_configuration_error_or_fine(
    tmp_path: Path, levels: list[tuple[str, str]], place: str, leaf: str
) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text(place.format(value=nested(levels, leaf)))
    try:
        load_config(None, tmp_path)
    except ConfigError as exc:
        assert exc.path == str(path)
        assert "Recursion" not in exc.message


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(levels=shapes(JSON_LEVELS), inside=st.booleans(), leaf=st.sampled_from(["1", '"x"', "null", "[]"]))
def test_nested_baseline_json_is_a_baseline_error_or_fine(
    tmp_path: Path, levels: list[tuple[str, str]], inside: bool, leaf: str
) -> None:
    path = tmp_path / "baseline.json"
    value = nested(levels, leaf)
    path.write_text(json.dumps({"version": 1, "findings": "@"}).replace('"@"', value) if inside else value)
    try:
        load_baseline(path)
    except BaselineError as exc:
        assert exc.path == str(path)
        assert "Recursion" not in exc.message


@pytest.mark.parametrize(
    "config, baseline",
    [
        ("[tool.summaryguard]\nselect = " + "[" * 3000 + "]" * 3000 + "\n", None),
        ("[tool.summaryguard]\nx = " + "{a = " * 10_000 + "1" + "}" * 10_000 + "\n", None),
        ("[tool.summaryguard]\n", "[" * 100_000 + "]" * 100_000),
    ],
    ids=["select-arrays-3000", "inline-tables-10000", "baseline-arrays-100000"],
)
def test_the_b16_repros_exit_2_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], config: str, baseline: str | None
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "good.py").write_text("x = 1\n")
    (tmp_path / "pyproject.toml").write_text(config)
    argv = ["check", "--no-cache", "good.py"]
    if baseline is not None:
        (tmp_path / "b.json").write_text(baseline)
        argv[2:2] = ["--baseline", "b.json"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "internal error" not in err and "Recursion" not in err
    assert ("b.json: error:" if baseline else "pyproject.toml: error:") in err and "nested too deeply" in err
