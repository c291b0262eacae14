"""`orbmcp check` is the CI smoke test: its exit code and JSON must be exact."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli import run_cli
from tests.servers.launch import server_cmd


def _config(tmp_path: Path, servers: dict[str, Any]) -> Path:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def _raw(*flags: str) -> dict[str, Any]:
    # Answering the era probe at once spares each run the first-contact wait of a silent server.
    argv = server_cmd("raw", "--answer-discover-error", "-32601", *flags)
    return {"command": argv[0], "args": argv[1:], "timeoutMs": 8000}


def _check(cfg: Path, *args: str) -> tuple[int, Any, str]:
    r = run_cli("--config", str(cfg), "check", *args, "--json")
    return r.code, json.loads(r.stdout) if r.stdout.strip() else None, r.stderr


def test_all_ready_and_required_tools_present_exits_0(tmp_path: Path) -> None:
    cfg = _config(tmp_path, {"a": _raw(), "b": _raw()})
    code, body, err = _check(cfg, "--require-tool", "a/echo", "--require-tool", "echo")
    assert code == 0, err
    assert body["ok"] is True and body["problems"] == [] and body["missingTools"] == []
    assert [s["name"] for s in body["servers"]] == ["a", "b"]
    assert all(s["state"] == "ready" for s in body["servers"])


def test_a_failed_server_exits_1_and_names_it(tmp_path: Path) -> None:
    cfg = _config(tmp_path, {"good": _raw(), "bad": {"command": "/nonexistent/orbmcp-test-server"}})
    code, body, _ = _check(cfg)
    assert code == 1
    assert body["ok"] is False
    bad = next(s for s in body["servers"] if s["name"] == "bad")
    assert bad["state"] == "failed" and "command not found" in bad["lastError"]
    assert any(p.startswith("bad: failed") for p in body["problems"])


def test_a_missing_required_tool_exits_1(tmp_path: Path) -> None:
    cfg = _config(tmp_path, {"a": _raw()})
    code, body, _ = _check(cfg, "--require-tool", "a/create_issue")
    assert code == 1
    assert body["missingTools"] == ["a/create_issue"]


def test_lazy_servers_are_checked_only_when_named(tmp_path: Path) -> None:
    cfg = _config(tmp_path, {"eager": _raw(), "lazy": {**_raw(), "lifecycle": "lazy"}})
    code, body, err = _check(cfg, "lazy")
    assert code == 0, err
    assert [s["name"] for s in body["servers"]] == ["lazy"]


def test_nothing_to_check_is_a_failure(tmp_path: Path) -> None:
    cfg = _config(tmp_path, {})
    code, body, _ = _check(cfg)
    assert code == 1 and body["problems"] == ["no server to check"]


def test_unknown_server_is_a_usage_error(tmp_path: Path) -> None:
    cfg = _config(tmp_path, {"a": _raw()})
    code, body, err = _check(cfg, "nope")
    assert code == 2 and body is None
    assert json.loads(err.strip().splitlines()[-1])["error"]["code"] == "usage"
