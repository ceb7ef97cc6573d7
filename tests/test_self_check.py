"""summaryguard's own code passes summaryguard check (it would be odd otherwise)."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path

from summaryguard.rules.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_our_own_sources_are_clean() -> None:
    out = io.StringIO()
    with redirect_stdout(out):
        status = main(["check", "--no-cache", "--force-exclude", "--format", "json", *(str(ROOT / d) for d in ("guard", "plugins", "rules"))])
    report = json.loads(out.getvalue())
    assert report["findings"] == [] and report["errors"] == []
    assert report["stats"]["files"] > 50
    assert status == 0
