"""The outside world every framework's crash test runs against (SPEC §1).

It lives on disk, so that it outlives the agent process a test kills, and it never
hands out a handle twice: a tool re-run after a resume gets ``vm-2``, not the
``vm-1`` the lost summary held. One world for every framework's app, so that the
frameworks' tests differ only in the framework.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["World"]


class World:
    """The outside world: VMs it creates (numbered, never reused) and the disks attached to them."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        if not self.path.exists():
            self._save({"created": [], "disks": []})

    def _load(self) -> dict[str, Any]:
        return json.loads(self.path.read_text())

    def _save(self, data: dict[str, Any]) -> None:
        self.path.write_text(json.dumps(data))

    def create_vm(self) -> str:
        data = self._load()
        handle = f"vm-{len(data['created']) + 1}"
        data["created"].append(handle)
        self._save(data)
        return handle

    def attach_disk(self, vm: str) -> str:
        data = self._load()
        data["disks"].append(vm)
        self._save(data)
        return f"disk-{len(data['disks'])} attached to {vm}"

    @property
    def created(self) -> list[str]:
        return self._load()["created"]

    @property
    def disks(self) -> list[str]:
        return self._load()["disks"]
