"""The ``summaryguard`` command: argument parsing and dispatch, nothing else.

Subcommands: ``check`` (the analyzer), ``rules`` (table of rules), ``explain
CODE`` (a rule's documentation), ``demo`` (the runtime guard's replay of the
failure, see ``summaryguard.guard.demo``). Exit statuses are
:class:`~summaryguard.rules.cli.exitcodes.ExitCode`.

No input ever ends in a Python traceback: usage and configuration errors are
reported with what to fix, and anything unexpected is caught here as a last
resort and reported as an internal error (exit 2). Set
``SUMMARYGUARD_DEBUG=1`` to see the traceback of such an error.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TextIO

from .exitcodes import ExitCode

__all__ = ["build_parser", "main"]

PROG = "summaryguard"
DEBUG_ENV = "SUMMARYGUARD_DEBUG"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    stdout, stderr = sys.stdout, sys.stderr
    try:
        return int(_dispatch(args, stdout, stderr))
    except KeyboardInterrupt:
        stderr.write(f"{PROG}: interrupted\n")
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        # The reader went away (``summaryguard check | head``): stop quietly,
        # and keep the interpreter from failing again when it flushes stdout.
        _silence_stdout()
        return ExitCode.ERROR
    except Exception as exc:  # the last resort: never a traceback for the user
        if os.environ.get(DEBUG_ENV):
            import traceback

            traceback.print_exc(file=stderr)
        stderr.write(
            f"{PROG}: internal error: {type(exc).__name__}: {exc}\n"
            f"This is a bug in {PROG}; please report it with the command you ran "
            f"(set {DEBUG_ENV}=1 to see the traceback).\n"
        )
        return ExitCode.ERROR


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # pragma: no cover - stdout without a file descriptor
        pass


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


def _dispatch(args: list[str], stdout: TextIO, stderr: TextIO) -> int:
    if args[:1] == ["demo"]:
        return _demo(args[1:], stderr)
    parser = build_parser()
    try:
        namespace = parser.parse_args(args)
    except SystemExit as exit_:  # argparse reports usage errors (2) and --help/--version (0) this way
        return _exit_code(exit_.code)
    if namespace.command is None:
        parser.print_usage(stderr)
        stderr.write(f"{PROG}: error: a command is required (check, rules, explain, demo)\n")
        return ExitCode.ERROR
    if namespace.command == "check":
        return _check(namespace, stdout, stderr)
    if namespace.command == "rules":
        return _rules(stdout)
    return _explain(namespace.code, stdout, stderr)


def _exit_code(code: object) -> int:
    if code is None:
        return ExitCode.OK
    if isinstance(code, int):
        return code
    return ExitCode.ERROR  # pragma: no cover - argparse exits with ints


def _check(namespace: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    from .config import ConfigError
    from .runner import CheckOptions, UsageError, run_check
    from .selection import parse_selector_list

    def selectors(values: list[str] | None) -> tuple[str, ...] | None:
        if values is None:
            return None
        return tuple(s for value in values for s in parse_selector_list(value))

    options = CheckOptions(
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
    try:
        return run_check(options, stdout, stderr)
    except ConfigError as error:
        stderr.write(error.render() + "\n")
        return ExitCode.ERROR
    except UsageError as error:
        stderr.write(f"{PROG} check: error: {error}\n")
        return ExitCode.ERROR


def _rules(stdout: TextIO) -> int:
    from .catalog import format_rules_table
    from ..engine import all_rules

    stdout.write(format_rules_table(all_rules(use_plugins=True)) + "\n")
    return ExitCode.OK


def _explain(code: str, stdout: TextIO, stderr: TextIO) -> int:
    from .catalog import UnknownRuleError, explain
    from ..engine import all_rules, rule_doc

    try:
        text = explain(code, all_rules(use_plugins=True), rule_doc)
    except UnknownRuleError as error:
        stderr.write(f"{PROG} explain: error: {error}\n")
        return ExitCode.ERROR
    stdout.write(text.rstrip("\n") + "\n")
    return ExitCode.OK


def _demo(args: list[str], stderr: TextIO) -> int:
    """Hand over to the runtime guard's demo (imported only when asked for)."""
    try:
        from summaryguard.guard import demo
    except ImportError as error:  # pragma: no cover - the demo ships with the package
        stderr.write(f"{PROG} demo: error: the demo is not available: {error}\n")
        return ExitCode.ERROR
    run = getattr(demo, "main", None)
    if not callable(run):
        stderr.write(f"{PROG} demo: error: the demo is not available in this build\n")
        return ExitCode.ERROR
    try:
        result = run(args)
    except SystemExit as exit_:  # the demo's own argparse: --help, or a usage error
        return _exit_code(exit_.code)
    return ExitCode.OK if result is None else int(result)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
