"""Strict OAuth discovery: invalid authorization-server metadata is an error naming the URL and the
field; a protected-resource document that names an authorization server never leads to guessed
endpoints on the MCP server's origin; the PKCE hint only for valid metadata that lacks S256."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from orbmcp.auth.flow import authorize
from orbmcp.errors import AuthError
from tests.auth.browser import HeadlessBrowser
from tests.auth.oauth_server import ASOptions, OAuthTestServer, make_cfg, running_server
from tests.timeouts import HANG_GUARD_S


async def login(srv: OAuthTestServer, home: Path, ui: HeadlessBrowser, **auth: Any) -> Any:
    with anyio.fail_after(HANG_GUARD_S):
        return await authorize(
            make_cfg(srv.mcp_url, **auth), home, reset=False, ui=ui, no_browser=False, timeout_s=10
        )


def nothing_was_sent_anywhere(srv: OAuthTestServer, ui: HeadlessBrowser) -> None:
    assert srv.count("/register") == 0 and srv.count("/token") == 0 and srv.authorize_requests() == []
    assert ui.opened == [] and ui.shown == []


@pytest.mark.parametrize("endpoint", ["javascript:alert(1)", "file:///etc/passwd", "not a url"])
@pytest.mark.parametrize("opt_out", [False, True])
async def test_invalid_metadata_names_the_url_and_the_field(
    tmp_path: Path, endpoint: str, opt_out: bool
) -> None:
    ui = HeadlessBrowser()
    opts = ASOptions(metadata_extra={"authorization_endpoint": endpoint})
    async with running_server(opts) as srv:
        with pytest.raises(AuthError) as caught:
            await login(srv, tmp_path, ui, allow_missing_pkce_advertisement=opt_out)
        error = caught.value
        assert error.reason == "invalid_as_metadata"
        assert f"{srv.issuer}/.well-known/oauth-authorization-server" in error.message
        assert "authorization_endpoint" in error.message and "PKCE" not in error.message
        assert error.hint is None or "allowMissingPkce" not in error.hint
        nothing_was_sent_anywhere(srv, ui)


async def test_a_named_authorization_server_without_metadata_is_not_guessed(tmp_path: Path) -> None:
    ui = HeadlessBrowser()
    async with running_server(ASOptions(metadata_absent=True)) as srv:
        for opt_out in (False, True):  # the opt-out is about PKCE, not about guessing endpoints
            with pytest.raises(AuthError) as caught:
                await login(srv, tmp_path, ui, allow_missing_pkce_advertisement=opt_out)
            assert caught.value.reason == "as_metadata_missing"
            assert "publishes no authorization-server metadata" in caught.value.message
        nothing_was_sent_anywhere(srv, ui)


async def test_the_pkce_hint_only_for_valid_metadata_without_s256(tmp_path: Path) -> None:
    ui = HeadlessBrowser()
    async with running_server(ASOptions(pkce="absent")) as srv:
        with pytest.raises(AuthError) as caught:
            await login(srv, tmp_path, ui)
    assert caught.value.reason == "pkce_unsupported" and "does not advertise PKCE" in caught.value.message
    assert caught.value.hint is not None and "allowMissingPkceAdvertisement" in caught.value.hint


async def test_an_html_page_at_a_discovery_url_is_skipped_not_an_error() -> None:
    from orbmcp.auth.policy import check_metadata_document

    check_metadata_document(b"<!doctype html><p>app</p>", "https://as.example/.well-known/x", server="s")
    check_metadata_document(b'["not", "an object"]', "https://as.example/.well-known/x", server="s")
    with pytest.raises(AuthError, match="issuer"):
        check_metadata_document(b'{"issuer": 5}', "https://as.example/.well-known/x", server="s")
