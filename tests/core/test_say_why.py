"""Say why: a server that is not there, or not working, is reported as exactly what it is.

Real servers (raw.py over stdio: one that prints ``fatal: missing API_KEY`` and exits 3, one that
answers a call with a line over the 16 MiB cap), the CLI in-process.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from orbmcp.commands.views import status_report
from orbmcp.config.loader import load_config
from orbmcp.core.session import state as state_module
from tests.cli import CliResult, run_cli
from tests.core.live import cli_env, managed, raw_entry, wait_until, write_config
from tests.timeouts import HANG_GUARD_S

SECRET_ARG = "sk-live-abcdefghijklmnopqrstuvwx"


def orbmcp(config: Path, *args: str, **kw: object) -> CliResult:
    return run_cli("--config", str(config), *args, env=cli_env(), **kw)  # type: ignore[arg-type]


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return write_config(
        tmp_path / "mcp.json",
        {
            "crashy": raw_entry("--die-at", "start", lifecycle="lazy"),
            # Exits 3 at once but leaves a child holding its stdout: no EOF will ever tell.
            "wrapper": raw_entry(
                "--die-at", "start", "--child-keeps-pipes", lifecycle="lazy", timeoutMs=60_000
            ),
            "crashy-slow-limit": raw_entry("--die-at", "start", lifecycle="lazy", timeoutMs=60_000),
            "callcrash": raw_entry("--die-at", "call", lifecycle="lazy"),
            "huge": raw_entry("--huge-on-call", str(17 * 1024 * 1024), lifecycle="lazy"),
            "keyed": raw_entry(
                f"--api-key={SECRET_ARG}", lifecycle="lazy", env={"SOME_TOKEN": "tok-12345678"}
            ),
            "spaced": raw_entry(
                "--token",
                "hunter2hunter2",
                "-password",
                "opensesame",
                "--name",
                "visible",
                "--secret",
                "--x",
                lifecycle="lazy",
            ),
            "gh": raw_entry(lifecycle="lazy", env={"TOKEN": "${ORB_TEST_UNSET_GITHUB_TOKEN}"}),
            "typo": {"comand": "x", "lifecycle": "lazy"},
            "off": raw_entry(enabled=False),
            "time": raw_entry(lifecycle="lazy"),
        },
    )


def test_a_server_that_dies_while_connecting_names_its_exit_code_and_last_words(config: Path) -> None:
    result = orbmcp(config, "call", "crashy", "echo", "text=x")
    assert result.code == 4
    lines = result.stderr.splitlines()
    assert lines[0] == (
        "orbmcp: error: server 'crashy' exited with code 3 while connecting; last stderr: fatal: missing API_KEY"
    )
    assert (
        lines[1] == "hint: the server exited by itself; `orbmcp status crashy` shows all of its recent output"
    )
    as_json = orbmcp(config, "call", "crashy", "echo", "text=x", "--json")
    error = json.loads(as_json.stderr)["error"]
    assert (error["code"], error["reason"], error["server"]) == ("connection", "server_exited", "crashy")


@pytest.mark.parametrize("name", ["wrapper", "crashy-slow-limit"])
def test_an_exit_before_ready_is_reported_at_once_not_at_the_connect_deadline(
    config: Path, name: str
) -> None:
    # timeoutMs is 60 s: only the exit itself, as an event, can end the attempt before the
    # 50 s bound of this run (on a deadline it would say "did not become ready", exit 6).
    result = run_cli("--config", str(config), "call", name, "echo", "text=x", env=cli_env(), timeout=50)
    assert result.code == 4, result.stderr
    assert result.stderr.splitlines()[0] == (
        f"orbmcp: error: server '{name}' exited with code 3 while connecting; last stderr: fatal: missing API_KEY"
    )


def test_a_server_that_dies_during_a_call_names_its_exit_code_and_last_words(config: Path) -> None:
    result = orbmcp(config, "call", "callcrash", "echo", "text=x")
    assert result.code == 4
    assert result.stderr.splitlines()[0] == (
        "orbmcp: error: server 'callcrash' exited with code 3 during tools/call echo; "
        "last stderr: fatal: missing API_KEY"
    )


def test_a_line_over_the_size_cap_is_reported_as_that(config: Path) -> None:
    result = orbmcp(config, "call", "huge", "echo", "text=x", "--json")
    assert result.code == 4
    error = json.loads(result.stderr)["error"]
    assert error["message"] == (
        f"server 'huge' sent a line longer than {16 * 1024 * 1024} bytes (during tools/call echo)"
    )
    assert error["reason"] == "response_too_large"


def test_a_flag_and_its_value_as_two_words_are_masked_like_one(config: Path) -> None:
    detail = orbmcp(config, "status", "spaced", "--json").json()
    argv = detail["args"] if "args" in detail else detail["command"]
    text = json.dumps(detail)
    assert "hunter2hunter2" not in text and "opensesame" not in text, argv
    assert "visible" in text and "--x" in text  # other values, and a flag after a flag, stay


def test_the_detail_view_shows_the_command_with_secrets_masked(config: Path) -> None:
    result = orbmcp(config, "status", "keyed")
    assert result.code == 0
    command = next(line for line in result.stdout.splitlines() if line.startswith("Command: "))
    assert "raw.py" in command and SECRET_ARG not in command and "--api-key=" in command
    assert "Env: SOME_TOKEN" in result.stdout.splitlines() and "tok-12345678" not in result.stdout
    detail = orbmcp(config, "status", "keyed", "--json").json()
    assert detail["command"].endswith("python") or "python" in detail["command"]
    assert detail["envNames"] == ["SOME_TOKEN"] and SECRET_ARG not in json.dumps(detail)
    http = write_config(
        config.parent / "http.json", {"web": {"url": "https://u:pw@example.test/mcp?token=abc123456"}}
    )
    web = orbmcp(http, "status", "web", "--json").json()
    assert web["url"].startswith("https://") and "pw" not in web["url"] and "abc123456" not in web["url"]


@pytest.mark.parametrize(
    ("name", "first_line", "hint"),
    [
        (
            "gh",
            "server 'gh' was skipped ({file}): \"env.TOKEN\": ${{ORB_TEST_UNSET_GITHUB_TOKEN}} is not set",
            "set ORB_TEST_UNSET_GITHUB_TOKEN in the environment orbmcp runs in",
        ),
        (
            "typo",
            'server \'typo\' is invalid ({file}): no transport: set "command" (stdio) or "url" (HTTP)',
            "'comand' — did you mean 'command'?",
        ),
    ],
)
def test_a_name_that_did_not_load_is_reported_as_what_it_is(
    config: Path, name: str, first_line: str, hint: str
) -> None:
    for verb in (("call", name, "echo"), ("start", name), ("tools", name)):
        result = orbmcp(config, *verb)
        assert result.code == 3, verb
        lines = result.stderr.splitlines()
        assert lines[0].startswith("orbmcp: error: " + first_line.format(file=config)), lines
        assert lines[1].startswith(f"hint: {hint}") and "unknown" not in result.stderr
    detail = orbmcp(config, "status", name)
    assert detail.code == 0 and f"Server: {name}" in detail.stdout and "(not loaded)" in detail.stdout


def test_did_you_mean_only_for_close_names_and_never_for_a_skipped_name(config: Path) -> None:
    # A one-letter typo gets its suggestion; a name close to nothing gets the known names instead.
    far = orbmcp(config, "call", "ptme", "x")
    assert far.code == 2 and "hint: did you mean 'time'?" in far.stderr
    none = orbmcp(config, "call", "zzz", "x")
    assert none.code == 2 and "did you mean" not in none.stderr and "known servers:" in none.stderr


def test_a_disabled_server_says_so_in_its_detail_and_is_skipped_by_check(config: Path) -> None:
    detail = orbmcp(config, "status", "off")
    assert 'Hint: disabled in its entry ("enabled": false); starting it connects it anyway' in detail.stdout


def test_status_json_rows_say_why_and_list_entries_that_did_not_load(config: Path) -> None:
    rows = {r["name"]: r for r in orbmcp(config, "status", "--json").json()}
    assert rows["gh"]["state"] == "skipped" and rows["gh"]["file"] == str(config)
    assert rows["typo"]["state"] == "invalid" and rows["typo"]["hint"] == "'comand' — did you mean 'command'?"
    assert rows["typo"]["warnings"] == []  # its unknown key is the fix, not a second warning
    assert rows["off"]["state"] == "disabled" and rows["off"]["lastError"] is None


def test_an_unknown_tool_argument_is_refused_unless_the_schema_allows_more(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {"raw": raw_entry("--open-tool")})
    typo = orbmcp(config, "call", "raw", "echo", "text=hi", "txet=x")
    assert typo.code == 2 and typo.stdout == ""
    assert typo.stderr.splitlines() == [
        "orbmcp: error: tool 'echo' on server 'raw': unknown argument 'txet' — did you mean 'text'?",
        "hint: the arguments are text (string, required); --no-check sends arguments as given",
    ]
    unchecked = orbmcp(config, "call", "raw", "echo", "text=hi", "txet=x", "--no-check")
    assert unchecked.code == 0 and unchecked.stdout == "hi\n"
    extra = orbmcp(config, "call", "raw", "open", "text=hi", "more=1")
    assert extra.code == 0, extra.stderr
    assert json.loads(extra.stdout) == {"more": "1", "text": "hi"}
    bad_stdin = orbmcp(config, "call", "raw", "echo", "-", stdin="text=hi")
    assert bad_stdin.code == 2
    assert 'hint: give one JSON object, e.g. {"key": "value", "count": 2}' in bad_stdin.stderr


def test_one_tool_shows_every_parameter_and_its_task_support(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {"raw": raw_entry("--rich-tool")})
    plain = orbmcp(config, "tools", "raw", "configure")
    assert plain.code == 0, plain.stderr
    assert plain.stdout.splitlines() == [
        "raw/configure — Configure the thing",
        "  Set the mode and the level of the thing.",
        "  [read-only]",
        "Parameters:",
        '  mode  "fast"|"safe"; required',
        "      How to run",
        "  level?  integer; optional; default 3",
        "      From 1 to 5",
        "  tags?  string[]; optional",
        "Task-augmented calls: optional: it may be called as a task (a task-augmented call) or directly",
        "Bridged name: mcp__raw__configure_1d0bb721",
    ]
    body = orbmcp(config, "tools", "raw", "configure", "--json").json()
    assert body["taskSupport"] == "optional"
    assert body["parameters"][0] == {
        "name": "mode",
        "type": '"fast"|"safe"',
        "required": True,
        "enum": ["fast", "safe"],
        "description": "How to run",
    }
    assert body["parameters"][1]["default"] == 3
    echo = orbmcp(config, "tools", "raw", "echo", "--json").json()
    assert echo["taskSupport"] == "forbidden" and echo["parameters"][0]["required"] is True
    missing = orbmcp(config, "tools", "raw", "echoo")
    assert missing.code == 2 and "did you mean 'echo'?" in missing.stderr


def test_call_json_keeps_every_field_and_plain_shows_audience_and_priority(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {"raw": raw_entry("--annotated")})
    as_json = orbmcp(config, "call", "raw", "echo", "text=hi", "--json").json()
    assert as_json["content"] == [
        {
            "type": "text",
            "text": "hi",
            "annotations": {"audience": ["user", "assistant"], "priority": 0.9},
            "_meta": {"example.com/trace": "t-1"},
        }
    ]
    plain = orbmcp(config, "call", "raw", "echo", "text=hi")
    assert plain.stdout == "[audience: user, assistant; priority: 0.9]\nhi\n"


async def test_a_server_waiting_to_retry_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A long first delay: the test looks at the state during the wait, whatever the machine's speed.
    monkeypatch.setattr(state_module, "RETRY_SCHEDULE_S", (600.0,))
    path = write_config(tmp_path / "mcp.json", {"crashy": raw_entry("--die-at", "start", maxRetries=3)})
    async with managed(path, retries=True) as manager:
        with anyio.fail_after(HANG_GUARD_S):
            sup = await manager.start("crashy")
            await wait_until(lambda: sup.snap.retry_at is not None, 10, "the retry wait")
        config = load_config(config_file=path)
        row = status_report(config, manager).rows[0]
        assert row.state == "retrying" and row.retry is not None
        assert row.shown_state.startswith("retrying 1/3 in ") and row.shown_state.endswith(" s")
        assert 590 <= row.retry.in_seconds <= 600
        assert row.to_json()["retry"]["attempt"] == 1
        assert row.error is not None and "exited with code 3" in row.error


async def test_an_agent_connecting_a_name_that_did_not_load_is_told_why(config: Path) -> None:
    from orbmcp.host.agent_tools import connect_server

    async with managed(config) as manager:
        result = await connect_server(manager, load_config(config_file=config), "gh", lambda tool: True)
        unknown = await connect_server(manager, load_config(config_file=config), "ghost", lambda tool: True)
    assert result.is_error and result.text().startswith("server 'gh' was skipped")
    assert unknown.is_error and "unknown server 'ghost'" in unknown.text()
