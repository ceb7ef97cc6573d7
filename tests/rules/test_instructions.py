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
    "Rewrite the conversation below as a compressed version that keeps every path.",
    "Rewrite the chat as a compact version of itself.",
    "You are the context compactor: it compacts the history into a memo.",
    "Perform context compaction on the messages below.",
    "Rules:\n- Compress prior turns into one note\n- Keep every path verbatim",  # a list item
    "Context is over budget: compress prior turns into a memo.",
    "If there is no previous summary, summarize the new lines alone.",  # "no" is a determiner there
    "Never skip ids, condense the history below.",  # the denial is another clause's
    "Don't reply, just summarize:",
    "Don't just summarize the thread, also list the open items.",  # "not only"
    "Avoid jargon, summarize the thread.",
    "Write a concise summary of the conversation.",  # the noun, as what a verb makes
    "Record a concise summary of the conversation so far.",
    "Fold these turns into a short summary.",
]

ASKS_NOTHING = [
    "",
    "summary_text",  # a key
    "compact_prompt",  # a name
    "You are a support agent. Keep your answers compact and friendly.",
    "Answer in a compact form, no preamble.",
    "Be compact.",
    "Translate faithfully. Do not summarize or compress anything.",
    "There is no need to condense the notes",
    "Copy the turns without further condensing",
    "Never compact the history",
    "Reason: [summary of findings]",  # a field of the answer's format
    "Say hello to the user",
    "Use gzip compression for the upload",
    "Return compact JSON with keys intent and reply.",
    "No summaries, no preamble.",
    "Avoid summarizing.",
    "You are a study buddy. You can quiz the student, or summarize a chapter when asked.",  # a skill offered
    "You are a helpful assistant. When the user asks, summarize documents concisely.",  # on request only
    "Keep it short and compact.",
    "You are a support agent. Summary of the earlier conversation: the user wants a refund.",  # a label
    "End with one line starting with 'Summary:' that restates your answer.",
    "Here is a summary of the conversation to date:",
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
