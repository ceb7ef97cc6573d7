"""Whether a summarization instruction reaches an expression does not depend on the order
the analysis asks (SPEC §3.1.1: a file's findings never depend on what else is asked first).

``_instruction`` follows values through bindings and the returns of project functions, with a
guard against cycles. A "no" that was only a "no" because the walk met a question still being
answered (or the depth bound) must not be remembered: asked again from elsewhere, the answer
is "yes". Found on langmem's running-summary fold, where a new question asked earlier (whether
a helper hands an instruction on) hid the prompt from the model call.
"""

from __future__ import annotations

import itertools
import textwrap

import libcst as cst
import pytest

from summaryguard.rules.engine import Vocabulary
from summaryguard.rules.engine.compaction import _Analysis
from summaryguard.rules.engine.project import Project

SOURCE = textwrap.dedent(
    '''
    GUIDE = "Summarize the conversation so far."


    def pick(flag):
        text = relay(flag)
        if flag:
            text = GUIDE
        return text


    def relay(flag):
        return pick(not flag)
    '''
)


def _questions() -> tuple[_Analysis, dict[str, tuple[cst.CSTNode, object]]]:
    project = Project(Vocabulary.build())
    module = project.add_module("order.py", cst.parse_module(SOURCE), SOURCE)
    project.finish()
    analysis = _Analysis(project, {})
    fns = {fn.name: fn for fn in module.functions}
    returned = {
        name: next(s.value for s in fns[name].body if isinstance(s, cst.Return))
        for name in ("pick", "relay")
    }
    return analysis, {name: (node, analysis.view(fns[name])) for name, node in returned.items()}


@pytest.mark.parametrize("order", list(itertools.permutations(["pick", "relay"])))
def test_instruction_reached_whatever_is_asked_first(order: tuple[str, ...]) -> None:
    analysis, questions = _questions()
    answers = {name: analysis._instruction(*questions[name]) for name in order}
    assert answers == {"pick": True, "relay": True}
