"""Which rule codes a run reports: ``select`` / ``ignore`` with prefixes.

A selector is a full code (``SG201``), a prefix of one or more known codes
(``SG``, ``SG1``, ``SG20``), or ``ALL``. A selector that matches no known code
is an error rather than a no-op: a typo in ``ignore`` that silently ignores
nothing, or in ``select`` that silently checks nothing, is the kind of failing
open this project exists to prevent.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

__all__ = ["ALL", "SelectorError", "expand", "parse_selector_list", "resolve", "unknown_selectors"]

ALL = "ALL"


class SelectorError(ValueError):
    """One or more selectors match no known rule code."""

    def __init__(self, unknown: list[str], known: Collection[str]) -> None:
        self.unknown = unknown
        self.known = sorted(known)
        names = ", ".join(repr(s) for s in unknown)
        super().__init__(
            f"unknown rule code or prefix {names} (valid codes: {', '.join(self.known)}; "
            f"a prefix such as SG1 or 'ALL' also works)"
        )


def normalize(selector: str) -> str:
    """Selectors compare case-insensitively and ignore surrounding spaces."""
    return selector.strip().upper()


def parse_selector_list(text: str) -> list[str]:
    """Split a command-line value such as ``"SG1, SG201"`` into selectors."""
    return [normalize(part) for part in text.split(",") if part.strip()]


def expand(selector: str, known: Iterable[str]) -> set[str]:
    """The known codes that ``selector`` stands for (empty when none)."""
    selector = normalize(selector)
    if selector == ALL:
        return set(known)
    return {code for code in known if code.startswith(selector)}


def unknown_selectors(selectors: Iterable[str], known: Collection[str]) -> list[str]:
    """The selectors that match no known code, in their given order."""
    return [s for s in selectors if not expand(s, known)]


def resolve(select: Iterable[str], ignore: Iterable[str], known: Collection[str]) -> frozenset[str]:
    """The codes selected by ``select`` and not removed by ``ignore``.

    Raises :class:`SelectorError` naming every selector that matches nothing.
    """
    select = list(select)
    ignore = list(ignore)
    bad = unknown_selectors([*select, *ignore], known)
    if bad:
        raise SelectorError(bad, known)
    chosen: set[str] = set()
    for selector in select:
        chosen |= expand(selector, known)
    for selector in ignore:
        chosen -= expand(selector, known)
    return frozenset(chosen)
