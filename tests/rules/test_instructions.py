"""The one test of whether prose asks a model for a summary (:mod:`.engine.instructions`)."""

from __future__ import annotations

import pytest

from summaryguard.rules.engine.instructions import asks_for_summary

ASKS = [
    "Summarize the conversation so far.",
    "Please condense these turns into one paragraph",
    "Compress the history below.",
    "Compact the following messages, keeping every id.",
    "You compress long sessions into notes.",
    "Your job is to compact the conversation history",
    "Write a summary: keep every handle verbatim",
    "Read the log; then compress it for the next agent",
    "Summarize ... without losing any identifier",
    "Summarize this: [conversation]",  # the label itself asks
    "summarizing_system.j2",  # a template file's name
    "Fold the turns into the running_summary field",  # a summary word in prose
]

ASKS_NOTHING = [
    "",
    "summary_text",  # a key
    "compact_prompt",  # a name
    "You are a support agent. Keep your answers compact and friendly.",
    "Answer in a compact form, no preamble.",
    "A compressed overview is fine.",
    "Be compact.",
    "Translate faithfully. Do not summarize or compress anything.",
    "There is no need to condense the notes",
    "Copy the turns without further condensing",
    "Never compact the history",
    "Reason: [summary of findings]",  # a field of the answer's format
    "Say hello to the user",
    "Use gzip compression for the upload",
]


@pytest.mark.parametrize("text", ASKS)
def test_asks(text: str) -> None:
    assert asks_for_summary(text)


@pytest.mark.parametrize("text", ASKS_NOTHING)
def test_asks_nothing(text: str) -> None:
    assert not asks_for_summary(text)


def test_a_denial_reaches_no_further_than_its_clause() -> None:
    """"Do not" in one sentence refuses nothing the next sentence asks for."""
    assert asks_for_summary("Do not invent facts. Summarize the turns.")
    assert asks_for_summary("Do not invent facts; compress the turns.")
    assert not asks_for_summary("Do not invent facts. Keep it compact.")
