"""The SDK's ``OAuthClientProvider`` with orbmcp's storage, callback, policies and fixes.

Connect-time only: imports ``mcp`` and ``httpx2`` at the top (``core/wire/connect.py`` and
``auth/flow.py`` import this module inside functions).

What the subclass adds to the SDK flow:

- the stored ABSOLUTE expiry and the discovered metadata are restored, so a stored refresh token
  is used (at the right token endpoint) before any interactive login; a 401 on a token of
  unknown expiry is retried once through the refresh grant first;
- refreshes and interactive logins hold the cross-process lock; the loser re-reads the store;
- every request the flow makes is checked against the SSRF policy, the authorization URL against
  the browser policy; S256 must be advertised unless the entry opts out (``auth.policy``);
- client identity: pre-registered (config) → CIMD → DCR (``application_type: native``);
- step-up on 403 ``insufficient_scope`` asks for the union of scopes, at most 3 attempts
  (``auth.challenge``);
- non-interactive providers never open a browser or register a client: a needed login raises
  :class:`AuthError` at once, and the caller learns of it through ``on_challenge``.

How: ``async_auth_flow``, httpx2's public hook, wraps the SDK's own flow. It sees every request
the flow makes (vetted on the way out; token requests recognised by their RFC 6749
``grant_type``) and every response, so the lock, the bookkeeping of token responses and the
challenges are handled there. Three private SDK methods are still overridden, because no public
hook reaches that point of the flow: ``SDK_PRIVATE_OVERRIDES`` names them, ``mcp`` is pinned to
the minor version they were read in, and ``tests/auth/test_sdk_contract.py`` fails when one of
them disappears or changes its parameters.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from pathlib import Path

import anyio
import httpx2
from mcp.client.auth import OAuthClientProvider, OAuthFlowError
from mcp.shared.auth import OAuthClientMetadata
from pydantic import AnyUrl, ValidationError

from orbmcp.auth import policy, sync, tokens
from orbmcp.auth.callback import DEFAULT_CALLBACK_TIMEOUT_S
from orbmcp.auth.challenge import Challenges
from orbmcp.auth.lock import AuthLock
from orbmcp.auth.messages import clean, log_auth_event
from orbmcp.auth.redirect import PLACEHOLDER_REDIRECT, LoopbackRedirect
from orbmcp.auth.sdk_logging import install_sdk_log_scrubber, watch
from orbmcp.auth.storage import AuthStore
from orbmcp.auth.ui import AuthUI, ChallengeListener, needs_auth_error
from orbmcp.auth.urlpolicy import check_fetch_url
from orbmcp.config.model import AuthConfig, ServerConfig
from orbmcp.errors import AuthError, cmd
from orbmcp.net.bounded import ResponseTooLarge

_MAX_RESTARTS = 6

# The private methods of OAuthClientProvider this class overrides (mcp 2.3), and why no public
# hook does instead; tests/auth/test_sdk_contract.py checks each still exists with its parameters.
SDK_PRIVATE_OVERRIDES: tuple[str, ...] = (
    # Runs when the SDK loads the store: the absolute expiry, the pre-registered client and the
    # discovered metadata must be in the context before the SDK decides to refresh or log in.
    "_initialize",
    # Asked right after discovery, before any metadata or credential is used: stored credentials
    # of another authorization server must be dropped there.
    "_expected_issuer",
    # Builds the authorization URL: the scope, the listener's redirect URI and the vetting must
    # be settled before it, and nothing between discovery and it passes through a public hook.
    "_perform_authorization_code_grant",
)
# Private attributes of OAuthClientProvider instances this class reads.
SDK_PRIVATE_ATTRIBUTES: tuple[str, ...] = ("_initialized",)


class OrbOAuthProvider(OAuthClientProvider):
    """The ``httpx2.Auth`` of one OAuth server (see the module docstring); ``build_auth`` makes one."""

    def __init__(
        self,
        cfg: ServerConfig,
        store: AuthStore,
        *,
        interactive: bool,
        ui: AuthUI | None,
        no_browser: bool = False,
        callback_timeout_s: float = DEFAULT_CALLBACK_TIMEOUT_S,
        lock_factory: Callable[[], AuthLock] | None = None,
        on_challenge: ChallengeListener | None = None,
    ) -> None:
        assert cfg.url is not None
        self.cfg = cfg
        self.server = cfg.name
        self.store = store
        self._auth_cfg = cfg.auth or AuthConfig()
        self._interactive = interactive and ui is not None
        self._lock_factory = lock_factory
        self.logins = 0  # successful authorization-code exchanges
        self.refreshes = 0  # successful refresh grants
        self._secrets: set[str] = set()
        if self._auth_cfg.client_secret:
            self._secrets.add(self._auth_cfg.client_secret)
        self._redirect = LoopbackRedirect(
            server=self.server,
            auth=self._auth_cfg,
            ui=ui,
            no_browser=no_browser,
            timeout_s=callback_timeout_s,
            secrets=self._secrets,
        )
        self._challenges = Challenges(
            server=self.server, store=store, interactive=self._interactive, on_challenge=on_challenge
        )
        self._flow_lock = anyio.Lock()
        self._authorized_in_call = False
        self._refresh_transient = False
        metadata = OAuthClientMetadata(
            redirect_uris=[AnyUrl(PLACEHOLDER_REDIRECT)],
            client_name=self._auth_cfg.client_name or "orbmcp",
            token_endpoint_auth_method=policy.requested_method(self._auth_cfg.token_endpoint_auth_method),
            scope=self._auth_cfg.scope or None,
        )
        try:
            super().__init__(
                server_url=cfg.url,
                client_metadata=metadata,
                storage=store,
                redirect_handler=self._redirect.redirect,
                callback_handler=self._redirect.callback,
                client_metadata_url=self._auth_cfg.client_metadata_url or None,
            )
        except ValueError as exc:
            raise AuthError(
                f"server '{self.server}': invalid auth.clientMetadataUrl ({clean(str(exc))})",
                server=self.server,
                hint="clientMetadataUrl must be an https URL with a path",
            ) from None
        watch(self)

    # -- small accessors -------------------------------------------------------------------------

    @property
    def interactive(self) -> bool:
        return self._interactive

    def known_secrets(self) -> set[str]:
        out = {s for s in self._secrets if s}
        tokens = self.context.current_tokens
        if tokens is not None:
            out.add(tokens.access_token)
            if tokens.refresh_token:
                out.add(tokens.refresh_token)
        info = self.context.client_info
        if info is not None and info.client_secret:
            out.add(info.client_secret)
        return out

    def _remember_tokens(self) -> None:
        self._secrets |= self.known_secrets()

    # -- loading state (SDK override) ------------------------------------------------------------

    async def _initialize(self) -> None:
        await super()._initialize()
        sync.restore_after_load(self.context, self.store, self._auth_cfg)
        self._remember_tokens()

    # -- issuer binding (SDK override) -----------------------------------------------------------

    def _expected_issuer(self) -> str:
        issuer = super()._expected_issuer()
        sync.forget_other_issuer(self.context, self.store, self._auth_cfg, issuer, server=self.server)
        self.store.bind_issuer(issuer)
        return issuer

    # -- the interactive part (SDK override) -----------------------------------------------------

    async def _perform_authorization_code_grant(self) -> tuple[str, str]:
        if not self._interactive:
            raise needs_auth_error(self.server)
        self._vet_authorization_server()
        await self._redirect.ensure_listener(self.context)
        ctx = self.context
        ctx.client_metadata.scope = policy.wanted_scope(
            ctx.client_metadata.scope, self._auth_cfg, self.store.required_scope()
        )
        policy.fit_preregistered_method(ctx.client_info, ctx.oauth_metadata, self._auth_cfg)
        attempt = self._challenges.authorization_started()
        log_auth_event(
            "oauth.authorize",
            server=self.server,
            message=f"interactive authorization for '{self.server}' (attempt {attempt})",
            attempt=attempt,
        )
        code, verifier = await super()._perform_authorization_code_grant()
        self._secrets.update((code, verifier))
        return code, verifier

    def _vet_authorization_server(self) -> None:
        assert self.cfg.url is not None
        ctx = self.context
        policy.require_metadata(
            ctx.oauth_metadata, ctx.protected_resource_metadata, ctx.auth_server_url, server=self.server
        )
        policy.vet_metadata(ctx.oauth_metadata, self.cfg.url, server=self.server)
        policy.check_pkce(
            ctx.oauth_metadata, ctx.protected_resource_metadata, self._auth_cfg, server=self.server
        )

    # -- the flow wrapper (httpx2's public hook) ---------------------------------------------------

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        async with self._flow_lock:
            if not self._initialized:
                await self._initialize()
            self._authorized_in_call = False
            self._refresh_transient = False
            restarts = 0
            while True:
                xlock: AuthLock | None = None
                restart = False
                try:
                    ctx = self.context
                    if ctx.current_tokens is not None and not ctx.is_token_valid():
                        if ctx.can_refresh_token():
                            xlock = await self._take_lock()
                        await self._adopt_stored_tokens()
                    inner = super().async_auth_flow(request)
                    try:
                        outgoing = await self._step(inner, None)
                        request_yields = 0
                        carried: str | None = None  # the grant of a token request being redirected
                        while True:
                            grant: str | None = None
                            if outgoing is request:
                                request_yields += 1
                                if xlock is not None and not self._redirect.active:
                                    xlock.release()  # the refresh (if any) is done and stored
                                    xlock = None
                            else:
                                outgoing = self._vet_outgoing(outgoing)
                                grant = tokens.grant_type(outgoing) or carried
                            response = yield outgoing
                            if outgoing is request:
                                action = self._challenges.decide(
                                    response,
                                    self.context,
                                    restarts=restarts,
                                    request_yields=request_yields,
                                    authorized_in_call=self._authorized_in_call,
                                    refresh_transient=self._refresh_transient,
                                )
                                if action == "restart":
                                    restart = True
                                    break
                                if action == "authorize":
                                    if xlock is None:
                                        xlock = await self._take_lock()
                                    if await self._adopt_stored_tokens():
                                        restart = True  # another process authorized meanwhile
                                        break
                                    await self._redirect.ensure_listener(self.context)
                            elif policy.is_metadata_request(outgoing.method, outgoing.url.path):
                                if response.status_code == 200:
                                    body = await response.aread()
                                    policy.check_metadata_document(
                                        body, str(outgoing.url), server=self.server
                                    )
                            elif grant == tokens.AUTHORIZATION_CODE and response.status_code in (200, 201):
                                issuer = sync.current_issuer(self.context)
                                if issuer:
                                    self.store.bind_issuer(issuer)  # before the SDK stores the tokens
                            outgoing = await self._step(inner, response, grant)
                            carried = None
                            if grant is not None:
                                if outgoing is response.next_request:
                                    carried = grant  # the SDK follows the token endpoint's redirect
                                else:
                                    await self._token_response_handled(grant, response)
                    except StopAsyncIteration:
                        return
                    finally:
                        await inner.aclose()
                finally:
                    if xlock is not None:
                        xlock.release()
                    await self._redirect.close()
                if not restart:
                    return
                restarts += 1
                if restarts > _MAX_RESTARTS:
                    raise AuthError(
                        f"server '{self.server}' keeps rejecting fresh credentials",
                        server=self.server,
                        hint=cmd("auth", self.server, "--reset"),
                        reason="credentials_rejected",
                    )
                request.headers.pop("Authorization", None)

    async def _step(
        self,
        inner: AsyncGenerator[httpx2.Request, httpx2.Response],
        response: httpx2.Response | None,
        grant: str | None = None,
    ) -> httpx2.Request:
        """Advance the SDK flow; its exceptions become one-line, redacted AuthErrors."""
        try:
            if response is None:
                return await inner.__anext__()
            return await inner.asend(response)
        except ResponseTooLarge as exc:
            raise AuthError(
                f"authorization for server '{self.server}' failed: the authorization server sent a {exc}",
                server=self.server,
                reason="response_too_large",
            ) from None
        except (OAuthFlowError, ValidationError) as exc:
            if (
                grant == tokens.AUTHORIZATION_CODE
                and response is not None
                and response.status_code not in (200, 201)
            ):
                await response.aread()
                raise tokens.token_request_failed(self.server, response) from None
            raise AuthError(
                f"authorization for server '{self.server}' failed: {clean(str(exc), self.known_secrets())}",
                server=self.server,
                hint=cmd("auth", self.server, "--reset"),
                reason="flow_failed",
            ) from None

    async def _take_lock(self) -> AuthLock | None:
        if self._lock_factory is None:
            return None
        lock = self._lock_factory()
        await lock.acquire()
        return lock

    async def _adopt_stored_tokens(self) -> bool:
        adopted = await sync.adopt_stored_tokens(self.context, self.store, self._auth_cfg, server=self.server)
        self._remember_tokens()
        return adopted

    # -- requests the SDK makes on its own -------------------------------------------------------

    def _vet_outgoing(self, outgoing: httpx2.Request) -> httpx2.Request:
        assert self.cfg.url is not None
        check_fetch_url(str(outgoing.url), self.cfg.url, server=self.server)
        if outgoing.method != "POST":
            return outgoing
        if outgoing.headers.get("content-type", "").startswith("application/json"):
            return self._registration_request(outgoing)
        form = tokens.form_fields(outgoing)
        for key in tokens.SECRET_FORM_FIELDS:
            self._secrets.update(v for v in form.get(key, []) if v)
        return outgoing

    def _registration_request(self, outgoing: httpx2.Request) -> httpx2.Request:
        """Dynamic client registration: only interactively, only with PKCE, as a native public client."""
        if not self._interactive:
            raise needs_auth_error(self.server)
        self._vet_authorization_server()
        ctx = self.context
        body = policy.registration_body(
            ctx.client_metadata, ctx.oauth_metadata, self._auth_cfg, self.store.required_scope()
        )
        return httpx2.Request("POST", outgoing.url, json=body, headers={"Content-Type": "application/json"})

    # -- token responses -------------------------------------------------------------------------

    async def _token_response_handled(self, grant: str, response: httpx2.Response) -> None:
        """The SDK has taken in the token endpoint's final answer to a ``grant`` request."""
        if grant == tokens.AUTHORIZATION_CODE:
            self.logins += 1
            self._authorized_in_call = True
            self._remember_tokens()
            self.store.save_discovery(sync.snapshot(self.context), sync.current_issuer(self.context))
            self.store.set_required_scope(None)
            log_auth_event("oauth.authorized", server=self.server, message=f"authorized '{self.server}'")
        elif grant == tokens.REFRESH_TOKEN:
            await response.aread()
            outcome = tokens.settle_refresh(
                response, self.context, self.store, self._auth_cfg, server=self.server
            )
            self._refresh_transient = outcome == "transient"
            if outcome == "refreshed":
                self.refreshes += 1
                self._remember_tokens()


def build_auth(
    cfg: ServerConfig,
    global_dir: Path,
    *,
    interactive: bool,
    ui: AuthUI | None,
    on_challenge: ChallengeListener | None = None,
    no_browser: bool = False,
    callback_timeout_s: float = DEFAULT_CALLBACK_TIMEOUT_S,
    notify: Callable[[str], None] | None = None,
) -> OrbOAuthProvider:
    """The ``httpx2.Auth`` for one OAuth server's connections (``notify``: where a notice such as a
    keyring fallback goes; the ui's notice line by default).

    ``interactive=False`` (background sessions, CI, ``--json``): refreshes only; a needed login
    raises :class:`AuthError` (pointing at ``orbmcp auth NAME``) and is reported to ``on_challenge``.
    """
    if cfg.auth is None or not cfg.url:
        raise AuthError(f"server '{cfg.name}' is not configured for OAuth", server=cfg.name)
    install_sdk_log_scrubber()
    store = AuthStore(global_dir, cfg, notify=notify or (ui.notify if ui is not None else None))

    def lock_factory() -> AuthLock:
        return AuthLock(store.lock_path, server=cfg.name)

    return OrbOAuthProvider(
        cfg,
        store,
        interactive=interactive,
        ui=ui,
        no_browser=no_browser,
        callback_timeout_s=callback_timeout_s,
        lock_factory=lock_factory,
        on_challenge=on_challenge,
    )
