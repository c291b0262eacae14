"""Hostile config files cost a bounded amount and never crash a command: too deep, too large,
special files, out-of-range numbers; an untrusted project never touches the user's servers."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from orbmcp.config import jsonc
from orbmcp.config.jsonc import MAX_CONFIG_BYTES, MAX_DEPTH, parse_jsonc, read_jsonc
from orbmcp.errors import ConfigError
from tests.cli import run_cli
from tests.config import Layout

DEEP = '{"mcpServers": {"a": ' + "[" * 100_000 + "]" * 100_000 + "}}"


def crash_logs(agent: Path) -> list[Path]:
    return sorted((agent / "logs").glob("orbmcp-crash-*")) if (agent / "logs").is_dir() else []


def test_nesting_beyond_the_cap_is_a_config_error_naming_the_place() -> None:
    with pytest.raises(ConfigError) as info:
        parse_jsonc(DEEP, file="deep.json")
    assert info.value.reason == "too_deep"
    assert f"nested more than {MAX_DEPTH} levels deep" in info.value.message
    assert info.value.message.startswith("deep.json:1:")


def test_nesting_up_to_the_cap_parses_and_brackets_in_strings_and_comments_do_not_count() -> None:
    at_cap = "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)
    assert parse_jsonc('{"a": ' + at_cap + "}") == {"a": json.loads(at_cap)}
    hidden = "[" * 500
    text = f'{{"a": "{hidden}", "b": \'{hidden}\', /* {hidden} */ // {hidden}\n "c": 1}}'
    assert parse_jsonc(text) == {"a": hidden, "b": hidden, "c": 1}


def test_a_file_larger_than_the_cap_is_refused_before_it_is_read(tmp_path: Path) -> None:
    big = tmp_path / "mcp.json"
    with big.open("wb") as handle:  # sparse: 217 MB on paper, nothing on disk
        handle.truncate(217 * 1024 * 1024)
    reads: list[int] = []
    real_read = os.read

    def counting_read(fd: int, n: int) -> bytes:
        reads.append(n)
        return real_read(fd, n)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(jsonc.os, "read", counting_read)
        with pytest.raises(ConfigError) as info:
            read_jsonc(big)
    assert reads == []  # refused by its size alone
    assert info.value.reason == "too_large"
    assert f"larger than {MAX_CONFIG_BYTES // (1024 * 1024)} MiB" in info.value.message


def test_a_special_file_is_refused_without_reading_it(tmp_path: Path) -> None:
    zero = tmp_path / "zero.json"
    zero.symlink_to("/dev/zero")
    with pytest.raises(ConfigError) as info:
        read_jsonc(zero)
    assert info.value.reason == "not_a_file"
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)  # nobody ever writes: a blocking open would hang here
    with pytest.raises(ConfigError) as info:
        read_jsonc(fifo)
    assert info.value.reason == "not_a_file"


@pytest.mark.parametrize(
    ("entry", "key"),
    [
        ({"command": "x", "timeout": 1e308}, '"timeout"'),
        ({"command": "x", "timeout": 86_401}, '"timeout"'),
        ({"command": "x", "timeoutMs": 10**400}, '"timeoutMs"'),
        ({"command": "x", "requestTimeoutMs": 86_400_001}, '"requestTimeoutMs"'),
        ({"command": "x", "healthCheckIntervalMs": 1e300}, '"healthCheckIntervalMs"'),
    ],
)
def test_out_of_range_numbers_skip_the_entry_with_a_warning(
    tmp_path: Path, entry: dict[str, object], key: str
) -> None:
    layout = Layout(tmp_path)
    layout.global_file("mcp.json", {"mcpServers": {"bad": entry, "good": {"command": "y"}}})
    config = layout.load()
    assert set(config.servers) == {"good"}
    [warning] = config.warnings
    assert warning.server == "bad" and key in warning.message and "entry skipped" in warning.message


def test_an_out_of_range_setting_is_ignored_with_a_warning(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    layout.global_file("mcp.json", {"settings": {"requestTimeoutMs": 1e300}, "mcpServers": {}})
    config = layout.load()
    assert config.settings.request_timeout_ms == 30_000
    assert "settings.requestTimeoutMs" in config.warnings[0].message


def test_config_validate_reports_out_of_range_numbers_with_exit_3(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text('{"mcpServers": {"a": {"command": "x", "timeout": 1e308}}}')
    result = run_cli("--config", str(config), "config", "validate", "--json")
    assert result.code == 3
    assert '"timeout" must be a positive number' in result.json()["warnings"][0]["message"]


def test_an_untrusted_hostile_project_breaks_nothing(tmp_path: Path, _isolated_agent_dir: Path) -> None:
    _isolated_agent_dir.mkdir(parents=True)
    (_isolated_agent_dir / "mcp.json").write_text(
        '{"mcpServers": {"mine": {"command": "x", "lifecycle": "lazy"}}}'
    )
    project = tmp_path / "clone"
    (project / ".orb").mkdir(parents=True)
    for text in (DEEP, '{"mcpServers": {"a": {"command": "x", "timeout": 1e308}}}'):
        (project / ".orb" / "mcp.json").write_text(text)
        for argv in (("status", "--json"), ("config", "paths", "--json"), ("config", "show", "--json")):
            result = run_cli("--project", str(project), *argv)
            assert result.code == 0, (argv, result.stderr)
        status = {row["name"]: row for row in run_cli("--project", str(project), "status", "--json").json()}
        # Its server is a row saying it is untrusted (when its name could be read); yours is as ever.
        assert status["mine"]["state"] == "stopped"
        assert set(status) <= {"mine", "a"}
        assert "a" not in status or status["a"]["state"] == "untrusted"
    assert crash_logs(_isolated_agent_dir) == []
    (project / ".orb" / "mcp.json").write_text(DEEP)
    trust = run_cli("--project", str(project), "trust", "--yes")
    assert trust.code == 3 and "nested more than" in trust.stderr  # reviewing it shows its problems


def test_the_same_hostile_files_via_config_exit_3_not_70(tmp_path: Path, _isolated_agent_dir: Path) -> None:
    for name, text in (("deep.json", DEEP), ("huge.json", None)):
        path = tmp_path / name
        if text is None:
            with path.open("wb") as handle:
                handle.truncate(MAX_CONFIG_BYTES + 1)
        else:
            path.write_text(text)
        result = run_cli("--config", str(path), "status")
        assert result.code == 3, result.stderr
    assert crash_logs(_isolated_agent_dir) == []


def test_an_untrusted_project_is_read_only_for_its_server_names(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    layout.project_file("mcp.json", {"mcpServers": {"b": {"command": "x", "timeout": -1}, "a": {"url": 7}}})
    config = layout.load()
    assert config.project.loaded is False and config.project.trust_state == "untrusted"
    assert config.project.pending == ("b", "a")
    assert config.warnings == ()  # its entries were not even checked


# ---- other clients' files: their numbers pass the same range check -------------------------------


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ("startup_timeout_sec = inf", "startup_timeout_sec"),
        ("startup_timeout_sec = nan", "startup_timeout_sec"),
        ("startup_timeout_sec = -inf", "startup_timeout_sec"),
        ("startup_timeout_sec = 1e308", "startup_timeout_sec"),
        ("tool_timeout_sec = inf", "tool_timeout_sec"),
        ("tool_timeout_sec = 1e308", "tool_timeout_sec"),
        ("startup_timeout_ms = 1e400", "startup_timeout_ms"),
        ("startup_timeout_ms = 0", "startup_timeout_ms"),
        ('tool_timeout_sec = "10"', "tool_timeout_sec"),
    ],
)
def test_codex_out_of_range_timeouts_are_an_invalid_row_not_exit_70(
    _isolated_agent_dir: Path, line: str, key: str
) -> None:
    codex = Path(os.environ["HOME"]) / ".codex" / "config.toml"
    codex.parent.mkdir(parents=True, exist_ok=True)
    codex.write_text(f'[mcp_servers.bad]\ncommand = "x"\n{line}\n\n[mcp_servers.good]\ncommand = "y"\n')
    status = run_cli("status", "--json")
    assert status.code == 0, status.stderr
    rows = {row["name"]: row for row in status.json()}
    assert rows["good"]["state"] != "invalid" and rows["bad"]["state"] == "invalid"
    validate = run_cli("config", "validate", "--json")
    [warning] = [w for w in validate.json()["warnings"] if w["server"] == "bad"]
    assert warning["file"] == str(codex) and f'"{key}"' in warning["message"]
    assert crash_logs(_isolated_agent_dir) == []


def test_codex_timeouts_in_range_still_translate(_isolated_agent_dir: Path) -> None:
    codex = Path(os.environ["HOME"]) / ".codex" / "config.toml"
    codex.parent.mkdir(parents=True, exist_ok=True)
    codex.write_text('[mcp_servers.ok]\ncommand = "x"\nstartup_timeout_sec = 2.5\ntool_timeout_sec = 60\n')
    shown = run_cli("config", "show", "--json")
    assert shown.code == 0, shown.stderr
    assert "2500" in shown.stdout and "60000" in shown.stdout


@pytest.mark.parametrize(
    ("where", "document", "key"),
    [
        (".gemini/settings.json", '{"mcpServers": {"bad": {"command": "x", "timeout": 1e308}}}', "timeout"),
        (
            ".config/opencode/opencode.json",
            '{"mcp": {"bad": {"type": "local", "command": ["x"], "timeout": -5}}}',
            "timeout",
        ),
    ],
)
def test_other_clients_numbers_name_their_own_key(
    _isolated_agent_dir: Path, where: str, document: str, key: str
) -> None:
    path = Path(os.environ["HOME"]) / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(document)
    validate = run_cli("config", "validate", "--json")
    [warning] = [w for w in validate.json()["warnings"] if w["server"] == "bad"]
    assert warning["file"] == str(path) and f'"{key}"' in warning["message"], warning


def test_an_import_over_the_server_cap_says_so(_isolated_agent_dir: Path) -> None:
    from orbmcp.config.translate import MAX_SERVERS_PER_FILE

    path = Path(os.environ["HOME"]) / ".cursor" / "mcp.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    servers = {f"s{i}": {"command": "c"} for i in range(MAX_SERVERS_PER_FILE + 3)}
    path.write_text(json.dumps({"mcpServers": servers}))
    validate = run_cli("config", "validate", "--json")
    capped = [w for w in validate.json()["warnings"] if w["file"] == str(path)]
    assert len(capped) == 1 and f"{MAX_SERVERS_PER_FILE + 3} servers" in capped[0]["message"]
    assert f"first {MAX_SERVERS_PER_FILE}" in capped[0]["message"]


def test_an_entry_with_thousands_of_problems_is_one_bounded_line(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    env = {f"V{i}": i for i in range(10_000)}
    layout.global_file(
        "mcp.json",
        {"mcpServers": {"ok": {"command": "x"}, "bad": {"command": "x", "env": env, "args": "y" * 100_000}}},
    )
    config = layout.load()
    assert list(config.servers) == ["ok"]
    (warning,) = config.warnings
    assert warning.server == "bad" and '"env.V0" must be a string' in warning.message
    assert "more" in warning.message and len(warning.message) < 2_500
