"""The embedding API's error paths: faulty and minimal hosts, failed and unauthorized servers,
a startup the agent cancels, tools removed while registered, and the inert extension.

Real servers only: raw.py (stdlib, starts in milliseconds) wherever its two tools suffice, one
SDK server where dynamic tools matter, and the in-process OAuth test server for needs-auth."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from orbmcp import log
from orbmcp.core.session.auth_prompt import AUTHORIZE_NOW, NOT_NOW
from orbmcp.core.session.state import State
from orbmcp.errors import AuthError, ConnectionFailed, TimeoutFailed, UsageError, cmd
from orbmcp.host import (
    CONNECT_TOOL,
    STATUS_TOOL,
    ActiveToolNames,
    HostTool,
    McpExtension,
    OpensUrls,
    Prompts,
    agent_spelling,
    error_result,
    text_result,
)
from orbmcp.host.ui import HostUI
from tests.auth.browser import HeadlessBrowser
from tests.auth.oauth_server import ASOptions, running_server
from tests.core.live import raw_entry, stdio_entry, wait_until, write_config
from tests.host.example_host import ExampleHost
from tests.servers.launch import LivenessServer
from tests.timeouts import HANG_GUARD_S, scaled

DEAD = {"command": sys.executable, "args": ["-c", "import sys; sys.exit(3)"]}


class FaultyHost:
    """Every callback raises: a buggy agent must not break orbmcp (nor orbmcp the agent)."""

    interactive = True

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def register_tool(self, tool: HostTool) -> None:
        self.calls.append(("register", tool.name))
        raise RuntimeError("host bug")

    def set_tool_active(self, bridged_name: str, active: bool) -> None:
        self.calls.append(("active", bridged_name))
        raise RuntimeError("host bug")

    def notify(self, message: str, level: str) -> None:
        self.calls.append(("notify", message))
        raise RuntimeError("host bug")

    def choose(self, question: str, options: list[str]) -> str | None:
        raise RuntimeError("host bug")

    def is_project_trusted(self, project_dir: Path) -> bool | None:
        raise RuntimeError("host bug")

    def active_tool_names(self) -> set[str]:
        raise RuntimeError("host bug")


class MinimalHost:
    """Only the required methods: no active_tool_names, open_url or prompt."""

    interactive = False

    def __init__(self) -> None:
        self.tools: dict[str, HostTool] = {}
        self.active: set[str] = set()
        self.notes: list[tuple[str, str]] = []

    def register_tool(self, tool: HostTool) -> None:
        self.tools[tool.name] = tool

    def set_tool_active(self, bridged_name: str, active: bool) -> None:
        (self.active.add if active else self.active.discard)(bridged_name)

    def notify(self, message: str, level: str) -> None:
        self.notes.append((level, message))

    def choose(self, question: str, options: list[str]) -> str | None:
        return None

    def is_project_trusted(self, project_dir: Path) -> bool | None:
        return None


class BrowsingHost(ExampleHost):
    """An interactive agent that can open URLs (a headless browser) and ask for a pasted URL."""

    def __init__(self, paste: str | None = None, **kw: Any) -> None:
        super().__init__(interactive=True, **kw)
        self.browser = HeadlessBrowser()
        self.paste = paste
        self.prompts: list[str] = []

    def open_url(self, url: str) -> bool:
        return self.browser.open_url(url)

    def prompt(self, message: str) -> str | None:
        self.prompts.append(message)
        return self.paste


# -- HostTool, results and HostUI on their own ----------------------------------------------------


async def test_a_host_tool_of_the_extension_itself() -> None:
    seen: list[tuple[dict[str, Any], float | None]] = []

    async def run(args: dict[str, Any], progress: object, timeout_s: float | None) -> Any:
        seen.append((args, timeout_s))
        return text_result("ok", structured={"n": 1})

    tool = HostTool("mine", run, description="does things")
    assert (tool.description, dict(tool.input_schema)) == ("does things", {"type": "object"})
    assert tool.annotations is None and tool.server is None and tool.tool_name is None
    assert tool.active and repr(tool) == "HostTool('mine')"
    result = await tool.call(None, timeout_s=2.5)
    assert seen == [({}, 2.5)] and result.text() == "ok" and result.structured == {"n": 1}


def test_error_results_carry_the_hint() -> None:
    with_hint = error_result(UsageError("bad server", hint="try /mcp"))
    assert with_hint.is_error and with_hint.text() == "bad server (hint: try /mcp)"
    assert error_result(ConnectionFailed("down")).text() == "down"


def test_errors_name_commands_as_the_agents_slash_commands() -> None:
    err = AuthError(f"'gh' needs a login ({cmd('status', 'gh')})", hint=f"{cmd('auth', 'gh', '--reset')}")
    assert error_result(err).text() == "'gh' needs a login (/mcp gh) (hint: /mcp:auth gh --reset)"
    assert agent_spelling("reconnect gh") == "/mcp reconnect gh"
    assert agent_spelling("config validate") == "/mcp config validate"
    assert agent_spelling("no-such-command x") == "orbmcp no-such-command x"  # no such slash command
    assert agent_spelling("trust") == "orbmcp trust"  # only a person at a terminal trusts


def test_optional_host_methods_are_capability_protocols() -> None:
    assert isinstance(ExampleHost(), ActiveToolNames) and not isinstance(ExampleHost(), OpensUrls)
    assert isinstance(BrowsingHost(), OpensUrls) and isinstance(BrowsingHost(), Prompts)
    assert not isinstance(MinimalHost(), ActiveToolNames | OpensUrls | Prompts)


def test_host_ui_asks_only_an_interactive_host() -> None:
    quiet = BrowsingHost()
    quiet.interactive = False
    ui = HostUI(quiet)
    assert ui.confirm("Proceed?", default=True) is False
    assert ui.choose("Pick", ["a", "b"]) is None and ui.prompt_paste() is None
    assert quiet.questions == [] and quiet.prompts == []

    host = BrowsingHost(paste="http://127.0.0.1:1/callback?code=x", answers={"Delete": "No", "Go": "Yes"})
    ui = HostUI(host)
    assert ui.confirm("Go on?") is True and ui.confirm("Delete it?", default=True) is False
    assert ui.confirm("Unanswered?", default=True) is True  # no answer: the default
    host.answers["Pick"] = "c"
    assert ui.choose("Pick one", ["a", "b"]) is None  # an answer that was not offered
    assert ui.prompt_paste() == "http://127.0.0.1:1/callback?code=x"
    host.paste = "   "
    assert ui.prompt_paste("Paste it") is None and host.prompts[-1] == "Paste it"
    ui.show_url("https://as.test/authorize?x=1")
    assert host.notifications[-1] == ("info", "Open this URL to authorize: https://as.test/authorize?x=1")
    ui.progress("s", "t", 1.0, 2.0, "half")  # per-call progress goes to the call's callback instead
    assert MinimalHost.__dict__.get("prompt") is None and HostUI(MinimalHost()).prompt_paste() is None


# -- the inert extension -------------------------------------------------------------------------


async def test_an_inert_extension_answers_without_running_anything(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {"x": raw_entry(enabled=False)})
    host = ExampleHost()
    ext = McpExtension(host, config_file=config)
    await ext.start()  # nothing enabled: returns at once, nothing runs
    assert not ext.active and ext.tools == [] and ext.tool(STATUS_TOOL) is None
    assert [row["name"] for row in ext.status_rows()] == ["x"]
    assert ext.config is not None and ext.config.servers["x"].state == "disabled"
    assert ext.server("x") == ext.config.servers["x"] and ext.config.project_dir is not None
    assert (await ext.connect("x")).text() == "MCP is not running in this session."
    reply = await ext.slash_reply("/mcp:start x")
    assert reply.exit_code == 2 and reply.error is not None
    assert (
        reply.text.startswith("error: MCP is not running in this session")
        and "hint: add a server" in reply.text
    )
    await ext.shutdown()  # never started: nothing to stop
    assert host.registrations == []

    off = McpExtension(host, config_file=config, enabled=False)
    async with off:
        assert off.config is None and off.status_rows() == []
        # Slash lines still work: the command loads the config itself.
        assert json.loads(await off.slash("/mcp --json"))[0]["state"] == "disabled"
        assert (await off.connect("x")).is_error


async def test_a_host_that_cannot_answer_trust_leaves_the_project_unloaded(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".orb").mkdir(parents=True)
    (project / ".orb" / "mcp.json").write_text(json.dumps({"mcpServers": {"p": raw_entry()}}))
    async with McpExtension(MinimalHost(), project=project) as ext:
        assert ext.config is not None and not ext.config.project_loaded
        assert "p" not in ext.config.servers and not ext.active
    async with McpExtension(FaultyHost(), project=project) as ext:
        assert ext.config is not None and not ext.config.project_loaded and not ext.active
    plain = tmp_path / "plain"
    plain.mkdir()
    host = ExampleHost(trust=True)
    async with McpExtension(host, project=plain) as ext:
        assert host.trust_asked == []  # no project config: nothing to ask about
        assert ext.config is not None and ext.config.servers == {}


# -- faulty and minimal hosts --------------------------------------------------------------------


async def test_a_faulty_host_never_breaks_the_extension(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, _isolated_agent_dir: Path
) -> None:
    monkeypatch.setattr(log, "_state", log._State())
    monkeypatch.setenv("ORBMCP_DEBUG", "1")
    config = write_config(tmp_path / "mcp.json", {"lz": raw_entry(lifecycle="lazy"), "bad": {"command": 42}})
    host = FaultyHost()
    with anyio.fail_after(HANG_GUARD_S):
        async with McpExtension(host, config_file=config, retries=False) as ext:
            assert ext.active and {t.name for t in ext.tools} == {STATUS_TOOL, CONNECT_TOOL}
            connect = ext.tool(CONNECT_TOOL)
            assert connect is not None
            connected = await connect.call({"server": "lz"})
            # The host could not say which tools it keeps active: orbmcp counts them all.
            assert connected.text() == "Server 'lz' is connected: 2 tools active."
            echo = next(t for t in ext.tools if t.tool_name == "echo")
            assert echo.active and (await echo.call({"text": "hi"})).text() == "hi"
            assert ext._ui.confirm("Proceed?", default=True) is True  # choose() raised: the default
    assert ("register", echo.name) in host.calls and ("active", echo.name) in host.calls
    assert any(kind == "notify" and "'bad'" in text for kind, text in host.calls)  # the config warning
    records = [
        json.loads(line) for line in (_isolated_agent_dir / "logs" / "orbmcp.log").read_text().splitlines()
    ]
    failures = {r["message"] for r in records if r["event"] == "host.callback_failed"}
    assert {
        f"register_tool {echo.name}: RuntimeError",
        f"set_tool_active {echo.name}: RuntimeError",
        "notify: RuntimeError",
        "choose: RuntimeError",
    } <= failures


async def test_a_minimal_host_gets_every_tool_active(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {"lz": raw_entry(lifecycle="lazy")})
    host = MinimalHost()
    with anyio.fail_after(HANG_GUARD_S):
        async with McpExtension(host, config_file=config, retries=False) as ext:
            assert (await host.tools[CONNECT_TOOL].call({"server": "lz"})).text() == (
                "Server 'lz' is connected: 2 tools active."
            )
            bridged = {t.name for t in ext.tools if t.server == "lz"}
            assert len(bridged) == 2 and bridged <= host.active
            rows = json.loads((await host.tools[STATUS_TOOL].call()).text())
            assert rows[0]["tools"] == {"discovered": 2, "active": 2}
    assert host.active == set()


# -- servers that fail ---------------------------------------------------------------------------


async def test_failed_servers_are_notified_and_mcp_connect_reports_them(tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "mcp.json",
        {
            "dead": DEAD,
            "lzdead": {**DEAD, "lifecycle": "lazy"},
            "empty": raw_entry("--tools", "0", lifecycle="lazy"),
        },
    )
    host = ExampleHost()
    with anyio.fail_after(HANG_GUARD_S):
        async with McpExtension(host, config_file=config, retries=False) as ext:
            warnings = [m for level, m in host.notifications if level == "warning"]
            assert any(m.startswith("MCP server 'dead' failed: ") for m in warnings), warnings
            dead = ext.server("dead")
            assert dead is not None and dead.state == "failed" and dead.last_error
            assert ext.server("nonesuch") is None
            assert ext.config is not None and ext.config.servers["lzdead"].state == "stopped"

            failed = await host.call(CONNECT_TOOL, {"server": "lzdead"})
            assert failed.is_error and failed.text().startswith("Server 'lzdead' is failed: ")
            assert failed.structured == {
                "server": "lzdead",
                "state": "failed",
                "connected": False,
                "tools": {"discovered": 0, "active": 0},
                "allToolsActive": False,
            }
            nameless = await host.call(CONNECT_TOOL, {})
            assert nameless.is_error
            assert nameless.text() == "mcp_connect needs 'server', one of: dead, empty, lzdead"
            empty = await host.call(CONNECT_TOOL, {"server": "empty"})
            assert not empty.is_error and empty.text() == "Server 'empty' is connected; it offers no tools."
            assert (info := ext.server("empty")) is not None and info.state == "ready"
            detail = await ext.slash("/mcp dead")
            assert "failed" in detail and "dead" in detail


async def test_an_agent_that_cancels_startup_leaves_no_process_behind(tmp_path: Path) -> None:
    host = ExampleHost()
    entered: list[bool] = []
    async with LivenessServer() as live:
        config = write_config(
            tmp_path / "mcp.json", {"slow": raw_entry("--hang", "--liveness", live.address, timeoutMs=20000)}
        )

        async def agent_start() -> None:
            async with McpExtension(host, config_file=config, retries=False):
                entered.append(True)

        with anyio.fail_after(HANG_GUARD_S):
            async with anyio.create_task_group() as tg:
                tg.start_soon(agent_start)
                await live.wait_registered(1, timeout=15)
                tg.cancel_scope.cancel()  # the agent gave up waiting for MCP
            await live.wait_all_dead(timeout=15)
    assert entered == []
    assert set(host.registrations) == {STATUS_TOOL, CONNECT_TOOL} and host.active == set()


# -- OAuth servers that need authorization -------------------------------------------------------


def oauth_config(global_dir: Path, url: str, name: str) -> Path:
    """A config file with one eager OAuth server (no credentials yet)."""
    entry = {"url": url, "auth": {"type": "oauth"}, "timeoutMs": 8000}
    return write_config(global_dir.parent / f"{name}-mcp.json", {name: entry})


async def test_needs_auth_is_notified_to_a_non_interactive_host(_isolated_agent_dir: Path) -> None:
    async with running_server(ASOptions()) as srv:
        host = ExampleHost()
        config = oauth_config(_isolated_agent_dir, srv.mcp_url, "gh")
        with anyio.fail_after(HANG_GUARD_S):
            async with McpExtension(host, config_file=config, retries=False) as ext:
                assert (info := ext.server("gh")) is not None and info.state == "needs-auth"
                assert (
                    "warning",
                    "MCP server 'gh' needs authorization: run /mcp:auth gh",
                ) in host.notifications
                assert host.questions == []
                denied = await ext.slash_reply("/mcp:auth gh")  # no person to ask: fail fast
                assert denied.exit_code == 5 and "needs an interactive authorization" in denied.text
        assert srv.count("/authorize") == 0


async def test_interactive_host_declines_at_startup_then_authorizes_by_slash(
    _isolated_agent_dir: Path,
) -> None:
    async with running_server(ASOptions()) as srv:
        host = BrowsingHost(answers={"needs authorization": NOT_NOW})
        config = oauth_config(_isolated_agent_dir, srv.mcp_url, "gh")
        with anyio.fail_after(HANG_GUARD_S):
            async with McpExtension(host, config_file=config, retries=False) as ext:
                # Asked once, after startup; no "needs authorization" warning besides the question.
                assert host.questions == [("gh needs authorization", [AUTHORIZE_NOW, NOT_NOW])]
                assert not any("needs authorization" in m for _, m in host.notifications)
                assert (
                    "info",
                    "'gh' stays stopped; run /mcp:auth gh when you are ready",
                ) in host.notifications
                assert not any(t.server == "gh" for t in ext.tools)
                # Declined: starting it again fails as before, without nagging about it.
                again = await ext.slash_reply("/mcp:start gh")
                assert again.exit_code == 5 and ext._manager is not None
                assert (gh := ext.server("gh")) is not None and gh.state == "needs-auth"
                assert gh.source == "config" and gh.enabled and gh.transport == "streamable-http"
                assert not any("needs authorization" in m for _, m in host.notifications)

                reply = await ext.slash_reply("/mcp:auth gh")
                assert reply.exit_code == 0, reply.text
                assert reply.text.endswith("; gh is ready")
                assert host.browser.opened and host.browser.errors == []
                whoami = next(t for t in ext.tools if t.tool_name == "whoami")
                assert whoami.name in host.active
                assert (await host.call(whoami.name)).text() == "you are authorized"


async def test_interactive_host_authorizes_at_startup(_isolated_agent_dir: Path) -> None:
    async with running_server(ASOptions()) as srv:
        host = BrowsingHost(answers={"needs authorization": AUTHORIZE_NOW})
        config = oauth_config(_isolated_agent_dir, srv.mcp_url, "gh")
        with anyio.fail_after(HANG_GUARD_S):
            async with McpExtension(host, config_file=config, retries=False) as ext:
                assert (info := ext.server("gh")) is not None and info.state == "ready"
                assert any(t.tool_name == "whoami" and t.name in host.active for t in ext.tools)
        assert srv.count("/register") == 1


# -- tools that come and go, and calls that fail -------------------------------------------------


async def test_removed_tools_refuse_calls_and_come_back_as_the_same_host_tool(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {"e": stdio_entry("everything")})
    host = ExampleHost()
    with anyio.fail_after(scaled(40)):
        async with McpExtension(host, config_file=config, retries=False) as ext:
            by_tool = {t.tool_name: t for t in ext.tools if t.server == "e"}
            assert by_tool["add"].annotations == {"readOnlyHint": True, "idempotentHint": True}

            await host.call(by_tool["add_tool"].name, {"name": "dyn"})
            await wait_until(lambda: any(t.tool_name == "dyn" and t.active for t in ext.tools))
            dyn = next(t for t in ext.tools if t.tool_name == "dyn")
            await host.call(by_tool["remove_tool"].name, {"name": "dyn"})
            await wait_until(lambda: not dyn.active and dyn.name not in host.active)
            # The agent still holds the tool object: a call says why it cannot run.
            with pytest.raises(UsageError, match="server 'e' no longer offers the tool 'dyn'"):
                await dyn.call()

            await host.call(by_tool["add_tool"].name, {"name": "dyn"})
            await wait_until(lambda: dyn.active and dyn.name in host.active)
            assert ext.tool(dyn.name) is dyn and host.registrations.count(dyn.name) == 1
            assert (await dyn.call()).text() == "dynamic dyn"

            bad = await by_tool["add"].call({"a": "not a number", "b": 1})
            assert bad.is_error  # the server rejected the arguments: a result, not an exception
            with pytest.raises(TimeoutFailed) as timeout:
                await by_tool["sleep"].call({"seconds": 30}, timeout_s=0.3)
            assert timeout.value.server == "e"

            with pytest.raises(ConnectionFailed):
                await by_tool["crash"].call()
            assert not any(t.active for t in ext.tools if t.server == "e")
            manager = ext._manager
            assert manager is not None
            await wait_until(lambda: manager.get("e").state == State.FAILED)  # retries off
            again = await host.call(CONNECT_TOOL, {"server": "e"})
            # A fresh process: the runtime tool is gone, the 18 built-in ones are back.
            assert again.text() == "Server 'e' is connected: 18 tools active."
            assert dyn.name not in host.active and by_tool["echo"].name in host.active


async def test_mcp_connect_right_after_a_crash_does_not_blame_another_extension(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {"c": raw_entry("--crash-on-call")})
    host = ExampleHost()
    with anyio.fail_after(HANG_GUARD_S):
        async with McpExtension(host, config_file=config, retries=False) as ext:
            echo = next(t for t in ext.tools if t.tool_name == "echo")
            with pytest.raises(ConnectionFailed):
                await echo.call({"text": "x"})
            reply = await host.call(CONNECT_TOOL, {"server": "c"})
            assert "Another extension" not in reply.text(), reply.text()
