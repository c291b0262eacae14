"""Plain text: what an agent's UI shows for a slash command, and the shell's non-TTY output.

``render_plain`` dispatches on the result's type (``functools.singledispatch``, ``dispatch.py``):
each renderer module registers its functions with ``@renders``, by the type each one's parameter
names. A type without a renderer is a bug and raises ``TypeError``. Every string a server or a
config file supplied is escaped (``orbmcp.text``). Kept light: no rich, no SDK, no anyio, no
pydantic (fast paths print this), and each renderer module is imported when a result of its kind
is first shown: ``_FAMILIES`` says which renderer module renders the results of each results
module, as a function that imports it.
"""

from __future__ import annotations

from collections.abc import Callable

from orbmcp.render.plain.dispatch import plain, registered


def _basic() -> None:
    from orbmcp.render.plain import basic  # noqa: F401  (registers its renderers)


def _status() -> None:
    from orbmcp.render.plain import status  # noqa: F401


def _tools() -> None:
    from orbmcp.render.plain import tools  # noqa: F401


def _call() -> None:
    from orbmcp.render.plain import call  # noqa: F401


def _config() -> None:
    from orbmcp.render.plain import config  # noqa: F401


def _daemon() -> None:
    from orbmcp.render.plain import daemon  # noqa: F401


def _edit() -> None:
    from orbmcp.render.plain import edit  # noqa: F401


def _integrate() -> None:
    from orbmcp.render.plain import integrate  # noqa: F401


def _lock() -> None:
    from orbmcp.render.plain import lock  # noqa: F401


# the module under orbmcp.commands.results that defines a result -> the renderers of its kind
_FAMILIES: dict[str, Callable[[], None]] = {
    "base": _basic,
    "completion": _basic,
    "status": _status,
    "check": _status,
    "tools": _tools,
    "call": _call,
    "config": _config,
    "daemon": _daemon,
    "edit": _edit,
    "integrate": _integrate,
    "lock": _lock,
}
_RESULTS = "orbmcp.commands.results."


def renderer_for(result_type: type) -> Callable[[object], str] | None:
    """The function that renders results of this type, or None when there is none."""
    # The result's own family first, then its bases' (a Statement's is basic), until one renders
    # it: a family already loaded costs nothing, and one not needed is never imported.
    for kind in result_type.__mro__:
        load = _FAMILIES.get(kind.__module__.removeprefix(_RESULTS))
        if kind.__module__.startswith(_RESULTS) and load is not None:
            load()
            render = registered(result_type)
            if render is not None:
                return render
    return registered(result_type)


def render_plain(result: object) -> str:
    """The plain text of ``result``."""
    renderer_for(type(result))
    return plain(result)


__all__ = ["render_plain", "renderer_for"]
