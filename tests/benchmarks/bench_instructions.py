"""Instructions per call, counted by valgrind: figures a loaded machine cannot move (not a test).

    python tests/benchmarks/bench_instructions.py [--calls N] [--folder DIR]

On a shared 2-core machine the wall-clock benchmarks (bench_runtime.py,
bench_store.py) move by 2x with the neighbours' load. This one runs the same
operations under ``valgrind --tool=callgrind`` and reports user-space
instructions per call, the same in every run: the guarded resume against the
design note's inline check (seed-shaped objects, 10 dependencies), and
``CheckpointStore.save`` (plain and keyed) against a bare atomic write of the
same bytes, with the part of a save that is ``Checkpoint.canonical_body`` and
the seal. Kernel work (the fsyncs, the disk) is not counted: this measures
the software, and the ratios are of instructions, not of time.

Each operation runs between two calls of ``math.gamma``, where callgrind is
told to dump its counters (``--dump-before=math_gamma``), so one valgrind run
measures them all. Needs valgrind on PATH and a CPython whose ``math`` module
keeps its symbols.
"""

from __future__ import annotations

import argparse
import glob
import math
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))


def operations(folder: str) -> list[tuple[str, Callable[[int], Any]]]:
    """The operations measured, each ``op(i)`` for the i-th call (set up here, outside the counts)."""
    sys.path.insert(0, HERE)
    from bench_runtime import SeedCheckpoint, SeedSummary, guarded, resume_from_checkpoint, undecorated
    from bench_store import KEY, bare_atomic_write, sample

    from summaryguard.guard import CheckpointStore
    from summaryguard.guard.store import _DOMAIN

    refs = {f"ref-{i}": f"value-{i}" for i in range(30)}
    deps = [f"ref-{i}" for i in range(10)]
    seed = SeedCheckpoint(41, SeedSummary(7, refs), 7)
    root = tempfile.mkdtemp(dir=folder)
    plain = CheckpointStore(os.path.join(root, "plain"))
    keyed = CheckpointStore(os.path.join(root, "keyed"), key=KEY)
    bare = os.path.join(root, "bare")
    os.mkdir(bare)
    payload = plain.save(sample(0)).read_bytes()
    one = sample(1)
    body = one.canonical_body()
    plain_turns = iter(range(1, 10**9))
    keyed_turns = iter(range(1, 10**9))
    # Checkpoints are built in the op, as in bench_store (each write a new turn); their
    # construction is measured alone too and subtracted.
    return [
        ("the harness (an empty op)", lambda i: None),
        ("undecorated body", lambda i: undecorated(seed, deps)),
        ("inline check (seed, 10 deps)", lambda i: resume_from_checkpoint(seed, deps)),
        ("guarded resume (seed, 10 deps)", lambda i: guarded(seed, deps)),
        ("bare atomic write", lambda i: bare_atomic_write(bare, f"bare-{i:06d}.json", payload)),
        ("build a checkpoint (subtracted)", lambda i: sample(i)),
        ("CheckpointStore.save plain", lambda i: plain.save(sample(next(plain_turns)))),
        ("CheckpointStore.save keyed", lambda i: keyed.save(sample(next(keyed_turns)))),
        ("  of which canonical_body", lambda i: one.canonical_body()),
        ("  of which the plain seal", lambda i: plain._seal.seal(_DOMAIN, (body,))),
        ("  of which the keyed seal", lambda i: keyed._seal.seal(_DOMAIN, (body,))),
    ]


def child(calls: int, folder: str) -> None:
    ops = operations(folder)
    for _, op in ops:  # warm up: specialization, caches, first-use work
        for i in range(20):
            op(10**6 + i)
    for _, op in ops:
        math.gamma(1.5)
        for i in range(calls):
            op(i)
    math.gamma(1.5)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="calls of each operation (default 300)")
    parser.add_argument("--folder", default="/dev/shm" if os.path.isdir("/dev/shm") else None, help="where the writes go")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.calls, args.folder)
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is not installed: nothing measured")
        return 2
    with tempfile.TemporaryDirectory() as out:
        prefix = os.path.join(out, "cg.out")
        subprocess.run(
            ["valgrind", "--tool=callgrind", "--dump-before=math_gamma", f"--callgrind-out-file={prefix}",
             os.path.realpath(sys.executable), os.path.abspath(__file__), "--child", "--calls", str(args.calls),
             *(["--folder", args.folder] if args.folder else [])],
            check=True, capture_output=True,
        )
        dumps = sorted(glob.glob(prefix + ".*"), key=lambda p: int(p.rsplit(".", 1)[1]))
        totals = []
        for path in dumps:
            with open(path) as handle:
                totals.append(next(int(line.split()[1]) for line in handle if line.startswith("summary:")))
    names = [name for name, _ in operations(tempfile.gettempdir())]
    per = dict(zip(names, (t / args.calls for t in totals[1:]), strict=False))  # dump 1 is the start-up
    build = per["build a checkpoint (subtracted)"]
    for kind in ("plain", "keyed"):
        per[f"CheckpointStore.save {kind}"] -= build
    print(f"instructions per call (valgrind callgrind, {args.calls} calls each, Python {sys.version.split()[0]})")
    for name, value in per.items():
        print(f"   {name:<34} {value:>10,.0f}")
    harness = per["the harness (an empty op)"]
    inline, guarded = per["inline check (seed, 10 deps)"] - harness, per["guarded resume (seed, 10 deps)"] - harness
    print(f"   guarded / inline, the harness taken out of both: {guarded / inline:.2f}x")
    bare = per["bare atomic write"]
    for kind in ("plain", "keyed"):
        save = per[f"CheckpointStore.save {kind}"]
        rest = save - per["  of which canonical_body"] - per[f"  of which the {kind} seal"]
        print(f"   save {kind}: {save / bare:.1f}x the bare write's instructions; without the JSON and the seal "
              f"{rest:,.0f} ({rest / bare:.1f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
