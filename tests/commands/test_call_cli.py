"""``orbmcp tools / call / resources / read / prompts / prompt``.

Three layers: the result models on their own; the handlers in-process against one long-lived
session (fast, so most output rules are checked here); whole command lines in-process for exit codes,
the JSON error envelope and stdin; and the real ``python -m orbmcp`` for what only a process shows
(SIGINT, a progress bar on a TTY).
"""

from __future__ import annotations

import json
import os
import pty
import signal
import sys
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from orbmcp.commands.context import CommandContext
from orbmcp.commands.handlers import resources as resource_handlers
from orbmcp.commands.handlers import tools as handlers
from orbmcp.commands.results.call import CallOutcome, structured_is_redundant, transcript_text
from orbmcp.config.loader import load_config
from orbmcp.core.session.manager import Manager
from orbmcp.core.tooling.results import ImageBlock, TextBlock, ToolResult
from orbmcp.errors import TimeoutFailed, UsageError
from orbmcp.render.plain import render_plain
from orbmcp.render.plain.call import truncate_bytes
from tests.cli import CliResult, run_cli
from tests.core.live import wait_until
from tests.servers.everything import MARKER_ENV, tiny_png, tiny_wav
from tests.servers.launch import http_server_process, server_cmd
from tests.timeouts import HANG_GUARD_S, generous_servers
from tests.ui import RecordingUI

REPO = Path(__file__).resolve().parents[2]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


def write_config(path: Path, servers: dict[str, Any]) -> Path:
    path.write_text(json.dumps({"mcpServers": generous_servers(servers)}), encoding="utf-8")
    return path


def everything(markers: Path | None = None) -> dict[str, Any]:
    command, *args = server_cmd("everything")
    return {"command": command, "args": args, "env": {MARKER_ENV: str(markers)} if markers else {}}


# -- the models ----------------------------------------------------------------------------------


def test_truncation_keeps_whole_characters() -> None:
    assert truncate_bytes("abc", 10) == ("abc", None)
    cut, total = truncate_bytes("ééé", 3)  # 2 bytes each: the half character is dropped
    assert (cut, total) == ("é", 6)


def test_call_text_escapes_server_text_but_the_full_text_does_not() -> None:
    result = ToolResult([TextBlock("red \x1b[31mALERT\x1b[0m\nline 2\x07")])
    outcome = CallOutcome("s", "t", result)
    assert "\x1b" not in render_plain(outcome) and "\x07" not in render_plain(outcome)
    assert "ALERT" in render_plain(outcome) and "line 2" in render_plain(outcome)
    assert transcript_text(result, {}) == "red \x1b[31mALERT\x1b[0m\nline 2\x07"


def test_structured_content_is_shown_unless_a_text_block_says_the_same() -> None:
    same = ToolResult([TextBlock('{"a": 1}')], structured={"a": 1})
    wrapped = ToolResult([TextBlock("3")], structured={"result": 3})
    different = ToolResult([TextBlock("summary")], structured={"rows": [1, 2]})
    assert structured_is_redundant(same) and structured_is_redundant(wrapped)
    assert not structured_is_redundant(different)
    text = render_plain(CallOutcome("s", "t", different))
    assert text.startswith("summary\nstructured content:\n") and '"rows"' in text
    assert "structured content" not in render_plain(CallOutcome("s", "t", same))


def test_is_error_sets_exit_code_1_and_json_is_the_whole_result() -> None:
    result = ToolResult([TextBlock("bad")], structured={"code": 7}, meta={"k": "v"}, is_error=True)
    outcome = CallOutcome("s", "t", result)
    assert outcome.exit_code == 1
    assert outcome.to_json() == {
        "content": [{"type": "text", "text": "bad"}],
        "structuredContent": {"code": 7},
        "isError": True,
        "_meta": {"k": "v"},
    }


# -- handlers in-process, one session for the module ---------------------------------------------


class Sessions:
    persistent = True
    daemon_pid: int | None = None

    def __init__(self, manager: Manager | None) -> None:
        self._manager = manager

    async def manager(self, ctx: CommandContext) -> Manager:
        if self._manager is None:
            raise AssertionError("this command must not connect anything")
        return self._manager


@dataclass
class Session:
    manager: Manager
    markers: Path
    config_path: Path

    def ctx(self, *, json_output: bool = False, connect: bool = True) -> CommandContext:
        ctx = CommandContext(
            ui=RecordingUI(), sessions=Sessions(self.manager if connect else None), json=json_output
        )
        ctx.set_config(self.manager.config)
        return ctx


@pytest.fixture(scope="module")
async def session(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Session]:
    home = tmp_path_factory.mktemp("callcli")
    markers = home / "markers"
    markers.mkdir()
    path = write_config(home / "mcp.json", {"e": everything(markers)})
    config = load_config(config_file=path, global_dir=home / "agent")
    async with Manager(config, retries=False) as manager:
        with anyio.fail_after(HANG_GUARD_S):
            await manager.start_eager()
        yield Session(manager, markers, path)


async def test_tools_listing_text_and_json(session: Session) -> None:
    listing = await handlers.tools(session.ctx(), "e")
    text = render_plain(listing)
    assert text.startswith("e (")
    assert "  add(a: integer, b: integer)\n    Add two integers.\n    [read-only, idempotent]" in text
    assert "  slow(steps?: integer = 3, delay?: number = 0.05)" in text
    rows = listing.to_json()
    assert {tuple(sorted(r)) for r in rows} == {
        ("annotations", "bridgedName", "description", "inputSchema", "name", "server")
    }
    add = next(r for r in rows if r["name"] == "add")
    assert add["annotations"] == {"readOnlyHint": True, "idempotentHint": True}
    assert add["bridgedName"].startswith("mcp__e__add_")
    assert add["inputSchema"]["required"] == ["a", "b"]
    schema_text = render_plain(await handlers.tools(session.ctx(), "e", schema=True))
    assert f"bridged name: {add['bridgedName']}" in schema_text and '"required": [' in schema_text


async def test_tools_of_every_server_in_a_session(session: Session) -> None:
    listing = await handlers.tools(session.ctx())
    assert listing.servers == ("e",) and any(t.name == "echo" for t in listing.tools)


async def test_unknown_server_is_a_usage_error_with_close_names(session: Session) -> None:
    with pytest.raises(UsageError) as info:
        await handlers.tools(session.ctx(connect=False), "E")
    assert info.value.code == "usage" and "did you mean 'e'" in (info.value.hint or "")
    # Only close names are suggested: "ee" is not close enough to "e" to guess.
    with pytest.raises(UsageError) as info:
        await handlers.tools(session.ctx(connect=False), "ee")
    assert info.value.hint == "known servers: e"
    with pytest.raises(UsageError):
        await handlers.call(session.ctx(connect=False), "nope", "echo")


async def test_call_text_json_and_bridged_name(session: Session) -> None:
    outcome = await handlers.call(session.ctx(), "e", "echo", arguments=["text=hello world"])
    assert (render_plain(outcome), outcome.exit_code) == ("hello world", 0)
    bridged = session.manager.tools.get("e", "add")
    assert bridged is not None
    by_bridged_name = await handlers.call(session.ctx(), "e", bridged.bridged_name, arguments=["a=2", "b=3"])
    assert render_plain(by_bridged_name) == "5"  # {"result": 5} is not printed again
    assert by_bridged_name.to_json()["structuredContent"] == {"result": 5}


async def test_unknown_tool_suggests_close_names(session: Session) -> None:
    with pytest.raises(UsageError) as info:
        await handlers.call(session.ctx(), "e", "ech", arguments=["text=x"])
    assert info.value.message == "unknown tool 'ech' on server 'e'"
    assert "'echo'" in (info.value.hint or "")


async def test_argument_errors_name_the_parameter_and_type(session: Session) -> None:
    with pytest.raises(UsageError) as info:
        await handlers.call(session.ctx(), "e", "add", arguments=["a=x", "b=1"])
    assert "'a'" in info.value.message and "integer" in info.value.message
    with pytest.raises(UsageError) as missing:
        await handlers.call(session.ctx(), "e", "add", arguments=["a=1"])
    assert "missing required" in missing.value.message and "'b'" in missing.value.message


async def test_bad_syntax_is_rejected_before_connecting(session: Session, tmp_path: Path) -> None:
    ctx = session.ctx(connect=False)  # any connect attempt fails the test
    with pytest.raises(UsageError, match="--args"):
        await handlers.call(ctx, "e", "echo", args="{not json")
    with pytest.raises(UsageError, match="expected k=v"):
        await handlers.call(ctx, "e", "echo", arguments=["text"])
    with pytest.raises(UsageError, match="--timeout"):
        await handlers.call(ctx, "e", "echo", arguments=["text=x"], timeout=0)
    with pytest.raises(UsageError, match="does not exist"):
        await handlers.call(ctx, "e", "echo", arguments=["text=x"], output=tmp_path / "no" / "out.txt")


async def test_is_error_result_and_error_notice(session: Session) -> None:
    ctx = session.ctx()
    outcome = await handlers.call(ctx, "e", "fail", arguments=["message=boom 42"])
    assert outcome.exit_code == 1 and "boom 42" in render_plain(outcome)
    assert ("error", "tool 'fail' on server 'e' returned an error") in ctx.ui.notes  # type: ignore[attr-defined]
    json_ctx = session.ctx(json_output=True)
    outcome = await handlers.call(json_ctx, "e", "fail", arguments=["message=boom"])
    assert outcome.to_json()["isError"] is True and json_ctx.ui.notes == []  # type: ignore[attr-defined]


async def test_every_content_kind_in_text(session: Session) -> None:
    text = render_plain(await handlers.call(session.ctx(), "e", "mixed"))
    assert text.splitlines() == [
        "mixed text",
        f"[image image/png, {len(tiny_png())} B] (--save-images DIR saves it)",
        "[resource link: mem://hello] hello (text/plain)",
        "[resource mem://embedded.txt text/plain]",
        "embedded text",
        "[resource mem://embedded.bin application/octet-stream, 3 B]",
    ]
    structured = render_plain(await handlers.call(session.ctx(), "e", "structured"))
    assert structured.count("Paris") == 1  # the JSON text block; structuredContent says the same


async def test_save_images_writes_safe_names_and_never_overwrites(session: Session, tmp_path: Path) -> None:
    target = tmp_path / "media" / "nested"  # created on demand
    first = await handlers.call(session.ctx(), "e", "mixed", save_images=target)
    again = await handlers.call(session.ctx(), "e", "mixed", save_images=target)
    audio = await handlers.call(session.ctx(), "e", "audio", save_images=target)
    assert dict(first.saved) == {1: str(target / "mixed-2.png")}
    assert dict(again.saved) == {1: str(target / "mixed-2-1.png")}
    assert (target / "mixed-2.png").read_bytes() == tiny_png()
    assert (target / "audio-1.wav").read_bytes() == tiny_wav()
    assert sorted(p.name for p in target.iterdir()) == ["audio-1.wav", "mixed-2-1.png", "mixed-2.png"]
    assert f"saved to {target / 'mixed-2.png'}" in render_plain(first)
    assert "saved to" in render_plain(audio)


def test_save_media_ignores_invalid_base64_and_unknown_types(tmp_path: Path) -> None:
    ui = RecordingUI()
    ctx = CommandContext(ui=ui)
    result = ToolResult([ImageBlock("!!!not base64", "image/png"), ImageBlock("AAEC", "image/x-weird")])
    saved = handlers.save_media(ctx, result, tmp_path, "../../etc/passwd")
    assert list(saved) == [1]
    assert Path(saved[1]).parent == tmp_path and Path(saved[1]).name == "etc_passwd-2.bin"
    assert ui.notes and ui.notes[0][0] == "warning"


async def test_max_output_truncates_and_output_keeps_everything(session: Session, tmp_path: Path) -> None:
    cut = await handlers.call(session.ctx(), "e", "big", arguments=["size=5000"], max_output=100)
    first, note = render_plain(cut).split("\n")
    assert first == "x" * 100
    assert note == "[output truncated: showed 100 of 5000 bytes; use --output FILE to keep all of it]"
    out = tmp_path / "out.txt"
    kept = await handlers.call(session.ctx(), "e", "big", arguments=["size=5000"], max_output=10, output=out)
    assert out.read_text() == "x" * 5000
    assert render_plain(kept).endswith(f"the full output is in {out}]")
    only_file = await handlers.call(session.ctx(), "e", "big", arguments=["size=5000"], output=out)
    assert render_plain(only_file) == f"[output: 4.9 KB written to {out}]"
    json_out = tmp_path / "out.json"
    await handlers.call(session.ctx(json_output=True), "e", "echo", arguments=["text=hi"], output=json_out)
    assert json.loads(json_out.read_text())["content"] == [{"type": "text", "text": "hi"}]


async def test_progress_reaches_the_ui(session: Session) -> None:
    ctx = session.ctx()
    await handlers.call(ctx, "e", "slow", arguments=["steps=2", "delay=0.01"])
    assert ctx.ui.progress_events == [  # type: ignore[attr-defined]
        ("e", "slow", 1.0, 2.0, "step 1"),
        ("e", "slow", 2.0, 2.0, "step 2"),
    ]


async def test_timeout_is_exit_6_with_a_hint_and_the_server_sees_the_cancel(session: Session) -> None:
    for f in session.markers.iterdir():
        f.unlink()
    with anyio.fail_after(HANG_GUARD_S):
        with pytest.raises(TimeoutFailed) as info:
            await handlers.call(session.ctx(), "e", "sleep", arguments=["seconds=30"], timeout=0.4)
        await wait_until(lambda: (session.markers / "sleep-cancelled").exists())
    assert info.value.code == "timeout" and "0.4 s" in info.value.message
    assert "--timeout" in (info.value.hint or "")


async def test_resources_read_prompts_prompt(session: Session) -> None:
    listing = await resource_handlers.resources(session.ctx(), "e")
    assert "  mem://hello            hello     (text/plain)" in render_plain(listing)
    rows = listing.to_json()
    assert {"server": "e", "uri": "mem://hello"}.items() <= rows[0].items()
    assert any(r.get("uriTemplate") == "mem://greeting/{name}" for r in rows)
    contents = await resource_handlers.read(session.ctx(), "e", "mem://hello")
    assert render_plain(contents) == "hello world"
    assert contents.to_json()["contents"][0]["text"] == "hello world"
    templated = await resource_handlers.read(session.ctx(), "e", "mem://greeting/Ada")
    assert render_plain(templated) == "greetings, Ada"
    with pytest.raises(UsageError) as missing:
        await resource_handlers.read(session.ctx(), "e", "mem://nope")
    assert "no resource 'mem://nope'" in missing.value.message

    prompts = await handlers.prompts(session.ctx())
    assert "  greet(name)\n    Greet someone." in render_plain(prompts)
    assert prompts.to_json()[0]["name"] == "greet"
    got = await handlers.prompt(session.ctx(), "e", "greet", ["name=Bob"])
    assert render_plain(got).endswith("[user]\nPlease greet Bob warmly.")
    assert got.to_json()["messages"][0]["role"] == "user"


async def test_prompt_argument_errors(session: Session) -> None:
    with pytest.raises(UsageError, match="missing required argument: 'name'"):
        await handlers.prompt(session.ctx(), "e", "greet")
    with pytest.raises(UsageError, match="unknown argument 'nam'"):
        await handlers.prompt(session.ctx(), "e", "greet", ["nam=x"])
    with pytest.raises(UsageError, match="prompt arguments are strings"):
        await handlers.prompt(session.ctx(), "e", "greet", ["name:=1"])
    with pytest.raises(UsageError) as unknown:
        await handlers.prompt(session.ctx(), "e", "gret", ["name=x"])
    assert "'greet'" in (unknown.value.hint or "")


async def test_nothing_enabled_lists_nothing_and_connects_nothing(tmp_path: Path) -> None:
    path = write_config(tmp_path / "off.json", {"x": {**everything(), "enabled": False}})
    ctx = CommandContext(ui=RecordingUI(), sessions=Sessions(None))
    ctx.set_config(load_config(config_file=path, global_dir=tmp_path / "agent"))
    listing = await handlers.tools(ctx)
    assert listing.to_json() == [] and "No enabled MCP server" in render_plain(listing)


# -- the real command ----------------------------------------------------------------------------


def orbmcp(args: Sequence[str], config: Path, *, stdin: str = "") -> CliResult:
    """One command line, in-process, as a user with this config runs it."""
    env = {**os.environ, "ORBMCP_CONFIG": str(config), "NO_COLOR": "1"}
    return run_cli(*args, env=env, cwd=REPO, stdin=stdin)


def raw(*flags: str) -> dict[str, Any]:
    # Answering the era probe at once spares the 2 s first-contact wait of a silent server.
    command, *args = server_cmd("raw", "--answer-discover-error", "-32601", *flags)
    return {"command": command, "args": args}


@pytest.fixture
def cli_config(tmp_path: Path) -> Path:
    # The stdlib-only raw server starts in milliseconds; the SDK server only where its tools matter.
    return write_config(
        tmp_path / "mcp.json",
        {"e": everything(tmp_path / "markers"), "r": raw(), "dies": raw("--crash-on-call")},
    )


def test_cli_exit_codes_outputs_and_json_envelope(cli_config: Path) -> None:
    progress, failed, unknown_tool, unknown_server, piped_args = (
        orbmcp(args, cli_config)
        for args in (
            ["call", "e", "slow", "steps=2", "delay=0.01"],
            ["call", "e", "fail", "message=boom", "--json"],
            ["call", "r", "ech", "text=x", "--json"],
            ["call", "nope", "echo", "--json"],
            ["call", "r", "echo", "--args", '{"text": "from --args"}'],
        )
    )
    # Progress arrived, but stderr is not a terminal: no bar, no escape codes.
    assert (progress.code, progress.stdout, progress.stderr) == (0, "done 2 steps\n", "")
    body = json.loads(failed.stdout)
    assert failed.code == 1 and body["isError"] is True and "boom" in body["content"][0]["text"]
    assert failed.stderr == ""  # an isError result is a result, not an error envelope
    assert unknown_tool.code == 2 and unknown_tool.stdout == ""
    [line] = unknown_tool.stderr.splitlines()
    error = json.loads(line)["error"]
    assert (error["code"], error["server"]) == ("usage", "r") and "'ech'" in error["message"]
    assert "did you mean 'echo'" in error["hint"]
    assert unknown_server.code == 2 and unknown_server.stdout == ""
    assert json.loads(unknown_server.stderr)["error"]["message"] == "unknown server 'nope'"
    assert (piped_args.code, piped_args.stdout) == (0, "from --args\n")


def test_cli_timeout_crash_and_stdin(cli_config: Path) -> None:
    timeout = orbmcp(["call", "r", "never", "--timeout", "0.5", "--json"], cli_config)
    crash = orbmcp(["call", "dies", "echo", "text=x"], cli_config)
    assert timeout.code == 6 and timeout.stdout == ""
    error = json.loads(timeout.stderr)["error"]
    assert error["code"] == "timeout" and "0.5 s" in error["message"]
    assert crash.code == 4 and "server 'dies'" in crash.stderr and crash.stdout == ""
    added = orbmcp(["call", "r", "echo", "-"], cli_config, stdin='{"text": "from stdin"}')
    assert (added.code, added.stdout) == (0, "from stdin\n")


async def test_cli_ctrl_c_cancels_on_the_server_and_exits_130(cli_config: Path, tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    env = {**os.environ, "ORBMCP_CONFIG": str(cli_config)}
    proc = await anyio.open_process(
        [sys.executable, "-m", "orbmcp", "call", "e", "sleep", "seconds=30"], cwd=REPO, env=env
    )
    try:
        with anyio.fail_after(HANG_GUARD_S):
            await wait_until(lambda: (markers / "sleep-started").exists(), timeout=20)
            server_pid = int((markers / "sleep-started").read_text())
            proc.send_signal(signal.SIGINT)
            code = await proc.wait()
            assert proc.stderr is not None
            err = b""
            async for chunk in proc.stderr:
                err += chunk
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.aclose()
    assert code == 130 and b"interrupted" in err
    assert (markers / "sleep-cancelled").exists()  # the server saw the cancellation
    with pytest.raises(ProcessLookupError):
        os.kill(server_pid, 0)  # and it is gone


async def test_cli_progress_bar_only_on_a_terminal(cli_config: Path) -> None:
    master, slave = pty.openpty()
    env = {**os.environ, "ORBMCP_CONFIG": str(cli_config)}
    try:
        with anyio.fail_after(HANG_GUARD_S):
            proc = await anyio.run_process(
                [sys.executable, "-m", "orbmcp", "call", "e", "slow", "steps=3", "delay=0.05"],
                stderr=slave,
                check=False,
                cwd=REPO,
                env=env,
            )
        os.close(slave)
        slave = -1
        seen = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every writer closed
                break
            if not chunk:
                break
            seen += chunk
    finally:
        if slave >= 0:
            os.close(slave)
        os.close(master)
    assert proc.returncode == 0 and proc.stdout == b"done 3 steps\n"
    assert b"step 1" in seen and b"100.0%" in seen and b"[########################]" in seen


def test_cli_over_http(tmp_path: Path) -> None:
    with http_server_process() as http:
        config = write_config(tmp_path / "h.json", {"h": {"url": http.url}})
        called = orbmcp(["call", "h", "echo", "text=over http"], config)
    assert (called.code, called.stdout) == (0, "over http\n")
