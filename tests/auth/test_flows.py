"""The OAuth client against a real loopback authorization server and protected MCP resource."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import anyio.abc
import httpx2
import pytest

from orbmcp.auth.flow import authorize, logout
from orbmcp.auth.provider import build_auth
from orbmcp.auth.status import auth_status
from orbmcp.auth.storage import AuthStore
from orbmcp.auth.ui import AuthChallenge
from orbmcp.errors import AuthError
from tests.auth.browser import HeadlessBrowser
from tests.auth.oauth_server import ISSUER_PATH, ASOptions, OAuthTestServer, make_cfg, running_server
from tests.timeouts import HANG_GUARD_S

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream"}
CIMD_URL = "https://conformance-test.local/client-metadata.json"


class RecordingUI:
    """An AuthUI that records and opens nothing (what a non-interactive run must never touch)."""

    def __init__(self) -> None:
        self.opened: list[str] = []
        self.shown: list[str] = []
        self.notices: list[str] = []

    def open_url(self, url: str) -> bool:
        self.opened.append(url)
        return True

    def show_url(self, url: str) -> None:
        self.shown.append(url)

    def prompt_paste(self) -> str | None:
        return None

    def notify(self, msg: str) -> None:
        self.notices.append(msg)


async def login(srv: OAuthTestServer, home: Path, *, ui: Any = None, reset: bool = False, **auth: Any) -> Any:
    with anyio.fail_after(HANG_GUARD_S):
        return await authorize(
            make_cfg(srv.mcp_url, **auth),
            home,
            reset=reset,
            ui=ui or HeadlessBrowser(),
            no_browser=False,
            timeout_s=10,
        )


async def request(provider: Any, url: str, seen: list[str] | None = None) -> httpx2.Response:
    async def record(req: httpx2.Request) -> None:
        if seen is not None:
            seen.append(str(req.url))

    with anyio.fail_after(HANG_GUARD_S):
        async with httpx2.AsyncClient(auth=provider, timeout=10, event_hooks={"request": [record]}) as hc:
            return await hc.post(url, json=INIT, headers=ACCEPT)


def expire_stored(home: Path, srv: OAuthTestServer) -> None:
    """Move the stored absolute expiry into the past, as if the process slept past it."""
    store = AuthStore(home, make_cfg(srv.mcp_url))
    record = store.load()
    assert record is not None and record.tokens is not None
    record.tokens["expires_at"] = 1.0
    store._save(record)


def stored(home: Path, srv: OAuthTestServer) -> Any:
    return AuthStore(home, make_cfg(srv.mcp_url)).load()


# -- discovery, PKCE, resource, DCR -----------------------------------------------------------------


EXPECTED_DISCOVERY = {
    "default": ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-authorization-server"],
    "var1": [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-authorization-server" + ISSUER_PATH,
    ],
    "var2": [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-authorization-server" + ISSUER_PATH,
        "/.well-known/openid-configuration" + ISSUER_PATH,
    ],
    "var3": [
        "/custom/prm-location",
        "/.well-known/oauth-authorization-server" + ISSUER_PATH,
        "/.well-known/openid-configuration" + ISSUER_PATH,
        ISSUER_PATH + "/.well-known/openid-configuration",
    ],
    "legacy": [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-authorization-server",
    ],
}


@pytest.mark.parametrize("variant", list(EXPECTED_DISCOVERY))
async def test_discovery_variants_pkce_resource_and_dcr(tmp_path: Path, variant: str) -> None:
    async with running_server(ASOptions(discovery=variant)) as srv:  # type: ignore[arg-type]
        outcome = await login(srv, tmp_path)
    assert outcome.status == "authorized"
    discovery = [p for p in srv.paths() if "well-known" in p or p.startswith("/custom")]
    assert discovery == EXPECTED_DISCOVERY[variant]  # spec order, no trap (root PRM when path PRM exists)
    prefix = "" if variant in ("default", "legacy") else ISSUER_PATH
    assert srv.count(prefix + "/register") == 1
    (reg,) = [r for r in srv.requests if r.path.endswith("/register")]
    assert reg.body["application_type"] == "native"
    assert reg.body["token_endpoint_auth_method"] == "none"
    assert "refresh_token" in reg.body["grant_types"]
    assert all(
        u.startswith("http://127.0.0.1:") and u.endswith("/callback") for u in reg.body["redirect_uris"]
    )
    (auth_req,) = srv.authorize_requests()
    q = auth_req.query
    assert q["code_challenge_method"] == "S256" and 43 <= len(q["code_challenge"]) <= 128
    assert len(q["state"]) >= 43
    assert q["redirect_uri"] == reg.body["redirect_uris"][0]
    (token_req,) = srv.token_requests("authorization_code")
    assert 43 <= len(token_req.form["code_verifier"]) <= 128
    if variant == "legacy":
        assert "resource" not in q  # the 2025-03-26 no-PRM path, as both SDKs do
    else:
        assert q["resource"] == srv.mcp_url == token_req.form["resource"]
    assert srv.mcp_hits == 1


@pytest.mark.parametrize(
    ("pkce", "opt_out", "ok"), [("absent", False, False), ("plain", True, False), ("absent", True, True)]
)
async def test_pkce_must_be_advertised(tmp_path: Path, pkce: str, opt_out: bool, ok: bool) -> None:
    ui = HeadlessBrowser()
    async with running_server(ASOptions(pkce=pkce)) as srv:  # type: ignore[arg-type]
        if ok:
            assert (
                await login(srv, tmp_path, ui=ui, allow_missing_pkce_advertisement=opt_out)
            ).status == "authorized"
            return
        with pytest.raises(AuthError, match="PKCE"):
            await login(srv, tmp_path, ui=ui, allow_missing_pkce_advertisement=opt_out)
    # Refused before registering a client or showing anything to the user.
    assert srv.count("/register") == 0 and srv.authorize_requests() == []
    assert ui.opened == [] and ui.shown == []


async def test_resource_mismatch_starts_no_authorization(tmp_path: Path) -> None:
    ui = HeadlessBrowser()
    async with running_server(ASOptions(prm_resource="https://evil.example/mcp")) as srv:
        with pytest.raises(AuthError, match="does not match"):
            await login(srv, tmp_path, ui=ui)
    assert srv.count("/register") == 0 and srv.authorize_requests() == [] and ui.opened == []


async def test_dcr_registration_is_reused_and_reset_registers_anew(tmp_path: Path) -> None:
    async with running_server() as srv:
        await login(srv, tmp_path)
        assert await logout(make_cfg(srv.mcp_url), tmp_path, forget_client=False)
        await login(srv, tmp_path)
        assert srv.count("/register") == 1 and len(srv.authorize_requests()) == 2
        await login(srv, tmp_path, reset=True)
        assert srv.count("/register") == 2 and len(srv.authorize_requests()) == 3


async def test_busy_registered_port_falls_back_and_registers_again(tmp_path: Path) -> None:
    async with running_server() as srv:
        await login(srv, tmp_path)
        first = srv.authorize_requests()[0].query["redirect_uri"]
        port = urlsplit(first).port
        assert port is not None
        await logout(make_cfg(srv.mcp_url), tmp_path, forget_client=False)
        async with await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=port):
            await login(srv, tmp_path)
        second = srv.authorize_requests()[1].query["redirect_uri"]
        assert second != first and srv.count("/register") == 2  # the new redirect_uri is registered


async def test_cimd_client_id_used_when_supported(tmp_path: Path) -> None:
    async with running_server(ASOptions(cimd=True)) as srv:
        await login(srv, tmp_path, client_metadata_url=CIMD_URL)
    assert srv.count("/register") == 0
    assert srv.authorize_requests()[0].query["client_id"] == CIMD_URL
    assert srv.token_requests()[0].form["client_id"] == CIMD_URL


async def test_cimd_configured_but_unsupported_falls_back_to_dcr(tmp_path: Path) -> None:
    async with running_server(ASOptions(cimd=False)) as srv:
        await login(srv, tmp_path, client_metadata_url=CIMD_URL)
    assert srv.count("/register") == 1
    assert srv.authorize_requests()[0].query["client_id"].startswith("dcr-")


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post"])
async def test_preregistered_client_wins(tmp_path: Path, method: str) -> None:
    secret = "cs-prereg-" + "Qx7" * 12
    opts = ASOptions(
        preregistered={"pre-client": (secret, method, None)}, token_auth_methods=[method], cimd=True
    )
    async with running_server(opts) as srv:
        await login(srv, tmp_path, client_id="pre-client", client_secret=secret, client_metadata_url=CIMD_URL)
    assert srv.count("/register") == 0
    assert srv.authorize_requests()[0].query["client_id"] == "pre-client"
    (tok,) = srv.token_requests()
    if method == "client_secret_basic":
        assert tok.authorization is not None and tok.authorization.startswith("Basic ")
        assert "client_secret" not in tok.form
    else:
        assert tok.form["client_secret"] == secret and tok.authorization is None
    # The configured secret lives in the config only: the store never copies it.
    assert secret.encode() not in AuthStore(tmp_path, make_cfg(srv.mcp_url)).path.read_bytes()


# -- callback parameters: iss, state, hostile endpoints -------------------------------------------


@pytest.mark.parametrize(("iss", "ok"), [("on", True), ("off", True), ("wrong", False), ("missing", False)])
async def test_iss_checked(tmp_path: Path, iss: str, ok: bool) -> None:
    async with running_server(ASOptions(iss=iss)) as srv:  # type: ignore[arg-type]
        if ok:
            assert (await login(srv, tmp_path)).status == "authorized"
        else:
            with pytest.raises(AuthError, match="iss"):
                await login(srv, tmp_path)
    assert len(srv.token_requests()) == (1 if ok else 0)  # no code exchange after a bad iss


async def test_wrong_state_never_settles_the_flow(tmp_path: Path) -> None:
    ui = HeadlessBrowser()
    async with running_server(ASOptions(wrong_state=True)) as srv:
        with (
            anyio.fail_after(HANG_GUARD_S),
            pytest.raises(AuthError, match="no authorization response arrived"),
        ):
            await authorize(
                make_cfg(srv.mcp_url), tmp_path, reset=False, ui=ui, no_browser=False, timeout_s=1.5
            )
    assert len(ui.locations) == 1 and srv.token_requests() == []


@pytest.mark.parametrize(
    ("override", "match"),
    [
        ({"authorization_endpoint": "http://auth.example/authorize"}, "refusing to open"),
        ({"token_endpoint": "http://169.254.169.254/latest/meta-data/"}, "refusing to contact"),
        ({"token_endpoint": "http://10.0.0.1/token"}, "refusing to contact"),
    ],
)
async def test_hostile_endpoints_refused_before_use(
    tmp_path: Path, override: dict[str, str], match: str
) -> None:
    ui = HeadlessBrowser()
    async with running_server(ASOptions(**override)) as srv:  # type: ignore[arg-type]
        with pytest.raises(AuthError, match=match):
            await login(srv, tmp_path, ui=ui)
    assert ui.opened == [] and srv.count("/register") == 0 and srv.authorize_requests() == []


async def test_headless_paste_flow(tmp_path: Path) -> None:
    ui = HeadlessBrowser(mode="paste")
    async with running_server() as srv:
        with anyio.fail_after(HANG_GUARD_S):
            outcome = await authorize(
                make_cfg(srv.mcp_url), tmp_path, reset=False, ui=ui, no_browser=True, timeout_s=10
            )
    assert outcome.status == "authorized"
    assert len(ui.shown) == 1 and ui.shown[0].startswith(srv.issuer + "/authorize?")
    assert "/callback" not in srv.paths()


# -- refresh -----------------------------------------------------------------------------------------


async def test_stored_refresh_token_used_after_restart_at_the_right_endpoint(tmp_path: Path) -> None:
    async with running_server(ASOptions(discovery="var1")) as srv:
        await login(srv, tmp_path)
        first_rt = stored(tmp_path, srv).tokens["refresh_token"]
        for _ in range(2):  # two "restarts": rotation must be persisted each time
            expire_stored(tmp_path, srv)
            ui = RecordingUI()
            provider = build_auth(make_cfg(srv.mcp_url), tmp_path, interactive=True, ui=ui)
            response = await request(provider, srv.mcp_url)
            assert response.status_code == 200 and ui.opened == [] and ui.shown == []
        refreshes = srv.token_requests("refresh_token")
    assert len(srv.authorize_requests()) == 1
    assert [r.path for r in refreshes] == [ISSUER_PATH + "/token"] * 2  # not the resource's origin /token
    assert all(r.form["resource"] == srv.mcp_url for r in refreshes)
    assert refreshes[0].form["refresh_token"] == first_rt
    assert refreshes[1].form["refresh_token"] != first_rt  # the rotated one was stored and used
    assert stored(tmp_path, srv).tokens["refresh_token"] not in (first_rt, refreshes[1].form["refresh_token"])


async def test_unknown_expiry_401_refreshes_before_any_login(tmp_path: Path) -> None:
    async with running_server(ASOptions(expires_in=None)) as srv:
        await login(srv, tmp_path)
        assert stored(tmp_path, srv).expires_at is None
        srv.expire_all_access_tokens()
        provider = build_auth(make_cfg(srv.mcp_url), tmp_path, interactive=False, ui=None)
        n = len(srv.requests)
        response = await request(provider, srv.mcp_url)
        tail = [(r.path, r.form.get("grant_type")) for r in srv.requests[n:]]
    assert response.status_code == 200
    assert tail == [("/mcp", None), ("/token", "refresh_token"), ("/mcp", None)]
    assert provider.refreshes == 1


async def test_a_token_endpoint_that_redirects_within_its_origin(tmp_path: Path) -> None:
    # The SDK follows the 307; the code exchange and the refresh still count, once each.
    async with running_server(ASOptions(token_redirect=True)) as srv:
        first = build_auth(make_cfg(srv.mcp_url), tmp_path, interactive=True, ui=HeadlessBrowser())
        assert (await request(first, srv.mcp_url)).status_code == 200
        assert first.logins == 1 and first.refreshes == 0
        expire_stored(tmp_path, srv)
        provider = build_auth(make_cfg(srv.mcp_url), tmp_path, interactive=False, ui=None)
        response = await request(provider, srv.mcp_url)
        moved = [r.form.get("grant_type") for r in srv.requests if r.path.endswith("/moved-token")]
    assert response.status_code == 200 and provider.refreshes == 1 and provider.logins == 0
    assert moved == ["authorization_code", "refresh_token"]
    assert srv.token_requests("refresh_token") and srv.token_requests("authorization_code")


async def test_proactive_refresh_within_one_provider(tmp_path: Path) -> None:
    async with running_server() as srv:
        await login(srv, tmp_path)
        provider = build_auth(make_cfg(srv.mcp_url), tmp_path, interactive=False, ui=None)
        async with httpx2.AsyncClient(auth=provider, timeout=10) as hc:
            assert (await hc.post(srv.mcp_url, json=INIT, headers=ACCEPT)).status_code == 200
            provider.context.token_expiry_time = 1.0
            assert (await hc.post(srv.mcp_url, json=INIT, headers=ACCEPT)).status_code == 200
    assert len(srv.token_requests("refresh_token")) == 1
    assert stored(tmp_path, srv).expires_at > 2.0


async def test_invalid_grant_non_interactive_fails_fast_and_invalidates(tmp_path: Path) -> None:
    seen: list[AuthChallenge] = []
    async with running_server() as srv:
        await login(srv, tmp_path)
        expire_stored(tmp_path, srv)
        srv.opts.refresh_error = "invalid_grant"
        ui = RecordingUI()
        provider = build_auth(
            make_cfg(srv.mcp_url), tmp_path, interactive=False, ui=ui, on_challenge=seen.append
        )
        with pytest.raises(AuthError, match=r"needs authorization; run `orbmcp auth srv`"):
            await request(provider, srv.mcp_url)
        cfg = make_cfg(srv.mcp_url)
        assert auth_status(cfg, tmp_path) == "authorization may be required"
        record = stored(tmp_path, srv)
        assert record.tokens is None and record.client is not None  # registration kept
        assert [c.kind for c in seen] == ["unauthorized"] and seen[0].tokens_invalidated
        assert ui.opened == [] and ui.shown == [] and srv.count("/register") == 1
        # Interactively, the same situation logs in again with the kept registration.
        await login(srv, tmp_path)
    assert srv.count("/register") == 1 and len(srv.authorize_requests()) == 2


async def test_invalid_client_discards_registration(tmp_path: Path) -> None:
    async with running_server() as srv:
        await login(srv, tmp_path)
        expire_stored(tmp_path, srv)
        provider = build_auth(make_cfg(srv.mcp_url), tmp_path, interactive=True, ui=HeadlessBrowser())
        srv.clients.clear()  # the AS purged the client: the refresh answers invalid_client
        response = await request(provider, srv.mcp_url)
    assert response.status_code == 200
    assert srv.count("/register") == 2 and len(srv.authorize_requests()) == 2


async def test_refresh_server_error_keeps_tokens(tmp_path: Path) -> None:
    async with running_server() as srv:
        await login(srv, tmp_path)
        expire_stored(tmp_path, srv)
        rt = stored(tmp_path, srv).tokens["refresh_token"]
        srv.opts.refresh_error = "server_error"
        for interactive in (False, True):
            ui = RecordingUI()
            provider = build_auth(make_cfg(srv.mcp_url), tmp_path, interactive=interactive, ui=ui)
            with pytest.raises(AuthError, match="authorization server unavailable"):
                await request(provider, srv.mcp_url)
            assert stored(tmp_path, srv).tokens["refresh_token"] == rt  # kept for a later try
            assert ui.opened == [] and srv.authorize_requests()[1:] == []  # no login instead
        srv.opts.refresh_error = None
        provider = build_auth(make_cfg(srv.mcp_url), tmp_path, interactive=False, ui=None)
        assert (await request(provider, srv.mcp_url)).status_code == 200


async def test_persist_failure_after_refresh_surfaces_without_login(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    from orbmcp import fs

    def disk_full(path: Path, data: bytes) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    async with running_server() as srv:
        await login(srv, tmp_path)
        expire_stored(tmp_path, srv)
        before = AuthStore(tmp_path, make_cfg(srv.mcp_url)).path.read_bytes()
        ui = RecordingUI()
        provider = build_auth(make_cfg(srv.mcp_url), tmp_path, interactive=True, ui=ui)
        monkeypatch.setattr(fs, "atomic_write", disk_full)
        with pytest.raises(AuthError, match=r"could not save credentials.*No space left"):
            await request(provider, srv.mcp_url)
        monkeypatch.undo()
        assert len(srv.token_requests("refresh_token")) == 1
    assert ui.opened == [] and len(srv.authorize_requests()) == 1
    assert provider.store.path.read_bytes() == before  # previous file intact


# -- scopes ------------------------------------------------------------------------------------------


async def test_step_up_requests_union_of_scopes(tmp_path: Path) -> None:
    opts = ASOptions(challenge_scope="files:read", required_scopes=["files:read", "files:write"])
    async with running_server(opts) as srv:
        outcome = await login(srv, tmp_path)
    scopes = [set(r.query["scope"].split()) for r in srv.authorize_requests()]
    assert scopes == [{"files:read"}, {"files:read", "files:write"}]
    assert set((outcome.scope or "").split()) == {"files:read", "files:write"}
    assert srv.mcp_hits == 1


async def test_step_up_gives_up_after_three_attempts(tmp_path: Path) -> None:
    async with running_server(ASOptions(always_insufficient=True)) as srv:
        with pytest.raises(AuthError, match="after 3 authorization attempts"):
            await login(srv, tmp_path)
    assert len(srv.authorize_requests()) == 3


async def test_mid_session_insufficient_scope_is_reported_and_remembered(tmp_path: Path) -> None:
    seen: list[AuthChallenge] = []
    async with running_server(ASOptions(challenge_scope="files:read")) as srv:
        await login(srv, tmp_path)
        srv.opts.required_scopes = ["files:read", "files:write"]
        provider = build_auth(
            make_cfg(srv.mcp_url), tmp_path, interactive=False, ui=None, on_challenge=seen.append
        )
        with pytest.raises(AuthError, match="needs additional permission"):
            await request(provider, srv.mcp_url)
        assert seen[0].kind == "insufficient_scope" and not seen[0].tokens_invalidated
        assert auth_status(make_cfg(srv.mcp_url), tmp_path) == "credentials stored"
        await login(srv, tmp_path)  # `orbmcp auth srv` asks for what the session needed
        assert set(srv.authorize_requests()[-1].query["scope"].split()) == {"files:read", "files:write"}


async def test_scope_from_prm_when_no_challenge_scope(tmp_path: Path) -> None:
    async with running_server(ASOptions(scopes_supported=["mcp", "extra"])) as srv:
        await login(srv, tmp_path, scope="configured")
    assert srv.authorize_requests()[0].query["scope"].split() == ["mcp", "extra", "configured"]


# -- non-interactive, the SDK client, issuer binding -----------------------------------------------


async def test_non_interactive_never_discovers_registers_or_opens(tmp_path: Path) -> None:
    seen: list[AuthChallenge] = []
    ui = RecordingUI()
    async with running_server() as srv:
        provider = build_auth(
            make_cfg(srv.mcp_url), tmp_path, interactive=False, ui=ui, on_challenge=seen.append
        )
        with pytest.raises(AuthError) as info:
            await request(provider, srv.mcp_url)
    assert info.value.code == "auth" and info.value.hint == "orbmcp auth srv"
    assert info.value.reason == "needs_auth" and seen[0].error is info.value
    # An agent is told its own command, not the shell's.
    assert info.value.hint_in(lambda words: f"/mcp:{words}") == "/mcp:auth srv"
    assert srv.paths() == ["/mcp"]  # no discovery, no DCR
    assert ui.opened == ui.shown == [] and [c.kind for c in seen] == ["unauthorized"]
    assert not (tmp_path / "mcp-auth").exists() or not any((tmp_path / "mcp-auth").glob("*.json"))


async def test_sdk_client_session_through_the_provider(tmp_path: Path) -> None:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    seen: list[AuthChallenge] = []
    async with running_server() as srv:
        await login(srv, tmp_path)
        provider = build_auth(
            make_cfg(srv.mcp_url), tmp_path, interactive=False, ui=None, on_challenge=seen.append
        )
        results = []
        with anyio.fail_after(HANG_GUARD_S), pytest.raises(BaseExceptionGroup) as info:
            async with httpx2.AsyncClient(auth=provider, timeout=10) as hc:
                async with Client(streamable_http_client(srv.mcp_url, http_client=hc)) as client:
                    results.append(await client.call_tool("whoami", {}))
                    # Mid-session: the server forgets every token and the refresh fails.
                    srv.access.clear()
                    srv.refresh.clear()
                    await client.call_tool("whoami", {})
    assert "authorized" in json.dumps(results[0].model_dump(mode="json"))
    # The AuthError leaves the SDK session inside its exception groups; the listener is the clean path.
    assert info.value.subgroup(AuthError) is not None
    assert [c.kind for c in seen] == ["unauthorized"] and seen[0].tokens_invalidated
    assert auth_status(make_cfg(srv.mcp_url), tmp_path) == "authorization may be required"


async def test_credentials_never_sent_to_a_new_authorization_server(tmp_path: Path) -> None:
    async with running_server() as as2:
        async with running_server() as srv:
            await login(srv, tmp_path)
            old = stored(tmp_path, srv)
            srv.access.clear()
            srv.refresh.clear()
            srv.opts.authorization_servers = [as2.issuer]  # the resource moved to AS2
            as2.access = srv.access  # AS2's tokens are what the resource accepts from now on
            await login(srv, tmp_path)
    sent = json.dumps([r.__dict__ for r in as2.requests])
    assert old.client["client_id"] not in sent and old.tokens["refresh_token"] not in sent
    assert as2.count("/register") == 1 and len(as2.authorize_requests()) == 1
    new = stored(tmp_path, srv)
    assert new.issuer == as2.issuer and new.client["client_id"] != old.client["client_id"]


async def test_concurrent_authorizations_run_one_browser_flow(tmp_path: Path) -> None:
    uis = [HeadlessBrowser(), HeadlessBrowser()]
    outcomes: list[Any] = []
    async with running_server() as srv:

        async def one(ui: HeadlessBrowser) -> None:
            outcomes.append(await login(srv, tmp_path, ui=ui))

        async with anyio.create_task_group() as tg:
            for ui in uis:
                tg.start_soon(one, ui)
    assert sorted(o.status for o in outcomes) == ["already-authorized", "authorized"]
    assert len(srv.authorize_requests()) == 1 and sum(len(ui.opened) for ui in uis) == 1


async def test_authorize_edges(tmp_path: Path) -> None:
    from orbmcp.config.model import ServerConfig
    from orbmcp.errors import ConnectionFailed

    plain = ServerConfig(name="plain", transport="streamable-http", url="http://127.0.0.1:9/mcp")
    with pytest.raises(AuthError, match="not configured for OAuth"):
        await authorize(plain, tmp_path, reset=False, ui=HeadlessBrowser(), no_browser=False)
    with pytest.raises(AuthError, match="not configured for OAuth"):
        build_auth(plain, tmp_path, interactive=False, ui=None)
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    await listener.aclose()  # a port nothing listens on
    with anyio.fail_after(HANG_GUARD_S), pytest.raises(ConnectionFailed, match="cannot reach server 'srv'"):
        await authorize(
            make_cfg(f"http://127.0.0.1:{port}/mcp"),
            tmp_path,
            reset=False,
            ui=HeadlessBrowser(),
            no_browser=False,
        )
    assert not await logout(make_cfg(f"http://127.0.0.1:{port}/mcp"), tmp_path)


async def test_sse_transport_authorizes_on_the_stream_request(tmp_path: Path) -> None:
    async with running_server() as srv:
        with anyio.fail_after(HANG_GUARD_S):
            outcome = await authorize(
                make_cfg(srv.mcp_url, transport="sse"),
                tmp_path,
                reset=False,
                ui=HeadlessBrowser(),
                no_browser=False,
            )
    assert outcome.status == "authorized"
    assert [r.method for r in srv.requests if r.path == "/mcp"] == ["GET", "GET"]
