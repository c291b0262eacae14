"""orbmcp as the client of the official MCP conformance suite.

The suite test installs Node 22 and ``@modelcontextprotocol/conformance`` with npm (through
``scripts/conformance.sh``) and runs every client scenario, one at a time, through
``tests/conformance/client.py``; it is skipped, with the reason, when they cannot be installed.
The other tests drive the same client code in-process against real loopback servers, so the
hooks it relies on are tested without Node too.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path

import anyio
import pytest
import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError as ToolFailure
from pydantic import BaseModel

from orbmcp.errors import AuthError, ToolError, UsageError
from tests.auth.oauth_server import ASOptions, running_server
from tests.conformance import client as conf
from tests.timeouts import HANG_GUARD_S

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "conformance.sh"
INSTALL_TIMEOUT_S = 300
# 26 scenarios at ~2-5 s each, one at a time; the suite's own per-scenario timeout is 30 s.
SUITE_TIMEOUT_S = 300
_LINE = re.compile(r"^(PASS|FAIL|XFAIL|XPASS) (\S+)")


# -- the official suite ----------------------------------------------------------------------------


def _script(
    *args: str, timeout: float, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        check=False,
        env={**os.environ, **(env or {})},
    )


def _install_or_skip() -> None:
    try:
        proc = _script("--install-only", timeout=INSTALL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pytest.skip(f"installing Node 22 and the conformance suite took over {INSTALL_TIMEOUT_S} s")
    if proc.returncode == 3:
        why = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "unknown reason"
        pytest.skip(f"Node 22 and the conformance suite cannot be installed here: {why}")
    assert proc.returncode == 0, proc.stderr


@pytest.mark.slow
@pytest.mark.conformance
def test_every_client_scenario_passes_except_the_suites_own_bugs(tmp_path: Path) -> None:
    _install_or_skip()
    listed = _script("--list", timeout=60).stdout.split()
    expected = dict(line.split("\t", 1) for line in _script("--expected", timeout=10).stdout.splitlines())
    assert len(listed) >= 26 and set(expected) <= set(listed)

    proc = _script(timeout=SUITE_TIMEOUT_S, env={"TMPDIR": str(tmp_path)})

    verdicts: dict[str, str] = {}
    for line in proc.stdout.splitlines():
        if m := _LINE.match(line):
            verdicts[m.group(2)] = m.group(1)
    report = proc.stdout + proc.stderr[-2000:]
    assert set(verdicts) == set(listed), report  # every scenario ran, once
    assert [s for s, v in verdicts.items() if v == "FAIL"] == [], report
    assert {s for s, v in verdicts.items() if v == "XFAIL"} == set(expected), report
    assert [s for s, v in verdicts.items() if v == "XPASS"] == [], report
    assert {s for s, v in verdicts.items() if v == "PASS"} == set(listed) - set(expected)
    summary = (
        f"conformance: {len(listed) - len(expected)} passed, 0 failed, {len(expected)} expected failures"
    )
    assert summary in proc.stdout
    assert proc.returncode == 0


@pytest.mark.conformance
def test_a_client_that_does_nothing_does_not_pass(tmp_path: Path) -> None:
    # The suite itself counts `initialize` as passed for such a client; the script must not.
    _install_or_skip()
    proc = _script(
        "initialize", timeout=60, env={"TMPDIR": str(tmp_path), "ORBMCP_CONFORMANCE_CLIENT": "true"}
    )
    assert proc.returncode == 1
    assert "FAIL initialize (no SUCCESS check" in proc.stdout
    assert "conformance: 0 passed, 1 failed" in proc.stdout


def test_script_lists_expected_failures_with_reasons() -> None:
    proc = _script("--expected", timeout=10)
    rows = [line.split("\t", 1) for line in proc.stdout.splitlines()]
    assert proc.returncode == 0
    assert [r[0] for r in rows] == ["auth/2025-03-26-oauth-metadata-backcompat"]
    assert all(len(r) == 2 and "issuer" in r[1] for r in rows)


# -- scenario plans ----------------------------------------------------------------------------------


def test_plans_pick_the_identity_and_the_call_each_scenario_checks() -> None:
    tools = conf.plan_for("tools_call", {})
    assert tools.call == ("add_numbers", {"a": 5, "b": 3})
    assert tools.auth is not None and tools.grant is None

    cimd = conf.plan_for("auth/basic-cimd", {})
    assert cimd.auth is not None and cimd.auth.client_metadata_url == conf.CLIENT_METADATA_URL
    assert cimd.call == ("test-tool", {})

    pre = conf.plan_for("auth/pre-registration", {"client_id": "c", "client_secret": "s"})
    assert pre.auth is not None
    assert (pre.auth.client_id, pre.auth.client_secret, pre.auth.client_metadata_url) == ("c", "s", None)

    assert conf.plan_for("auth/client-credentials-basic", {}).grant == "client_credentials"
    assert conf.plan_for("auth/client-credentials-jwt", {}).grant == "private_key_jwt"
    xaa = conf.plan_for("auth/cross-app-access-complete-flow", {})
    assert xaa.grant == "identity_assertion" and xaa.auth is None
    assert conf.plan_for("initialize", {}).call is None


def test_context_comes_from_the_environment() -> None:
    env = {conf.SCENARIO_ENV: "auth/pre-registration", conf.CONTEXT_ENV: json.dumps({"client_id": "x"})}
    assert conf.read_context(env) == ("auth/pre-registration", {"client_id": "x"})
    assert conf.read_context({}) == ("", {})
    with pytest.raises(UsageError, match=conf.CONTEXT_ENV):
        conf.read_context({conf.CONTEXT_ENV: "{not json"})
    with pytest.raises(UsageError, match="object"):
        conf.read_context({conf.CONTEXT_ENV: "[1]"})


def test_elicitation_defaults_come_from_the_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "verified": {"type": "boolean", "default": True},
            "note": {"type": "string"},
        },
    }
    assert conf.schema_defaults(schema) == {"name": "John Doe", "age": 30, "verified": True}
    assert conf.schema_defaults({"type": "object"}) == {}


def test_grant_factory_needs_its_credentials(tmp_path: Path) -> None:
    cfg = conf.scenario_config("http://127.0.0.1:9/mcp", tmp_path, conf.plan_for("initialize", {}))
    server = cfg.servers[conf.SERVER_NAME]
    build = conf.grant_factory(conf.plan_for("auth/client-credentials-basic", {"client_id": "c"}), tmp_path)
    with pytest.raises(UsageError, match="client_secret"):
        build(server)
    built = conf.grant_factory(
        conf.plan_for("auth/client-credentials-basic", {"client_id": "c", "client_secret": "s"}), tmp_path
    )(server)
    assert type(built).__name__ == "ClientCredentialsOAuthProvider"


# -- the same client, in-process, against real loopback servers -------------------------------------


class Profile(BaseModel):
    name: str = "John Doe"
    age: int = 30
    verified: bool = True


@asynccontextmanager
async def _sdk_server() -> AsyncIterator[str]:
    server = MCPServer("conformance-like", log_level="WARNING")

    @server.tool()
    def add_numbers(a: float, b: float) -> str:
        return f"The sum of {a:g} and {b:g} is {a + b:g}"

    @server.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("accept with defaults", schema=Profile)
        return json.dumps(
            {"action": answer.action, "data": answer.data.model_dump() if answer.data else None}
        )

    @server.tool()
    def broken() -> str:
        raise ToolFailure("always fails")

    config = uvicorn.Config(server.streamable_http_app(), host="127.0.0.1", port=0, log_level="error")
    web = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(web.serve)
        with anyio.fail_after(HANG_GUARD_S):
            while not web.started:
                await anyio.sleep(0.01)
        port = web.servers[0].sockets[0].getsockname()[1]
        try:
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            web.should_exit = True


async def test_tool_call_through_the_manager(tmp_path: Path) -> None:
    with anyio.fail_after(HANG_GUARD_S):
        async with _sdk_server() as url:
            message = await conf.run_plan(url, tmp_path, conf.plan_for("tools_call", {}))
    assert message.data["call"] == {"tool": "add_numbers", "text": "The sum of 5 and 3 is 8"}
    assert "add_numbers" in message.data["tools"]


async def test_elicitation_is_accepted_with_the_schema_defaults(tmp_path: Path) -> None:
    from orbmcp.core.wire.era import EraCache

    plan = replace(conf.plan_for("elicitation-sep1034-client-defaults", {}), call=("ask", {}))
    with anyio.fail_after(HANG_GUARD_S):
        async with _sdk_server() as url:
            # Like the suite's mock server, a 2025-era session: elicitation/create arrives as a
            # server request (this SDK server has no back-channel for it on 2026-07-28 HTTP).
            server = conf.scenario_config(url, tmp_path, plan).servers[conf.SERVER_NAME]
            EraCache(tmp_path / "cache" / "protocol-eras.json").record(server.definition_hash(), "2025-11-25")
            message = await conf.run_plan(url, tmp_path, plan)
    answer = json.loads(message.data["call"]["text"])
    assert answer == {"action": "accept", "data": {"name": "John Doe", "age": 30, "verified": True}}


async def test_tool_errors_and_missing_tools_fail_the_run(tmp_path: Path) -> None:
    with anyio.fail_after(HANG_GUARD_S):
        async with _sdk_server() as url:
            with pytest.raises(ToolError, match=r"tool 'broken' returned an error: .*always fails"):
                await conf.run_plan(url, tmp_path, replace(conf.plan_for("x", {}), call=("broken", {})))
            with pytest.raises(ToolError, match="does not offer tool 'nope'"):
                await conf.run_plan(url, tmp_path, replace(conf.plan_for("x", {}), call=("nope", {})))


async def test_headless_authorization_code_flow(tmp_path: Path) -> None:
    plan = replace(conf.plan_for("auth/metadata-default", {}), call=("whoami", {}))
    with anyio.fail_after(HANG_GUARD_S):
        async with running_server(ASOptions()) as srv:
            message = await conf.run_plan(f"{srv.base}/mcp", tmp_path, plan)
            paths = [r.path for r in srv.requests]
    assert message.data["call"]["text"] == "you are authorized"
    assert {"/register", "/authorize", "/token"} <= set(paths)


async def test_a_refused_authorization_is_an_auth_error(tmp_path: Path) -> None:
    plan = replace(conf.plan_for("auth/metadata-default", {}), call=("whoami", {}))
    with anyio.fail_after(HANG_GUARD_S):
        async with running_server(ASOptions(pkce="absent")) as srv:
            with pytest.raises(AuthError, match="PKCE"):
                await conf.run_plan(f"{srv.base}/mcp", tmp_path, plan)


def test_state_stays_out_of_the_users_global_dir(tmp_path: Path) -> None:
    config = conf.scenario_config("http://127.0.0.1:9/mcp", tmp_path, conf.plan_for("initialize", {}))
    assert config.global_dir == tmp_path
    assert Path(os.environ["ORB_AGENT_DIR"]) != tmp_path
    server = config.servers[conf.SERVER_NAME]
    assert server.transport == "streamable-http" and server.max_retries == 0
    assert server.timeout_ms < 30_000  # inside the suite's per-scenario limit


# -- the script the suite runs -------------------------------------------------------------------------


def test_the_client_runs_as_a_script_from_the_repository() -> None:
    for command in (["tests/conformance/client.py"], ["-m", "tests.conformance.client"]):
        done = subprocess.run(
            [sys.executable, *command], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode == 2 and "usage:" in done.stderr, command


def test_a_failed_run_prints_the_error_line_the_script_matches(capsys: pytest.CaptureFixture[str]) -> None:
    # Port 9 (discard) has no listener on 127.0.0.1: the connection is refused at once.
    status = conf.main(["http://127.0.0.1:9/mcp"])
    err = capsys.readouterr().err
    assert status not in (0, 2)
    assert err.startswith("orbmcp: error: ") and "conformance" in err.splitlines()[0]
