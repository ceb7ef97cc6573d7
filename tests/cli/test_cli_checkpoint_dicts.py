"""A checkpoint read as a dict is summary state when it carries a summary, on real files."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from summaryguard.rules.cli.exitcodes import ExitCode

#: The ``lint`` fixture of conftest.py: source -> (exit status, [(line, code)]).
Lint = Callable[[str], tuple[int, list[tuple[int, str]]]]

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


@pytest.mark.parametrize("read", ['checkpoint["summary"]', 'checkpoint.get("summary")'])
def test_run_with_a_context_from_a_checkpoint_dict_is_a_resume(lint: Lint, read: str) -> None:
    text = DICT_RESUME.replace('checkpoint["summary"]', read)
    assert lint(text) == (ExitCode.FINDINGS, [(6, "SG101"), (6, "SG102"), (6, "SG103")])


def test_checked_checkpoint_dict_is_clean(lint: Lint) -> None:
    assert lint(DICT_CHECKED) == (ExitCode.OK, [])


def test_torch_checkpoint_dict_is_not_summary_state(lint: Lint) -> None:
    assert lint(TORCH_RESUME) == (ExitCode.OK, [])
