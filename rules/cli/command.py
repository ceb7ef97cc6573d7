"""The ``summaryguard`` command: dispatch, nothing else.

Its arguments are read by argparse (:mod:`.parser`), except the plain ``check`` of a
pre-commit hook, read here without it (:func:`plain_check_options`).

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

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from .exitcodes import ExitCode
from .formats import writes_utf8

if TYPE_CHECKING:  # pragma: no cover
    from .runner import CheckOptions

__all__ = ["PLAIN_CHECK_FLAGS", "main", "plain_check_options"]

PROG = "summaryguard"
DEBUG_ENV = "SUMMARYGUARD_DEBUG"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    stdout, stderr = _Output(_usable(sys.stdout)), _usable(sys.stderr)
    try:
        status = int(_dispatch(args, stdout, stderr))
        stdout.flush()  # a report the system refuses (a full disk) fails here, named, not at exit
        return status
    except KeyboardInterrupt:
        stderr.write(f"{PROG}: interrupted\n")
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        # The reader went away (``summaryguard check | head``): stop quietly,
        # and keep the interpreter from failing again when it flushes stdout.
        _silence_stdout()
        return ExitCode.ERROR
    except OutputError as failed:
        _silence_stdout()
        stderr.write(f"{PROG}: error: cannot write to standard output: {failed.reason}\n")
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
    except (OSError, ValueError, AttributeError):  # pragma: no cover - stdout without a file descriptor
        pass


class OutputError(Exception):
    """Standard output refused the report (a full disk, an I/O error): the run's failure,
    said as such, never an internal error."""

    def __init__(self, error: OSError) -> None:
        super().__init__(error)
        self.reason = error.strerror or str(error)


class _Output:
    """Standard output as the command writes it: what the system refuses on a write or a
    flush is an :class:`OutputError` (a closed pipe stays a ``BrokenPipeError``)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputError(exc) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputError(exc) from None

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


def _usable(stream: TextIO | None) -> TextIO:
    """``stream`` made safe to report on: a closed one (``>&-``) writes nowhere, and one
    whose encoding cannot spell every character (a cp1252 console, ``PYTHONIOENCODING=ascii``)
    escapes what it cannot (``\\u65e5``) instead of failing halfway through the report on a
    path beyond ASCII. JSON and SARIF write their own escapes there (:func:`.formats.writes_utf8`)."""
    if stream is None:
        return open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - for the process's life
    if getattr(stream, "errors", None) == "strict" and not writes_utf8(stream):
        try:
            stream.reconfigure(errors="backslashreplace")  # type: ignore[attr-defined]
        except (AttributeError, ValueError, OSError):
            pass
    return stream


#: ``check``'s flags that take no value, as :func:`plain_check_options` reads them.
PLAIN_CHECK_FLAGS = ("--no-cache", "--force-exclude", "--show-trace")


def plain_check_options(arguments: Sequence[str]) -> CheckOptions | None:
    """The options of ``check ARGUMENTS`` when they are flags of :data:`PLAIN_CHECK_FLAGS`,
    written out in full, followed by paths none of which starts with ``-``: what argparse
    makes of them (a test holds the two to it); None for anything else, which argparse
    reads and, where it must, refuses.

    Why: that is the command a pre-commit hook runs on every commit (``check
    --force-exclude FILE ...``), and for a file the text pre-filter dismisses, importing
    argparse and building the parser were an eighth of the run (SPEC §3.1.2)."""
    from .runner import CheckOptions

    flags = 0
    while flags < len(arguments) and arguments[flags] in PLAIN_CHECK_FLAGS:
        flags += 1
    given, paths = set(arguments[:flags]), tuple(arguments[flags:])
    if any(path.startswith("-") for path in paths):
        return None
    return CheckOptions(
        paths=paths,
        jobs=os.cpu_count() or 1,
        cache="--no-cache" not in given,
        force_exclude="--force-exclude" in given,
        show_trace="--show-trace" in given,
    )


def _dispatch(args: list[str], stdout: TextIO, stderr: TextIO) -> int:
    if args[:1] == ["demo"]:
        return _demo(args[1:], stderr)
    if args[:1] == ["check"]:
        options = plain_check_options(args[1:])
        if options is not None:
            return _check(options, stdout, stderr)
    from .parser import build_parser, check_options

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
        return _check(check_options(namespace), stdout, stderr)
    if namespace.command == "rules":
        return _rules(stdout)
    return _explain(namespace.code, stdout, stderr)


def _exit_code(code: object) -> int:
    if code is None:
        return ExitCode.OK
    if isinstance(code, int):
        return code
    return ExitCode.ERROR  # pragma: no cover - argparse exits with ints


def _check(options: CheckOptions, stdout: TextIO, stderr: TextIO) -> int:
    from .config import ConfigError
    from .runner import UsageError, run_check

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
