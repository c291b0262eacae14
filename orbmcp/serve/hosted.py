"""``orbmcp serve`` inside the session daemon: the agent shares the shell's live session.

The serve process hands its line to the scope's daemon (``daemon.serve_client``). Over stdio the
daemon then hosts the MCP session itself and the connection becomes a byte pipe between the serve
process's stdin/stdout and the gateway; over HTTP the daemon runs the listener, for as long as the
serve process stays connected (SIGTERM or Ctrl-C of serve closes it). The daemon's servers are
the daemon's: they keep running when serve ends. ``--server`` names are started as ``start``
would. A line the daemon cannot take (another scope, ``--print-token``) is answered ``local``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from orbmcp import log
from orbmcp.errors import OrbError
from orbmcp.fastpath.argv import ProgramLine

if TYPE_CHECKING:
    from orbmcp.serve.gateway import Gateway
    from orbmcp.session.requests import DaemonRequest, HostedSession


async def serve_request(conn: DaemonRequest, request: Mapping[str, Any]) -> None:
    """The daemon's ``serve`` request (registered in ``orbmcp/__main__.py``)."""
    from orbmcp.session.requests import BadRequest
    from orbmcp.session.slash import parse_shell

    argv = request.get("argv")
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        raise BadRequest("a serve request needs argv, a list of strings")
    line = ProgramLine(argv)
    try:
        invocation = parse_shell(line.words)
    except OrbError:
        invocation = None
    if (
        invocation is None
        or invocation.spec.path != ("serve",)
        or invocation.help
        or invocation.kwargs.get("print_token")
        or not conn.in_scope(line, request)
    ):
        conn.writer.send_nowait({"t": "local"})
        return
    conn.served()
    json_output = line.json or bool(invocation.kwargs.get("json"))
    try:
        session = await conn.session_of(line, request)
        await _serve(conn, session, invocation.kwargs)
    except OrbError as err:
        from orbmcp.session.runner import report_failure

        code = report_failure(err, console=conn.console(request), json_output=json_output)
        conn.writer.send_nowait({"t": "exit", "code": code})


async def _serve(conn: DaemonRequest, session: HostedSession, kwargs: dict[str, Any]) -> None:
    from orbmcp.core.session.startup import first_attempts
    from orbmcp.serve.command import options_from
    from orbmcp.serve.gateway import Gateway
    from orbmcp.serve.hub import Hub
    from orbmcp.serve.session import check_names, check_servers, unwrapped

    options, address = options_from(
        stdio=bool(kwargs.get("stdio")),
        http=kwargs.get("http"),
        server=kwargs.get("server"),
        prefix=kwargs.get("prefix"),
        names=kwargs.get("names"),
        allow_remote=bool(kwargs.get("allow_remote")),
    )
    await session.refresh()
    check_servers(session.config, options)
    sessions = session.sessions
    manager = await sessions.manager()
    hub = Hub.of(manager)
    settled = anyio.Event()

    async def ready() -> None:
        await sessions.wait_eager()
        await settled.wait()

    async with unwrapped(), anyio.create_task_group() as tg:

        async def start() -> None:
            try:
                await first_attempts(manager, list(options.servers), _log_notice)
            finally:
                settled.set()

        tg.start_soon(start)
        gateway = Gateway(hub, sessions, options, ready=ready)
        async with gateway.running():
            if options.names == "raw":
                await ready()
                check_names(gateway)
            if address is None:
                await _pipe(conn, gateway)
            else:
                await _listen(conn, gateway, address, allow_remote=bool(kwargs.get("allow_remote")))
        tg.cancel_scope.cancel()


def _log_notice(message: str, level: str) -> None:
    log.log_event("serve.notice", level="warn" if level != "info" else "info", message=message)


async def _pipe(conn: DaemonRequest, gateway: Gateway) -> None:
    from orbmcp.serve.gateway import serve_stream
    from orbmcp.serve.lane import FastLane
    from orbmcp.serve.wire import message_streams

    conn.writer.send_nowait({"t": "serving", "transport": "stdio"})
    await conn.writer.drain()
    log.log_event("serve.attached", message="stdio")
    async with message_streams(conn.reader.raw, conn.stream, lane=FastLane(gateway)) as (read, write):
        await serve_stream(gateway, read, write)


async def _listen(conn: DaemonRequest, gateway: Gateway, address: Any, *, allow_remote: bool) -> None:
    from orbmcp.serve.http import bound_address, listen, serve_http
    from orbmcp.serve.token import load_or_create

    sock = listen(address, allow_remote=allow_remote)
    try:
        token = load_or_create(Path(conn.global_dir))
        bound = bound_address(sock, address)
        async with anyio.create_task_group() as tg:
            tg.start_soon(serve_http, gateway, sock, bound, token)
            conn.writer.send_nowait({"t": "serving", "transport": "http", "url": bound.url})
            log.log_event("serve.attached", message=bound.url)
            while (message := await conn.reader.receive()) is not None and message.get("t") != "cancel":
                pass  # nothing else is expected; the listener lives until the client leaves
            tg.cancel_scope.cancel()
    finally:
        sock.close()
