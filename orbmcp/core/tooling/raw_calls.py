"""``tools/call`` relayed raw on a stdio connection: the request line goes straight into the
server's stdin, and its answer comes back from the transport's reader to the waiting call, past
the SDK's client session, its models and its memory streams on both legs. The channel on the
connection (the wire side: ids, the reader's hand-over, the write) is
``orbmcp.core.wire.raw_channel``; this module decides which calls take it.

For a front that passes results on as wire JSON (serve's fast lane), where the SDK's path costs
more than the server it waits for. Requests carry ids of orbmcp's own namespace ("orbmcp-lane-N":
strings, where the SDK counts integers), so the two never collide. The reader hands over only a
line whose top-level id (or progress token) is one of those pending; everything else the server
says (its own requests, so elicitation, sampling and roots still reach the client session and
``route.asking``; notifications; answers to ids orbmcp never sent) goes to the SDK as before.

Failures are raised as the SDK would raise them (``MCPError`` with its codes) inside
``calls.request``, so an error reads exactly as on the SDK's path. What needs the SDK takes its
path (``calls.call_tool_wire``): a tool that requires a task, a 2026-era session (the SDK stamps
every request's ``_meta``), an HTTP server (no channel), and the retry after a -32042 answer.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from orbmcp.core.capabilities.askers import Asker
    from orbmcp.core.session.supervisor import Supervisor
    from orbmcp.core.tooling.calls import ProgressFn

FIRST_MODERN = "2026"  # protocol versions from here on are stamped per request by the SDK


async def call_tool_relayed(
    sup: Supervisor,
    tool: str,
    arguments: dict[str, Any] | None,
    *,
    progress: ProgressFn | None = None,
    asker: Asker | None = None,
) -> dict[str, Any]:
    """``calls.call_tool_wire``'s contract (result as wire JSON, same errors, questions to
    ``asker``), relayed raw where the connection allows it."""
    from orbmcp.core.tooling.calls import (
        call_tool_wire,
        progress_filter,
        request,
        wire_call,
        with_url_elicitation,
    )

    channel = sup.raw_channel
    version = sup.snap.protocol_version
    listed = sup.runtime.tools.get(sup.name, tool)
    if (
        channel is None
        or channel.closed
        or version is None
        or version >= FIRST_MODERN
        or (listed is not None and listed.task_support == "required")
    ):
        return await call_tool_wire(sup, tool, arguments, progress=progress, asker=asker)
    timeout = sup.cfg.request_timeout_ms / 1000
    on_progress = progress_filter(progress)
    args = arguments or {}
    what = f"tools/call {tool}"

    async def raw() -> dict[str, Any]:
        async def run(_client: Any) -> dict[str, Any]:
            result = await channel.call(tool, args, timeout=timeout, on_progress=on_progress)
            return _checked(result, version)

        return await request(sup, what, run, url_elicitation=True)

    async def sdk() -> dict[str, Any]:
        run = wire_call(sup, tool, args, timeout=timeout, on_progress=on_progress)
        return await request(sup, what, run, url_elicitation=True)

    # A -32042 answer: the URL elicitation is completed and the call sent once more, on the SDK's
    # path, exactly as call_tool_wire does it.
    attempts = iter((raw, sdk))

    def attempt() -> Awaitable[dict[str, Any]]:
        return next(attempts)()

    with sup.client_side.route.asking(asker):
        return await with_url_elicitation(sup, tool, attempt)


def _checked(result: dict[str, Any], version: str) -> dict[str, Any]:
    """What the SDK's ``send_request`` does to a result: checked against the negotiated version
    (a ``ValidationError`` fails the call, as there), a later revision's fields dropped."""
    from mcp_types.methods import validate_server_result

    validate_server_result("tools/call", version, result)
    foreign = _later_fields(version)
    if foreign.isdisjoint(result):
        return result
    return {key: value for key, value in result.items() if key not in foreign}


def _later_fields(version: str) -> frozenset[str]:
    from mcp.client.session import _later_revision_fields

    fields: frozenset[str] = _later_revision_fields("tools/call", version)
    return fields


__all__ = ["call_tool_relayed"]
