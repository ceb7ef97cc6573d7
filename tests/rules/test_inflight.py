"""SG304 across modules: compactions a function leaves running, and its callers' writes."""

from __future__ import annotations

import ast
import textwrap

import pytest

from summaryguard.rules.engine import Analyzer, Vocabulary, all_rules
from summaryguard.rules.engine.names import dispatches_parameters
from summaryguard.rules.engine.prefilter import Prefilter

ANALYZER = Analyzer(Vocabulary.build(), all_rules())


def _tree(code: str) -> ast.Module:
    return ast.parse(textwrap.dedent(code))


@pytest.mark.parametrize(
    "code",
    [
        "import asyncio\ndef go(job):\n    return asyncio.create_task(job)\n",
        "import threading\ndef go(fn):\n    threading.Thread(target=fn).start()\n",
        "def go(pool, fn):\n    return pool.submit(fn)\n",
        # a closure of the helper that awaits the parameter
        "import asyncio\ndef go(job):\n    async def run():\n        await job\n    return asyncio.create_task(run())\n",
    ],
)
def test_a_helper_that_dispatches_what_it_is_given(code: str) -> None:
    assert dispatches_parameters(_tree(code))
    assert Prefilter.may_dispatch(code)


@pytest.mark.parametrize(
    "code",
    [
        "import asyncio\nasync def tick():\n    pass\ndef go():\n    return asyncio.create_task(tick())\n",
        "def go(job):\n    return job()\n",
        "import asyncio\ndef go(job):\n    return asyncio.create_task(other(job))\n",
    ],
)
def test_what_is_not_such_a_helper(code: str) -> None:
    assert not dispatches_parameters(_tree(code))


def test_a_helper_module_without_vocabulary_is_context_for_its_importers() -> None:
    helper = "import asyncio\n\ndef later(job):\n    return asyncio.create_task(job)\n"
    assert not ANALYZER.might_matter(helper)
    assert Prefilter.may_be_context("util.py", helper)
    lent = ANALYZER.lent_facts("util.py", helper)
    assert lent is not None and lent.lends
    plain = "import asyncio\n\nasync def main():\n    await asyncio.sleep(1)\n"
    assert ANALYZER.lent_facts("main.py", plain) is None


#: A module whose ``{name}`` hands a compaction to a thread, then ``{ending}``.
_COMPACTION = """
    import threading


    def fold(llm, messages):
        return llm.invoke(f"Summarize this conversation: {{messages}}")


    def {name}(llm, state):
        worker = threading.Thread(target=lambda: state.update(summary=fold(llm, state["messages"])))
        worker.start()
        {ending}
"""
COMPACTION = _COMPACTION.format(name="compact_later", ending="return worker")
COMPACTION_JOINED = _COMPACTION.format(name="compact_now", ending="worker.join()")


#: A caller in another module that writes a checkpoint right after the call (``{helper}``).
CALLER = """
    import json

    from background import {helper}


    def turn(llm, state, path):
        {helper}(llm, state)
        with open(path, "w") as fh:
            json.dump({{"checkpoint": state}}, fh)
"""


def _findings(**modules: str) -> list[tuple[str, int, str]]:
    sources = [(f"{name}.py", textwrap.dedent(text).lstrip("\n")) for name, text in modules.items()]
    findings, errors = ANALYZER.analyze(sources)
    assert errors == []
    return [(f.path, f.line, f.code) for f in findings]


def test_a_caller_in_another_module_writes_while_the_compaction_runs() -> None:
    caller = CALLER.format(helper="compact_later")
    assert _findings(background=COMPACTION, agent=caller) == [("agent.py", 9, "SG304")]


@pytest.mark.parametrize(
    "caller",
    [
        # the write comes first
        """
        import json

        from background import compact_later


        def turn(llm, state, path):
            with open(path, "w") as fh:
                json.dump({"checkpoint": state}, fh)
            compact_later(llm, state)
        """,
        # the caller waits for the worker it got back before writing
        """
        import json

        from background import compact_later


        def turn(llm, state, path):
            worker = compact_later(llm, state)
            worker.join()
            with open(path, "w") as fh:
                json.dump({"checkpoint": state}, fh)
        """,
    ],
)
def test_no_overlap_no_finding(caller: str) -> None:
    assert _findings(background=COMPACTION, agent=caller) == []


def test_a_helper_that_waits_leaves_nothing_running() -> None:
    caller = CALLER.format(helper="compact_now")
    assert _findings(background=COMPACTION_JOINED, agent=caller) == []


def test_the_trace_runs_from_the_dispatch_through_the_call_to_the_write() -> None:
    caller = CALLER.format(helper="compact_later")
    sources = [
        ("background.py", textwrap.dedent(COMPACTION).lstrip("\n")),
        ("agent.py", textwrap.dedent(caller).lstrip("\n")),
    ]
    findings, _ = ANALYZER.analyze(sources)
    (finding,) = findings
    steps = [(s.path, s.line) for s in finding.trace]
    assert steps[0] == ("background.py", 9)  # the Thread(...) dispatch
    assert ("agent.py", 7) in steps  # the call that returns while it runs
    assert steps[-1] == ("agent.py", 9)
    assert all(s.basis == "value" for s in finding.trace)


def test_a_file_checked_alone_judges_only_the_context_its_calls_reach(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pre-commit: the caller checked alone, its imports as context. The verdicts its
    check reads are those of the functions its calls reach; a dispatching function of
    the context that nothing checked calls is never judged, and the finding and its
    trace are those of the whole run."""
    from summaryguard.rules.engine import inflight

    judged: list[str] = []
    judge = inflight._judge

    def recorded(analysis, fn):  # type: ignore[no-untyped-def]
        judged.append(fn.name)
        return judge(analysis, fn)

    monkeypatch.setattr(inflight, "_judge", recorded)
    background = textwrap.dedent(COMPACTION).lstrip("\n")
    unrelated = textwrap.dedent(COMPACTION_JOINED).lstrip("\n")
    agent = textwrap.dedent(CALLER.format(helper="compact_later")).lstrip("\n")
    whole, _ = ANALYZER.analyze([("agent.py", agent), ("background.py", background), ("unrelated.py", unrelated)])
    assert "compact_now" in judged
    judged.clear()
    alone, errors = ANALYZER.analyze([("agent.py", agent)], context=[("background.py", background), ("unrelated.py", unrelated)])
    assert errors == []
    assert "compact_later" in judged and "compact_now" not in judged
    assert [(f.path, f.line, f.code, f.trace) for f in alone] == [
        (f.path, f.line, f.code, f.trace) for f in whole if f.path == "agent.py"
    ] != []
