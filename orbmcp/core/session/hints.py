"""One actionable hint per failed server, and the error a caller gets for a server that is not ready.

Hints name orbmcp commands with ``cmd(...)`` references, which each front spells its own way
(``orbmcp auth x`` in a shell, ``/mcp:auth x`` in an agent), and branch on the error's machine
reason, never on its message. Reasons from auth that change the hint: ``invalid_client``,
``invalid_grant``, ``credentials_rejected`` (authorize afresh: ``--reset``) and ``lock_timeout``
(another process is authorizing).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orbmcp.core.session.state import State
from orbmcp.errors import (
    AuthError,
    ConnectionFailed,
    OrbError,
    ProtocolError,
    TimeoutFailed,
    cmd,
)

if TYPE_CHECKING:
    from orbmcp.core.session.supervisor import Supervisor

# The stored credentials themselves are bad: only a fresh authorization helps.
_RESET_REASONS = frozenset({"invalid_client", "invalid_grant", "credentials_rejected"})


def hint_for(sup: Supervisor, *, detail: bool = True) -> str | None:
    """What the person can do about ``sup``'s state, with command references (``cmd``) unspelled:
    the front that shows it spells them (``orbmcp.commands.spelling``). ``detail``: the hint is
    shown in the detail view, above the server's recent output (elsewhere it points there)."""
    state, code, reason, name = sup.state, sup.snap.last_error_code, sup.snap.last_error_reason, sup.name
    if code == "auth" and sup.cfg.auth is None and state != State.NEEDS_AUTH:
        # The auth command refuses servers without OAuth settings: point at the entry instead.
        if any(key.lower() == "authorization" for key in sup.cfg.headers):
            return f"the server refused the Authorization header configured for '{name}'; check its headers"
        return (
            f'the server requires authorization: add "auth": {{"type": "oauth"}} to the entry of '
            f"'{name}', or an Authorization header"
        )
    if state == State.NEEDS_AUTH or code == "auth":
        if reason == "lock_timeout":
            return f"another orbmcp process is authorizing '{name}'; wait for it, then {cmd('start', name)}"
        if reason in _RESET_REASONS:
            return cmd("auth", name, "--reset")
        return cmd("auth", name)
    if state != State.FAILED:
        return None
    # ORBMCP_DEBUG is an environment variable of the orbmcp process: an agent's user sets it where
    # the agent starts orbmcp, so the command is spelled for the front and the variable said apart.
    debug = f"{cmd('status', name)} with ORBMCP_DEBUG=1 set"
    if code == "timeout":
        return (
            "the server did not answer in time; check it starts on its own, or raise timeoutMs; "
            f"{debug} logs redacted diagnostics"
        )
    if code == "config":
        return f"fix the entry shown by `{cmd('config', 'validate')}`"
    if sup.snap.last_error_hint:  # what the error itself knows to suggest (a URL to check, ...)
        return sup.snap.last_error_hint
    if reason == "server_exited":
        # The error already quotes its last stderr lines: the rest of them is what helps.
        if detail:
            return "the server exited by itself: see Recent output below for why"
        return f"the server exited by itself; `{cmd('status', name)}` shows all of its recent output"
    output = "check Recent output below" if detail else f"`{cmd('status', name)}` shows its recent output"
    return (
        f"run {debug} to log redacted diagnostics (see `{cmd('config', 'paths')}` for the log file); {output}"
    )


def failure_error(sup: Supervisor) -> OrbError:
    """The error for a request to ``sup`` while it is not ready: its last error, kind and reason."""
    msg = sup.snap.last_error or f"server '{sup.name}' is {sup.state}"
    if f"'{sup.name}'" not in msg and sup.name not in msg:
        msg = f"server '{sup.name}': {msg}"
    code = sup.snap.last_error_code
    kind: type[OrbError] = ConnectionFailed
    if sup.state == State.NEEDS_AUTH or code == "auth":
        kind = AuthError
    elif code == "timeout":
        kind = TimeoutFailed
    elif code == "protocol":
        kind = ProtocolError
    reason = sup.snap.last_error_reason if kind.code == code else None
    return kind(msg, server=sup.name, hint=hint_for(sup, detail=False), reason=reason)
