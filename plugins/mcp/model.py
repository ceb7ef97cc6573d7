"""The analyzer's model of the Model Context Protocol's clients, as data (see ``summaryguard.plugins.framework``).

An MCP client's ``call_tool`` runs a tool on a server: it obtains a fact from the
outside world, whichever agent framework holds the session. The analyzer knows a
session by value (a constructor, or an annotation: a parameter ``session:
ClientSession``, a helper ``-> tuple[Client, ClientSession, str]``), never by
what the local is called. MCP guarantees none of the checks; it compacts nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["MODEL"]

_CLIENTS = (
    "mcp.ClientSession",
    "mcp.client.session.ClientSession",
    "mcp.client.session_group.ClientSessionGroup",
    "fastmcp.Client",
    "fastmcp.client.Client",
    "fastmcp.client.client.Client",
)

MODEL: Mapping[str, Any] = {
    "name": "mcp",
    "vocabulary": {"tool-calls": tuple(f"{client}.call_tool" for client in _CLIENTS)},
}
