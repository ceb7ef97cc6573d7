"""``RefuseRederivation``: every tool of a LangChain agent refuses to re-derive a dropped reference.

``create_agent`` runs every tool call through its middlewares'
``wrap_tool_call``, and an exception raised there propagates out of the tool
node (it is not turned into a message for the model). So one middleware
guards every tool the agent has, including tools the user never wrapped: in a
run resumed through :func:`guard_agent`, a call of a tool that produced a
reference the summary dropped (before the resume, or during the run) raises
:class:`~summaryguard.guard.SummaryReconciliationError` (``rederivation``)
instead of running, whatever its arguments are now.

The check is the LangGraph room's tool check (``_guard_method``), made once
per tool name: outside a resumed run it costs two context-variable reads.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware

from summaryguard.plugins.langgraph._tools import _guard_method

__all__ = ["RefuseRederivation"]


def _admit() -> None:
    """The body of a tool check: the guard around it refuses, or nothing happens."""


class RefuseRederivation(AgentMiddleware):
    """Agent middleware: a tool call that would re-derive a dropped reference raises instead of running."""

    def __init__(self) -> None:
        super().__init__()
        self._checks: dict[str, Callable[[], None]] = {}

    def _check(self, request: Any) -> None:
        name = request.tool_call["name"]
        check = self._checks.get(name)
        if check is None:
            check = self._checks[name] = _guard_method(_admit, name)
        check()

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        self._check(request)
        return handler(request)

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        self._check(request)
        return await handler(request)
