"""SG301-SG304 beyond the examples and fixtures: configured names, dispatch shapes,
lock shapes, the pre-filter, and that the traps are traps (a small change makes them findings)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from summaryguard.rules.cli.config import load_config
from summaryguard.rules.engine import Analyzer, Vocabulary, all_rules

FIXTURES = Path(__file__).parent / "fixtures"
ANALYZER = Analyzer(Vocabulary.build(), all_rules())


def findings(source: str, analyzer: Analyzer = ANALYZER, **files: str) -> list[tuple[int, str]]:
    sources = [("example.py", textwrap.dedent(source).lstrip("\n"))]
    sources += [(f"{name}.py", textwrap.dedent(text)) for name, text in files.items()]
    found, errors = analyzer.analyze(sources)
    assert errors == []
    return sorted((f.line, f.code) for f in found if f.path == "example.py" and f.code.startswith("SG3"))


# -- configured names -------------------------------------------------------------------------

CONFIGURED = """
    from myapp.llm import condense
    from myapp.persist import persist_state
    import threading

    def roll_up(history):
        text = condense(history)
        return {"summary": text}

    def on_turn(history, state):
        threading.Thread(target=roll_up, args=(history,)).start()
        persist_state(state)
"""


def test_configured_compaction_and_write_names() -> None:
    assert findings(CONFIGURED) == []
    vocabulary = Vocabulary.build(compaction_calls=["myapp.llm.condense"], checkpoint_writes=["myapp.persist.*"])
    assert "myapp.llm.condense" in vocabulary.entries["compaction-calls"]
    configured = Analyzer(vocabulary, all_rules())
    assert findings(CONFIGURED, configured) == [(7, "SG301"), (7, "SG302"), (11, "SG304")]


def test_configuration_file_keys(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.summaryguard]\ncompaction-calls = ["myapp.llm.condense"]\ncheckpoint-writes = ["*.persist_state"]\n'
    )
    config = load_config(None, tmp_path)
    assert config.compaction_calls == ("myapp.llm.condense",)
    assert config.checkpoint_writes == ("*.persist_state",)


def test_prefilter_keeps_configured_words_only_for_local_patterns() -> None:
    vocabulary = Vocabulary.build(compaction_calls=["roll_summary_up"], checkpoint_writes=["*.persist_state"])
    analyzer = Analyzer(vocabulary, all_rules())
    assert analyzer.might_matter("persist_state(x)\nCompactor\n")
    assert not ANALYZER.might_matter("persist_state(x)\nCompactor\n")


# -- the pre-filter ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("summary = llm.invoke(messages)\n", True),
        ("record = {'summary': text, 'turns': turns}\n", True),
        ("store.save_checkpoint(x)\ncompactor.compact(turns)\n", True),
        ("summary = df.describe()\n", False),
        ("json.dumps(records, separators=compact)\n", False),
        ("writer = open('checkpoint.bin', 'wb')\n", False),
    ],
)
def test_prefilter(text: str, kept: bool) -> None:
    assert ANALYZER.might_matter(text) is kept


# -- SG301 / SG302 ----------------------------------------------------------------------------


def test_records_stamped_by_setattr_and_guard_summary_positionally() -> None:
    source = """
        from summaryguard.guard import Summary

        def compact_a(llm, messages, generation):
            text = llm.invoke(f"Summarize: {messages}")
            record = {"summary": text}
            setattr(record, "generation", generation + 1)
            record.setdefault("drop_manifest", [])
            return record

        def compact_b(llm, messages, generation, dropped):
            text = llm.invoke(f"Summarize: {messages}")
            return Summary(generation + 1, text, {}, dropped)

        def compact_c(llm, messages, generation):
            text = llm.invoke(f"Summarize: {messages}")
            return Summary(generation + 1, text)  # SG302 only
    """
    assert findings(source) == [(16, "SG302")]


def test_user_summarizer_function_and_text_transformations() -> None:
    source = """
        PROMPT = "Please condense the dialogue."

        def ask(client, messages):
            reply = client.messages.create(model="m", system=PROMPT, messages=messages)
            return reply.content[0].text.strip()

        def compact_history(client, messages, n):
            text = ask(client, messages)
            tokens = len(text)
            header = f"[{n}] " + text if n else text
            return {"summary": header, "tokens": tokens}
    """
    assert findings(source) == [(11, "SG301"), (11, "SG302")]


def test_no_summarizer_means_no_record() -> None:
    source = """
        def compact(runner, messages):
            text = runner.run(messages)  # not a model: no model-like receiver, no instruction
            return {"summary": text}

        def answer(llm, messages):
            text = llm.invoke(messages)  # a model, but nothing says it summarizes
            return {"summary": text}

        def describe_thing(thing, messages):
            return {"summary": thing.summarize(42)}  # generic glob without a second vote
    """
    assert findings(source) == []


def test_generic_compaction_glob_with_a_second_vote() -> None:
    # SPEC 3.1.1: the names `summarizer` and `messages` alone no longer decide; an instruction
    # in the call's input (a string literal: data, not a name) is the second vote.
    named_only = """
        def roll(summarizer, messages):
            return {"summary": summarizer.summarize(messages)}
    """
    assert findings(named_only) == []
    source = """
        def roll(x1, x2):
            return {"summary": x1.summarize(x2, instructions="Condense the dialogue so far.")}
    """
    assert findings(source) == [(2, "SG301"), (2, "SG302")]


# -- SG303 ------------------------------------------------------------------------------------


def test_recompaction_of_closure_summary_and_uncalled_parameter() -> None:
    # `checkpoint.summary` is the summary protocol's attribute (a value), in the outer function
    # and through its closure; a parameter called `previous_summary` is a name only.
    source = """
        def outer(llm, checkpoint):
            summary = checkpoint.summary
            if summary.partial:
                pass

            def inner(messages):
                return llm.invoke(f"Summarize, extending {summary}: {messages}")  # expect

            return inner

        def extend(llm, previous_summary, messages):
            return llm.invoke(f"Summarize, extending {previous_summary}: {messages}")

        def outer_protocol_only(llm, checkpoint):
            summary = checkpoint.summary

            def inner(messages):
                return llm.invoke(f"Summarize, extending {summary}: {messages}")  # expect

            return inner
    """
    assert findings(source) == [(7, "SG303"), (18, "SG303")]


# -- SG304 ------------------------------------------------------------------------------------

SHAPES = """
    import asyncio
    import json
    import multiprocessing
    import threading

    def compact(llm, messages):
        return llm.invoke(["Summarize:", *messages])

    def dispatch(loop, llm, messages):
        {dispatch}

    def save_checkpoint(state):
        with open("a.ckpt", "w") as fh:
            json.dump(state, fh)
"""


@pytest.mark.parametrize(
    "dispatch",
    [
        "threading.Timer(1.0, compact, args=(llm, messages)).start()",
        "multiprocessing.Process(target=compact, args=(llm, messages)).start()",
        "asyncio.ensure_future(asyncio.to_thread(compact, llm, messages))",
        "loop.call_later(1.0, compact, llm, messages)",
        "loop.call_soon_threadsafe(lambda: compact(llm, messages))",
        "asyncio.run_coroutine_threadsafe(llm.ainvoke(['Summarize:', *messages]), loop)",
    ],
)
def test_dispatch_shapes(dispatch: str) -> None:
    assert findings(SHAPES.replace("{dispatch}", dispatch)) == [(14, "SG304")]


@pytest.mark.parametrize(
    "dispatch",
    [
        "threading.Thread(target=print, args=(messages,)).start()",
        "messages.submit(compact)",  # not an executor
        "threading.Thread(name='no-target').start()",
    ],
)
def test_not_compaction_dispatches(dispatch: str) -> None:
    assert findings(SHAPES.replace("{dispatch}", dispatch)) == []


def test_thread_subclass() -> None:
    source = """
        import json
        import threading

        class Compaction(threading.Thread):
            def run(self):
                self.summary = self.llm.invoke(f"Summarize: {self.messages}")

        class Agent:
            def run(self):
                pass

        def write_checkpoint(state):
            json.dump(state, open("state.ckpt", "w"))
    """
    assert findings(source) == [(13, "SG304")]


def test_awaited_gather_is_over_before_the_write() -> None:
    source = """
        import asyncio
        import json

        async def turn(llm, messages, state):
            await asyncio.gather(llm.ainvoke(f"Summarize: {messages}"))
            json.dump(state, open("state.ckpt", "w"))

        async def write_checkpoint(state):
            json.dump(state, open("state.ckpt", "w"))
    """
    assert findings(source) == []


LOOP = """
    import json
    from concurrent.futures import ThreadPoolExecutor

    def loop(llm, batches, pool: ThreadPoolExecutor):
        for batch in batches:
            json.dump(batch, open("state.ckpt", "w"))
            pool.submit(lambda: llm.invoke(f"Summarize: {batch}")){wait}
"""


@pytest.mark.parametrize(("wait", "expected"), [("", [(6, "SG304")]), (".result()", [])])
def test_write_in_a_loop_with_the_dispatch(wait: str, expected: list) -> None:
    assert findings(LOOP.replace("{wait}", wait)) == expected


def test_langgraph_saver_and_compactor_lock() -> None:
    source = """
        import threading
        from langgraph.checkpoint.memory import InMemorySaver
        from summaryguard.guard import Compactor

        class Agent:
            def __init__(self, summarize):
                self.compactor = Compactor(summarize)
                self.saver = InMemorySaver()

            def on_turn(self, turns, config, checkpoint):
                threading.Thread(target=self.compactor.compact, args=(turns,)).start()
                self.saver.put(config, checkpoint, {}, {})
                with self.compactor.lock:
                    self.saver.put(config, checkpoint, {}, {})
    """
    assert findings(source) == [(12, "SG304")]


# -- the traps are traps -------------------------------------------------------------------------


def test_unrelated_thread_trap_flags_once_the_thread_compacts() -> None:
    text = (FIXTURES / "trap_unrelated_thread.py").read_text()
    assert ANALYZER.analyze([("trap.py", text)]) == ([], [])
    mutated = text.replace("target=self.heartbeat", "target=self.compact")
    found, _ = ANALYZER.analyze([("trap.py", mutated)])
    assert [f.code for f in found] == ["SG304"]


def test_runtime_trap_flags_raw_writes() -> None:
    text = (FIXTURES / "trap_summaryguard_runtime.py").read_text()
    mutated = text.replace("self.store.save(checkpoint)", "json.dump(checkpoint, open('turn.ckpt', 'w'))")
    found, _ = ANALYZER.analyze([("trap.py", "import json\n" + mutated)])
    assert [f.code for f in found] == ["SG304"]


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        # the template now asks for a summary: the model folds the index summary again
        ('"Context: {context_str}\\nRewrite the question: {query_str}"', '"Summarize: {context_str}"', [(28, "SG303")]),
        # a model, not a template, in a function *named* for compaction, fed a parameter *named*
        # like a summary: names alone (SPEC 3.1.1), no instruction and no summary value reach it
        ("def render_final(final_prompt: ChatPromptTemplate,", "def summarize_final(final_prompt: Any,", []),
    ],
)
def test_summary_lookalikes_trap_flags_a_real_recompaction(old: str, new: str, expected: list) -> None:
    text = (FIXTURES / "trap_summary_lookalikes.py").read_text()
    assert ANALYZER.analyze([("trap.py", text)]) == ([], [])
    assert old in text
    mutated = text.replace(old, new)
    if "summarize_final" in new:
        mutated = mutated.replace("final_prompt.invoke(", "final_model.invoke(")
    found, _ = ANALYZER.analyze([("trap.py", mutated)])
    assert [(f.line, f.code) for f in found] == expected


def test_messages_report_what_to_do() -> None:
    found, _ = ANALYZER.analyze([("fixture.py", (FIXTURES / "compaction_records.py").read_text())])
    messages = {f.code: f.message for f in found}
    assert "generation" in messages["SG301"] and "Compactor" in messages["SG301"]
    assert "drop manifest" in messages["SG302"]
    assert "check_resume" in messages["SG303"]
