"""Which rules exist: the built-in ``rules/sgNNN_*.py`` modules plus plugin rules.

Adding a built-in rule is adding one module named ``sg<code>_<name>.py`` to
``rules/``; it is found here by its file name, no list to edit. Plugin rules
come from the ``summaryguard_lint_rules`` hook.

Rule modules import libcst (through :mod:`.base`), so a run that analyzes
nothing must not import them (SPEC §3.1.2). :func:`known_codes` therefore
reads the codes from file names: the built-in modules', and those of the
rule folder of a room shipped with summaryguard
(``summaryguard/plugins/<room>/rules/sgNNN_*.py``, next to its ``plugin``
module). Only a plugin outside the package makes it ask the hook, which
imports the rule classes (and libcst): what such a rule is, its code and its
``PREFILTER``, is known only from its class.
"""

# No ``from __future__ import annotations``: its NamedTuple would compile each
# annotation given as a string (see summaryguard.rules.cli.report).
import importlib
import importlib.machinery
import os
import re
import sys
from functools import lru_cache
from types import ModuleType
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:  # pragma: no cover
    from .base import LintRule

__all__ = [
    "DOC_SECTIONS",
    "KnownCodes",
    "all_rules",
    "builtin_codes",
    "builtin_rules",
    "code_of_module",
    "known_codes",
    "plugin_rules",
    "rule_doc",
]

_RULE_MODULE = re.compile(r"^sg\d{3}_\w+$")
#: The sections every rule's documentation has (ruff's), in order.
DOC_SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead", "Known problems")
#: Rooms shipped with summaryguard: their plugin module is ``<this prefix><room>.plugin``.
_ROOM_PREFIX = "summaryguard.plugins."


def code_of_module(name: str) -> str | None:
    """``sg201_rederive_missing_ref`` -> ``SG201``; None for a module that is not a rule's."""
    return name[:5].upper() if _RULE_MODULE.match(name) else None


def _codes_in(folder: str) -> frozenset[str]:
    """The rule codes of the modules in ``folder``, from their names: what
    ``pkgutil.iter_modules`` would list (modules and packages), without its import of
    ``inspect``, which a run whose files the pre-filter dismisses never needs (SPEC §3.1.2)."""
    try:
        entries = os.listdir(folder)
    except OSError:
        return frozenset()
    suffixes = sorted(importlib.machinery.all_suffixes(), key=len, reverse=True)
    names = set()
    for entry in entries:
        suffix = next((s for s in suffixes if entry.endswith(s)), None)
        if suffix is not None:
            names.add(entry[: -len(suffix)])  # "a.cpython-311.pyc" stays "a.cpython-311": no module
        elif os.path.isfile(os.path.join(folder, entry, "__init__.py")):
            names.add(entry)
    return frozenset(code for name in names if (code := code_of_module(name)))


@lru_cache(maxsize=1)
def builtin_codes() -> frozenset[str]:
    """The codes of the built-in rules, from their module names (nothing imported)."""
    package = importlib.import_module("summaryguard.rules")
    return frozenset(code for path in package.__path__ for code in _codes_in(path))


class KnownCodes(NamedTuple):
    """Every rule code of a run, and whether it was found without importing a rule class."""

    codes: frozenset[str]
    #: False when a plugin outside summaryguard contributes rules: :func:`all_rules`
    #: was called (the codes come from the classes) and the run must use those classes.
    from_names: bool = True


def known_codes(use_plugins: bool = True) -> KnownCodes:
    """The codes :func:`all_rules` would give, without importing a rule module when
    every plugin rule comes from a room shipped with summaryguard."""
    codes = set(builtin_codes())
    if not use_plugins:
        return KnownCodes(frozenset(codes))
    from summaryguard.plugins.manager import builtin_plugins_with, get_plugin_manager

    plugins = builtin_plugins_with("summaryguard_lint_rules")  # without pluggy where it can
    if plugins is None:
        plugins = [impl.plugin for impl in get_plugin_manager().hook.summaryguard_lint_rules.get_hookimpls()]
    for plugin in plugins:
        room = _room_rule_folder(plugin)
        if room is None:
            return KnownCodes(frozenset(r.code for r in all_rules(use_plugins=True)), from_names=False)
        codes |= _codes_in(room)
    return KnownCodes(frozenset(codes))


def _room_rule_folder(plugin: object) -> str | None:
    """The ``rules`` folder of a room shipped with summaryguard, for its plugin module; else None."""
    name = getattr(plugin, "__name__", "")
    if not (isinstance(plugin, ModuleType) and name.startswith(_ROOM_PREFIX) and name.endswith(".plugin")):
        return None
    package = sys.modules.get(name.rpartition(".")[0])
    paths = list(getattr(package, "__path__", ()))
    folders = [os.path.join(path, "rules") for path in paths if os.path.isdir(os.path.join(path, "rules"))]
    return folders[0] if len(folders) == 1 else None


@lru_cache(maxsize=1)
def builtin_rules() -> "tuple[type[LintRule], ...]":
    """The rules shipped in ``summaryguard.rules``, sorted by code."""
    import inspect
    import pkgutil

    from .base import LintRule

    package = importlib.import_module("summaryguard.rules")
    found: list[type[LintRule]] = []
    for info in pkgutil.iter_modules(package.__path__):
        if not _RULE_MODULE.match(info.name):
            continue
        module = importlib.import_module(f"summaryguard.rules.{info.name}")
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, LintRule) and obj is not LintRule and obj.__module__ == module.__name__ and obj.code:
                found.append(obj)
    return tuple(sorted(found, key=lambda r: r.code))


def plugin_rules() -> "list[type[LintRule]]":
    """Rules contributed by plugins (anything that is not a LintRule is ignored)."""
    import inspect

    from summaryguard.plugins.manager import builtin_answers, get_plugin_manager

    from .base import LintRule

    # The built-ins alone are asked without pluggy, as for the vocabulary: a pre-commit run of
    # a small relevant file imported it and built the manager for nothing else (3 ms, paired).
    answers = builtin_answers("summaryguard_lint_rules")
    if answers is None:
        answers = get_plugin_manager().hook.summaryguard_lint_rules()
    rules: list[type[LintRule]] = []
    for answer in answers:
        for rule in answer or ():
            if inspect.isclass(rule) and issubclass(rule, LintRule) and rule.code and rule not in rules:
                rules.append(rule)
    return sorted(rules, key=lambda r: r.code)


def all_rules(use_plugins: bool = True) -> "list[type[LintRule]]":
    """Built-in rules and (with ``use_plugins``) plugin rules, framework rooms' included, sorted by code."""
    rules = list(builtin_rules())
    if use_plugins:
        rules.extend(r for r in plugin_rules() if r not in rules)
    return sorted(rules, key=lambda r: r.code)


def rule_doc(rule: "type[LintRule] | LintRule") -> str:
    """The rule's documentation as markdown (``explain``, SARIF help, docs)."""
    import inspect

    cls = rule if inspect.isclass(rule) else type(rule)
    body = inspect.cleandoc(cls.__doc__ or "")
    return f"# {cls.code} ({cls.name})\n\n{body}\n"
