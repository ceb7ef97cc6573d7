"""The demo tells the story of SPEC §1: silent divergence unguarded, fail-closed guarded."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

from summaryguard.guard.demo import main, unguarded_agent


def run_demo(*argv: str) -> str:
    out = io.StringIO()
    assert main(list(argv), out=out) == 0
    return out.getvalue()


def test_unguarded_run_diverges_silently() -> None:
    text = run_demo("--no-analysis")
    unguarded = text.split("3. The same run")[0]
    before = re.search(r"lineage before the crash: +(.*)", unguarded).group(1)
    after = re.search(r"lineage after recovery: +(.*)", unguarded).group(1)
    buckets_before = set(re.findall(r"bkt-[0-9a-f]+", before))
    buckets_after = set(re.findall(r"bkt-[0-9a-f]+", after))
    assert len(buckets_before) == 1 and len(buckets_after) == 1
    assert buckets_before != buckets_after
    assert "SummaryReconciliationError" not in unguarded


def test_guarded_run_fails_closed_with_the_precise_error() -> None:
    guarded = run_demo("--no-analysis").split("3. The same run")[1]
    assert "SummaryReconciliationError [missing-dependency]" in guarded
    assert "SummaryReconciliationError [rederivation]" in guarded
    assert "summary_generation=1 checkpoint_turn=3 missing_ref='bucket'" in guarded
    assert "1 bucket(s) exist" in guarded
    assert "accepted by demo operator" in guarded


def test_demo_is_deterministic() -> None:
    assert run_demo("--no-analysis") == run_demo("--no-analysis")


def test_demo_runs_from_the_console_script() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from summaryguard.rules.cli import main; sys.exit(main(['demo', '--no-analysis']))"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "The same run with summaryguard" in proc.stdout


def test_demo_first_shows_the_analyzer_findings_on_the_bundled_agent() -> None:
    text = run_demo()
    analysis = text.split("2. The failure, replayed")[0]
    codes = re.findall(r"unguarded_agent\.py:(\d+):\d+: (SG\d{3})", analysis)
    found = {code for _, code in codes}
    # The trusting resume and the re-issued tool call, each where it is.
    assert {"SG103", "SG201"} <= found
    source = (Path(unguarded_agent.__file__)).read_text(encoding="utf-8").splitlines()
    for line, code in codes:
        text_at = source[int(line) - 1]
        if code == "SG201":
            assert "self.provision(self.world)" in text_at
        else:
            assert "resume_context()" in text_at
    assert f"{len(codes)} finding(s)" in analysis
