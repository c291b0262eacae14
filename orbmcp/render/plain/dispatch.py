"""The plain renderers, registered by the type they render (``functools.singledispatch``).

Each renderer module marks its functions ``@renders``; the function's first parameter's annotation
is the result type it renders, so the registration is the signature mypy checks and an editor
follows. A subclass without its own renderer gets its nearest base class's (every sentence is a
``Statement``). ``orbmcp.render.plain`` imports a renderer module when a result of its kind is
first shown; this module imports none of them.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import singledispatch
from typing import TypeVar

R = TypeVar("R")


@singledispatch
def plain(result: object) -> str:
    """The plain text of ``result``: the renderer registered for its type (or a base of it)."""
    raise TypeError(f"no plain rendering for {type(result).__name__}: every result type needs one")


def renders(func: Callable[[R], str]) -> Callable[[R], str]:
    """Register ``func`` as the plain renderer of its first parameter's type."""
    plain.register(func)
    return func


def registered(result_type: type) -> Callable[[object], str] | None:
    """The renderer registered for ``result_type`` or its nearest base, or None."""
    render: Callable[[object], str] = plain.dispatch(result_type)
    return None if render is plain.dispatch(object) else render
