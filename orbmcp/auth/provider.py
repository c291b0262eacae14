"""The SDK's ``OAuthClientProvider`` with orbmcp's storage, callback, policies and fixes.

Connect-time only: imports ``mcp`` and ``httpx2`` at the top (``core/connect.py`` and
``auth/flow.py`` import this module inside functions).

What the subclass adds to the SDK flow (mcp 2.3.0, read in full before writing this):

- the stored ABSOLUTE expiry and the discovered metadata are restored, so a stored refresh token
  is used (at the right token endpoint) before any interactive login; a 401 on a token of
  unknown expiry is retried once through the refresh grant first;
- refreshes and interactive logins hold the cross-process lock; the loser re-reads the store;
- every request the flow makes is checked against the SSRF policy, the authorization URL against
  the browser policy; S256 must be advertised unless the entry opts out;
- client identity: pre-registered (config) → CIMD → DCR (``application_type: native``);
- step-up on 403 ``insufficient_scope`` asks for the union of scopes, at most 3 attempts;
- non-interactive providers never open a browser or register a client: a needed login raises
  :class:`AuthError` at once, and the caller learns of it through ``on_challenge``.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
from mcp.client.auth import OAuthClientProvider, OAuthFlowError
from mcp.client.auth.utils import extract_field_from_www_auth, union_scopes
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
    ProtectedResourceMetadata,
)
from pydantic import AnyUrl, ValidationError

from orbmcp.auth.callback import CALLBACK_PATH, DEFAULT_CALLBACK_TIMEOUT_S, CallbackListener
from orbmcp.auth.lock import AuthLock
from orbmcp.auth.storage import AuthStore, issuers_equal, log_auth_event, safe_text
from orbmcp.auth.urlpolicy import check_browser_url, check_fetch_url, display_url
from orbmcp.config.model import AuthConfig, ServerConfig
from orbmcp.errors import AuthError

MAX_AUTH_ATTEMPTS = 3
_MAX_RESTARTS = 6
_PLACEHOLDER_REDIRECT = f"http://127.0.0.1{CALLBACK_PATH}"
_METHOD_PREFERENCE = ("none", "client_secret_basic", "client_secret_post")


class AuthUI(Protocol):
    """How a provider reaches the person authorizing (never a shell)."""

    def open_url(self, url: str) -> bool:
        """Open a validated https (or loopback http) URL in a browser; False if it could not."""
        ...

    def show_url(self, url: str) -> None:
        """Print the URL for manual copy (always called)."""
        ...

    def prompt_paste(self) -> str | None:
        """Headless: block until the user pastes the final redirect URL; None for no paste."""
        ...

    def notify(self, msg: str) -> None: ...


@dataclass(frozen=True)
class AuthChallenge:
    """A 401 or 403 insufficient_scope the provider could not (or must not) resolve by itself."""

    server: str
    kind: Literal["unauthorized", "insufficient_scope"]
    scope: str | None
    tokens_invalidated: bool
    message: str


ChallengeListener = Callable[[AuthChallenge], None]

_Action = Literal["pass", "restart", "authorize"]


def needs_auth_error(server: str, *, scope: str | None = None) -> AuthError:
    if scope:
        return AuthError(
            f"server '{server}' needs additional permission ({safe_text(scope)}); run `orbmcp auth {server}`",
            server=server,
            hint=f"orbmcp auth {server}",
        )
    return AuthError(
        f"server '{server}' needs authorization; run `orbmcp auth {server}`",
        server=server,
        hint=f"orbmcp auth {server}",
    )


# -- the SDK's own log lines go through the redactor -------------------------------------------

_LIVE: weakref.WeakSet[OrbOAuthProvider] = weakref.WeakSet()


class _SdkLogScrubber(logging.Filter):
    """The SDK logs states, iss values and token-endpoint bodies in its messages; mask and escape."""

    def filter(self, record: logging.LogRecord) -> bool:
        secrets: set[str] = set()
        for provider in list(_LIVE):
            secrets |= provider.known_secrets()
        try:
            text = record.getMessage()
        except Exception:
            text = str(record.msg)
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            text = f"{text}: {type(exc).__name__}: {exc}"
            record.exc_info = None
            record.exc_text = None
        record.msg = safe_text(text, secrets)
        record.args = None
        return True


def _install_scrubber() -> None:
    sdk_logger = logging.getLogger("mcp.client.auth.oauth2")
    if not any(isinstance(f, _SdkLogScrubber) for f in sdk_logger.filters):
        sdk_logger.addFilter(_SdkLogScrubber())


_install_scrubber()


# -- the provider --------------------------------------------------------------------------------


class OrbOAuthProvider(OAuthClientProvider):
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
        self._ui = ui
        self._no_browser = no_browser
        self._callback_timeout_s = callback_timeout_s
        self._lock_factory = lock_factory
        self.on_challenge = on_challenge
        self.last_challenge: AuthChallenge | None = None
        self.logins = 0  # successful authorization-code exchanges
        self.refreshes = 0  # successful refresh grants
        self._secrets: set[str] = set()
        if self._auth_cfg.client_secret:
            self._secrets.add(self._auth_cfg.client_secret)
        self._listener: CallbackListener | None = None
        self._browser_opened = False
        self._flow_lock = anyio.Lock()
        self._consecutive_attempts = 0
        self._authorized_in_call = 0
        self._refresh_transient = False
        metadata = OAuthClientMetadata(
            redirect_uris=[AnyUrl(_PLACEHOLDER_REDIRECT)],
            client_name=self._auth_cfg.client_name or "orbmcp",
            token_endpoint_auth_method=_requested_method(self._auth_cfg.token_endpoint_auth_method),
            scope=self._auth_cfg.scope or None,
        )
        try:
            super().__init__(
                server_url=cfg.url,
                client_metadata=metadata,
                storage=store,
                redirect_handler=self._redirect,
                callback_handler=self._callback,
                client_metadata_url=self._auth_cfg.client_metadata_url or None,
            )
        except ValueError as exc:
            raise AuthError(
                f"server '{self.server}': invalid auth.clientMetadataUrl ({safe_text(str(exc))})",
                server=self.server,
                hint="clientMetadataUrl must be an https URL with a path",
            ) from None
        _LIVE.add(self)

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

    # -- loading state -----------------------------------------------------------------------------

    async def _initialize(self) -> None:
        await super()._initialize()
        ctx = self.context
        ctx.token_expiry_time = self.store.expires_at() if ctx.current_tokens is not None else None
        pre = self._preregistered_client()
        if pre is not None:
            ctx.client_info = pre
        self._restore_discovery()
        self._remember_tokens()

    def _preregistered_client(self) -> OAuthClientInformationFull | None:
        a = self._auth_cfg
        if not a.client_id:
            return None
        method = a.token_endpoint_auth_method or ("client_secret_basic" if a.client_secret else "none")
        uris = self.context.client_metadata.redirect_uris
        return OAuthClientInformationFull(
            client_id=a.client_id,
            client_secret=a.client_secret or None,
            token_endpoint_auth_method=method,
            redirect_uris=list(uris) if uris else None,
        )

    def _is_preregistered(self, info: OAuthClientInformationFull | None) -> bool:
        return (
            info is not None and bool(self._auth_cfg.client_id) and info.client_id == self._auth_cfg.client_id
        )

    def _is_cimd(self, info: OAuthClientInformationFull | None) -> bool:
        url = self._auth_cfg.client_metadata_url
        return info is not None and bool(url) and info.client_id == url

    def _restore_discovery(self) -> None:
        """The token endpoint and resource the stored tokens were issued for (the SDK forgets them)."""
        ctx = self.context
        saved = self.store.discovery()
        try:
            if ctx.oauth_metadata is None and isinstance(saved.get("authorization_server"), dict):
                ctx.oauth_metadata = OAuthMetadata.model_validate(saved["authorization_server"])
            if ctx.protected_resource_metadata is None and isinstance(saved.get("protected_resource"), dict):
                ctx.protected_resource_metadata = ProtectedResourceMetadata.model_validate(
                    saved["protected_resource"]
                )
        except ValidationError:
            return
        if ctx.auth_server_url is None and isinstance(saved.get("auth_server_url"), str):
            ctx.auth_server_url = saved["auth_server_url"]

    def _save_discovery(self) -> None:
        ctx = self.context
        discovery: dict[str, Any] = {
            "authorization_server": ctx.oauth_metadata.model_dump(mode="json", exclude_none=True)
            if ctx.oauth_metadata
            else None,
            "protected_resource": ctx.protected_resource_metadata.model_dump(mode="json", exclude_none=True)
            if ctx.protected_resource_metadata
            else None,
            "auth_server_url": ctx.auth_server_url,
        }
        self.store.save_discovery(discovery, self._current_issuer())

    def _current_issuer(self) -> str | None:
        md = self.context.oauth_metadata
        return str(md.issuer) if md is not None else None

    # -- issuer binding (R-E8) -------------------------------------------------------------------

    def _expected_issuer(self) -> str:
        issuer = super()._expected_issuer()
        record = self.store.load()
        if record is not None and record.issuer and not issuers_equal(record.issuer, issuer):
            # The server now names another authorization server: nothing issued by or registered
            # with the old one may be sent to the new one.
            ctx = self.context
            ctx.clear_tokens()
            ctx.oauth_metadata = None
            if not self._is_preregistered(ctx.client_info) and not self._is_cimd(ctx.client_info):
                ctx.client_info = None
            self.store.clear(tokens=True, client=True)
            log_auth_event(
                "oauth.issuer.changed",
                server=self.server,
                level="warning",
                message=f"server '{self.server}' moved to another authorization server; "
                "stored credentials dropped",
            )
        self.store.bind_issuer(issuer)
        return issuer

    # -- the flow wrapper --------------------------------------------------------------------------

    async def _auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        async with self._flow_lock:
            if not self._initialized:
                await self._initialize()
            self._authorized_in_call = 0
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
                    inner = super()._auth_flow(request)
                    try:
                        outgoing = await self._step(inner, None)
                        request_yields = 0
                        while True:
                            if outgoing is request:
                                request_yields += 1
                                if xlock is not None and not self._authorizing():
                                    xlock.release()  # the refresh (if any) is done and stored
                                    xlock = None
                            else:
                                outgoing = self._vet_outgoing(outgoing)
                            response = yield outgoing
                            if outgoing is request:
                                action = await self._on_response(response, restarts, request_yields)
                                if action == "restart":
                                    restart = True
                                    break
                                if action == "authorize":
                                    if xlock is None:
                                        xlock = await self._take_lock()
                                    if await self._adopt_stored_tokens():
                                        restart = True  # another process authorized meanwhile
                                        break
                                    await self._ensure_listener()
                            outgoing = await self._step(inner, response)
                    except StopAsyncIteration:
                        return
                    finally:
                        await inner.aclose()
                finally:
                    if xlock is not None:
                        xlock.release()
                    await self._close_listener()
                if not restart:
                    return
                restarts += 1
                if restarts > _MAX_RESTARTS:
                    raise AuthError(
                        f"server '{self.server}' keeps rejecting fresh credentials",
                        server=self.server,
                        hint=f"orbmcp auth {self.server} --reset",
                    )
                request.headers.pop("Authorization", None)

    async def _step(
        self, inner: AsyncGenerator[httpx2.Request, httpx2.Response], response: httpx2.Response | None
    ) -> httpx2.Request:
        """Advance the SDK flow; its exceptions become one-line, redacted AuthErrors."""
        try:
            if response is None:
                return await inner.__anext__()
            return await inner.asend(response)
        except (OAuthFlowError, ValidationError) as exc:
            raise AuthError(
                f"authorization for server '{self.server}' failed: "
                f"{safe_text(str(exc), self.known_secrets())}",
                server=self.server,
                hint=f"orbmcp auth {self.server} --reset",
            ) from None

    def _authorizing(self) -> bool:
        return self._listener is not None

    async def _take_lock(self) -> AuthLock | None:
        if self._lock_factory is None:
            return None
        lock = self._lock_factory()
        await lock.acquire()
        return lock

    async def _adopt_stored_tokens(self) -> bool:
        """After taking the lock: another process may have refreshed or authorized meanwhile."""
        ctx = self.context
        stored = await self.store.get_tokens()
        current = ctx.current_tokens
        if stored is None:
            if current is not None and self.store.load() is None:
                ctx.clear_tokens()  # logged out or invalidated elsewhere: ours are dead too
            return False
        if current is not None and stored.access_token == current.access_token:
            return False
        ctx.current_tokens = stored
        ctx.token_expiry_time = self.store.expires_at()
        info = await self.store.get_client_info()
        if info is not None and not self._auth_cfg.client_id:
            ctx.client_info = info
        self._restore_discovery()
        self._remember_tokens()
        log_auth_event(
            "oauth.tokens.adopted",
            server=self.server,
            message=f"using tokens another orbmcp process stored for '{self.server}'",
        )
        return ctx.is_token_valid() or ctx.can_refresh_token()

    async def _on_response(self, response: httpx2.Response, restarts: int, request_yields: int) -> _Action:
        status = response.status_code
        step_up = status == 403 and extract_field_from_www_auth(response, "error") == "insufficient_scope"
        if status != 401 and not step_up:
            if status < 400:
                self._consecutive_attempts = 0
            return "pass"
        kind: Literal["unauthorized", "insufficient_scope"] = (
            "unauthorized" if status == 401 else "insufficient_scope"
        )
        scope = extract_field_from_www_auth(response, "scope")
        log_auth_event(
            "oauth.challenge",
            server=self.server,
            message=f"server '{self.server}' answered {status} ({kind})",
            status=status,
            kind=kind,
        )
        if status == 401:
            if self._authorized_in_call:
                raise AuthError(
                    f"server '{self.server}' rejected the token its authorization server just issued",
                    server=self.server,
                    hint=f"orbmcp auth {self.server} --reset",
                )
            if restarts == 0 and self.context.current_tokens is not None and self._may_refresh_instead():
                # A token of unknown expiry was rejected: try the refresh grant before any login.
                self.context.token_expiry_time = 1.0
                return "restart"
            if self._refresh_transient:
                # The refresh token may well be fine; a login now would be the wrong fix.
                err = AuthError(
                    f"server '{self.server}': could not refresh the token "
                    "(authorization server unavailable); stored credentials kept, try again later",
                    server=self.server,
                )
                self._notify(kind, scope, invalidated=False, message=err.message)
                raise err
        if not self._interactive:
            raise self._fail_needs_auth(kind, scope)
        if self._consecutive_attempts >= MAX_AUTH_ATTEMPTS:
            err = AuthError(
                f"server '{self.server}' still refuses after {MAX_AUTH_ATTEMPTS} authorization attempts"
                + (f" (needs scope {safe_text(scope)})" if scope else ""),
                server=self.server,
                hint=f"check that your account may use scope {scope}" if scope else None,
            )
            self._notify(kind, scope, invalidated=False, message=err.message)
            raise err
        if request_yields > 1:
            # The SDK passes the retry's 403 through; start over so its step-up runs now.
            return "restart"
        # The SDK rediscovers on every 401; drop what was restored for the refresh grant.
        if status == 401:
            self.context.protected_resource_metadata = None
            self.context.auth_server_url = None
        return "authorize"

    def _may_refresh_instead(self) -> bool:
        if self.context.can_refresh_token():
            return True
        stored = self.store.load()
        tokens = (stored.tokens or {}) if stored else {}
        current = self.context.current_tokens
        return bool(current and tokens.get("access_token") not in (None, current.access_token))

    def _fail_needs_auth(
        self, kind: Literal["unauthorized", "insufficient_scope"], scope: str | None
    ) -> AuthError:
        invalidated = False
        if kind == "unauthorized":
            if self.context.current_tokens is not None or self.store.load() is not None:
                if not self._refresh_transient:
                    self.store.clear(tokens=True, client=False)
                    invalidated = True
                self.context.clear_tokens()
            err = needs_auth_error(self.server)
        else:
            granted = self.context.current_tokens.scope if self.context.current_tokens else None
            wanted = union_scopes(union_scopes(self.store.required_scope(), granted), scope)
            if self.store.load() is not None:
                self.store.set_required_scope(wanted)
            err = needs_auth_error(self.server, scope=scope or wanted)
        self._notify(kind, scope, invalidated=invalidated, message=err.message)
        return err

    def _notify(
        self,
        kind: Literal["unauthorized", "insufficient_scope"],
        scope: str | None,
        *,
        invalidated: bool,
        message: str,
    ) -> None:
        challenge = AuthChallenge(
            server=self.server, kind=kind, scope=scope, tokens_invalidated=invalidated, message=message
        )
        self.last_challenge = challenge
        if self.on_challenge is not None:
            try:
                self.on_challenge(challenge)
            except Exception:
                pass

    # -- requests the SDK makes on its own -------------------------------------------------------

    def _vet_outgoing(self, outgoing: httpx2.Request) -> httpx2.Request:
        assert self.cfg.url is not None
        check_fetch_url(str(outgoing.url), self.cfg.url, server=self.server)
        if outgoing.method != "POST":
            return outgoing
        content_type = outgoing.headers.get("content-type", "")
        if content_type.startswith("application/json"):
            return self._registration_request(outgoing)
        self._capture_form_secrets(outgoing)
        return outgoing

    def _registration_request(self, outgoing: httpx2.Request) -> httpx2.Request:
        """Dynamic client registration: only interactively, only with PKCE, as a native public client."""
        if not self._interactive:
            raise needs_auth_error(self.server)
        self._vet_metadata()
        self._check_pkce()
        meta = self.context.client_metadata
        md = self.context.oauth_metadata
        if (
            not self._auth_cfg.token_endpoint_auth_method
            and md is not None
            and md.token_endpoint_auth_methods_supported
        ):
            supported = md.token_endpoint_auth_methods_supported
            choice = next((m for m in _METHOD_PREFERENCE if m in supported), None)
            if choice is not None:
                meta.token_endpoint_auth_method = choice  # type: ignore[assignment]
        meta.scope = self._wanted_scope(meta.scope)
        body = meta.model_dump(by_alias=True, mode="json", exclude_none=True)
        return httpx2.Request("POST", outgoing.url, json=body, headers={"Content-Type": "application/json"})

    def _capture_form_secrets(self, outgoing: httpx2.Request) -> None:
        try:
            form = parse_qs(outgoing.content.decode(), keep_blank_values=True)
        except Exception:
            return
        for key in ("code", "code_verifier", "refresh_token", "client_secret"):
            self._secrets.update(v for v in form.get(key, []) if v)

    def _vet_metadata(self) -> None:
        """Every endpoint the metadata names, before any of them is used (R-F1, R-F2, T-E12)."""
        md = self.context.oauth_metadata
        if md is None:
            return
        assert self.cfg.url is not None
        for url in (md.token_endpoint, md.registration_endpoint):
            if url is not None:
                check_fetch_url(str(url), self.cfg.url, server=self.server)
        check_browser_url(str(md.authorization_endpoint))

    def _check_pkce(self) -> None:
        md = self.context.oauth_metadata
        methods = md.code_challenge_methods_supported if md is not None else None
        if methods and "S256" in methods:
            return
        if md is None and self.context.protected_resource_metadata is None:
            # The 2025-03-26 fallback (no PRM, no AS metadata: /authorize, /token, /register on the
            # server's own origin) has no advertisement to verify, and that revision requires S256
            # unconditionally; the refusal (R-E5) is for metadata that omits or lacks S256.
            return
        if not methods and self._auth_cfg.allow_missing_pkce_advertisement:
            return
        what = "does not advertise PKCE" if not methods else f"offers PKCE methods {methods} but not S256"
        raise AuthError(
            f"server '{self.server}': the authorization server {what}; refusing to authorize",
            server=self.server,
            hint='if you trust this server, set "allowMissingPkceAdvertisement": true in its auth settings'
            if not methods
            else None,
        )

    def _wanted_scope(self, selected: str | None) -> str | None:
        return union_scopes(union_scopes(selected, self._auth_cfg.scope or None), self.store.required_scope())

    # -- the interactive part ----------------------------------------------------------------------

    async def _ensure_listener(self) -> None:
        """Bind the callback listener before registration, so ``redirect_uris`` names its port."""
        if self._listener is not None and not self._listener.closed:
            return
        ctx = self.context
        preferred = self._auth_cfg.redirect_port or _loopback_port(ctx.client_info)
        listener = CallbackListener(server=self.server, port=preferred or 0)
        try:
            await listener.start()
        except AuthError:
            if self._auth_cfg.redirect_port or self._is_preregistered(ctx.client_info):
                raise
            listener = CallbackListener(server=self.server, port=0)
            await listener.start()
        self._listener = listener
        uri = listener.redirect_uri
        ctx.client_metadata.redirect_uris = [AnyUrl(uri)]
        info = ctx.client_info
        if info is None:
            return
        registered = [str(u) for u in info.redirect_uris or []]
        if uri in registered:
            return
        if self._is_preregistered(info):
            info.redirect_uris = [AnyUrl(uri)]
        elif not self._is_cimd(info):
            # Registered for a port we could not bind again: register anew (T-E10).
            ctx.client_info = None

    async def _close_listener(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            with anyio.CancelScope(shield=True):  # the port must be freed even when cancelled
                await listener.aclose()

    async def _perform_authorization_code_grant(self) -> tuple[str, str]:
        if not self._interactive:
            raise needs_auth_error(self.server)
        self._vet_metadata()
        self._check_pkce()
        await self._ensure_listener()
        ctx = self.context
        ctx.client_metadata.scope = self._wanted_scope(ctx.client_metadata.scope)
        self._fit_preregistered_method()
        self._consecutive_attempts += 1
        log_auth_event(
            "oauth.authorize",
            server=self.server,
            message=f"interactive authorization for '{self.server}' (attempt {self._consecutive_attempts})",
            attempt=self._consecutive_attempts,
        )
        code, verifier = await super()._perform_authorization_code_grant()
        self._secrets.update((code, verifier))
        return code, verifier

    def _fit_preregistered_method(self) -> None:
        info = self.context.client_info
        md = self.context.oauth_metadata
        if not self._is_preregistered(info) or self._auth_cfg.token_endpoint_auth_method or md is None:
            return
        assert info is not None
        supported = md.token_endpoint_auth_methods_supported or []
        if (
            info.client_secret
            and "client_secret_basic" not in supported
            and "client_secret_post" in supported
        ):
            info.token_endpoint_auth_method = "client_secret_post"  # noqa: S105

    async def _redirect(self, url: str) -> None:
        check_browser_url(url)
        listener = self._listener
        if listener is None or self._ui is None:
            raise needs_auth_error(self.server)
        state = (parse_qs(urlsplit(url).query).get("state") or [""])[0]
        self._secrets.add(state)
        listener.expect_state(state)
        self._ui.show_url(display_url(url))
        self._browser_opened = False
        if not self._no_browser:
            try:
                self._browser_opened = bool(self._ui.open_url(url))
            except Exception:
                self._browser_opened = False
            if not self._browser_opened:
                self._ui.notify(
                    "could not open a browser; open the URL above, or paste the final redirect URL"
                )

    async def _callback(self) -> AuthorizationCodeResult:
        listener = self._listener
        ui = self._ui
        if listener is None or ui is None:
            raise needs_auth_error(self.server)
        paste = ui.prompt_paste if (self._no_browser or not self._browser_opened) else None
        result = await listener.wait(self._callback_timeout_s, paste=paste, notify=ui.notify)
        self._secrets.add(result.code)
        return AuthorizationCodeResult(code=result.code, state=result.state, iss=result.iss)

    # -- token responses ---------------------------------------------------------------------------

    async def _handle_token_response(self, response: httpx2.Response) -> None:
        if response.status_code not in (200, 201):
            error = await _oauth_error(response)
            raise AuthError(
                f"server '{self.server}': the token request failed (HTTP {response.status_code}"
                + (f", {error}" if error else "")
                + ")",
                server=self.server,
                hint=f"orbmcp auth {self.server} --reset" if error == "invalid_client" else None,
            )
        issuer = self._current_issuer()
        if issuer:
            self.store.bind_issuer(issuer)
        await super()._handle_token_response(response)
        self.logins += 1
        self._authorized_in_call += 1
        self._remember_tokens()
        self._save_discovery()
        self.store.set_required_scope(None)
        log_auth_event("oauth.authorized", server=self.server, message=f"authorized '{self.server}'")

    async def _handle_refresh_response(self, response: httpx2.Response) -> bool:
        status = response.status_code
        self._refresh_transient = False
        if status == 200:
            ok = await super()._handle_refresh_response(response)
            if ok:
                self.refreshes += 1
                self._remember_tokens()
            else:
                self._refresh_transient = True  # a 200 without tokens: keep the stored ones for later
            log_auth_event(
                "oauth.refresh",
                server=self.server,
                message=f"token refresh for '{self.server}' "
                f"{'succeeded' if ok else 'returned no usable token'}",
                status=status,
                reason="ok" if ok else "invalid-response",
            )
            return ok
        error = await _oauth_error(response)
        if error in ("invalid_client", "unauthorized_client"):
            if not self._is_preregistered(self.context.client_info):
                self.context.client_info = None
            self.store.clear(tokens=True, client=True)
        elif 400 <= status < 500:
            self.store.clear(tokens=True, client=False)
        else:
            self._refresh_transient = True  # the AS is down: keep the refresh token for a later try
        log_auth_event(
            "oauth.refresh",
            server=self.server,
            level="warning",
            message=f"token refresh for '{self.server}' failed (HTTP {status})",
            status=status,
            reason=error or "error",
        )
        return await super()._handle_refresh_response(response)


async def _oauth_error(response: httpx2.Response) -> str | None:
    """The RFC 6749 ``error`` code of a failed token response, sanitised; never the description."""
    try:
        body = await response.aread()
        import json

        data = json.loads(body)
    except Exception:
        return None
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, str) and error.replace("_", "").isalnum() and len(error) <= 64:
        return error
    return None


def _loopback_port(info: OAuthClientInformationFull | None) -> int | None:
    for uri in (info.redirect_uris or []) if info is not None else []:
        parts = urlsplit(str(uri))
        if parts.scheme == "http" and parts.hostname == "127.0.0.1" and parts.path == CALLBACK_PATH:
            return parts.port
    return None


def _requested_method(value: str | None) -> Literal["none", "client_secret_post", "client_secret_basic"]:
    if value in ("client_secret_post", "client_secret_basic"):
        return value  # type: ignore[return-value]
    return "none"


def build_auth(
    cfg: ServerConfig,
    global_dir: Path,
    *,
    interactive: bool,
    ui: AuthUI | None,
    on_challenge: ChallengeListener | None = None,
    no_browser: bool = False,
    callback_timeout_s: float = DEFAULT_CALLBACK_TIMEOUT_S,
) -> OrbOAuthProvider:
    """The ``httpx2.Auth`` for one OAuth server's connections.

    ``interactive=False`` (background sessions, CI, ``--json``): refreshes only; a needed login
    raises :class:`AuthError` ("run `orbmcp auth NAME`") and is reported to ``on_challenge``.
    """
    if cfg.auth is None or not cfg.url:
        raise AuthError(f"server '{cfg.name}' is not configured for OAuth", server=cfg.name)
    store = AuthStore(global_dir, cfg)

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
