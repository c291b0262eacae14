"""A real loopback authorization server + protected MCP resource for the OAuth tests.

One Starlette app served by uvicorn on 127.0.0.1:0 in the test's event loop (``running_server``), or
on an event loop of its own in a thread (``server_thread``, for synchronous tests that run the CLI
in-process):

- ``/mcp`` is a real MCP server (the SDK's ``MCPServer``, stateless, JSON responses) behind a
  bearer check that answers 401 (``resource_metadata``, optional ``scope``) or 403
  ``insufficient_scope``;
- protected-resource metadata, authorization-server metadata (RFC 8414 and OIDC, root or path
  issuer), ``/authorize`` (auto-approving, 302 to the redirect URI), ``/token`` (code with PKCE
  S256, refresh with optional rotation), ``/register`` (DCR), CIMD client ids, pre-registered
  clients — each switchable through :class:`ASOptions`, including hostile variants (no PKCE,
  wrong ``iss``, wrong ``state``, mismatched PRM ``resource``, refresh errors);
- every request is recorded (:attr:`OAuthTestServer.requests`) so tests can count them.

Secrets it mints are unique and high-entropy (``at-``, ``rt-``, ``code-``, ``cs-`` prefixes) so a
final scan can grep for them.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlencode

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from tests.timeouts import HANG_GUARD_S

Discovery = Literal["default", "var1", "var2", "var3", "legacy"]
ISSUER_PATH = "/tenant1"


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, str]
    form: dict[str, str]
    body: Any
    authorization: str | None


@dataclass
class ASOptions:
    discovery: Discovery = "default"
    pkce: Literal["S256", "absent", "plain"] = "S256"
    dcr: bool = True
    cimd: bool = False
    # client_id -> (client_secret or None, token_endpoint_auth_method, redirect_uris or None = any loopback)
    preregistered: dict[str, tuple[str | None, str, list[str] | None]] = field(default_factory=dict)
    token_auth_methods: list[str] | None = None
    scopes_supported: list[str] | None = None  # PRM scopes_supported
    as_scopes_supported: list[str] | None = None
    challenge_scope: str | None = None  # scope= on the 401
    required_scopes: list[str] = field(default_factory=list)  # needed by /mcp, else 403
    always_insufficient: bool = False  # /mcp answers 403 insufficient_scope to every token
    expires_in: int | None = 3600
    issue_refresh: bool = True
    rotate_refresh: bool = True
    refresh_error: Literal["invalid_grant", "invalid_client", "server_error"] | None = None
    refresh_delay_s: float = 0.0
    iss: Literal["on", "off", "wrong", "missing"] = "on"
    wrong_state: bool = False
    prm_resource: str | None = None  # override (resource mismatch)
    authorization_servers: list[str] | None = None  # override (AS migration)
    authorization_endpoint: str | None = None  # override (hostile URL)
    token_endpoint: str | None = None  # override (hostile URL)
    strict_redirect_uri: bool = True
    metadata_redirect: str | None = None  # every AS metadata URL answers 302 there
    metadata_absent: bool = False  # every AS metadata URL answers 404 (the PRM still names the AS)
    revocation: bool = False  # advertise and serve an RFC 7009 revocation endpoint
    revocation_status: int = 200  # what the revocation endpoint answers
    metadata_extra: dict[str, Any] | None = None  # merged over the AS metadata (hostile values)
    token_redirect: bool = False  # the advertised token endpoint answers 307 to the real one


@dataclass
class Client:
    client_id: str
    secret: str | None
    method: str
    redirect_uris: list[str] | None


@dataclass
class Grant:
    client_id: str
    scopes: list[str]
    resource: str | None
    expires_at: float | None


class OAuthTestServer:
    def __init__(self, options: ASOptions | None = None) -> None:
        self.opts = options or ASOptions()
        self.base = ""
        self.requests: list[Recorded] = []
        self.clients: dict[str, Client] = {}
        self.codes: dict[str, dict[str, Any]] = {}
        self.access: dict[str, Grant] = {}
        self.refresh: dict[str, Grant] = {}
        self.revoked_refresh: set[str] = set()
        self.minted: set[str] = set()  # every secret this server handed out
        self.mcp_hits = 0
        for cid, (secret, method, uris) in self.opts.preregistered.items():
            self.clients[cid] = Client(cid, secret, method, uris)
            if secret:
                self.minted.add(secret)
        self._mcp_app: Any = None
        self.app = self._build()

    # -- URLs --------------------------------------------------------------------------------

    @property
    def mcp_url(self) -> str:
        return f"{self.base}/mcp"

    @property
    def issuer(self) -> str:
        if self.opts.discovery in ("default", "legacy"):
            return self.base
        return f"{self.base}{ISSUER_PATH}"

    def _prm_url(self) -> str:
        if self.opts.discovery == "var3":
            return f"{self.base}/custom/prm-location"
        return f"{self.base}/.well-known/oauth-protected-resource/mcp"

    # -- recording helpers ---------------------------------------------------------------------

    def count(self, path: str, *, method: str | None = None, grant_type: str | None = None) -> int:
        return sum(
            1
            for r in self.requests
            if r.path == path
            and (method is None or r.method == method)
            and (grant_type is None or r.form.get("grant_type") == grant_type)
        )

    def token_requests(self, grant_type: str | None = None) -> list[Recorded]:
        return [
            r
            for r in self.requests
            if r.path.endswith("/token") and (grant_type is None or r.form.get("grant_type") == grant_type)
        ]

    def authorize_requests(self) -> list[Recorded]:
        return [r for r in self.requests if r.path.endswith("/authorize")]

    def paths(self) -> list[str]:
        return [r.path for r in self.requests]

    def _mint(self, prefix: str) -> str:
        value = f"{prefix}-{secrets.token_urlsafe(32)}"
        self.minted.add(value)
        return value

    # -- app ------------------------------------------------------------------------------------

    def _build(self) -> Starlette:
        routes = [
            Route("/.well-known/oauth-protected-resource/mcp", self.prm_path),
            Route("/.well-known/oauth-protected-resource", self.prm_root),
            Route("/custom/prm-location", self.prm_custom),
            Route("/.well-known/oauth-authorization-server", self.asm_root),
            Route("/.well-known/oauth-authorization-server" + ISSUER_PATH, self.asm_path),
            Route("/.well-known/openid-configuration", self.oidc_root),
            Route("/.well-known/openid-configuration" + ISSUER_PATH, self.oidc_insert),
            Route(ISSUER_PATH + "/.well-known/openid-configuration", self.oidc_append),
        ]
        for prefix in ("", ISSUER_PATH):
            routes += [
                Route(prefix + "/authorize", self.authorize),
                Route(prefix + "/token", self.token, methods=["POST"]),
                Route(prefix + "/moved-token", self.moved_token, methods=["POST"]),
                Route(prefix + "/register", self.register, methods=["POST"]),
                Route(prefix + "/revoke", self.revoke, methods=["POST"]),
            ]

        @asynccontextmanager
        async def lifespan(app: Starlette) -> AsyncIterator[None]:
            async with self._mcp().router.lifespan_context(self._mcp()):
                yield

        inner = Starlette(routes=routes, lifespan=lifespan)

        async def app(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == "http" and scope["path"] == "/mcp":
                await self._protected(scope, receive, send)
                return
            if scope["type"] == "http":
                await self._record_raw(scope, receive, send, inner)
                return
            await inner(scope, receive, send)

        return app  # type: ignore[return-value]

    def _mcp(self) -> Any:
        if self._mcp_app is None:
            from mcp.server.auth.middleware.auth_context import get_access_token  # noqa: F401
            from mcp.server.mcpserver import MCPServer

            server = MCPServer("protected", log_level="WARNING")

            @server.tool()
            def whoami() -> str:
                return "you are authorized"

            self._mcp_app = server.streamable_http_app(stateless_http=True, json_response=True)
        return self._mcp_app

    async def _record_raw(self, scope: Scope, receive: Receive, send: Send, inner: Any) -> None:
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        from urllib.parse import parse_qsl

        query = dict(parse_qsl(scope.get("query_string", b"").decode()))
        form: dict[str, str] = {}
        parsed: Any = None
        ctype = headers.get("content-type", "")
        if ctype.startswith("application/x-www-form-urlencoded"):
            form = dict(parse_qsl(body.decode()))
        elif ctype.startswith("application/json") and body:
            try:
                parsed = json.loads(body)
            except ValueError:
                parsed = None
        self.requests.append(
            Recorded(scope["method"], scope["path"], query, form, parsed, headers.get("authorization"))
        )
        sent = False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await inner(scope, replay, send)

    # -- protected resource ----------------------------------------------------------------------

    def _challenge(self, status: int, error: str | None = None, scope: str | None = None) -> Response:
        parts = []
        if error:
            parts.append(f'error="{error}"')
        if scope:
            parts.append(f'scope="{scope}"')
        if self.opts.discovery in ("default", "var3"):
            parts.append(f'resource_metadata="{self._prm_url()}"')
        header = "Bearer " + ", ".join(parts) if parts else "Bearer"
        return JSONResponse(
            {"error": error or "unauthorized"}, status_code=status, headers={"WWW-Authenticate": header}
        )

    async def _protected(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        auth = headers.get("authorization", "")
        self.requests.append(Recorded(scope["method"], "/mcp", {}, {}, None, auth or None))
        token = auth[7:] if auth.lower().startswith("bearer ") else None
        grant = self.access.get(token) if token else None
        if grant is None or (grant.expires_at is not None and grant.expires_at < time.time()):
            response = self._challenge(401, scope=self.opts.challenge_scope)
            await response(scope, receive, send)
            return
        missing = [s for s in self.opts.required_scopes if s not in grant.scopes]
        if self.opts.always_insufficient or missing:
            wanted = " ".join(self.opts.required_scopes) or "admin"
            response = self._challenge(403, error="insufficient_scope", scope=wanted)
            await response(scope, receive, send)
            return
        self.mcp_hits += 1
        await self._mcp()(scope, receive, send)

    # -- metadata -----------------------------------------------------------------------------------

    def _prm(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "resource": self.opts.prm_resource or self.mcp_url,
            "authorization_servers": self.opts.authorization_servers or [self.issuer],
        }
        if self.opts.scopes_supported is not None:
            body["scopes_supported"] = self.opts.scopes_supported
        return body

    async def prm_path(self, request: Request) -> Response:
        if self.opts.discovery in ("default", "var1"):
            return JSONResponse(self._prm())
        return Response(status_code=404)

    async def prm_root(self, request: Request) -> Response:
        if self.opts.discovery == "var2":
            return JSONResponse(self._prm())
        return Response(status_code=404)

    async def prm_custom(self, request: Request) -> Response:
        if self.opts.discovery == "var3":
            return JSONResponse(self._prm())
        return Response(status_code=404)

    def _asm(self) -> dict[str, Any]:
        issuer = self.issuer
        body: dict[str, Any] = {
            "issuer": issuer,
            "authorization_endpoint": self.opts.authorization_endpoint or f"{issuer}/authorize",
            "token_endpoint": self.opts.token_endpoint
            or f"{issuer}/{'moved-token' if self.opts.token_redirect else 'token'}",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
        }
        if self.opts.dcr:
            body["registration_endpoint"] = f"{issuer}/register"
        if self.opts.pkce == "S256":
            body["code_challenge_methods_supported"] = ["S256"]
        elif self.opts.pkce == "plain":
            body["code_challenge_methods_supported"] = ["plain"]
        if self.opts.cimd:
            body["client_id_metadata_document_supported"] = True
        if self.opts.iss in ("on", "wrong", "missing"):
            body["authorization_response_iss_parameter_supported"] = True
        if self.opts.token_auth_methods is not None:
            body["token_endpoint_auth_methods_supported"] = self.opts.token_auth_methods
        if self.opts.as_scopes_supported is not None:
            body["scopes_supported"] = self.opts.as_scopes_supported
        if self.opts.revocation:
            body["revocation_endpoint"] = f"{issuer}/revoke"
        body.update(self.opts.metadata_extra or {})
        return body

    async def asm_root(self, request: Request) -> Response:
        if self.opts.metadata_redirect:
            return RedirectResponse(self.opts.metadata_redirect, status_code=302)
        if self.opts.metadata_absent:
            return Response(status_code=404)
        if self.opts.discovery in ("default", "legacy"):
            return JSONResponse(self._asm())
        return Response(status_code=404)

    async def asm_path(self, request: Request) -> Response:
        if self.opts.metadata_redirect:
            return RedirectResponse(self.opts.metadata_redirect, status_code=302)
        if self.opts.metadata_absent:
            return Response(status_code=404)
        if self.opts.discovery == "var1":
            return JSONResponse(self._asm())
        return Response(status_code=404)

    async def oidc_root(self, request: Request) -> Response:
        return Response(status_code=404)

    async def oidc_insert(self, request: Request) -> Response:
        if self.opts.discovery == "var2":
            return JSONResponse(self._asm())
        return Response(status_code=404)

    async def oidc_append(self, request: Request) -> Response:
        if self.opts.discovery == "var3":
            return JSONResponse(self._asm())
        return Response(status_code=404)

    # -- endpoints ------------------------------------------------------------------------------------

    def _client_for(self, client_id: str) -> Client | None:
        client = self.clients.get(client_id)
        if client is None and self.opts.cimd and client_id.startswith("https://"):
            client = Client(client_id, None, "none", None)
        return client

    async def register(self, request: Request) -> Response:
        if not self.opts.dcr:
            return Response(status_code=404)
        meta = await request.json()
        method = meta.get("token_endpoint_auth_method") or "client_secret_basic"
        client_id = f"dcr-{secrets.token_hex(8)}"
        secret = None if method == "none" else self._mint("cs")
        self.clients[client_id] = Client(client_id, secret, method, list(meta.get("redirect_uris") or []))
        body = {**meta, "client_id": client_id, "token_endpoint_auth_method": method}
        if secret:
            body["client_secret"] = secret
        return JSONResponse(body, status_code=201)

    async def authorize(self, request: Request) -> Response:
        q = dict(request.query_params)
        client = self._client_for(q.get("client_id", ""))
        if client is None:
            return JSONResponse({"error": "invalid_client"}, status_code=400)
        redirect_uri = q.get("redirect_uri", "")
        if (
            self.opts.strict_redirect_uri
            and client.redirect_uris is not None
            and redirect_uri not in client.redirect_uris
        ):
            return JSONResponse({"error": "invalid_request", "detail": "redirect_uri"}, status_code=400)
        if q.get("code_challenge_method") != "S256" or not q.get("code_challenge"):
            return JSONResponse({"error": "invalid_request", "detail": "pkce"}, status_code=400)
        code = self._mint("code")
        self.codes[code] = {
            "client_id": client.client_id,
            "challenge": q["code_challenge"],
            "redirect_uri": redirect_uri,
            "scopes": (q.get("scope") or "").split(),
            "resource": q.get("resource"),
        }
        state = q.get("state", "")
        if self.opts.wrong_state:
            state = "forged-" + state[::-1]
        params = {"code": code, "state": state}
        if self.opts.iss == "on":
            params["iss"] = self.issuer
        elif self.opts.iss == "wrong":
            params["iss"] = "https://attacker.example"
        return RedirectResponse(f"{redirect_uri}?{urlencode(params)}", status_code=302)

    def _authenticate_client(self, request: Request, form: dict[str, str]) -> Client | None:
        header = request.headers.get("authorization", "")
        client_id = form.get("client_id", "")
        secret = form.get("client_secret")
        if header.lower().startswith("basic "):
            from urllib.parse import unquote

            raw = base64.b64decode(header[6:]).decode()
            cid, _, sec = raw.partition(":")
            client_id, secret = unquote(cid), unquote(sec)
        client = self._client_for(client_id)
        if client is None:
            return None
        if client.secret is not None and not (secret and secrets.compare_digest(secret, client.secret)):
            return None
        return client

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> dict[str, Any]:
        access = self._mint("at")
        exp = time.time() + self.opts.expires_in if self.opts.expires_in is not None else None
        self.access[access] = Grant(client_id, scopes, resource, exp)
        body: dict[str, Any] = {"access_token": access, "token_type": "Bearer", "scope": " ".join(scopes)}
        if self.opts.expires_in is not None:
            body["expires_in"] = self.opts.expires_in
        if self.opts.issue_refresh:
            rt = self._mint("rt")
            self.refresh[rt] = Grant(client_id, scopes, resource, None)
            body["refresh_token"] = rt
        return body

    async def moved_token(self, request: Request) -> Response:
        target = request.url.path.removesuffix("/moved-token") + "/token"
        return RedirectResponse(target, status_code=307)  # 307: the POST and its form are kept

    async def token(self, request: Request) -> Response:
        form = dict(await request.form())
        form = {k: str(v) for k, v in form.items()}
        client = self._authenticate_client(request, form)
        if client is None:
            return JSONResponse({"error": "invalid_client"}, status_code=401)
        grant_type = form.get("grant_type")
        if grant_type == "authorization_code":
            entry = self.codes.pop(form.get("code", ""), None)
            if entry is None or entry["client_id"] != client.client_id:
                return JSONResponse({"error": "invalid_grant"}, status_code=400)
            if form.get("redirect_uri") != entry["redirect_uri"]:
                return JSONResponse({"error": "invalid_grant", "detail": "redirect_uri"}, status_code=400)
            verifier = form.get("code_verifier", "")
            digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
            if digest != entry["challenge"]:
                return JSONResponse({"error": "invalid_grant", "detail": "pkce"}, status_code=400)
            self.minted.add(verifier)
            return JSONResponse(self._issue(client.client_id, entry["scopes"], form.get("resource")))
        if grant_type == "refresh_token":
            if self.opts.refresh_delay_s:
                await anyio.sleep(self.opts.refresh_delay_s)
            if self.opts.refresh_error == "server_error":
                return JSONResponse({"error": "server_error"}, status_code=503)
            if self.opts.refresh_error == "invalid_client":
                return JSONResponse({"error": "invalid_client"}, status_code=401)
            rt = form.get("refresh_token", "")
            grant = self.refresh.get(rt)
            if self.opts.refresh_error == "invalid_grant" or grant is None or rt in self.revoked_refresh:
                return JSONResponse({"error": "invalid_grant"}, status_code=400)
            body = self._issue(client.client_id, grant.scopes, form.get("resource"))
            if self.opts.rotate_refresh:
                self.revoked_refresh.add(rt)
                self.refresh.pop(rt, None)
            else:
                self.refresh.pop(body["refresh_token"], None)
                body.pop("refresh_token")
            return JSONResponse(body)
        return JSONResponse({"error": "unsupported_grant_type"}, status_code=400)

    async def revoke(self, request: Request) -> Response:
        """RFC 7009: the client authenticates as at the token endpoint; an unknown token is fine."""
        form = {k: str(v) for k, v in (await request.form()).items()}
        if self._authenticate_client(request, form) is None:
            return JSONResponse({"error": "invalid_client"}, status_code=401)
        if self.opts.revocation_status != 200:
            return JSONResponse({"error": "temporarily_unavailable"}, status_code=self.opts.revocation_status)
        token = form.get("token", "")
        self.access.pop(token, None)
        if self.refresh.pop(token, None) is not None:
            self.revoked_refresh.add(token)
        return Response(status_code=200)

    # -- helpers for tests -------------------------------------------------------------------------

    def expire_all_access_tokens(self) -> None:
        for grant in self.access.values():
            grant.expires_at = 0.0


@asynccontextmanager
async def running_server(options: ASOptions | None = None) -> AsyncIterator[OAuthTestServer]:
    """The server on 127.0.0.1:<free port>, for the duration of the block."""
    srv = OAuthTestServer(options)
    config = uvicorn.Config(srv.app, host="127.0.0.1", port=0, log_level="error", lifespan="on")
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve)
        with anyio.fail_after(HANG_GUARD_S):
            while not server.started:
                await anyio.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        srv.base = f"http://127.0.0.1:{port}"
        try:
            yield srv
        finally:
            server.should_exit = True


@contextmanager
def server_thread(options: ASOptions | None = None, *, timeout: float = 10) -> Iterator[OAuthTestServer]:
    """``running_server`` for a synchronous test: uvicorn runs its own event loop in a thread."""
    srv = OAuthTestServer(options)
    config = uvicorn.Config(srv.app, host="127.0.0.1", port=0, log_level="error", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="oauth test server", daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + timeout
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the OAuth test server did not start")
            time.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        srv.base = f"http://127.0.0.1:{port}"
        yield srv
    finally:
        server.should_exit = True
        thread.join(timeout)


# -- helpers shared by the auth tests ------------------------------------------------------------


def make_cfg(url: str, name: str = "srv", transport: str = "streamable-http", **auth: Any) -> Any:
    from orbmcp.config.model import AuthConfig, ServerConfig

    return ServerConfig(name=name, transport=transport, url=url, auth=AuthConfig(**auth))  # type: ignore[arg-type]


def leaked(root: Any, needles: set[str], *, allow: set[Any] = frozenset()) -> list[str]:  # type: ignore[assignment]
    """``path: needle-prefix`` for every file under ``root`` (but ``allow``) containing a needle."""
    from pathlib import Path

    hits = []
    for path in Path(root).rglob("*"):
        if not path.is_file() or path.is_symlink() or path in allow:
            continue
        data = path.read_bytes()
        for needle in needles:
            if needle and needle.encode() in data:
                hits.append(f"{path}: {needle[:8]}...")
    return hits
