"""The ``summaryguard`` command (placeholder until the analyzer lands)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    return 0


if __name__ == "__main__":
    sys.exit(main())
