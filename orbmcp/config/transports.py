"""What orbmcp knows of each transport below the connection: its name, label, spellings, fields.

One ``TransportKind`` per transport (stdio, Streamable HTTP, legacy SSE), keyed by orbmcp's own
name in ``KINDS``. Config, auth and the commands ask a kind what they need (``local``: a process
orbmcp spawns; ``fallback``: the transport a URL that refuses this one is tried over;
``endpoint_event``: the server names its POST endpoint in an event stream) instead of comparing
transport names. Each kind names its entry model (``entry_model``: the pydantic model of its entry
keys, ``config/<name>_entry.py``, imported when the loader first validates an entry of that kind).
How a connection is opened over each lives in ``orbmcp.core.wire.transports`` (one module per
transport, each holding its kind from here): the layers keep the connection code, which imports the
SDK, above the config that must load without it.

Stdlib only at import, and no ``dataclasses``: completion, the config commands and the daemon's
client read it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeAlias

    from orbmcp.config.http_entry import HttpEntry
    from orbmcp.config.sse_entry import SseEntry
    from orbmcp.config.stdio_entry import StdioEntry

    # The pydantic model of an entry's transport part, one per transport.
    EntryModel: TypeAlias = StdioEntry | HttpEntry | SseEntry


class TransportKind:
    """One transport's facts. A plain class, not a dataclass: the daemon's client reads the ad-hoc
    options off the kinds (``fastpath/argv.py``), and ``dataclasses`` costs it ~10 ms of imports."""

    __slots__ = (
        "endpoint_event",
        "entry_model",
        "fallback",
        "fields",
        "label",
        "local",
        "name",
        "option",
        "option_help",
        "option_metavar",
        "spellings",
    )

    def __init__(
        self,
        *,
        name: str,
        label: str,
        spellings: tuple[str, ...],
        local: bool,
        fields: tuple[str, ...],
        option: str,
        option_help: str,
        option_metavar: str,
        entry_model: Callable[[], type[EntryModel]],
        fallback: str | None = None,
        endpoint_event: bool = False,
    ) -> None:
        self.name = name  # orbmcp's own spelling, in its files and ``--json``
        self.label = label  # for people
        # What other clients' files and ``orbmcp add --transport`` may call it (lower case).
        self.spellings = spellings
        self.local = local  # a process orbmcp spawns (``command``), else a server at a ``url``
        self.fields = fields  # the entry keys that belong to this transport
        # The ad-hoc command-line option naming a server of this kind (``--stdio CMD``), its help
        # line and its value's placeholder.
        self.option = option
        self.option_help = option_help
        self.option_metavar = option_metavar
        # Imports and returns the pydantic model of this transport's entry keys: the config loader
        # validates an entry of this kind with it (config/entries.py); nothing else loads pydantic.
        self.entry_model = entry_model
        self.fallback = fallback  # the transport a URL that refuses this one is tried over
        self.endpoint_event = endpoint_event  # a GET opens an event stream that names the POST endpoint

    def __repr__(self) -> str:
        return f"TransportKind({self.name!r})"


def _stdio_entry() -> type[StdioEntry]:
    from orbmcp.config.stdio_entry import StdioEntry

    return StdioEntry


def _http_entry() -> type[HttpEntry]:
    from orbmcp.config.http_entry import HttpEntry

    return HttpEntry


def _sse_entry() -> type[SseEntry]:
    from orbmcp.config.sse_entry import SseEntry

    return SseEntry


STDIO = TransportKind(
    name="stdio",
    label="stdio",
    spellings=("stdio",),
    local=True,
    fields=("command", "args", "env", "cwd"),
    option="stdio",
    option_help="Try a server without configuring it: run this command line (quoted) as a stdio server.",
    option_metavar="'COMMAND ARGS'",
    entry_model=_stdio_entry,
)
STREAMABLE_HTTP = TransportKind(
    name="streamable-http",
    label="Streamable HTTP",
    spellings=("streamable-http", "http", "streamablehttp"),
    local=False,
    fields=("url", "headers"),
    option="http",
    option_help="Try a Streamable HTTP server at this URL (a bare URL as SERVER does the same).",
    option_metavar="URL",
    entry_model=_http_entry,
    fallback="sse",
)
SSE = TransportKind(
    name="sse",
    label="SSE",
    spellings=("sse",),
    local=False,
    fields=("url", "headers"),
    option="sse",
    option_help="Try an SSE server at this URL.",
    option_metavar="URL",
    entry_model=_sse_entry,
    endpoint_event=True,
)

KINDS: dict[str, TransportKind] = {kind.name: kind for kind in (STDIO, STREAMABLE_HTTP, SSE)}
BY_OPTION: dict[str, TransportKind] = {kind.option: kind for kind in KINDS.values()}
# The transport of an orbmcp entry that names none: the one its ``command`` or its ``url`` implies.
FOR_COMMAND = STDIO
FOR_URL = STREAMABLE_HTTP


def in_entry(value: str) -> TransportKind | None:
    """The kind an orbmcp entry's ``transport``/``type`` names: its name or its option's word
    (``streamable-http`` or ``http``), exactly; None: not one of ``entry_words()``."""
    for kind in KINDS.values():
        if value in (kind.name, kind.option):
            return kind
    return None


def entry_words() -> list[str]:
    """What an entry's ``transport`` may say: ``stdio, streamable-http, http, sse``."""
    return list(dict.fromkeys(word for kind in KINDS.values() for word in (kind.name, kind.option)))


def kind_of(name: str) -> TransportKind:
    """The kind of a validated entry's transport (``ServerConfig.transport``)."""
    return KINDS[name]


def is_local(name: str) -> bool:
    """A transport name that may come from a result or a cache: True only for a known local one."""
    kind = KINDS.get(name)
    return kind is not None and kind.local


def from_spelling(value: str) -> TransportKind | None:
    """The kind another client's file (or ``add --transport``) names, in any case; None: unknown."""
    wanted = value.lower()
    for kind in KINDS.values():
        if wanted in kind.spellings:
            return kind
    return None


def spellings_text() -> str:
    """``stdio, http (streamable-http) or sse``: the accepted spellings, for a usage error."""
    shown = [
        kind.option if kind.option == kind.name else f"{kind.option} ({kind.name})" for kind in KINDS.values()
    ]
    return ", ".join(shown[:-1]) + " or " + shown[-1]
