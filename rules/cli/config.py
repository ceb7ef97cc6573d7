"""The ``[tool.summaryguard]`` table of ``pyproject.toml``: found, read and validated once per run.

Strict on purpose. A linter for fail-closed recovery must not fail open on its
own configuration: an unknown key (a typo such as ``per_file_ignores``), a
value of the wrong type, a glob that matches nothing or a rule code that does
not exist is an error naming the key and the file, never a silent default.

Which file: ``--config FILE`` if given (it must contain the table); otherwise
the nearest ``pyproject.toml`` that has a ``[tool.summaryguard]`` table,
walking up from the current folder. A ``pyproject.toml`` without the table is
passed over, as pytest, mypy and ruff do, so a sub-project's packaging file
does not hide the repository's configuration. Relative patterns in the table
are relative to the folder of the file that holds it.

``tomllib`` reads TOML on Python 3.11+, its backport ``tomli`` on 3.10.
"""

# No ``from __future__ import annotations``: its NamedTuple would compile each
# annotation given as a string (see summaryguard.rules.cli.report).
import re
import sys
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from .globs import GlobError, compile_glob, compile_lines

if TYPE_CHECKING:  # pragma: no cover
    from pathspec import GitIgnoreSpec
from .selection import ALL, normalize, unknown_selectors
from .sources import FileRefused, read_regular_file
from .targets import TargetError, normalize_target, target_from_requires_python

__all__ = ["Config", "ConfigError", "PerFileIgnore", "check_codes", "load_config", "read_config_file"]

PYPROJECT = "pyproject.toml"
TABLE = "[tool.summaryguard]"
#: Largest configuration file read (a pyproject.toml is a few kilobytes; a FIFO,
#: a device or a runaway file is refused instead of hanging or filling memory).
MAX_CONFIG_BYTES = 4 * 1024 * 1024

#: Every key the table may hold, with what its value must be.
KEYS: dict[str, str] = {
    "select": "a list of rule codes or prefixes",
    "ignore": "a list of rule codes or prefixes",
    "exclude": "a list of gitignore-style globs",
    "per-file-ignores": "a table mapping a gitignore-style glob to a list of rule codes or prefixes",
    "tool-calls": "a list of qualified names or name patterns",
    "resume-calls": "a list of qualified names or name patterns",
    "validators": "a list of qualified names or name patterns",
    "compaction-calls": "a list of qualified names or name patterns",
    "checkpoint-writes": "a list of qualified names or name patterns",
    "target-version": "the Python version whose grammar the code is written in, such as \"3.12\"",
}

# Patterns, compiled (and cached by ``re``) on first use: a run without a TOML error
# never needs them (SPEC §3.1.2).
_TOML_POSITION = r"at line (\d+)"


class ConfigError(Exception):
    """The configuration cannot be used; says where and why."""

    def __init__(self, path: Path | str, message: str, line: int | None = None) -> None:
        self.path = str(path)
        self.line = line
        self.message = message
        super().__init__(self.render())

    def render(self) -> str:
        from .formats.text import escape  # the path as typed may hold a newline or an ESC

        where = escape(str(self.path)) if self.line is None else f"{escape(str(self.path))}:{self.line}"
        return f"{where}: error: {escape(self.message)}"


class PerFileIgnore(NamedTuple):
    """Codes not reported in the files that one glob matches."""

    pattern: str
    spec: "GitIgnoreSpec"
    codes: tuple[str, ...]


class Config(NamedTuple):
    """A validated configuration (defaults when no file was found).

    A NamedTuple, as the run's other records are (see :mod:`.report`): every run builds one."""

    root: Path
    path: Path | None = None
    select: tuple[str, ...] = (ALL,)
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    exclude_spec: "GitIgnoreSpec | None" = None
    per_file_ignores: tuple[PerFileIgnore, ...] = ()
    tool_calls: tuple[str, ...] = ()
    resume_calls: tuple[str, ...] = ()
    validators: tuple[str, ...] = ()
    compaction_calls: tuple[str, ...] = ()
    checkpoint_writes: tuple[str, ...] = ()
    #: The Python grammar the code targets ("3.12"): ``target-version``, else the lower
    #: bound of ``requires-python``; None: the newest libcst knows (see :mod:`.targets`).
    target_version: str | None = None
    source_text: str = ""

    @property
    def display_path(self) -> str:
        return str(self.path) if self.path is not None else "(defaults)"

    def key_line(self, key: str) -> int | None:
        """Best-effort line of ``key`` in the table, for error messages."""
        return _find_key_line(self.source_text, key)


def load_config(explicit: str | Path | None, cwd: Path) -> Config:
    """The run's configuration: ``explicit`` if given, else the nearest one above ``cwd``."""
    if explicit is not None:
        if not str(explicit):  # Path("") is the current folder: an empty --config names no file
            raise ConfigError("--config", "an empty path names no configuration file")
        path = Path(explicit)
        if not path.exists():
            raise ConfigError(path, "configuration file not found")
        text, document = _read_toml(path)
        table = _tool_table(document, path)
        if table is None:
            raise ConfigError(path, f"no {TABLE} table in this file")
        return _build(table, path, text, document)
    for folder in (cwd, *cwd.parents):
        candidate = folder / PYPROJECT
        if not candidate.is_file():
            continue
        text, document = _read_toml(candidate)
        table = _tool_table(document, candidate)
        if table is not None:
            return _build(table, candidate, text, document)
    return Config(root=cwd)


def read_config_file(path: Path) -> Config | None:
    """The configuration in ``path``, or None when it has no table (used by tests and tools)."""
    text, document = _read_toml(path)
    table = _tool_table(document, path)
    return None if table is None else _build(table, path, text, document)


def check_codes(config: Config, known: Collection[str]) -> None:
    """Reject codes and prefixes in the configuration that match no known rule."""
    for key, selectors in (("select", config.select), ("ignore", config.ignore)):
        bad = unknown_selectors(selectors, known)
        if bad:
            raise _code_error(config, key, bad, known)
    for entry in config.per_file_ignores:
        bad = unknown_selectors(entry.codes, known)
        if bad:
            raise _code_error(config, f"per-file-ignores.{entry.pattern!r}", bad, known, line_key=entry.pattern)


def _code_error(
    config: Config, key: str, bad: list[str], known: Collection[str], line_key: str | None = None
) -> ConfigError:
    names = ", ".join(repr(b) for b in bad)
    return ConfigError(
        config.display_path,
        f"{TABLE} {key}: unknown rule code or prefix {names} (valid codes: {', '.join(sorted(known))})",
        config.key_line(line_key or key),
    )


def _read_toml(path: Path) -> tuple[str, dict[str, Any]]:
    try:
        raw = read_regular_file(str(path), MAX_CONFIG_BYTES)
    except FileRefused as refused:
        raise ConfigError(path, f"cannot read configuration: {refused.reason}") from None
    except OSError as exc:
        raise ConfigError(path, f"cannot read configuration: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(path, "TOML files must be UTF-8 encoded", line) from None
    # imported here: a run with no configuration file (a pre-commit hook outside a
    # project) does not pay for the TOML parser's import (SPEC §3.1.2)
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as tomllib
    try:
        return text, tomllib.loads(text)
    except (RecursionError, MemoryError):
        # tomllib parses nested arrays and inline tables recursively: a value nested a few
        # hundred levels deep exhausts the stack. It is the file's fault, not a crash.
        raise ConfigError(
            path, "invalid TOML: a value is nested too deeply to read (arrays or inline tables inside each other)"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        line = getattr(exc, "lineno", None)
        if line is None:
            match = re.search(_TOML_POSITION, str(exc))
            if match:
                line = int(match.group(1))
            elif "end of document" in str(exc):
                line = max(1, len(text.splitlines()))
        message = re.sub(r" \(at (line \d+, column \d+|end of document)\)$", "", str(exc))
        raise ConfigError(path, f"invalid TOML: {message}", line) from None


def _tool_table(document: Mapping[str, Any], path: Path) -> Mapping[str, Any] | None:
    tool = document.get("tool")
    if not isinstance(tool, Mapping) or "summaryguard" not in tool:
        return None
    table = tool["summaryguard"]
    if not isinstance(table, Mapping):
        raise ConfigError(path, f"{TABLE} must be a table, not {_type_name(table)}")
    return table


def _build(table: Mapping[str, Any], path: Path, text: str, document: Mapping[str, Any] | None = None) -> Config:
    def fail(key: str, message: str) -> ConfigError:
        return ConfigError(path, f"{TABLE} {key}: {message}", _find_key_line(text, key))

    unknown = [key for key in table if key not in KEYS]
    if unknown:
        key = unknown[0]
        raise ConfigError(
            path,
            f"{TABLE}: unknown key {key!r} (valid keys: {', '.join(KEYS)})",
            _find_key_line(text, key),
        )

    def string_list(key: str) -> tuple[str, ...]:
        value = table.get(key, None)
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise fail(key, f"must be {KEYS[key]}, not {_type_name(value)}")
        return tuple(value)

    select = tuple(normalize(s) for s in string_list("select")) if "select" in table else (ALL,)
    ignore = tuple(normalize(s) for s in string_list("ignore"))
    for key, values in (("select", select), ("ignore", ignore)):
        if any(not v for v in values):
            raise fail(key, "an empty string is not a rule code")
    if not select:
        raise fail(
            "select",
            "an empty list selects no rule, so nothing would be checked; name codes or prefixes "
            "(\"SG1\", \"SG201\", \"ALL\"), or remove the key to select every rule",
        )

    exclude = string_list("exclude")
    for pattern in exclude:
        try:
            compile_glob(pattern)
        except GlobError as exc:
            raise fail("exclude", f"{pattern!r}: {exc}") from None
    # One spec for all patterns, so that a later '!pattern' can re-include.
    exclude_spec = compile_lines(exclude) if exclude else None

    per_file: list[PerFileIgnore] = []
    raw_per_file = table.get("per-file-ignores", {})
    if not isinstance(raw_per_file, Mapping):
        raise fail("per-file-ignores", f"must be {KEYS['per-file-ignores']}, not {_type_name(raw_per_file)}")
    for pattern, codes in raw_per_file.items():
        where = f"per-file-ignores.{pattern!r}"
        if not isinstance(codes, list) or not all(isinstance(c, str) and c.strip() for c in codes):
            raise ConfigError(
                path,
                f"{TABLE} {where}: must be a list of rule codes or prefixes, not {_type_name(codes)}",
                _find_key_line(text, pattern),
            )
        try:
            spec = compile_glob(pattern)
        except GlobError as exc:
            raise ConfigError(path, f"{TABLE} {where}: {exc}", _find_key_line(text, pattern)) from None
        per_file.append(PerFileIgnore(pattern, spec, tuple(normalize(c) for c in codes)))

    from ..engine.vocabulary import is_name_pattern  # what a plugin may add is checked alike

    names: dict[str, tuple[str, ...]] = {}
    for key in ("tool-calls", "resume-calls", "validators", "compaction-calls", "checkpoint-writes"):
        values = string_list(key)
        for value in values:
            if not is_name_pattern(value):
                raise fail(
                    key,
                    f"{value!r} is not a qualified name or name pattern "
                    "(dotted Python names; '*' matches within a part, e.g. 'myapp.tools.*', '*.invoke')",
                )
        names[key] = values

    target = table.get("target-version")
    if target is not None:
        if not isinstance(target, str):
            raise fail("target-version", f"must be {KEYS['target-version']}, not {_type_name(target)}")
        try:
            target = normalize_target(target)
        except TargetError as exc:
            raise fail("target-version", str(exc)) from None
    else:
        project = (document or {}).get("project")
        target = target_from_requires_python(project.get("requires-python")) if isinstance(project, Mapping) else None

    return Config(
        root=path.parent.resolve(),
        path=path,
        select=select,
        ignore=ignore,
        exclude=exclude,
        exclude_spec=exclude_spec,
        per_file_ignores=tuple(per_file),
        tool_calls=names["tool-calls"],
        resume_calls=names["resume-calls"],
        validators=names["validators"],
        compaction_calls=names["compaction-calls"],
        checkpoint_writes=names["checkpoint-writes"],
        target_version=target,
        source_text=text,
    )


def _type_name(value: object) -> str:
    if isinstance(value, list):
        return "a list with non-string items" if any(not isinstance(v, str) for v in value) else "a list"
    names = {bool: "a boolean", str: "a string", int: "an integer", float: "a float", dict: "a table"}
    return names.get(type(value), f"a {type(value).__name__}")


def _find_key_line(text: str, key: str) -> int | None:
    """The line of ``key`` inside the ``[tool.summaryguard]`` section, if it is written plainly."""
    if not text:
        return None
    lines = text.splitlines()
    inside = False
    key_pattern = re.compile(r"^\s*(?:" + re.escape(key) + r"|\"" + re.escape(key) + r"\"|'" + re.escape(key) + r"')\s*=")
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if stripped.startswith("["):
            inside = stripped.replace(" ", "").startswith("[tool.summaryguard")
            continue
        if inside and key_pattern.match(line):
            return number
    # Keys of inline tables such as per-file-ignores = {"tests/*" = [...]}.
    quoted = re.compile(r"[\"']" + re.escape(key) + r"[\"']\s*=")
    for number, line in enumerate(lines, start=1):
        if quoted.search(line):
            return number
    return None
