"""A checkpoint read as a dict is summary state when it carries a summary, on real files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from summaryguard.rules.cli import main
from summaryguard.rules.exitcodes import ExitCode

DICT_RESUME = """\
import json
def recover(f, workflow, Context):
    checkpoint = json.load(f)
    summary = checkpoint["summary"]
    ctx = Context.from_dict(workflow, checkpoint["context"])
    return workflow.run("next", ctx=ctx, summary=summary)
"""

DICT_CHECKED = """\
import json
from summaryguard.guard import check_resume
def recover(f, workflow, Context, deps):
    checkpoint = json.load(f)
    check_resume(checkpoint, deps)
    summary = checkpoint["summary"]
    ctx = Context.from_dict(workflow, checkpoint["context"])
    return workflow.run("next", ctx=ctx, summary=summary)
"""

TORCH_RESUME = """\
import torch
def train(model, optimizer, trainer, TrainerState, path):
    checkpoint = torch.load(path)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    ctx = TrainerState.from_dict(checkpoint["trainer_state"])
    return trainer.run(model, ctx=ctx, epoch=checkpoint.get("epoch"))
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.summaryguard]\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def check(capsys: pytest.CaptureFixture[str], project: Path, text: str) -> tuple[int, list[tuple[int, str]]]:
    (project / "recover.py").write_text(text, encoding="utf-8")
    status = main(["check", "--no-cache", "--format", "json", "recover.py"])
    report = json.loads(capsys.readouterr().out)
    assert report["errors"] == []
    return status, sorted((f["line"], f["code"]) for f in report["findings"])


@pytest.mark.parametrize("read", ['checkpoint["summary"]', 'checkpoint.get("summary")'])
def test_run_with_a_context_from_a_checkpoint_dict_is_a_resume(
    capsys: pytest.CaptureFixture[str], project: Path, read: str
) -> None:
    text = DICT_RESUME.replace('checkpoint["summary"]', read)
    assert check(capsys, project, text) == (ExitCode.FINDINGS, [(6, "SG101"), (6, "SG102"), (6, "SG103")])


def test_checked_checkpoint_dict_is_clean(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    assert check(capsys, project, DICT_CHECKED) == (ExitCode.OK, [])


def test_torch_checkpoint_dict_is_not_summary_state(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    assert check(capsys, project, TORCH_RESUME) == (ExitCode.OK, [])
