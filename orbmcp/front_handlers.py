"""The handlers of the commands that are fronts themselves, bound to their commands.

``shell`` (the REPL), ``slash`` and ``complete`` (the agent protocol), ``serve`` and the session
daemon's commands drive fronts, which sit above the session layer that binds every other handler
(``session/handler_refs.py``); the program's entry binds these (``bind``) before it runs a
command. Each reference is real code, so mypy checks the handler against ``Handler`` and an
editor's go-to-definition lands on it; calling it imports the handler's module (importing this
module imports none of them).
"""

from __future__ import annotations

from orbmcp.session.handler_refs import bind_handlers

TYPE_CHECKING = False  # not typing's: every `import orbmcp` binds these (the daemon's client too)
if TYPE_CHECKING:
    from orbmcp.session.handler_refs import Handler, HandlerRef


def shell() -> Handler:
    from orbmcp.frontends.handlers import shell as handler

    return handler


def slash() -> Handler:
    from orbmcp.frontends.handlers import slash as handler

    return handler


def complete() -> Handler:
    from orbmcp.frontends.handlers import complete as handler

    return handler


def serve() -> Handler:
    from orbmcp.serve.command import serve as handler

    return handler


def daemon_start() -> Handler:
    from orbmcp.daemon.control import start as handler

    return handler


def daemon_stop() -> Handler:
    from orbmcp.daemon.control import stop as handler

    return handler


def daemon_restart() -> Handler:
    from orbmcp.daemon.control import restart as handler

    return handler


def daemon_status() -> Handler:
    from orbmcp.daemon.control import status as handler

    return handler


FRONT_HANDLERS: dict[tuple[str, ...], HandlerRef] = {
    ("shell",): shell,
    ("slash",): slash,
    ("complete",): complete,
    ("serve",): serve,
    ("daemon", "start"): daemon_start,
    ("daemon", "stop"): daemon_stop,
    ("daemon", "restart"): daemon_restart,
    ("daemon", "status"): daemon_status,
}


def bind() -> None:
    """Make these the handlers of their commands (the program's entry calls it; so may an embedder
    that runs these commands itself)."""
    bind_handlers(FRONT_HANDLERS)
