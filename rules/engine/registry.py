"""Which rules exist: the built-in ``rules/sgNNN_*.py`` modules plus plugin rules.

Adding a built-in rule is adding one module named ``sg<code>_<name>.py`` to
``rules/``; it is found here by its file name, no list to edit. Plugin rules
come from the ``summaryguard_lint_rules`` hook.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from functools import lru_cache

from .base import LintRule

__all__ = ["DOC_SECTIONS", "all_rules", "builtin_rules", "plugin_rules", "rule_doc"]

_RULE_MODULE = re.compile(r"^sg\d{3}_\w+$")
#: The sections every rule's documentation has (ruff's), in order.
DOC_SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead", "Known problems")


@lru_cache(maxsize=1)
def builtin_rules() -> tuple[type[LintRule], ...]:
    """The rules shipped in ``summaryguard.rules``, sorted by code."""
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


def plugin_rules() -> list[type[LintRule]]:
    """Rules contributed by plugins (anything that is not a LintRule is ignored)."""
    from summaryguard.plugins.manager import get_plugin_manager

    rules: list[type[LintRule]] = []
    for answer in get_plugin_manager().hook.summaryguard_lint_rules():
        for rule in answer or ():
            if inspect.isclass(rule) and issubclass(rule, LintRule) and rule.code and rule not in rules:
                rules.append(rule)
    return sorted(rules, key=lambda r: r.code)


def all_rules(use_plugins: bool = True) -> list[type[LintRule]]:
    """Built-in rules and (with ``use_plugins``) plugin rules, framework rooms' included, sorted by code."""
    rules = list(builtin_rules())
    if use_plugins:
        rules.extend(r for r in plugin_rules() if r not in rules)
    return sorted(rules, key=lambda r: r.code)


def rule_doc(rule: type[LintRule] | LintRule) -> str:
    """The rule's documentation as markdown (``explain``, SARIF help, docs)."""
    cls = rule if inspect.isclass(rule) else type(rule)
    body = inspect.cleandoc(cls.__doc__ or "")
    return f"# {cls.code} ({cls.name})\n\n{body}\n"
