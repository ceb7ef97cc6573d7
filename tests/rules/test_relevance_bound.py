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
    """By name: the functions that call a resume method, then, three rounds at most, the
    functions that call one of a chain's names, with that chain, name by name."""
    chains: dict[str, set[str]] = {}
    for qualified in sorted(table):
        if not table[qualified].calls.isdisjoint(WEAK_RESUME_NAMES):
            chains.setdefault(qualified.rpartition(".")[2], set()).add(qualified)
    rounds, changed = 0, True
    while changed and rounds < 3:
        rounds, changed = rounds + 1, False
        for qualified, fw in table.items():
            name = qualified.rpartition(".")[2]
            if name in _GENERIC:
                continue
            reached: set[str] = set()
            for called in fw.calls:
                if called != name and called in chains:
                    reached |= chains[called]
            if reached and not reached | {qualified} <= chains.get(name, set()):
                chains.setdefault(name, set()).update(reached | {qualified})
                changed = True
    return chains


def _reference(scans: list[FileScan]) -> tuple[set[str], set[str]]:
    table = {q: fw for s in scans for q, fw in s.functions.items()}
    own = {q for q, fw in table.items() if _MATTERS("\n".join(fw.words))}
    bound = set(own)
    for _ in range(4):  # callers by a name that identifies a function of the bound, four levels up
        callers = {
            q for q, fw in table.items() for called in fw.calls
            if grows_callers(called) and any(b.rpartition(".")[2] == called for b in bound)
        }
        if callers <= bound:
            break
        bound |= callers
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
