"""The seeds and the bound (``engine.relevance.relevance``) against their plain definition.

The engine's version takes shortcuts that rest on the decision only growing with the
words (a function whose own words decide makes every set of words that holds them
decide), and joins sets in C instead of one name at a time. The reference below is the
definition, name by name and word by word; generated tables of functions, their words
and their calls must give the same seeds, bound and chains, with the real word test.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from summaryguard.rules.engine.lexicon import WEAK_RESUME_NAMES
from summaryguard.rules.engine.prefilter import Prefilter
from summaryguard.rules.engine.relevance import FileScan, FunctionWords, _resume_chains, grows_callers, relevance
from summaryguard.rules.engine.vocabulary import Vocabulary

_GENERIC = frozenset({"<module>", "run", "get", "load", "call", "invoke", "start", "main", "step", "execute", "send"})
_MATTERS = Prefilter(Vocabulary.build()).function_matters


def _reference_chains(table: dict[str, FunctionWords]) -> dict[str, set[str]]:
    chains: dict[str, set[str]] = {}
    for q, fw in table.items():
        if fw.calls & WEAK_RESUME_NAMES:
            chains.setdefault(q.rpartition(".")[2], set()).add(q)
    for _ in range(3):
        grown = False
        for q, fw in table.items():
            name = q.rpartition(".")[2]
            if name in _GENERIC:
                continue
            below = {h for n in fw.calls if n in chains and n != name for h in chains[n]}
            if below and not below | {q} <= chains.get(name, set()):
                chains.setdefault(name, set()).update(below | {q})
                grown = True
        if not grown:
            break
    return chains


def _reference(scans: list[FileScan]) -> tuple[set[str], set[str]]:
    table = {q: fw for s in scans for q, fw in s.functions.items()}
    own = {q for q, fw in table.items() if _MATTERS("\n".join(fw.words))}
    bound = set(own)
    for _ in range(4):
        names = {n for n in (q.rpartition(".")[2] for q in bound) if grows_callers(n)}
        grown = {q for q, fw in table.items() if q not in bound and fw.calls & names}
        if not grown:
            break
        bound |= grown
    seeds = set(own)
    chains = _reference_chains(table)
    for q, fw in table.items():
        below = frozenset(h for n in fw.calls if n not in _GENERIC for h in chains.get(n, ()) if h != q)
        if not below:
            continue
        wanted = [found for found in (seeds, bound) if not (below <= found and q in found)]
        if wanted and _MATTERS("\n".join(fw.words.union(*(table[h].words for h in below)))):
            for found in wanted:
                found.add(q)
                found |= below
    return seeds, bound


_NAMES = ["go", "relay", "resume", "restore", "run", "fetch", "rehydrate", "latest", "load", "helper"]
_WORDS = ["summary", "checkpoint", "generation", "store", "agent", "cp", "x", "resume", "latest", "partial", "tool"]

_functions = st.dictionaries(
    st.tuples(st.sampled_from(["a", "b", "c"]), st.sampled_from(_NAMES)).map(lambda p: f"{p[0]}.{p[1]}"),
    st.tuples(st.sets(st.sampled_from(_WORDS), max_size=4), st.sets(st.sampled_from(_NAMES), max_size=4)),
    max_size=14,
)


def _scans(functions: dict[str, tuple[set[str], set[str]]]) -> list[FileScan]:
    by_module: dict[str, dict[str, FunctionWords]] = {}
    for q, (words, calls) in functions.items():
        by_module.setdefault(q.split(".")[0], {})[q] = FunctionWords(set(words), set(calls))
    return [FileScan(0, "", table) for table in by_module.values()]


@settings(max_examples=300, deadline=None)
@given(_functions)
def test_the_seeds_and_the_bound_are_their_definition(functions: dict[str, tuple[set[str], set[str]]]) -> None:
    assert relevance(_scans(functions), _MATTERS) == _reference(_scans(functions))


@settings(max_examples=300, deadline=None)
@given(_functions)
def test_the_resume_chains_are_their_definition(functions: dict[str, tuple[set[str], set[str]]]) -> None:
    table = {q: FunctionWords(set(w), set(c)) for q, (w, c) in functions.items()}
    assert _resume_chains(table) == _reference_chains(table)


def test_a_helper_that_decides_alone_brings_its_caller_and_its_chain() -> None:
    """``cp = store.latest(); go(agent, cp)`` and ``go`` resumes: neither one's words are
    enough alone, together they are; a helper whose own words decide brings them too."""
    functions = {
        "m.caller": ({"agent", "cp"}, {"go"}),
        "m.go": ({"x"}, {"resume"}),
        "m.other": ({"summary", "generation"}, {"relay"}),
        "m.relay": ({"summary", "checkpoint", "generation"}, {"restore"}),
    }
    seeds, bound = relevance(_scans(functions), _MATTERS)
    assert (seeds, bound) == _reference(_scans(functions))
    assert {"m.relay", "m.other"} <= seeds
