"""The documented keys of the commands' ``--json`` output that several commands share.

Each command's ``--json`` shape is part of its definition (``CommandSpec.json_output``, a
``JsonDoc``); ``scripts/gen_docs.py`` writes them into the man page, and
``tests/frontends/test_output_conventions.py`` holds every command's JSON to them.
"""

from __future__ import annotations

from orbmcp.commands.spec import JsonDoc

ROW_KEYS = ("name", "lifecycle", "state", "tools", "auth", "source", "lastError", "hint", "warnings")
DAEMON_KEYS = (
    "action",
    "running",
    "socket",
    "pid",
    "version",
    "uptimeS",
    "idleTimeoutS",
    "scope",
    "servers",
    "clientsServed",
    "activeClients",
    "refusedClients",
    "residentMemoryBytes",
)
DETAIL_KEYS = (
    "name",
    "state",
    "retries",
    "maxRetries",
    "transport",
    "lifecycle",
    "source",
    "file",
    "tools",
    "toolNames",
    "auth",
    "oauth",
    "lastError",
    "errorCode",
    "errorReason",
    "hint",
    "recentOutput",
    "projectConfig",
    "protocolVersion",
    "serverInfo",
    "warnings",
    "instructions",
    "capabilities",
)
TOOL_KEYS = ("server", "name", "bridgedName", "description", "inputSchema", "annotations")
MESSAGE_KEYS = ("ok", "message")
EDIT_KEYS = ("ok", "message", "action", "server", "file", "scope", "entry", "notes", "state")

EDIT_DOC = JsonDoc(
    "object",
    EDIT_KEYS,
    "action: added, replaced, removed, enabled, disabled or unchanged; entry (add) has secrets "
    "masked; state: the server's state in a running session, else null; add --json with several "
    "servers: an array of these",
)
DAEMON_DOC = JsonDoc(
    "object",
    DAEMON_KEYS,
    "running is false (and the daemon keys absent) when none runs; servers are {name, state}",
)
