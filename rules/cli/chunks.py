"""Split the analysis of one run into chunks that worker processes analyze apart.

The engine is local (SPEC §3.1.1): a file's findings depend only on its own
content, the configuration and the project modules it imports, transitively.
So the checked files of a run can be analyzed in groups, each group with the
modules its files import (found through the run's import graph, see
:func:`.dependencies.import_graph`), and every finding is the one the whole
run analyzed at once would report. A checked file that a file of another chunk
imports is analyzed there too, as *context* (its findings are reported only by
the chunk that checks it).

The closure is taken over every module of the run, not cut at
:data:`~.dependencies.MAX_DEPTH` levels from each file: the one-process run
analyzes all of them together, so a chain of imports through checked files
can be longer than that bound, and cutting it would change findings.

Chunks are balanced by text length, counting the context each chunk must
analyze. Files that share no module with the rest of the run (unrelated
packages checked as one tree: their import closures never meet, see
:func:`groups`) are placed as a whole group, largest group first, in the
least loaded chunk, while it stays near an even share: a package split
between two chunks makes both analyze its common modules (the real-code
corpus as one tree was planned at 1.40x on 2 cores that way, and ran in one
process). A group too large for a share is split file by file: files are
placed largest first (with what they import), each in the chunk whose cost,
with the file and the modules it brings that the chunk does not have yet, is
the smallest. A file that some chunk already analyzes with
all its imports (as the context of an importer placed before it) goes there,
for free: no module is analyzed twice without need, and a module stays with an
importer (the engine's locality has known gaps where a module's own findings
depend on its importers, see ``tests/rules/test_locality.py``; this keeps them
from showing when one importer is all there is).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["MODULE_COST", "WHOLE_GROUP_SLACK", "Chunk", "Unit", "closures", "components", "groups", "partition"]

#: What analyzing a module costs beyond its text, in characters: its solve and
#: bookkeeping (keeps a chunk of many tiny files from looking free).
MODULE_COST = 2_000


@dataclass(frozen=True)
class Unit:
    """One module of the run: a checked file or a context module."""

    #: Normalized absolute path: the key of the import graph.
    key: str
    #: The path the engine names it by (a checked file's display path, a context module's absolute path).
    path: str
    text: str
    checked: bool

    @property
    def cost(self) -> int:
        return len(self.text) + MODULE_COST


@dataclass
class Chunk:
    """The files one worker checks, and the modules it analyzes with them, both in run order."""

    sources: list[Unit] = field(default_factory=list)
    context: list[Unit] = field(default_factory=list)
    #: The chunk's groups (see :func:`groups`), each with the modules its files import:
    #: analyzed apart, as projects of their own. Empty: the chunk is one project.
    parts: list[Chunk] = field(default_factory=list)

    @property
    def cost(self) -> int:
        return sum(u.cost for u in self.sources) + sum(u.cost for u in self.context)


def components(
    keys: Sequence[str], graph: Mapping[str, Sequence[str]]
) -> tuple[list[list[str]], dict[str, int]]:
    """The strongly connected components of ``graph`` reachable from ``keys`` (import
    cycles are common in packages), in reverse topological order (a component's
    successors come before it), and the index of each key's component. Iterative
    Tarjan: as deep an import chain as a package holds never hits the recursion limit."""
    index_of: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    component_of: dict[str, int] = {}
    found: list[list[str]] = []  # in reverse topological order (Tarjan's output order)
    counter = 0
    for start in keys:
        if start in index_of:
            continue
        work: list[tuple[str, int]] = [(start, 0)]
        while work:
            node, position = work.pop()
            if position == 0:
                index_of[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            successors = graph.get(node, ())
            advanced = False
            while position < len(successors):
                successor = successors[position]
                position += 1
                if successor not in index_of:
                    work.append((node, position))
                    work.append((successor, 0))
                    advanced = True
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index_of[successor])
            if advanced:
                continue
            if low[node] == index_of[node]:
                members: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component_of[member] = len(found)
                    members.append(member)
                    if member == node:
                        break
                found.append(members)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return found, component_of


def closures(units: Sequence[Unit], graph: Mapping[str, Sequence[str]]) -> dict[str, frozenset[str]]:
    """For each checked unit (by key): the keys of every module it imports, transitively.

    One pass over the :func:`components` in reverse topological order: each component's
    closure is built once from its successors', so the cost grows with the graph, not
    with files times modules."""
    found, component_of = components([u.key for u in units], graph)
    reach: list[frozenset[str]] = []
    for members in found:  # successors' components come first
        covered: set[str] = set(members)
        for member in members:
            for successor in graph.get(member, ()):
                other = component_of[successor]
                if other != component_of[member]:
                    covered |= reach[other]
        reach.append(frozenset(covered))
    return {u.key: reach[component_of[u.key]] - {u.key} for u in units if u.checked}


def groups(checked: Sequence[Unit], covers: Mapping[str, frozenset[str]]) -> list[list[Unit]]:
    """The checked units, grouped so that no two groups share a module they analyze
    (connected through the modules of their ``covers``), each in run order, groups in
    the order of their first unit. Unrelated packages checked in one run are apart."""
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent.setdefault(key, key) != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    for unit in checked:
        first = root(unit.key)
        for key in covers[unit.key]:
            other = root(key)
            if other != first:
                parent[other] = first
    found: dict[str, list[Unit]] = {}
    for unit in checked:
        found.setdefault(root(unit.key), []).append(unit)
    return list(found.values())


#: A group of files that share no module with the others (see :func:`groups`) is placed
#: whole in the least loaded chunk when that chunk stays within this factor of an even
#: share; a larger group is split file by file, each chunk analyzing what its files need.
WHOLE_GROUP_SLACK = 1.1


def partition(units: Sequence[Unit], graph: Mapping[str, Sequence[str]], jobs: int) -> list[Chunk]:
    """Up to ``jobs`` chunks covering every checked unit once, each with its context.

    ``units`` are the run's modules in run order (checked files first, then context
    modules); ``graph`` maps a unit's key to the keys of the units it imports.

    Groups of files that share no module (unrelated packages in one run) are placed
    whole, largest first, where they fit an even share: splitting one would make two
    chunks analyze its common modules. A group too large for that is split file by file
    (see the module doc), and the others fill in around it."""
    by_key = {u.key: u for u in units}
    order = {u.key: i for i, u in enumerate(units)}
    reach = closures(units, graph)
    checked = [u for u in units if u.checked]
    count = max(1, min(jobs, len(checked)))
    covers = {u.key: reach[u.key] | {u.key} for u in checked}

    def cost(keys: set[str] | frozenset[str]) -> int:
        return sum(by_key[k].cost for k in keys)

    members: list[set[str]] = [set() for _ in range(count)]
    covered: list[set[str]] = [set() for _ in range(count)]
    loads = [0] * count

    def place_files(files: Sequence[Unit]) -> None:
        # The largest first (with what they bring), as longest-processing-time scheduling does.
        queue = sorted(files, key=lambda u: (-cost(covers[u.key]), order[u.key]))
        for unit in queue:
            # A chunk that analyzes the file and all it imports already (as the context of an
            # importer, which the queue puts first) takes it for free: no module is added.
            free = [i for i in range(count) if covers[unit.key] <= covered[i]]
            best, best_load = 0, -1
            for i in free or range(count):
                load = loads[i] + cost(covers[unit.key] - covered[i])
                if best_load < 0 or load < best_load:
                    best, best_load = i, load
            members[best].add(unit.key)
            covered[best] |= covers[unit.key]
            loads[best] = best_load

    grouped = [(group, frozenset().union(*(covers[u.key] for u in group))) for group in groups(checked, covers)]
    grouped.sort(key=lambda item: (-cost(item[1]), order[item[0][0].key]))
    share = sum(cost(keys) for _, keys in grouped) / count
    for group, keys in grouped:
        lightest = min(range(count), key=lambda i: (loads[i], i))
        if len(grouped) > 1 and loads[lightest] + cost(keys) <= share * WHOLE_GROUP_SLACK:
            members[lightest].update(u.key for u in group)
            covered[lightest] |= keys
            loads[lightest] += cost(keys)
        else:
            place_files(group)
    chunks: list[Chunk] = []
    for own, cover in zip(members, covered):
        if not own:
            continue
        chunk = _chunk(own, cover, by_key, order)
        mine = [by_key[key] for key in sorted(own, key=order.__getitem__)]
        for group in groups(mine, covers):
            keys = {u.key for u in group}
            chunk.parts.append(_chunk(keys, frozenset().union(*(covers[k] for k in keys)), by_key, order))
        chunks.append(chunk)
    return chunks


def _chunk(own: set[str], cover: set[str] | frozenset[str], by_key: Mapping[str, Unit], order: Mapping[str, int]) -> Chunk:
    """The chunk that checks ``own`` and analyzes the rest of ``cover`` as context, in run order."""
    chunk = Chunk()
    for key in sorted(cover, key=order.__getitem__):
        (chunk.sources if key in own else chunk.context).append(by_key[key])
    return chunk
