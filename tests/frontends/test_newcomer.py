"""The newcomer list (issue 27): what a person meets in the first ten minutes says what to do."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from orbmcp.commands.context import CommandContext
from orbmcp.commands.handlers import completion
from orbmcp.commands.table import COMMANDS
from orbmcp.config.clients import CLIENTS
from tests.cli import run_cli
from tests.core.live import raw_entry
from tests.frontends import PY, env_for, everything_entry, write_config
from tests.servers.launch import http_server_process
from tests.ui import RecordingUI


def test_usage_lines_name_their_placeholders_one_way() -> None:
    """No Typer ``{server}`` braces, no ``<str>`` type names: ``SERVER``, ``[SERVER]``, ``DIR``."""
    for spec in COMMANDS:
        if spec.hidden:
            continue
        shown = run_cli(*spec.path, "--help")
        assert shown.code == 0, shown.stderr
        usage = shown.stdout.splitlines()[0]
        assert usage.startswith(f"Usage: orbmcp {spec.name} "), usage
        assert "{" not in usage, usage
        assert not re.search(r"<(str|int|float|path)>", shown.stdout), f"orbmcp {spec.name} --help"
    assert run_cli("call", "--help").stdout.startswith(
        "Usage: orbmcp call [OPTIONS] SERVER [TOOL] [ARGUMENTS]..."
    )
    assert "Missing argument 'SERVER'" in run_cli("call").stderr


def test_config_paths_never_prints_none(tmp_path: Path) -> None:
    shown = run_cli("config", "paths", env=env_for(HOME=str(tmp_path)))
    assert shown.code == 0
    assert "None" not in shown.stdout
    assert re.search(r"^configOverride\s+\(none\)$", shown.stdout, re.MULTILINE)
    data = json.loads(run_cli("config", "paths", "--json", env=env_for(HOME=str(tmp_path))).stdout)
    assert data["configOverride"] is None


def test_config_import_help_lists_the_clients() -> None:
    text = " ".join(run_cli("config", "import", "--help").stdout.split())
    assert all(client in text for client in CLIENTS)


def test_stop_without_a_session_says_nothing_persists(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"srv": {"command": PY, "args": ["-c", "pass"], "lifecycle": "lazy"}})
    shell = run_cli("stop", "srv", env=env_for(config))
    assert shell.code == 0, shell.stderr
    assert "does not persist" in shell.stdout and "`orbmcp daemon start`" in shell.stdout
    agent = run_cli("slash", "/mcp:stop srv", env=env_for(config))
    assert "does not persist" in agent.stdout and "orbmcp daemon" not in agent.stdout


def test_completion_install_without_bash_completion_says_what_to_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    ctx = CommandContext(ui=RecordingUI())
    missing = completion.install(ctx, "bash", loaders=(tmp_path / "no-such-loader",))
    assert missing.path == str(tmp_path / ".local/share/bash-completion/completions/orbmcp")
    assert f"add this line to ~/.bashrc: source {missing.path}" in missing.activation
    loader = tmp_path / "bash_completion"
    loader.write_text("", encoding="utf-8")
    present = completion.install(ctx, "bash", loaders=(loader,))
    assert "source" not in present.activation and "new bash sessions load it" in present.activation
    assert Path(present.path).stat().st_mode & 0o777 == 0o644


def test_add_with_a_relative_path_offers_the_absolute_one(tmp_path: Path) -> None:
    (tmp_path / "server.py").write_text("", encoding="utf-8")
    env = env_for(HOME=str(tmp_path), ORB_AGENT_DIR=str(tmp_path / "agent"))
    added = run_cli("add", "mine", "--", "python3", "server.py", "-v", env=env, cwd=tmp_path)
    assert added.code == 0, added.stderr
    expected = f"`orbmcp add mine --overwrite -- python3 {tmp_path / 'server.py'} -v`"
    assert "'server.py': a relative path" in added.stdout and expected in added.stdout
    plain = run_cli("add", "npm", "--", "npx", "-y", "@scope/pkg", env=env, cwd=tmp_path)
    assert "relative path" not in plain.stdout


def test_the_readme_links_to_files_that_exist() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert "DESIGN.md" not in readme  # not in the repository: ARCHITECTURE.md is
    for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", readme):
        assert (Path(__file__).resolve().parents[2] / target).exists(), target


def test_call_without_a_tool_lists_the_servers_tools(tmp_path: Path) -> None:
    """No call ran (exit 2, a usage error), but the answer to "which tool?" is on stdout."""
    env = env_for(write_config(tmp_path, {"ev": raw_entry()}))  # stdlib: no SDK import per run
    shown = run_cli("call", "ev", env=env)
    assert shown.code == 2, shown.stderr
    assert shown.stdout.startswith("ev (") and "  echo(text: string)" in shown.stdout
    assert shown.stderr.count("\n") == 1
    assert "name the tool to call: server 'ev' has" in shown.stderr
    assert "call one: orbmcp call ev TOOL key=value..." in shown.stderr
    data = run_cli("call", "ev", "--json", env=env)
    assert data.code == 2 and data.stderr == ""
    body = data.json()
    assert body["error"]["code"] == "usage" and body["error"]["server"] == "ev"
    assert "echo" in {t["name"] for t in body["tools"]}
    agent = run_cli("slash", "/mcp:call ev", env=env)
    assert agent.code == 2 and "  echo(text: string)" in agent.stdout
    assert "/mcp call ev TOOL" in agent.stderr and "orbmcp call" not in agent.stderr


def test_status_shows_the_sse_fallback_and_no_stderr_line_for_url_servers(tmp_path: Path) -> None:
    """A URL that refused Streamable HTTP says so in the overview (plain, rich, JSON), not only in
    the detail's recent output; a server reached by URL has no stderr, so none is missed."""
    from io import StringIO

    from rich.console import Console

    from orbmcp.commands.results.status import StatusReport, StatusRow, ToolCounts
    from orbmcp.render.rich_view import render_rich

    with http_server_process(["--sse", "0"]) as sse, http_server_process() as http:
        entries = {
            "legacy": {"url": sse.url, "lifecycle": "eager"},
            "modern": {"url": http.url, "lifecycle": "eager"},
        }
        env = env_for(write_config(tmp_path, entries), ORB_AGENT_DIR=str(tmp_path / "agent"))
        plain = run_cli("status", env=env)
        rows = run_cli("status", "--json", env=env).json()
        legacy = run_cli("status", "legacy", env=env)
        modern = run_cli("status", "modern", env=env)
    assert plain.code == 0, plain.stderr
    lines = plain.stdout.splitlines()
    after_legacy = lines[next(i for i, x in enumerate(lines) if x.startswith("  legacy")) + 1]
    assert after_legacy.strip().startswith("via legacy SSE: the URL refused Streamable HTTP")
    assert sum("legacy SSE" in line for line in lines) == 1  # the note once, not again as a warning
    by_name = {r["name"]: r for r in rows}
    assert by_name["legacy"]["transport"] == "sse" and by_name["legacy"]["sseFallback"] is True
    assert "sseFallback" not in by_name["modern"] and "transport" not in by_name["modern"]
    assert "Transport: sse (legacy SSE: the URL refused Streamable HTTP)" in legacy.stdout
    assert modern.code == 0 and "Transport: streamable-http\n" in modern.stdout
    assert "no stderr output" not in modern.stdout and "Recent output" not in modern.stdout
    row = StatusRow(
        "legacy", "eager", "ready", ToolCounts(1, 1), "-", "config", transport="sse", sse_fallback=True
    )
    out = StringIO()
    render_rich(StatusReport((row,)), Console(file=out, force_terminal=True, width=200, color_system=None))
    assert "legacy: via legacy SSE: the URL refused Streamable HTTP" in out.getvalue()


def test_a_stdio_server_without_stderr_says_so(tmp_path: Path) -> None:
    env = env_for(write_config(tmp_path, {"ev": raw_entry()}), ORB_AGENT_DIR=str(tmp_path / "agent"))
    shown = run_cli("start", "ev", env=env)
    assert shown.code == 0, shown.stderr
    assert "Recent output:\n(no stderr output from ev)" in shown.stdout


def test_a_text_blob_resource_is_shown_as_text(tmp_path: Path) -> None:
    """text/* and JSON sent as a blob read as text; a charset orbmcp does not decode stays a blob."""
    from orbmcp.commands.results.call import transcript_text
    from orbmcp.core.tooling.results import ResourceBlobBlock, ToolResult
    from orbmcp.render.plain.tools import wire_block_text

    ref = {"command": PY, "args": [str(Path(__file__).resolve().parents[1] / "servers" / "reference.py")]}
    env = env_for(write_config(tmp_path, {"ref": ref}), ORB_AGENT_DIR=str(tmp_path / "agent"))
    text = run_cli("read", "ref", "test://text-blob", env=env)
    assert text.code == 0, text.stderr
    assert text.stdout == "plain text, sent as a blob\nsecond line\n"
    assert run_cli("read", "ref", "test://json-blob", env=env).stdout == '{"a": 1}\n'
    latin = run_cli("read", "ref", "test://latin1-blob", env=env)
    assert latin.stdout.splitlines() == [
        "[resource test://latin1-blob text/plain; charset=iso-8859-1, 4 B]",
        "[binary content: --output FILE saves it]",
    ]
    blob = ResourceBlobBlock("mem://a.txt", "aGVsbG8=", "text/markdown")
    assert transcript_text(ToolResult(content=[blob]), {}) == "[resource mem://a.txt text/markdown]\nhello"
    odd = ResourceBlobBlock("mem://b", "/w==", "text/plain")  # not UTF-8: a blob line
    assert transcript_text(ToolResult(content=[odd]), {}) == "[resource mem://b text/plain, 1 B]"
    embedded = {
        "type": "resource",
        "resource": {"uri": "u", "mimeType": "application/ld+json", "blob": "e30="},
    }
    assert wire_block_text(embedded) == "[resource u application/ld+json]\n{}"


def test_an_image_line_says_how_to_save_it(tmp_path: Path) -> None:
    env = env_for(write_config(tmp_path, {"ev": everything_entry()}), ORB_AGENT_DIR=str(tmp_path / "agent"))
    shown = run_cli("call", "ev", "image", env=env)
    assert shown.code == 0, shown.stderr
    assert re.fullmatch(r"\[image image/png, \d+ B\] \(--save-images DIR saves it\)\n", shown.stdout)
    saved = run_cli("call", "ev", "image", "--save-images", str(tmp_path / "img"), env=env)
    assert "saved to" in saved.stdout and "--save-images" not in saved.stdout
    kept = run_cli("call", "ev", "image", "--output", str(tmp_path / "out.txt"), env=env)
    assert kept.code == 0 and "--save-images" not in (tmp_path / "out.txt").read_text(encoding="utf-8")


def test_config_display_shows_references_and_paths_not_values_from_the_environment(tmp_path: Path) -> None:
    """``${VAR}`` as written and plain paths are shown; what the environment gave, and literal
    values that may be secrets, stay masked (config show, JSON and plain; status NAME)."""
    secret = "s3cr3t-from-the-env"
    entry = {
        "command": PY,
        "args": [
            "--token",
            "${ORB_T}",
            "${ORB_T}",
            "/opt/me/server.py",
            "--key=${ORB_T:-sk-literal-default}",
        ],
        "env": {
            "API_KEY": "${ORB_T}",
            "AUTH": "Bearer ${env:ORB_T}",
            "DATA": "${HOME}/data",
            "HOME_DIR": "/opt/me",
            "CREDS_FILE": "/opt/me/creds.json",
            "LITERAL": "sk-literal-123456",
            "FALLBACK": "${ORB_UNSET:-sk-literal-default}",
        },
        "enabled": False,
    }
    env = env_for(write_config(tmp_path, {"s": entry}), ORB_T=secret, ORB_AGENT_DIR=str(tmp_path / "agent"))
    shown = run_cli("config", "show", "--json", env=env)
    assert shown.code == 0, shown.stderr
    server = shown.json()["servers"][0]
    assert server["env"] == {
        "API_KEY": "${ORB_T}",
        "AUTH": "Bearer ${env:ORB_T}",
        "DATA": "${HOME}/data",
        "HOME_DIR": "/opt/me",
        "CREDS_FILE": "/opt/me/creds.json",
        "LITERAL": "<redacted>",
        "FALLBACK": "<redacted>",
    }
    assert server["args"] == ["--token", "${ORB_T}", "${ORB_T}", "/opt/me/server.py", "<redacted>"]
    plain = run_cli("config", "show", env=env)
    detail = run_cli("status", "s", env=env)
    for text in (shown.stdout, plain.stdout, detail.stdout):
        assert secret not in text and "sk-literal" not in text
    assert "env DATA=${HOME}/data" in plain.stdout
    assert "/opt/me/server.py" in detail.stdout and "'${ORB_T}'" in detail.stdout


def test_an_argument_error_names_the_server_and_the_tool(tmp_path: Path) -> None:
    env = env_for(write_config(tmp_path, {"ev": everything_entry()}), ORB_AGENT_DIR=str(tmp_path / "agent"))
    unknown = run_cli("call", "ev", "echo", "txt=hi", "--json", env=env)
    assert unknown.code == 2 and unknown.stdout == ""
    error = json.loads(unknown.stderr)["error"]
    assert error["server"] == "ev" and error["reason"] == "unknown_argument"
    assert error["message"] == "tool 'echo' on server 'ev': unknown argument 'txt' — did you mean 'text'?"
    typed = json.loads(run_cli("call", "ev", "add", "a=x", "b=1", "--json", env=env).stderr)["error"]
    assert typed["server"] == "ev" and typed["message"].startswith("tool 'add' on server 'ev': argument 'a'")
    prompt = json.loads(run_cli("prompt", "ev", "greet", "nope=1", "--json", env=env).stderr)["error"]
    assert prompt["server"] == "ev" and prompt["message"].startswith("prompt 'greet' on server 'ev': ")
