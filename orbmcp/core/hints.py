"""One actionable hint per failed server, and the error a caller gets for a server that is not ready."""

from __future__ import annotations

from typing import TYPE_CHECKING

from orbmcp.core.state import State
from orbmcp.errors import AuthError, ConnectionFailed, OrbError, TimeoutFailed

if TYPE_CHECKING:
    from orbmcp.core.supervisor import Supervisor


def command_form(front: str, verb: str, name: str) -> str:
    """How to say a command on this front: `/mcp:auth x` in an agent, `orbmcp auth x` in a shell."""
    if front in ("slash", "host"):
        return f"/mcp:{verb} {name}" if verb != "reconnect" else f"/mcp reconnect {name}"
    return f"orbmcp {verb} {name}"


def hint_for(sup: Supervisor, *, front: str = "cli") -> str | None:
    state, code, name = sup.state, sup.snap.last_error_code, sup.name
    if code == "auth" and sup.cfg.auth is None and state != State.NEEDS_AUTH:
        # `orbmcp auth` refuses servers without OAuth settings: point at the entry instead.
        if any(key.lower() == "authorization" for key in sup.cfg.headers):
            return f"the server refused the Authorization header configured for '{name}'; check its headers"
        return (
            f'the server requires authorization: add "auth": {{"type": "oauth"}} to the entry of '
            f"'{name}', or an Authorization header"
        )
    if state == State.NEEDS_AUTH or code == "auth":
        err = (sup.snap.last_error or "").lower()
        reset = " --reset" if ("expired" in err or "invalid_client" in err or "invalid_grant" in err) else ""
        if "lock" in err:
            then = command_form(front, "start", name)
            return f"another orbmcp process is authorizing '{name}'; wait for it, then {then}"
        return f"{command_form(front, 'auth', name)}{reset}"
    if state != State.FAILED:
        return None
    if code == "timeout":
        return (
            f"the server did not answer in time; check it starts on its own, or raise timeoutMs; "
            f"ORBMCP_DEBUG=1 {command_form('cli', 'status', name)} logs redacted diagnostics"
        )
    if code == "config":
        return "fix the entry shown by `orbmcp config validate`"
    if sup.snap.last_error_hint:  # what the error itself knows to suggest (a URL to check, ...)
        return sup.snap.last_error_hint
    return (
        f"run ORBMCP_DEBUG=1 {command_form('cli', 'status', name)} to log redacted diagnostics "
        "(see `orbmcp config paths` for the log file), and check Recent output below"
    )


def failure_error(sup: Supervisor) -> OrbError:
    msg = sup.snap.last_error or f"server '{sup.name}' is {sup.state}"
    if f"'{sup.name}'" not in msg and sup.name not in msg:
        msg = f"server '{sup.name}': {msg}"
    hint = hint_for(sup)
    if sup.state == State.NEEDS_AUTH or sup.snap.last_error_code == "auth":
        return AuthError(msg, server=sup.name, hint=hint)
    if sup.snap.last_error_code == "timeout":
        return TimeoutFailed(msg, server=sup.name, hint=hint)
    err: OrbError = ConnectionFailed(msg, server=sup.name, hint=hint)
    if sup.snap.last_error_code == "protocol":
        from orbmcp.errors import ProtocolError

        err = ProtocolError(msg, server=sup.name, hint=hint)
    return err
