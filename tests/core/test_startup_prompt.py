"""Seed 003's startup prompt: eager OAuth servers that need a login are offered, one at a time,
"Authorize now / Not now"; a decline is remembered for the session. Silent start-up never logs in."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest

from orbmcp.config.model import AuthConfig, ProjectInfo, ResolvedConfig, ServerConfig
from orbmcp.config.settings import Settings
from orbmcp.core.session.auth_prompt import AUTHORIZE_NOW, NOT_NOW, AuthPrompter
from orbmcp.core.session.manager import Manager
from orbmcp.core.session.state import State
from tests.auth.browser import HeadlessBrowser
from tests.auth.oauth_server import ASOptions, running_server
from tests.timeouts import HANG_GUARD_S, LONG_GUARD_S

pytestmark = pytest.mark.anyio


@dataclass
class ScriptedUI:
    """A person who answers prompts from a script and uses a headless browser."""

    answers: list[str]
    interactive: bool = True
    asked: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    browser: HeadlessBrowser = field(default_factory=HeadlessBrowser)

    def choose(self, question: str, options: list[str]) -> str | None:
        assert options == [AUTHORIZE_NOW, NOT_NOW]
        self.asked.append(question)
        return self.answers.pop(0) if self.answers else None

    def notify(self, message: str, *, level: str = "info") -> None:
        self.notices.append(message)

    def open_url(self, url: str) -> bool:
        return self.browser.open_url(url)

    def show_url(self, url: str) -> None:
        self.browser.show_url(url)

    def prompt_paste(self, message: str) -> str | None:
        return None


def _config(global_dir: Path, url: str, *names: str) -> ResolvedConfig:
    servers = {
        n: ServerConfig(name=n, transport="streamable-http", url=url, auth=AuthConfig(), timeout_ms=8000)
        for n in names
    }
    return ResolvedConfig(
        servers=servers,
        settings=Settings(),
        warnings=(),
        project=ProjectInfo(global_dir, (), trusted=False, loaded=False),
        global_dir=global_dir,
    )


async def test_decline_is_remembered_and_authorize_now_connects(_isolated_agent_dir: Path) -> None:
    async with running_server(ASOptions()) as srv:
        config = _config(_isolated_agent_dir, srv.mcp_url, "alpha")
        ui = ScriptedUI(answers=[NOT_NOW, AUTHORIZE_NOW])
        prompter = AuthPrompter()
        with anyio.fail_after(LONG_GUARD_S):
            async with Manager(config, retries=True, interactive=True, auth_ui=ui) as manager:
                await manager.start_eager()
                assert manager.get("alpha").state == State.NEEDS_AUTH
                assert srv.count("/register") == 0  # silent start-up registers nothing

                assert await prompter.offer(manager, ui) == {"alpha": "declined"}
                assert ui.asked == ["alpha needs authorization"]
                assert "alpha" in prompter.declined
                # Asked once per session: a second offer does not ask again.
                assert await prompter.offer(manager, ui) == {}
                assert len(ui.asked) == 1

                fresh = AuthPrompter()
                assert await fresh.offer(manager, ui) == {"alpha": "ready"}
                assert manager.get("alpha").state == State.READY
                assert srv.count("/register") == 1
                assert ui.browser.errors == []


async def test_non_interactive_sessions_are_never_asked(_isolated_agent_dir: Path) -> None:
    async with running_server(ASOptions()) as srv:
        config = _config(_isolated_agent_dir, srv.mcp_url, "beta")
        ui: Any = ScriptedUI(answers=[AUTHORIZE_NOW], interactive=False)
        with anyio.fail_after(HANG_GUARD_S):
            async with Manager(config, retries=False, interactive=False, auth_ui=ui) as manager:
                await manager.start_eager()
                assert await AuthPrompter().offer(manager, ui) == {}
        assert ui.asked == [] and srv.count("/authorize") == 0
