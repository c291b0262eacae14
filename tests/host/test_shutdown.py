"""Shutting an extension down while an eager server's start-up login waits for the browser.

Seed 003: session shutdown cancels pending authorization flows and stops the callback server.
The login here waits for a callback that never comes (the host "opens" the URL and nobody signs
in), with the default 300 s callback timeout; shutdown must end it, not wait it out. The OAuth
server is the real loopback one of ``tests/auth/oauth_server.py``."""

from __future__ import annotations

import socket
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import anyio
import pytest

from orbmcp.core.session.auth_prompt import AUTHORIZE_NOW
from tests.auth.oauth_server import ASOptions, running_server
from tests.core.live import write_config
from tests.host.example_host import ExampleHost


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # McpExtension.start/shutdown run on asyncio


class NobodySignsIn(ExampleHost):
    """An interactive agent that opens the authorization URL, where nobody ever signs in."""

    def __init__(self) -> None:
        super().__init__(interactive=True, answers={"needs authorization": AUTHORIZE_NOW})
        self.opened: list[str] = []
        self.url_opened = anyio.Event()

    def open_url(self, url: str) -> bool:
        self.opened.append(url)
        self.url_opened.set()
        return True


def callback_port(authorization_url: str) -> int:
    redirect = parse_qs(urlsplit(authorization_url).query)["redirect_uri"][0]
    port = urlsplit(redirect).port
    assert port is not None
    return port


def accepts(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


async def test_shutdown_cancels_a_start_up_login_waiting_for_the_browser(
    tmp_path: Path, _isolated_agent_dir: Path
) -> None:
    from orbmcp.host import McpExtension

    async with running_server(ASOptions()) as srv:
        config = write_config(
            tmp_path / "mcp.json", {"gh": {"url": srv.mcp_url, "auth": {"type": "oauth"}, "timeoutMs": 8000}}
        )
        host = NobodySignsIn()
        ext = McpExtension(host, config_file=config, retries=False)
        stopped = anyio.Event()

        async def shut_down() -> None:
            await ext.shutdown()
            stopped.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(ext.start)  # returns once start-up is over, here: once shut down
            with anyio.fail_after(30):
                await host.url_opened.wait()
            port = callback_port(host.opened[0])
            assert accepts(port)  # the login is waiting for the browser's callback
            tg.start_soon(shut_down)
            # shutdown is shielded from cancellation, so the guard waits beside it. It is far below
            # the callback's 300 s: a shutdown that waits the login out fails here.
            with anyio.fail_after(30):
                await stopped.wait()
        assert not accepts(port)  # the callback server is stopped
        assert not ext.active and host.active == set()
        assert srv.count("/token") == 0  # no code ever came: no token was asked for
