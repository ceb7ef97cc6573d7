"""A writer process for test_fencing_crash.py (not collected: no test_ prefix).

Reads one command per line on stdin, answers one JSON line on stdout:

* ``open FOLDER TRIAL K``: open the store, claim it (``store.writer()``), write K turns;
* ``run``: keep writing the next turn until a write is refused as stale (the
  harness stops this process somewhere in that loop and resumes it after
  another writer took over); answers with every turn that landed;
* ``takeover FOLDER TRIAL M``: open the store, claim it, answer ``claimed``,
  write M turns, answer ``done``;
* ``rogue FOLDER TRIAL``: the negative control, an unfenced writer: open a
  fresh store (which learns the current epoch) and write past the newest turn.
"""

from __future__ import annotations

import json
import sys

from summaryguard.guard import Checkpoint, CheckpointStore, StaleWriterError

ROLE = sys.argv[1]


def checkpoint(turn: int, trial: str, epoch: int) -> Checkpoint:
    return Checkpoint(turn, None, None, {"by": ROLE, "trial": trial, "epoch": epoch})


def say(**fields: object) -> None:
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


def next_turn(turn: int | None) -> int:
    return 0 if turn is None else turn + 1


def main() -> None:
    writer = None
    trial = ""
    for line in sys.stdin:
        command, *args = line.split()
        if command == "open" or command == "takeover":
            folder, trial, count = args[0], args[1], int(args[2])
            writer = CheckpointStore(folder).writer()
            if command == "takeover":
                say(event="claimed", epoch=writer.epoch, resumed=writer.turn)
            for _ in range(count):
                writer.save(checkpoint(next_turn(writer.turn), trial, writer.epoch))
            say(event="opened" if command == "open" else "done", epoch=writer.epoch, turn=writer.turn)
        elif command == "run":
            assert writer is not None
            landed = []
            while True:
                turn = next_turn(writer.turn)
                try:
                    writer.save(checkpoint(turn, trial, writer.epoch))
                except StaleWriterError as err:
                    say(event="stale", landed=landed, refused=turn, current_epoch=err.current_epoch)
                    break
                landed.append(turn)
        elif command == "rogue":
            store = CheckpointStore(args[0])
            newest = store.latest()
            turn = next_turn(newest.turn if newest else None)
            store.save(checkpoint(turn, args[1], -1))
            say(event="rogue", turn=turn)


if __name__ == "__main__":
    main()
