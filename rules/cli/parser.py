"""The ``summaryguard`` command line as argparse reads it: every command's arguments and help.

Built only when :mod:`.command` cannot read the arguments itself: the common
``check [--no-cache|--force-exclude|--show-trace ...] PATH ...`` of a pre-commit hook
is read without argparse (see :func:`.command.plain_check_options`), whose import and
parser cost a pre-commit run on a dismissed file an eighth of its instructions (SPEC §3.1.2).
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from .command import PROG

if TYPE_CHECKING:  # pragma: no cover
    from .runner import CheckOptions

__all__ = ["build_parser", "check_options"]


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version(PROG)
    except metadata.PackageNotFoundError:  # pragma: no cover - running from an uninstalled tree
        return "unknown"


class _VersionAction(argparse._VersionAction):
    """``--version``, looked up when asked: ``importlib.metadata.version`` searches every
    installed distribution (tens of milliseconds), which a ``check`` never needs."""

    def __call__(self, parser: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        self.version = f"{PROG} {_version()}"
        super().__call__(parser, *args, **kwargs)  # type: ignore[arg-type]


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The full parser (also used to render ``--help``)."""
    from .formats import DEFAULT_FORMAT, FORMATS

    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Find code that resumes an LLM agent from a lossy summary without failing closed.",
    )
    parser.add_argument("--version", action=_VersionAction, version=None)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = commands.add_parser(
        "check",
        help="analyze Python files (exit 0 clean, 1 findings, 2 error)",
        description=(
            "Analyze Python files and folders. Exit status: 0 no findings, 1 findings, "
            "2 usage or configuration error or a file that could not be read or parsed. "
            "Silence one finding with '# summaryguard: ignore[CODE] reason: ...' or "
            "'# noqa: CODE' on its first line; a bare '# noqa' does not silence summaryguard."
        ),
    )
    check.add_argument("paths", nargs="*", metavar="PATH", help="files and folders to check (default: .)")
    check.add_argument(
        "--select",
        action="append",
        metavar="CODES",
        help="comma-separated codes or prefixes to report (SG1, SG20, ALL); replaces the configured select",
    )
    check.add_argument(
        "--ignore",
        action="append",
        metavar="CODES",
        help="comma-separated codes or prefixes not to report; added to the configured ignore",
    )
    check.add_argument("--format", choices=sorted(FORMATS), default=DEFAULT_FORMAT, help="output format")
    check.add_argument(
        "--config",
        metavar="FILE",
        help="TOML file with a [tool.summaryguard] table (default: nearest pyproject.toml that has one)",
    )
    check.add_argument(
        "--jobs",
        type=_positive_int,
        metavar="N",
        help="worker processes for screening files (default: all cores; one process when at most one file needs parsing)",
    )
    check.add_argument(
        "--force-exclude",
        action="store_true",
        help="apply the configuration's exclude globs to files and folders named on the command line too "
        "(the pre-commit hook passes it: pre-commit names every staged file)",
    )
    check.add_argument(
        "--show-trace",
        action="store_true",
        help="print each finding's evidence chain under it: where the value came from, what was or was not "
        "checked, where it is consumed (json and sarif always carry it)",
    )
    check.add_argument(
        "--no-cache",
        action="store_true",
        help="do not read or write cached results (.summaryguard_cache/ at the configuration's folder, or $SUMMARYGUARD_CACHE_DIR)",
    )
    check.add_argument(
        "--baseline",
        metavar="FILE",
        help="JSON file of known findings (see --write-baseline): report only findings not recorded there",
    )
    check.add_argument(
        "--write-baseline",
        action="store_true",
        help="record this run's findings in the --baseline FILE (replacing it) and exit 0",
    )

    commands.add_parser("rules", help="list the rules", description="List every rule: code, name, description.")
    explain = commands.add_parser("explain", help="show a rule's documentation", description="Show a rule's documentation.")
    explain.add_argument("code", metavar="CODE", help="a rule code, e.g. SG201")
    commands.add_parser(
        "demo",
        help="replay the lossy-resume failure without and with the guard",
        description="Replay the lossy-resume failure without and with the guard (options: summaryguard demo --help).",
        add_help=False,
    )
    return parser


def check_options(namespace: argparse.Namespace) -> CheckOptions:
    """The options of a ``check`` that argparse read."""
    from .runner import CheckOptions
    from .selection import parse_selector_list

    def selectors(values: list[str] | None) -> tuple[str, ...] | None:
        if values is None:
            return None
        return tuple(s for value in values for s in parse_selector_list(value))

    return CheckOptions(
        paths=tuple(namespace.paths),
        select=selectors(namespace.select),
        ignore=selectors(namespace.ignore) or (),
        config=namespace.config,
        fmt=namespace.format,
        jobs=namespace.jobs or os.cpu_count() or 1,
        cache=not namespace.no_cache,
        baseline=namespace.baseline,
        write_baseline=namespace.write_baseline,
        force_exclude=namespace.force_exclude,
        show_trace=namespace.show_trace,
    )
