"""The loopback half of an interactive authorization: listener, redirect handler, callback handler.

A :class:`LoopbackRedirect` is what ``OrbOAuthProvider`` hands the SDK as ``redirect_handler`` and
``callback_handler``. It binds the callback listener before client registration, so the
registered ``redirect_uris`` name its real port (the entry's ``redirectPort``, else the port a
stored registration names, else any free one); shows the authorization URL and opens it in a
browser through the person's :class:`AuthUI`; and waits for the redirect, or for the final URL
pasted on a machine without a browser. The ``state`` and code it sees go into ``secrets``, so
they are masked wherever they might be logged.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import anyio
from mcp.client.auth.oauth2 import OAuthContext
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull
from pydantic import AnyUrl

from orbmcp.auth.callback import CALLBACK_PATH, CallbackListener
from orbmcp.auth.policy import is_cimd, is_preregistered
from orbmcp.auth.ui import AuthUI, needs_auth_error
from orbmcp.auth.urlpolicy import check_browser_url, display_url
from orbmcp.config.model import AuthConfig
from orbmcp.errors import AuthError

# What the client metadata names until the listener is bound (the SDK wants one from the start).
PLACEHOLDER_REDIRECT = f"http://127.0.0.1{CALLBACK_PATH}"


class LoopbackRedirect:
    """The redirect target of one provider's authorizations, bound only while one is running."""

    def __init__(
        self,
        *,
        server: str,
        auth: AuthConfig,
        ui: AuthUI | None,
        no_browser: bool,
        timeout_s: float,
        secrets: set[str],
    ) -> None:
        self.server = server
        self._auth = auth
        self._ui = ui
        self._no_browser = no_browser
        self._timeout_s = timeout_s
        self._secrets = secrets
        self._listener: CallbackListener | None = None
        self._browser_opened = False
        self._url: str | None = None  # the pending authorization URL, to open it again

    @property
    def active(self) -> bool:
        """An authorization is under way (its listener is bound)."""
        return self._listener is not None

    async def ensure_listener(self, ctx: OAuthContext) -> None:
        """Bind the callback listener before registration, so ``redirect_uris`` names its port."""
        if self._listener is not None and not self._listener.closed:
            return
        preferred = self._auth.redirect_port or loopback_port(ctx.client_info)
        listener = CallbackListener(server=self.server, port=preferred or 0)
        try:
            await listener.start()
        except AuthError:
            if self._auth.redirect_port or is_preregistered(ctx.client_info, self._auth):
                raise
            listener = CallbackListener(server=self.server, port=0)
            await listener.start()
        self._listener = listener
        uri = listener.redirect_uri
        ctx.client_metadata.redirect_uris = [AnyUrl(uri)]
        info = ctx.client_info
        if info is None:
            return
        if uri in [str(u) for u in info.redirect_uris or []]:
            return
        if is_preregistered(info, self._auth):
            info.redirect_uris = [AnyUrl(uri)]
        elif not is_cimd(info, self._auth):
            # Registered for a port we could not bind again: register anew.
            ctx.client_info = None

    async def close(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            with anyio.CancelScope(shield=True):  # the port must be freed even when cancelled
                await listener.aclose()

    async def redirect(self, url: str) -> None:
        """The SDK's ``redirect_handler``: show the authorization URL and open it in a browser."""
        check_browser_url(url)
        listener = self._listener
        if listener is None or self._ui is None:
            raise needs_auth_error(self.server)
        state = (parse_qs(urlsplit(url).query).get("state") or [""])[0]
        self._secrets.add(state)
        listener.expect_state(state)
        self._url = url
        self._ui.show_url(display_url(url))
        self._browser_opened = False
        if self._no_browser:
            return
        try:
            self._browser_opened = bool(self._ui.open_url(url))
        except Exception:
            self._browser_opened = False
        if not self._browser_opened:
            self._ui.notify("could not open a browser; open the URL above, or paste the final redirect URL")

    async def callback(self) -> AuthorizationCodeResult:
        """The SDK's ``callback_handler``: the redirect's code, state and issuer."""
        listener = self._listener
        ui = self._ui
        if listener is None or ui is None:
            raise needs_auth_error(self.server)
        paste = ui.prompt_paste if (self._no_browser or not self._browser_opened) else None
        url = self._url

        def reopen() -> bool:
            return url is not None and bool(ui.open_url(url))

        result = await listener.wait(self._timeout_s, paste=paste, notify=ui.notify, reopen=reopen)
        self._secrets.add(result.code)
        return AuthorizationCodeResult(code=result.code, state=result.state, iss=result.iss)


def loopback_port(info: OAuthClientInformationFull | None) -> int | None:
    """The port of the loopback callback a stored registration names, if any."""
    for uri in (info.redirect_uris or []) if info is not None else []:
        parts = urlsplit(str(uri))
        if parts.scheme == "http" and parts.hostname == "127.0.0.1" and parts.path == CALLBACK_PATH:
            return parts.port
    return None
