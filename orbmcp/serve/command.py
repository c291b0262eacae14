"""``orbmcp serve``: every configured server, and the ``/mcp`` commands, as one MCP server.

With a session daemon running for the scope, the daemon's client hands the line to the daemon
before this handler is reached (``orbmcp.daemon.serve_client``): the agent then shares the shell's
live session. Otherwise (or when the daemon declines) this handler serves with a session of its
own, over stdio (the default) or Streamable HTTP.
"""

from __future__ import annotations

from pathlib import Path

from orbmcp.commands import adhoc
from orbmcp.commands.context import CommandContext
from orbmcp.commands.results.base import Lines
from orbmcp.commands.spelling import agent_text
from orbmcp.config.transports import SSE, STDIO, STREAMABLE_HTTP
from orbmcp.errors import UsageError
from orbmcp.serve.http import bound_address, listen, serve_http
from orbmcp.serve.options import NAME_MODES, HttpAddress, NameMode, ServeOptions, parse_address
from orbmcp.serve.session import own_gateway, serve_stdio
from orbmcp.serve.token import load_or_create


def options_from(
    *,
    stdio: bool = False,
    http: str | None = None,
    server: list[str] | None = None,
    prefix: str | None = None,
    names: str | None = None,
    allow_remote: bool = False,
) -> tuple[ServeOptions, HttpAddress | None]:
    """The options of a serve line, checked (``UsageError`` for a contradiction)."""
    if stdio and http is not None:
        raise UsageError("choose one transport: --stdio or --http", reason="serve_transport")
    if names is not None and names not in NAME_MODES:
        raise UsageError(f"--names must be one of {', '.join(NAME_MODES)}, not {names!r}")
    address = parse_address(http) if http is not None else None
    if allow_remote and address is None:
        raise UsageError("--allow-remote applies to --http only")
    mode: NameMode = "raw" if names == "raw" else "bridged"
    return ServeOptions(names=mode, prefix=prefix, servers=tuple(dict.fromkeys(server or ()))), address


def _adhoc(
    ctx: CommandContext,
    server: list[str] | None,
    *,
    stdio: str | None,
    sse: str | None,
    env: list[str] | None,
    header: list[str] | None,
    name: str | None,
) -> list[str] | None:
    """A server given on the line (``--server URL``, ``--server-stdio``, ``--server-sse``) becomes
    the one served, in this process's own session (never the daemon's)."""

    urls = [s for s in server or () if adhoc.is_url(s)]
    given_kinds = ((STDIO, stdio), (SSE, sse), *((STREAMABLE_HTTP, u) for u in urls))
    targets = [(kind.option, value) for kind, value in given_kinds if value]
    if not targets:
        if env or header or name:
            raise UsageError(
                "--env, --header and --name describe a server given with --server URL, "
                "--server-stdio or --server-sse"
            )
        return server
    if [s for s in server or () if not adhoc.is_url(s)]:
        raise UsageError("serve either configured servers or one given on the line, not both")
    given = adhoc.entry(targets, env, header, name, cwd=ctx.project or Path.cwd())
    ctx.use_adhoc(given)
    return [given.name]


async def serve(
    ctx: CommandContext,
    *,
    stdio: bool = False,
    http: str | None = None,
    server: list[str] | None = None,
    prefix: str | None = None,
    names: str | None = None,
    allow_remote: bool = False,
    print_token: bool = False,
    server_stdio: str | None = None,
    server_sse: str | None = None,
    env: list[str] | None = None,
    header: list[str] | None = None,
    adhoc_name: str | None = None,
) -> Lines | None:
    server = _adhoc(ctx, server, stdio=server_stdio, sse=server_sse, env=env, header=header, name=adhoc_name)
    if print_token:
        if stdio or http is not None or server or prefix is not None or names is not None:
            raise UsageError("--print-token prints the HTTP token and exits: give it alone")

        return Lines((load_or_create(ctx.config().global_dir),))
    options, address = options_from(
        stdio=stdio, http=http, server=server, prefix=prefix, names=names, allow_remote=allow_remote
    )

    def notify(message: str, level: str) -> None:
        ctx.ui.notify(agent_text(message), level=level)

    config = ctx.config()
    for warning in config.warnings:
        ctx.ui.notify(f"config: {warning}", level="warning")
    if address is None:
        async with own_gateway(config, options, notify) as gateway:
            await serve_stdio(gateway)
        return None

    sock = listen(address, allow_remote=allow_remote)
    token = load_or_create(config.global_dir)
    bound = bound_address(sock, address)

    def listening(where: HttpAddress) -> None:
        ctx.ui.notify(
            f"serving MCP at {where.url} (send Authorization: Bearer <token>; the token: "
            "orbmcp serve --print-token)",
            level="info",
        )

    try:
        async with own_gateway(config, options, notify) as gateway:
            await serve_http(gateway, sock, bound, token, on_listening=listening)
    finally:
        sock.close()
    return None
