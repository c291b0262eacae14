"""Which function runs each command: typed lazy references, bound to the commands' paths.

Each reference is real code that imports its handler's module when called and returns the
function, so loading the command table (every ``--help`` and Tab) imports no handler, mypy checks
every handler against ``Handler``, and an editor's go-to-definition lands on it. The table itself
names no handler (handlers use the table: it would be an import cycle). The handlers of the
commands that are fronts themselves (``shell``, ``slash``, ``complete``, ``serve``, the daemon's)
sit above this layer: ``orbmcp/front_handlers.py`` binds those (``bind_handlers``).
"""

from __future__ import annotations

from collections.abc import Mapping

# Each handler module is imported when its command runs: --help, --version and completion import
# none (tests/commands/test_registries.py). Nor ``typing`` (its own TYPE_CHECKING): every
# ``import orbmcp`` binds the fronts' handlers, the daemon's client included (fastpath/).

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Concatenate, TypeAlias

    from orbmcp.commands.context import CommandContext
    from orbmcp.commands.spec import CommandSpec

    # A handler takes the command's context, then the command's parameters by name; it returns a
    # result (or None), or an awaitable of one.
    Handler: TypeAlias = Callable[Concatenate[CommandContext, ...], object]
    # Imports the handler's module and returns the handler.
    HandlerRef: TypeAlias = Callable[[], Handler]


def status() -> Handler:
    from orbmcp.commands.handlers.status import status as handler

    return handler


def start() -> Handler:
    from orbmcp.commands.handlers.status import start as handler

    return handler


def stop() -> Handler:
    from orbmcp.commands.handlers.status import stop as handler

    return handler


def reconnect() -> Handler:
    from orbmcp.commands.handlers.status import reconnect as handler

    return handler


def auth() -> Handler:
    from orbmcp.commands.handlers.auth import auth as handler

    return handler


def logout() -> Handler:
    from orbmcp.commands.handlers.auth import logout as handler

    return handler


def tools() -> Handler:
    from orbmcp.commands.handlers.tools import tools as handler

    return handler


def lock() -> Handler:
    from orbmcp.commands.handlers.lock import lock as handler

    return handler


def call() -> Handler:
    from orbmcp.commands.handlers.tools import call as handler

    return handler


def resources() -> Handler:
    from orbmcp.commands.handlers.resources import resources as handler

    return handler


def read() -> Handler:
    from orbmcp.commands.handlers.resources import read as handler

    return handler


def prompts() -> Handler:
    from orbmcp.commands.handlers.tools import prompts as handler

    return handler


def prompt() -> Handler:
    from orbmcp.commands.handlers.tools import prompt as handler

    return handler


def config_show() -> Handler:
    from orbmcp.commands.handlers.config import show as handler

    return handler


def paths() -> Handler:
    from orbmcp.commands.handlers.config import paths as handler

    return handler


def validate() -> Handler:
    from orbmcp.commands.handlers.config import validate as handler

    return handler


def config_import() -> Handler:
    from orbmcp.commands.handlers.config_import import config_import as handler

    return handler


def add() -> Handler:
    from orbmcp.commands.handlers.edit import add as handler

    return handler


def remove() -> Handler:
    from orbmcp.commands.handlers.edit import remove as handler

    return handler


def enable() -> Handler:
    from orbmcp.commands.handlers.edit import enable as handler

    return handler


def disable() -> Handler:
    from orbmcp.commands.handlers.edit import disable as handler

    return handler


def trust() -> Handler:
    from orbmcp.commands.handlers.config import trust as handler

    return handler


def untrust() -> Handler:
    from orbmcp.commands.handlers.config import untrust as handler

    return handler


def check() -> Handler:
    from orbmcp.commands.handlers.check import check as handler

    return handler


def integrate() -> Handler:
    from orbmcp.commands.handlers.integrate import integrate as handler

    return handler


def completion_show() -> Handler:
    from orbmcp.commands.handlers.completion import show as handler

    return handler


def install() -> Handler:
    from orbmcp.commands.handlers.completion import install as handler

    return handler


HANDLERS: dict[tuple[str, ...], HandlerRef] = {
    ("status",): status,
    ("start",): start,
    ("stop",): stop,
    ("reconnect",): reconnect,
    ("auth",): auth,
    ("logout",): logout,
    ("tools",): tools,
    ("lock",): lock,
    ("call",): call,
    ("resources",): resources,
    ("read",): read,
    ("prompts",): prompts,
    ("prompt",): prompt,
    ("config", "show"): config_show,
    ("config", "paths"): paths,
    ("config", "validate"): validate,
    ("config", "import"): config_import,
    ("add",): add,
    ("remove",): remove,
    ("enable",): enable,
    ("disable",): disable,
    ("trust",): trust,
    ("untrust",): untrust,
    ("check",): check,
    ("integrate",): integrate,
    ("completion", "show"): completion_show,
    ("completion", "install"): install,
}


_BOUND: dict[tuple[str, ...], HandlerRef] = {}


def bind_handlers(refs: Mapping[tuple[str, ...], HandlerRef]) -> None:
    """Bind handlers to command paths: the commands that are fronts themselves
    (``orbmcp/front_handlers.py``), and an embedder's or a test's own commands."""
    _BOUND.update(refs)


def handler_of(spec: CommandSpec) -> Handler:
    """The function that runs ``spec`` (its module imported now)."""
    ref = HANDLERS.get(spec.path) or _BOUND.get(spec.path)
    if ref is None:
        raise LookupError(f"no handler bound for {spec.name!r}: the program binds orbmcp/front_handlers.py")
    return ref()
