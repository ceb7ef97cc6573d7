"""[tool.summaryguard]: found, read, validated; every error names the file, key and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from summaryguard.rules.cli.config import ConfigError, check_codes, load_config, read_config_file
from summaryguard.rules.cli.selection import ALL

KNOWN = {"SG101", "SG102", "SG201", "SG202"}


def write(folder: Path, text: str, name: str = "pyproject.toml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_without_any_file(tmp_path: Path) -> None:
    config = load_config(None, tmp_path)
    assert config.path is None and config.root == tmp_path
    assert config.select == (ALL,) and config.ignore == () and config.exclude_spec is None
    assert config.display_path == "(defaults)"
    assert config.key_line("select") is None


def test_full_table(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
[project]
name = "x"

[tool.summaryguard]
select = ["sg1", "SG201"]
ignore = ["SG102"]
exclude = ["build", "/migrations", "!build/keep.py"]
per-file-ignores = {"tests/*" = ["SG201"], "scripts/x.py" = ["SG1"]}
tool-calls = ["myapp.tools.*", "*.invoke"]
resume-calls = ["myapp.agent.rehydrate"]
validators = ["myapp.recovery.verify", "_private.check_é"]
""",
    )
    config = load_config(None, tmp_path)
    assert config.path == path and config.root == tmp_path.resolve()
    assert config.select == ("SG1", "SG201") and config.ignore == ("SG102",)
    assert config.exclude == ("build", "/migrations", "!build/keep.py")
    assert config.exclude_spec is not None
    assert config.exclude_spec.match_file("a/build/x.py")
    assert not config.exclude_spec.match_file("build/keep.py")
    assert [(p.pattern, p.codes) for p in config.per_file_ignores] == [
        ("tests/*", ("SG201",)),
        ("scripts/x.py", ("SG1",)),
    ]
    assert config.tool_calls == ("myapp.tools.*", "*.invoke")
    assert config.resume_calls == ("myapp.agent.rehydrate",)
    assert config.validators == ("myapp.recovery.verify", "_private.check_é")
    check_codes(config, KNOWN)  # every code is known: no error
    assert config.key_line("ignore") == 7
    assert config.key_line("tests/*") == 9


def test_nearest_pyproject_with_the_table_wins(tmp_path: Path) -> None:
    write(tmp_path, '[tool.summaryguard]\nselect = ["SG2"]\n')
    inner = tmp_path / "sub" / "pkg"
    inner.mkdir(parents=True)
    write(tmp_path / "sub", '[project]\nname = "sub"\n')  # no table: passed over
    config = load_config(None, inner)
    assert config.path == tmp_path / "pyproject.toml"
    assert config.select == ("SG2",)
    write(inner, "[tool.summaryguard]\n")
    assert load_config(None, inner).path == inner / "pyproject.toml"
    assert load_config(None, inner).select == (ALL,)


def test_explicit_file(tmp_path: Path) -> None:
    path = write(tmp_path, '[tool.summaryguard]\nignore = ["SG1"]\n', name="other.toml")
    write(tmp_path, '[tool.summaryguard]\nignore = ["SG2"]\n')
    assert load_config(str(path), tmp_path).ignore == ("SG1",)
    assert read_config_file(path) is not None
    assert read_config_file(write(tmp_path, "a = 1\n", name="plain.toml")) is None


@pytest.mark.parametrize(
    ("text", "line", "fragments"),
    [
        ('[tool.summaryguard]\nselekt = ["SG1"]\n', 2, ["unknown key 'selekt'", "valid keys: select"]),
        ('[tool.summaryguard]\nselect = "SG1"\n', 2, ["select", "must be a list", "not a string"]),
        ("[tool.summaryguard]\nignore = [1]\n", 2, ["ignore", "non-string items"]),
        ('[tool.summaryguard]\nselect = [""]\n', 2, ["select", "empty string"]),
        ("[tool.summaryguard]\nexclude = true\n", 2, ["exclude", "not a boolean"]),
        ('[tool.summaryguard]\nexclude = ["ok", "bad\\\\"]\n', 2, ["exclude", "'bad\\\\'", "not a valid glob"]),
        ('[tool.summaryguard]\nexclude = ["a[b"]\n', 2, ["exclude", "'a[b'", "not a valid glob"]),
        ('[tool.summaryguard]\nexclude = [""]\n', 2, ["exclude", "empty pattern"]),
        ('[tool.summaryguard]\nexclude = ["#x"]\n', 2, ["exclude", "comment"]),
        ('[tool.summaryguard]\nper-file-ignores = ["x"]\n', 2, ["per-file-ignores", "must be a table"]),
        ('[tool.summaryguard]\nper-file-ignores = {"t/*" = "SG1"}\n', 2, ["'t/*'", "not a string"]),
        ('[tool.summaryguard.per-file-ignores]\n"!" = ["SG1"]\n', 2, ["'!'", "not a valid glob"]),
        ('[tool.summaryguard]\ntool-calls = ["my-app.tools"]\n', 2, ["tool-calls", "'my-app.tools'"]),
        ('[tool.summaryguard]\nvalidators = ["a..b"]\n', 2, ["validators", "'a..b'"]),
        ('[tool.summaryguard]\nresume-calls = ["1abc"]\n', 2, ["resume-calls", "'1abc'"]),
        ('[tool.summaryguard]\nresume-calls = ["*.abcd\\n"]\n', 2, ["resume-calls", "'*.abcd\\n'"]),
        ('[tool.summaryguard]\ntool-calls = ["myapp.\\ttools"]\n', 2, ["tool-calls", "'myapp.\\ttools'"]),
        ("[tool]\nsummaryguard = 3\n", None, ["must be a table", "not an integer"]),
        ('[tool.summaryguard]\nselect = ["SG1"\n', 2, ["invalid TOML: Unclosed array"]),
        ("[tool.summaryguard]\nselect = [\n  'SG1',\n  x\n]\n", 4, ["invalid TOML"]),
    ],
)
def test_bad_configuration(tmp_path: Path, text: str, line: int | None, fragments: list[str]) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(None, tmp_path)
    error = info.value
    assert error.path == str(path)
    assert error.line == line
    rendered = error.render()
    assert rendered.startswith(f"{path}:{line}: error:" if line else f"{path}: error:")
    for fragment in fragments:
        assert fragment in rendered


@pytest.mark.parametrize(
    ("text", "key", "bad", "line"),
    [
        ('[tool.summaryguard]\nselect = ["SG1", "SG9"]\n', "select", "'SG9'", 2),
        ('[tool.summaryguard]\n\nignore = ["SG2011"]\n', "ignore", "'SG2011'", 3),
        ('[tool.summaryguard.per-file-ignores]\n"tests/*" = ["SG3"]\n', "per-file-ignores.'tests/*'", "'SG3'", 2),
    ],
)
def test_unknown_codes(tmp_path: Path, text: str, key: str, bad: str, line: int) -> None:
    path = write(tmp_path, text)
    config = load_config(None, tmp_path)
    with pytest.raises(ConfigError) as info:
        check_codes(config, KNOWN)
    assert info.value.line == line
    assert info.value.path == str(path)
    assert key in info.value.message and bad in info.value.message and "SG101" in info.value.message


def test_explicit_file_problems(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="configuration file not found"):
        load_config(str(tmp_path / "missing.toml"), tmp_path)
    with pytest.raises(ConfigError, match="cannot read configuration: Is a directory"):
        load_config(str(tmp_path), tmp_path)
    path = write(tmp_path, "[tool.other]\n", name="x.toml")
    with pytest.raises(ConfigError, match=r"no \[tool.summaryguard\] table"):
        load_config(str(path), tmp_path)


def test_not_utf8(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_bytes(b"[tool.summaryguard]\n# caf\xe9\n")
    with pytest.raises(ConfigError) as info:
        load_config(None, tmp_path)
    assert info.value.line == 2 and "UTF-8" in info.value.message


def test_folder_named_pyproject_is_passed_over(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").mkdir()
    assert load_config(None, tmp_path).path is None
