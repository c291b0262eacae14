"""orbmcp auth NAME [--reset] [--status] [--no-browser] (= /mcp:auth), orbmcp logout NAME."""

from __future__ import annotations

from orbmcp.auth.flow import authorize
from orbmcp.auth.flow import logout as forget
from orbmcp.auth.status import auth_status
from orbmcp.auth.ui_bridge import ProviderUI
from orbmcp.commands.context import CommandContext
from orbmcp.commands.results.auth import Authorized, AuthStatus, LoggedOut
from orbmcp.config.model import ServerConfig
from orbmcp.errors import AuthError, UsageError, cmd
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
) -> AuthStatus | Authorized:
    cfg = _oauth_server(ctx, server)
    gdir = ctx.config().global_dir
    if status:
        return AuthStatus(server, auth_status(cfg, gdir))
    if not ctx.ui.interactive and not no_browser:
        # CI, --json, no terminal: never open a browser, fail fast (a stored refresh token is
        # still used by every connecting command).
        raise AuthError(
            f"server '{server}' needs an interactive authorization",
            server=server,
            hint=f"run `{cmd('auth', server)}` in a terminal, or `{cmd('auth', server, '--no-browser')}` "
            "and paste the redirect URL",
        )

    if ctx.sessions is not None and ctx.sessions.persistent:
        manager = await ctx.manager()
        await manager.stop(server)  # the flow below owns the credentials while it runs
    outcome = await authorize(cfg, gdir, reset=reset, ui=ProviderUI(ctx.ui), no_browser=no_browser)
    state = None
    if ctx.sessions is not None and ctx.sessions.persistent:
        manager = await ctx.manager()
        sup = await manager.start(server)
        state = str(sup.state)
    return Authorized(
        server=server,
        status=outcome.status,
        outcome=outcome.message,
        scope=outcome.scope,
        expires_at=outcome.expires_at,
        corrupt_backup=str(outcome.corrupt_backup) if outcome.corrupt_backup else None,
        state=state,
    )


async def logout(ctx: CommandContext, server: str) -> LoggedOut:
    cfg = _oauth_server(ctx, server)
    outcome = await forget(cfg, ctx.config().global_dir)
    revocation = outcome.revocation
    return LoggedOut(server, outcome.removed, revocation.status, revocation.detail)
