"""The plain ``check`` command line, read without argparse, means what argparse makes of it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from summaryguard.rules.cli.command import PLAIN_CHECK_FLAGS, plain_check_options
from summaryguard.rules.cli.parser import build_parser, check_options

#: Paths as a shell hands them over: anything, but a leading ``-`` (argparse's to read).
_PATHS = st.lists(st.text(min_size=0, max_size=12).filter(lambda p: not p.startswith("-")), max_size=4)
_FLAGS = st.lists(st.sampled_from(PLAIN_CHECK_FLAGS), max_size=5)


def _argparse(arguments: list[str]) -> object:
    return check_options(build_parser().parse_args(["check", *arguments]))


@given(_FLAGS, _PATHS)
def test_flags_then_paths_mean_what_argparse_makes_of_them(flags: list[str], paths: list[str]) -> None:
    arguments = [*flags, *paths]
    assert plain_check_options(arguments) == _argparse(arguments)


@pytest.mark.parametrize(
    "arguments",
    [
        ["--jobs", "2", "a.py"],  # a flag with a value
        ["--no-ca", "a.py"],  # an abbreviation argparse accepts
        ["a.py", "--no-cache"],  # a flag after a path (argparse reads it; after two paths it refuses)
        ["--", "-a.py"],  # the end of options, a path with a leading dash
        ["-h"],
        ["--format=json", "a.py"],
        ["--frobnicate"],
    ],
)
def test_anything_else_is_left_to_argparse(arguments: list[str]) -> None:
    assert plain_check_options(arguments) is None


def test_the_pre_commit_hooks_command_is_plain() -> None:
    """What ``.pre-commit-hooks.yaml`` runs: its arguments, then the staged files."""
    import pathlib

    import yaml  # pre-commit's own dependency, installed with the test extras

    hooks = yaml.safe_load(pathlib.Path(__file__).parents[2].joinpath(".pre-commit-hooks.yaml").read_text())
    hook = next(h for h in hooks if h["id"] == "summaryguard")
    entry = hook["entry"].split()
    arguments = [*entry[entry.index("check") + 1 :], *hook.get("args", []), "src/a.py", "b.py"]
    options = plain_check_options(arguments)
    assert options is not None and options == _argparse(arguments)
