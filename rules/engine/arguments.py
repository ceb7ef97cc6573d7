"""Which argument of a call each parameter of a project function receives.

One binding of call arguments to parameters, for every analysis that follows a
value into a callee (or a callee's parameter back to the caller's argument).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

if TYPE_CHECKING:
    from .project import FunctionInfo

__all__ = ["bound_arguments"]


def bound_arguments(call: cst.Call, callee: FunctionInfo) -> dict[str, cst.BaseExpression]:
    """The argument each parameter of ``callee`` receives at ``call``.

    ``self``/``cls`` receive the receiver, not an argument; ``*``/``**`` splats are
    skipped (what they hold is not known here)."""
    positional = [p for p in callee.params if p not in ("self", "cls")]
    bound: dict[str, cst.BaseExpression] = {}
    index = 0
    for arg in call.args:
        if arg.star:
            continue
        if arg.keyword is not None:
            bound[arg.keyword.value] = arg.value
        else:
            if index < len(positional):
                bound[positional[index]] = arg.value
            index += 1
    return bound
