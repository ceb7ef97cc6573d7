"""Which functions can matter, decided on the stdlib ``ast`` before libcst is paid.

The engine parses every file that passed the text pre-filter with CPython's
parser first (about a tenth of libcst's cost). One iterative walk of that tree
gives the file's depth (too-deep files are refused; an ``elif`` chain counts
as flat, since the engine walks it iteratively), its code words (for the
code-word gate) and, per function, the words it uses and the names it calls.

A lambda bound to a name (``resume = lambda cp: ...``) is a function of that
name, as :class:`~.project.Project` indexes it; its words also stay its
owner's, as they were before it was a function of its own.

The words give two sets of functions (:func:`relevance`). The *seeds*: a
function whose own words show evidence (a resume, summary, checkpoint, tool or
reconciliation word), or whose words together with those of the helpers it
calls that resume something (``agent.resume(x)``, directly or through relays)
show evidence: then the caller and the whole chain. The *bound*: the seeds and
their callers, by name, four levels up (a caller of a user resume function or
of a validator may matter). A method's words include the classes its class
builds into ``self.<attr>`` (``self.store = CheckpointStore(...)``). Within the
bound, the solver decides which callers are analyzed from what their callees'
analyses say (:func:`.solver.solve`). Everything else in a parsed file keeps an
"unknown" summary and costs nothing.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, field

from .cpython_tree import child_fields, children, exact_fields, has_ctx
from .instructions import asks_for_summary
from .lexicon import WEAK_RESUME_NAMES

__all__ = ["FileScan", "grows_callers", "relevance", "scan"]

_WORD_OF: dict[type, str] = {
    ast.Name: "id",
    ast.Attribute: "attr",
    ast.FunctionDef: "name",
    ast.AsyncFunctionDef: "name",
    ast.ClassDef: "name",
    ast.arg: "arg",
    ast.keyword: "arg",
    ast.alias: "name",
    ast.ImportFrom: "module",
    ast.Constant: "value",
}
#: What :func:`scan` does with a node besides reading its words: walk its children
#: (``_PLAIN``), or also note a call (``_CALL``), open a function (``_DEF``) or a class's
#: prefix (``_CLASS``), look for ``self.x = C()`` and named lambdas (``_ASSIGN``), or
#: flatten an ``elif`` chain (``_IF``).
_PLAIN, _CALL, _DEF, _CLASS, _ASSIGN, _IF = range(6)
_ROLES: dict[type, int] = {
    ast.Call: _CALL, ast.FunctionDef: _DEF, ast.AsyncFunctionDef: _DEF, ast.ClassDef: _CLASS,
    ast.Assign: _ASSIGN, ast.AnnAssign: _ASSIGN, ast.If: _IF,
}
#: Per node type: its child fields, 1 if it has a ``ctx`` (one level below it), the field
#: that holds its word, its role, and whether its fields are exact (see :func:`_plan`).
_PLANS: dict[type, tuple[tuple[str, ...], int, str | None, int, bool]] = {}


def _plan(kind: type) -> tuple[tuple[str, ...], int, str | None, int, bool]:
    """How :func:`scan` walks a node of type ``kind``, computed once per type: its child
    fields and whether they hold only nodes and Nones (see :mod:`.cpython_tree`)."""
    plan = _PLANS[kind] = (
        child_fields(kind), 1 if has_ctx(kind) else 0, _WORD_OF.get(kind), _ROLES.get(kind, _PLAIN), exact_fields(kind),
    )
    return plan


#: Names too common to follow from a relevant function to its callers.
_GENERIC = frozenset({"<module>", "run", "get", "load", "call", "invoke", "start", "main", "step", "execute", "send"})


@dataclass
class FunctionWords:
    words: set[str] = field(default_factory=set)
    calls: set[str] = field(default_factory=set)


@dataclass
class FileScan:
    depth: int
    words: str
    #: Qualified name (as :class:`~.project.Project` spells it) -> words and calls.
    functions: dict[str, FunctionWords]
    #: Names passed to a node registration (``add_node(...)``, see :func:`scan`).
    nodes: set[str] = field(default_factory=set)


_INSTRUCTION_WORDS = ("summar", "condens", "compact", "compress")


def _asks_for_a_summary(text: str) -> bool:
    """Prose (not an identifier) with a summary word: ``"Summarize the conversation"``.

    Looser than :func:`.instructions.asks_for_summary`, on purpose: a string in a function
    only lends the function a word for the bound (see :func:`relevance`), which errs on
    the side of reading more; a prompt constant lends its request to every reader, so it
    takes the strict test (:func:`_summary_prompt`)."""
    if " " not in text:
        return False
    lowered = text.lower()
    return any(word in lowered for word in _INSTRUCTION_WORDS)


def scan(tree: ast.Module, module_name: str, registrations: frozenset[str] = frozenset()) -> FileScan:
    """Depth, code words and per-function words of one module, iteratively, and the
    names it passes to any of ``registrations`` (a framework model's ``add_node(...)``:
    a name or an attribute's last part, positional or keyword).

    The hottest loop of the screening (every node of every file the text pre-filter
    keeps): one look-up per node type gives its plan (:func:`_plan`), node kinds are
    tested by exact type, and the children of the common nodes are pushed straight from
    their fields (see :func:`.cpython_tree.exact_fields`). Over the real-code corpus's
    1,533 screened-in files: 0.52x the time of a walk that listed each node's children
    first, with the same result for every file."""
    deepest = 0
    words: list[str] = []
    functions: dict[str, FunctionWords] = {}
    top = functions.setdefault(f"{module_name}.<module>", FunctionWords())
    # (node, depth, owning function's words, qualified-name prefix for defs below)
    stack: list[tuple[ast.AST, int, FunctionWords, str]] = [(tree, 0, top, module_name)]
    pop = stack.pop
    push = stack.append
    lambdas: list[tuple[FunctionWords, FunctionWords]] = []  # (owner, the lambda's own words)
    #: Per class (qualified): the constructors its methods assign to ``self.<attr>``.
    built_on_self: dict[str, set[str]] = {}
    nodes: set[str] = set()
    #: Module-level names bound to a prompt that asks for a summary (``FOLD = "Summarize ..."``).
    prompts: set[str] = set()
    plans = _PLANS
    while stack:
        node, depth, owner, prefix = pop()
        kind = type(node)
        plan = plans.get(kind)
        if plan is None:
            plan = _plan(kind)
        fields, below_ctx, attr, role, exact = plan
        if depth + below_ctx > deepest:  # a ``ctx`` node lies one level down, not walked
            deepest = depth + below_ctx
        if attr is not None:
            value = getattr(node, attr)
            if type(value) is str:
                if len(value) <= 64:
                    for part in value.split("."):
                        if part.isidentifier():
                            words.append(part)
                            owner.words.add(part)
                if attr == "value" and _asks_for_a_summary(value):
                    # a prompt that asks for a summary is evidence of compaction, whatever the
                    # code's names are (string contents survive renaming)
                    words.append("summarize")
                    owner.words.add("summarize")
        if role <= _CALL:
            if role == _CALL:
                func = node.func  # type: ignore[attr-defined]
                func_kind = type(func)
                name = func.attr if func_kind is ast.Attribute else func.id if func_kind is ast.Name else None
                if name:
                    owner.calls.add(name)
                    if name in registrations:
                        for arg in [*node.args, *(k.value for k in node.keywords)]:  # type: ignore[attr-defined]
                            arg_kind = type(arg)
                            if arg_kind is ast.Name:
                                nodes.add(arg.id)  # type: ignore[attr-defined]
                            elif arg_kind is ast.Attribute:
                                nodes.add(arg.attr)  # type: ignore[attr-defined]
            if not exact:
                stack.extend((child, depth + 1, owner, prefix) for child in children(node, fields))
                continue
            deeper = depth + 1
            for field in fields:
                value = getattr(node, field)
                if type(value) is list:
                    for child in value:
                        if child is not None:
                            push((child, deeper, owner, prefix))
                elif value is not None:
                    push((value, deeper, owner, prefix))
            continue
        if role == _DEF:
            qualname = f"{prefix}.{node.name}"  # type: ignore[attr-defined]
            child_owner = functions.setdefault(qualname, FunctionWords())
            child_prefix = f"{qualname}.<locals>"
            for decorator in node.decorator_list:  # type: ignore[attr-defined]  # what a decorator says, it says of the function
                push((decorator, depth + 1, child_owner, prefix))
            returns = node.returns  # type: ignore[attr-defined]
            below = [node.args, *node.body, *([returns] if returns else [])]  # type: ignore[attr-defined]
            stack.extend((child, depth + 1, child_owner, child_prefix) for child in below)
            continue
        if role == _CLASS:
            child_prefix = f"{prefix}.{node.name}"  # type: ignore[attr-defined]
            stack.extend((child, depth + 1, owner, child_prefix) for child in children(node, fields))
            continue
        below = children(node, fields)
        if role == _ASSIGN:
            if owner is top and prefix == module_name:
                prompt = _summary_prompt(node)  # type: ignore[arg-type]
                if prompt is not None:
                    prompts.add(prompt)
            if prefix.endswith(".<locals>"):
                built = _constructor_on_self(node)  # type: ignore[arg-type]
                if built:
                    owning_class = prefix[: -len(".<locals>")].rpartition(".")[0]
                    built_on_self.setdefault(owning_class, set()).add(built)
            named = _named_lambda(node)
            if named is not None:
                target, function = named
                qualname = f"{prefix}.{target.id}"
                words_of = functions.setdefault(qualname, FunctionWords())
                lambdas.append((owner, words_of))
                push((target, depth + 1, owner, prefix))
                stack.extend((c, depth + 2, words_of, f"{qualname}.<locals>") for c in (function.args, function.body))
                below = [c for c in below if c is not target and c is not function]
        elif _is_elif(node):  # role _IF
            # an ``elif`` is the ``orelse`` of the ``if`` before it, but a chain of
            # them is flat code (and the engine walks it iteratively): same depth
            elif_node = node.orelse[0]  # type: ignore[attr-defined]
            push((elif_node, depth, owner, prefix))
            below = [c for c in below if c is not elif_node]
        stack.extend((child, depth + 1, owner, prefix) for child in below)
    for owner, own in lambdas:
        owner.words |= own.words
        owner.calls |= own.calls
    if prompts:
        # a function that reads a module's summary prompt asks for a summary, as if the prompt's
        # text stood in its body (the string's content, not the constant's name, is the evidence)
        for function_words in functions.values():
            if function_words is not top and not prompts.isdisjoint(function_words.words):
                function_words.words.add("summarize")
    if built_on_self:
        # `self.box = CheckpointStore(p)` in `__init__`: what `self.box` is counts in every
        # method of the class (the value, not the attribute's name, is the evidence)
        for qualname, function_words in functions.items():
            built = built_on_self.get(qualname.rpartition(".")[0])
            if built:
                function_words.words |= built
    return FileScan(deepest, "\n".join(words), functions, nodes)


def _summary_prompt(node: ast.Assign | ast.AnnAssign) -> str | None:
    """``NAME = "Summarize ..."`` (also through ``dedent(...)`` or ``"...".strip()``): the
    name bound to prose that asks for a summary, or None."""
    target = node.targets[0] if type(node) is ast.Assign and len(node.targets) == 1 else getattr(node, "target", None)
    value = node.value
    if type(target) is not ast.Name or value is None:
        return None
    if type(value) is ast.Call:  # ``dedent("""...""")``, ``"""...""".strip()``
        func = value.func
        value = value.args[0] if value.args else func.value if type(func) is ast.Attribute else None
    if type(value) is ast.Constant and type(value.value) is str and asks_for_summary(value.value):
        return target.id
    return None


def _constructor_on_self(node: ast.Assign | ast.AnnAssign) -> str | None:
    """``self.x = Name(...)`` / ``self.x = mod.Name(...)``: the class name it builds."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    if not any(isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self" for t in targets):
        return None
    value = node.value
    if not isinstance(value, ast.Call):
        return None
    func = value.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    return name if name and name[:1].isupper() else None


def _named_lambda(node: ast.AST) -> tuple[ast.Name, ast.Lambda] | None:
    """``name = lambda ...`` / ``name: T = lambda ...`` (as :class:`~.project.Project` indexes it)."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target, value = node.targets[0], node.value
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        target, value = node.target, node.value
    else:
        return None
    if isinstance(target, ast.Name) and isinstance(value, ast.Lambda):
        return target, value
    return None


def _is_elif(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If)


def relevance(scans: Iterable[FileScan], matters: object) -> tuple[set[str], set[str]]:
    """The seeds and the bound (see module doc), as qualified names.

    ``matters(text) -> bool`` decides whether a function's own words are evidence. The
    words say a caller *may* matter; whether it does is known only once its callees are
    analyzed (:func:`.solver.solve` grows from the seeds to the callers of functions whose
    summaries tell their callers something, never beyond the bound).
    """
    decide = matters  # a callable; typed loosely to keep this module free of the prefilter
    table = {q: fw for s in scans for q, fw in s.functions.items()}
    own = {q for q, fw in table.items() if decide("\n".join(fw.words))}  # type: ignore[operator]
    # Grow through callers, but only by names that identify a function: a
    # relevant ``run`` must not make every caller of any ``.run()`` relevant. Never by
    # how many functions of a name the run holds: that would make a file's findings
    # depend on the other files in the run (locality); a caller analyzed because
    # another file's function shares a name resolves its calls in its own module.
    bound = set(own)
    for _ in range(4):
        names = {n for n in (q.rpartition(".")[2] for q in bound) if grows_callers(n)}
        grown = {q for q, fw in table.items() if q not in bound and fw.calls & names}
        if not grown:
            break
        bound |= grown
    # Evidence split between a caller and the helper it hands a value to: `cp = store.latest();
    # go(agent, cp)` with `def go(agent, x): agent.resume(x)` (or through a relay of such
    # helpers). Neither function's words are enough alone; together they are, and the whole
    # chain is analyzed (the value decides).
    seeds = set(own)
    chains = _resume_chains(table)
    #: Whether the helpers' words alone decide. The decision only grows with the words (a
    #: word is a line of the text; every test finds a piece of one word), so when they do,
    #: the caller's words need not be joined in; nor need the helpers' words be joined
    #: when one helper's own words decide (it is in ``own``), nor the caller's with
    #: them when its own do. In agno, 3,383 of the 3,385 callers share 988 sets of
    #: helpers whose words alone decide.
    alone: dict[frozenset[str], bool] = {}
    if chains:
        chained = {name for name in chains if name not in _GENERIC}
        for q, fw in table.items():
            relays = fw.calls & chained
            if not relays:
                continue
            below = frozenset().union(*(chains[n] for n in relays))
            if q in below:
                below = below - {q}
            if not below:
                continue
            wanted = [found for found in (seeds, bound) if not (below <= found and q in found)]
            if not wanted:
                continue
            helpers = alone.get(below)
            if helpers is None:
                helpers = alone[below] = not own.isdisjoint(below) or decide(  # type: ignore[operator]
                    "\n".join(set().union(*(table[h].words for h in below)))
                )
            if helpers or q in own or decide("\n".join(fw.words.union(*(table[h].words for h in below)))):  # type: ignore[operator]
                for found in wanted:
                    found.add(q)
                    found |= below
    return seeds, bound


def grows_callers(name: str) -> bool:
    """Whether a function's name is specific enough to make its callers worth analyzing:
    not a dunder nor one of the names every package calls (``run``, ``get``, ...)."""
    return name not in _GENERIC and not name.startswith("__")


def _resume_chains(table: dict[str, FunctionWords]) -> dict[str, set[str]]:
    """By function name: the functions of that name that resume something themselves
    (call a resume method), or through functions that do, with those functions."""
    chains: dict[str, set[str]] = {}
    for q, fw in table.items():
        if fw.calls & WEAK_RESUME_NAMES:
            chains.setdefault(q.rpartition(".")[2], set()).add(q)
    for _ in range(3):  # relays of relays, bounded
        grown = False
        for q, fw in table.items():
            name = q.rpartition(".")[2]
            if name in _GENERIC:
                continue
            relays = fw.calls & chains.keys()
            relays.discard(name)
            if not relays:
                continue
            below = set().union(*(chains[n] for n in relays))
            if below and not below | {q} <= chains.get(name, set()):
                chains.setdefault(name, set()).update(below | {q})
                grown = True
        if not grown:
            break
    return chains
