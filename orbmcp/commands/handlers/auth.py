"""orbmcp auth NAME [--reset] [--status] [--no-browser] (= /mcp:auth), orbmcp logout NAME."""

from __future__ import annotations

from orbmcp.commands.context import CommandContext
from orbmcp.commands.results import Message
from orbmcp.config.model import ServerConfig
from orbmcp.errors import AuthError, UsageError
from orbmcp.suggest import unknown


def _oauth_server(ctx: CommandContext, name: str) -> ServerConfig:
    config = ctx.config()
    cfg = config.servers.get(name)
    if cfg is None:
        raise unknown("server", name, [s.name for s in config.servers.values() if s.has_oauth])
    if cfg.auth is None or cfg.is_stdio:
        raise UsageError(
            f"server '{name}' is not configured for OAuth",
            hint='add "auth": {"type": "oauth"} to its entry (HTTP servers only)',
        )
    return cfg


async def auth(
    ctx: CommandContext, server: str, reset: bool = False, status: bool = False, no_browser: bool = False
) -> Message:
    from orbmcp.auth.status import auth_status

    cfg = _oauth_server(ctx, server)
    gdir = ctx.config().global_dir
    if status:
        line = auth_status(cfg, gdir)
        return Message(f"{server}: {line}", {"server": server, "auth": line})
    if not ctx.ui.interactive and not no_browser:
        # CI, --json, no terminal: never open a browser, fail fast (a stored refresh token is
        # still used by every connecting command).
        raise AuthError(
            f"server '{server}' needs an interactive authorization",
            server=server,
            hint=f"run `orbmcp auth {server}` in a terminal, or `orbmcp auth {server} "
            "--no-browser` and paste the redirect URL",
        )
    from orbmcp.auth.flow import authorize
    from orbmcp.auth.ui_bridge import ProviderUI

    if ctx.sessions is not None and ctx.sessions.persistent:
        manager = await ctx.manager()
        await manager.stop(server)  # the flow below owns the credentials while it runs
    outcome = await authorize(cfg, gdir, reset=reset, ui=ProviderUI(ctx.ui), no_browser=no_browser)
    data = {
        "server": server,
        "status": outcome.status,
        "scope": outcome.scope,
        "expiresAt": outcome.expires_at,
        "corruptBackup": str(outcome.corrupt_backup) if outcome.corrupt_backup else None,
    }
    text = outcome.message
    if outcome.corrupt_backup:
        text += f" (a corrupt state file was backed up to {outcome.corrupt_backup})"
    if ctx.sessions is not None and ctx.sessions.persistent:
        manager = await ctx.manager()
        sup = await manager.start(server)
        data["state"] = str(sup.state)
        text += f"; {server} is {sup.state}"
    return Message(text, data)


async def logout(ctx: CommandContext, server: str) -> Message:
    from orbmcp.auth.flow import logout as forget

    cfg = _oauth_server(ctx, server)
    had = await forget(cfg, ctx.config().global_dir)
    text = (
        f"forgot the stored credentials of '{server}'"
        if had
        else f"no credentials were stored for '{server}'"
    )
    return Message(text, {"server": server, "removed": had})
