"""What may reach the browser opener, and what discovery may fetch."""

from __future__ import annotations

import json
import sys
import webbrowser
from pathlib import Path

import anyio
import httpx2
import pytest

from orbmcp.auth.flow import authorize
from orbmcp.auth.urlpolicy import (
    check_browser_url,
    check_fetch_url,
    display_url,
    fetch_problem,
    host_class,
    open_in_browser,
)
from orbmcp.errors import AuthError
from tests.auth.browser import HeadlessBrowser
from tests.auth.oauth_server import ASOptions, make_cfg, running_server
from tests.timeouts import HANG_GUARD_S

REJECTED_FOR_BROWSER = [
    "javascript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "file:///etc/passwd",
    "vbscript:msgbox(1)",
    "ms-settings:",
    "http://auth.example/authorize",
    "https://a.example/$(touch pwned)",
    'https://a.example/?q="&calc&',
    "https://a.example/%USERPROFILE%",
    "https://a.example/%action",
    "https://a.example/ a b",
    "-–renderer-cmd-prefix=/bin/sh",
    "--incognito",
    "%action--incognito",
    "https://a.example/\r\nX: y",
    "https://a.example/\x00",
    "https://a.example/\t",
    "",
    "https://",
]
ACCEPTED_FOR_BROWSER = [
    "https://auth.example/authorize?client_id=x&state=abc%20def",
    "http://127.0.0.1:8123/authorize?x=1",
    "http://localhost:8123/authorize",
    "https://аррӏе.example/authorize",
]


@pytest.fixture
def recording_browser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """$BROWSER pointing at a script that records its argv (webbrowser runs it without a shell)."""
    log = tmp_path / "argv.jsonl"
    script = tmp_path / "fake-browser"
    script.write_text(
        f"#!{sys.executable}\nimport json, sys\nopen({str(log)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
    )
    script.chmod(0o755)
    monkeypatch.setenv("BROWSER", str(script))
    monkeypatch.setattr(webbrowser, "_tryorder", None)
    monkeypatch.setattr(webbrowser, "_browsers", {})
    monkeypatch.chdir(tmp_path)
    return log


@pytest.mark.parametrize("url", REJECTED_FOR_BROWSER)
def test_rejected_urls_never_reach_the_opener(url: str, recording_browser: Path) -> None:
    with pytest.raises(AuthError, match="refusing to open") as info:
        open_in_browser(url)
    assert not recording_browser.exists()
    assert "\n" not in info.value.message and "\x00" not in info.value.message  # shown escaped
    assert not (recording_browser.parent / "pwned").exists()


@pytest.mark.parametrize("url", ACCEPTED_FOR_BROWSER)
def test_accepted_urls_are_one_argv_element(url: str, recording_browser: Path) -> None:
    assert check_browser_url(url) == url
    assert open_in_browser(url) is True
    (argv,) = [json.loads(line) for line in recording_browser.read_text().splitlines()]
    assert argv == [url]


def test_internationalised_host_is_shown_in_punycode() -> None:
    shown = display_url("https://аррӏе.example/authorize?state=x")
    assert shown.startswith("https://xn--") and shown.endswith(".example/authorize?state=x")
    assert display_url("https://plain.example/x") == "https://plain.example/x"


REMOTE = "https://mcp.example.com/mcp"
LOOPBACK = "http://127.0.0.1:8000/mcp"


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "https://169.254.169.254/latest/meta-data/",
        "http://[fe80::1]/",
        "http://10.0.0.1/",
        "https://10.0.0.1/",
        "http://192.168.1.1/",
        "https://172.16.0.5/",
        "http://0x7f.1/",
        "https://0x7f.1/",
        "https://2130706433/",
        "https://017700000001/",
        "https://[::ffff:127.0.0.1]/",
        "https://[::1]/",
        "http://localhost:6379/",
        "https://localhost/x",
        "https://0.0.0.0/",
        "https://[fd00:ec2::254]/",
        "http://as.example.com/token",
        "ftp://as.example.com/",
        "https://user:pw@as.example.com/",
    ],
)
def test_ssrf_candidates_refused_for_a_remote_server(url: str) -> None:
    assert fetch_problem(url, REMOTE) is not None


@pytest.mark.parametrize(
    ("url", "server", "ok"),
    [
        ("https://as.example.com/.well-known/oauth-authorization-server", REMOTE, True),
        ("http://localhost:6379/token", LOOPBACK, True),
        ("http://127.0.0.1:9/token", LOOPBACK, True),
        ("https://10.0.0.1/token", "https://10.0.0.2/mcp", True),
        ("http://10.0.0.1/token", "https://10.0.0.2/mcp", False),
        ("http://169.254.169.254/", LOOPBACK, False),
        ("http://[fe80::1]/", LOOPBACK, False),
    ],
)
def test_fetch_policy_follows_the_server(url: str, server: str, ok: bool) -> None:
    assert (fetch_problem(url, server) is None) is ok


def test_host_classes() -> None:
    assert host_class("017700000001") == "loopback"
    assert host_class("cafe.de") == "name"
    assert host_class("169.254.1.1") == "forbidden"
    assert host_class("8.8.8.8") == "public"
    assert host_class("app.localhost") == "loopback"


async def test_cross_origin_metadata_redirect_is_not_followed(tmp_path: Path) -> None:
    """A redirect to the metadata service is neither followed nor used."""
    from orbmcp.auth.provider import build_auth

    ui = HeadlessBrowser()
    seen: list[str] = []

    async def hook(request: httpx2.Request) -> None:
        seen.append(str(request.url))

    opts = ASOptions(discovery="var1", metadata_redirect="http://169.254.169.254/latest/meta-data/")
    async with running_server(opts) as srv:
        provider = build_auth(make_cfg(srv.mcp_url), tmp_path, interactive=True, ui=ui)
        # No metadata from the named authorization server: an error, never guessed endpoints.
        with (
            anyio.fail_after(HANG_GUARD_S),
            pytest.raises(AuthError, match="publishes no authorization-server metadata"),
        ):
            async with httpx2.AsyncClient(auth=provider, timeout=10, event_hooks={"request": [hook]}) as hc:
                await hc.post(srv.mcp_url, json={}, headers={"Accept": "application/json"})
    assert any("oauth-authorization-server" in u for u in seen)
    assert not any("169.254" in u for u in seen) and ui.opened == [] and srv.authorize_requests() == []


async def test_hostile_authorization_url_reaches_no_opener(tmp_path: Path) -> None:
    ui = HeadlessBrowser()
    opts = ASOptions(authorization_endpoint="https://a.example/$(touch%20pwned)?x=%USERPROFILE%")
    async with running_server(opts) as srv:
        with anyio.fail_after(HANG_GUARD_S), pytest.raises(AuthError, match="refusing to open"):
            await authorize(
                make_cfg(srv.mcp_url), tmp_path, reset=False, ui=ui, no_browser=False, timeout_s=5
            )
    assert ui.opened == [] and ui.shown == []


def test_ipv6_loopback_is_loopback_not_reserved() -> None:
    # ::1 lies inside the reserved ::/8; it must still count as this machine.
    assert host_class("::1") == "loopback" and host_class("[::1]") == "loopback"
    assert check_browser_url("http://[::1]:8123/authorize") == "http://[::1]:8123/authorize"
    assert fetch_problem("http://[::1]:9/token", "http://[::1]:8000/mcp") is None
    assert fetch_problem("http://[::1]:9/token", "https://mcp.example.com/mcp") == (
        "loopback addresses are fetched only for a loopback MCP server"
    )
    assert host_class("::") == "forbidden"


def test_host_class_of_hosts_a_resolver_would_not_accept() -> None:
    assert host_class("1.2.3.4.5") == "name"  # looks numeric, is no inet_aton address
    assert host_class("0x7f.1") == "loopback"
    assert host_class("[::ffff:10.0.0.1]") == "private"
    assert host_class("LOCALHOST.") == "loopback"


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://[::1/cb", "it is not a valid URL"),
        ("https://example.com:99999/authorize", "it is not a valid URL"),
        ("https://ex%41mple.com/authorize", "the host contains percent-encoding"),
        ("https:///authorize", "it has no host"),
    ],
)
def test_browser_policy_rejects_malformed_urls(url: str, reason: str) -> None:
    with pytest.raises(AuthError) as caught:
        check_browser_url(url)
    assert caught.value.message.endswith(f": {reason}")
    assert caught.value.hint is not None and "unsafe" in caught.value.hint


def test_fetch_policy_on_malformed_urls() -> None:
    assert fetch_problem("https://[::1/token", REMOTE) == "not a valid URL"
    assert fetch_problem("https://as.example.com:99999/token", REMOTE) == "not a valid URL"
    assert (
        fetch_problem("https://user:pw@as.example.com/token", REMOTE)
        == "URLs with credentials are not allowed"
    )
    # An unparsable server URL counts as a public one: only public https targets pass.
    assert fetch_problem("https://as.example.com/token", "http://[broken") is None
    assert fetch_problem("http://127.0.0.1/token", "http://[broken") is not None
    with pytest.raises(AuthError) as caught:
        check_fetch_url("http://169.254.169.254/latest", REMOTE, server="gh")
    assert caught.value.server == "gh"
    assert "refusing to contact 'http://169.254.169.254/latest' during authorization" in caught.value.message


def test_display_url_falls_back_to_an_escaped_url() -> None:
    assert display_url("https://example.com/x") == "https://example.com/x"
    assert display_url("https://bücher.example:8443/x") == "https://xn--bcher-kva.example:8443/x"
    too_long = "https://" + "é" * 70 + ".example/x"  # an IDNA label longer than 63: not encodable
    shown = display_url(too_long)
    assert shown.isascii() and "\\xe9" in shown
