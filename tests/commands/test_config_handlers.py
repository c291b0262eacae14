"""`config show|paths|validate`, `trust` and `untrust` handlers, called as a front end calls them."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from orbmcp.commands.context import CommandContext
from orbmcp.commands.handlers import config as handlers
from orbmcp.config import trust as trust_mod
from orbmcp.errors import UsageError
from orbmcp.render.plain import render_plain
from tests.ui import SilentUI


class AnswerUI(SilentUI):
    """A person who answers every confirmation with ``answer`` (None: nobody is there)."""

    def __init__(self, answer: bool | None) -> None:
        self.interactive = answer is not None
        self.answer = bool(answer)
        self.questions: list[str] = []
        self.notices: list[str] = []

    def confirm(self, question: str, *, default: bool = False) -> bool:
        self.questions.append(question)
        return self.answer

    def notify(self, message: str, *, level: str = "info") -> None:
        self.notices.append(message)


def _write(path: Path, data: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def global_dir(_isolated_agent_dir: Path) -> Path:
    _isolated_agent_dir.mkdir(parents=True, exist_ok=True)
    return _isolated_agent_dir


@pytest.fixture
def project(tmp_path: Path) -> Path:
    proj = tmp_path / "proj"
    proj.mkdir()
    return proj


# --- config show -------------------------------------------------------------------------------


def test_show_text_covers_stdio_http_disabled_and_warnings(tmp_path: Path) -> None:
    config = _write(
        tmp_path / "mcp.json",
        {
            "mcpServers": {
                "local": {
                    "command": "my server",
                    "args": ["--flag", "two words"],
                    "cwd": str(tmp_path),
                    "env": {"API_TOKEN": "tok-1234567890", "MODE": "prod"},
                    "lifecycle": "lazy",
                },
                "remote": {
                    "url": "https://example.test/mcp",
                    "headers": {"Authorization": "Bearer sekrit-abcdef"},
                    "auth": {"type": "oauth", "scope": "read"},
                    "disabled": True,
                },
                "broken": {"command": 42},
            }
        },
    )
    doc = handlers.show(CommandContext(ui=AnswerUI(None), config_file=config))
    text = render_plain(doc)
    assert f"local  (stdio, lazy, enabled; config ({config}))" in text
    assert "  command: 'my server' --flag 'two words'" in text
    assert f"  cwd: {tmp_path}" in text
    assert "  env MODE=" in text and "tok-1234567890" not in text
    assert f"remote  (streamable-http, lazy, disabled; config ({config}))" in text
    assert "  url: https://example.test/mcp" in text
    assert "  header Authorization: " in text and "sekrit-abcdef" not in text
    assert "maxRetries=5  auth=oauth" in text
    assert any(line.startswith("warning: ") and "broken" in line for line in text.splitlines())
    data = doc.to_json()
    assert [s["name"] for s in data["servers"]] == ["local", "remote"]
    remote = data["servers"][1]
    assert remote["enabled"] is False and remote["auth"] == {
        "type": "oauth",
        "clientId": None,
        "scope": "read",
    }
    assert data["settings"] == {
        "toolPrefix": "mcp",
        "requestTimeoutMs": 30000,
        "maxRetries": 5,
        "enabled": True,
        "tokenStore": "file",
    }
    assert data["warnings"][0]["server"] == "broken"


def test_show_with_nothing_configured_and_an_untrusted_project(global_dir: Path, project: Path) -> None:
    _write(project / ".orb" / "mcp.json", {"mcpServers": {"p": {"command": "run-me"}}})
    doc = handlers.show(CommandContext(ui=AnswerUI(None), project=project))
    assert render_plain(doc).splitlines() == [
        "No MCP servers configured.",
        f"Project config: not loaded ({project / '.orb'}) — `orbmcp trust` to review it",
    ]
    p = doc.to_json()["project"]
    assert (p["exists"], p["trusted"], p["loaded"], p["trustState"], p["pending"]) == (
        True,
        False,
        False,
        "untrusted",
        ["p"],
    )


def test_paths_lists_every_location(global_dir: Path, project: Path, tmp_path: Path) -> None:
    doc = handlers.paths(CommandContext(ui=AnswerUI(None), project=project))
    data = doc.to_json()
    assert data["globalDir"] == str(global_dir)
    assert data["globalFiles"] == [str(global_dir / "settings.json"), str(global_dir / "mcp.json")]
    assert data["projectFiles"] == [
        str(project / ".orb" / "settings.json"),
        str(project / ".orb" / "mcp.json"),
    ]
    assert data["configOverride"] is None
    assert data["authDir"] == str(global_dir / "mcp-auth")
    assert data["debugLog"] == str(global_dir / "logs" / "orbmcp.log")
    lines = render_plain(doc).splitlines()
    # one line per key; the other clients' files under a heading of their own
    assert len(lines) == len(data) + len({i["path"] for i in data["imports"]})
    assert lines[0] == f"globalDir       {global_dir}"  # keys padded to one column
    assert f"globalFiles     {global_dir / 'settings.json'}, {global_dir / 'mcp.json'}" in lines

    override = _write(tmp_path / "ci.json", {"mcpServers": {}})
    with_override = handlers.paths(CommandContext(ui=AnswerUI(None), config_file=override)).to_json()
    assert with_override["configOverride"] == str(override)


def test_validate_exit_codes(tmp_path: Path) -> None:
    good = _write(tmp_path / "good.json", {"mcpServers": {"a": {"command": "x"}}})
    result = handlers.validate(CommandContext(ui=AnswerUI(None), config_file=good))
    assert result.exit_code == 0 and render_plain(result) == "ok: 1 server(s) valid, 0 problem(s)"
    bad = _write(tmp_path / "bad.json", {"mcpServers": {"a": {"command": "x"}, "b": {"url": 5}}})
    result = handlers.validate(CommandContext(ui=AnswerUI(None), config_file=bad))
    assert result.exit_code == 3
    lines = render_plain(result).splitlines()
    assert lines[-1] == "invalid: 1 server(s) valid, 1 problem(s)"
    assert lines[0].startswith("warning: ") and "'b'" in lines[0]


# --- trust / untrust ---------------------------------------------------------------------------


@pytest.fixture
def reviewed(global_dir: Path, project: Path) -> Path:
    _write(global_dir / "mcp.json", {"mcpServers": {"shared": {"command": "global-srv"}}})
    _write(
        project / ".orb" / "settings.json",
        {"settings": {"maxRetries": 1}, "mcpServers": {"shared": {"lifecycle": "lazy", "enabled": False}}},
    )
    _write(
        project / ".orb" / "mcp.json",
        {
            "mcpServers": {
                "tool": {
                    "command": "node",
                    "args": ["srv.js", "--token", "${GH_TOKEN}"],
                    "cwd": "./srv",
                    "env": {"API_KEY": "k"},
                },
                "web": {"type": "sse", "url": "https://h.test/sse", "headers": {"X-Key": "v"}},
                "bad": {"command": 3},
            }
        },
    )
    return project


def test_trust_shows_everything_and_needs_a_person(reviewed: Path) -> None:
    with pytest.raises(UsageError, match="approval needs a person"):
        handlers.trust(CommandContext(ui=AnswerUI(None), project=reviewed))

    ui = AnswerUI(False)
    declined = handlers.trust(CommandContext(ui=ui, project=reviewed, present=render_plain))
    assert (
        declined.ok is False and render_plain(declined) == "Not trusted; the project config stays invisible."
    )
    assert ui.questions == ["Trust this project?"]
    review = ui.notices[0].splitlines()
    real = os.path.realpath(reviewed)
    assert review[0] == f"Project: {real}"
    assert "- tool (new or changed)  [server; " + str(reviewed / ".orb" / "mcp.json") + "]" in review
    assert "    command: node srv.js --token '${GH_TOKEN}'" in review
    assert "    argv: ['node', 'srv.js', '--token', '${GH_TOKEN}']" in review
    assert "    cwd: ./srv" in review and "    env names: API_KEY" in review
    assert "    reads environment variables: GH_TOKEN" in review
    assert "    transport: sse" in review and "    url: https://h.test/sse" in review
    assert "    header names: X-Key" in review
    assert any(line.startswith("- shared") and "[override;" in line for line in review)
    assert "    overrides: {'lifecycle': 'lazy', 'enabled': False}" in review
    assert any(line.startswith("    invalid: ") for line in review)
    assert "Project settings: maxRetries=1" in review
    assert review[-1] == "Approving lets orbmcp run these commands and contact these URLs."
    body = declined.to_json()["review"]
    assert {s["name"]: s["kind"] for s in body["servers"]} == {
        "shared": "override",
        "tool": "server",
        "web": "server",
        "bad": "invalid",
    }
    assert (
        trust_mod.check_trust(Path(os.environ["ORB_AGENT_DIR"]), trust_mod.describe_project(reviewed)).state
        == "untrusted"
    )


def test_trust_approved_by_a_person_then_already_trusted_then_untrusted(reviewed: Path) -> None:
    ui = AnswerUI(True)
    approved = handlers.trust(CommandContext(ui=ui, project=reviewed, present=render_plain))
    real = os.path.realpath(reviewed)
    assert approved.ok and render_plain(approved).endswith(f"\nTrusted: {real}")
    assert approved.to_json()["trusted"] is True and approved.to_json()["message"] == f"Trusted: {real}"
    pending = {s["name"] for s in approved.to_json()["review"]["servers"] if s["pending"]}
    assert {"tool", "web"} <= pending  # what this approval covered for the first time

    again = handlers.trust(CommandContext(ui=AnswerUI(None), project=reviewed))
    assert render_plain(again).endswith("\nAlready trusted.") and "(new or changed)" not in render_plain(
        again
    )
    assert again.to_json()["trusted"] is True

    config_show = handlers.show(CommandContext(ui=AnswerUI(None), project=reviewed))
    assert "Project config: not loaded" not in render_plain(config_show)
    # `tool` reads ${GH_TOKEN}, which is not set: that entry is skipped with a warning naming it.
    assert {s["name"] for s in config_show.to_json()["servers"]} == {"shared", "web"}
    assert any("GH_TOKEN" in w["message"] for w in config_show.to_json()["warnings"])

    revoked = handlers.untrust(CommandContext(ui=AnswerUI(None), project=reviewed))
    assert render_plain(revoked) == f"Revoked trust for {real}"
    assert revoked.to_json() == {"ok": True, "message": revoked.message, "trusted": False, "revoked": True}
    not_trusted = handlers.untrust(CommandContext(ui=AnswerUI(None), project=reviewed))
    assert render_plain(not_trusted) == f"{real} was not trusted"
    assert not_trusted.fields() == {"trusted": False, "revoked": False}


def test_trust_with_yes_and_without_a_project_config(global_dir: Path, project: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UsageError) as caught:
        handlers.trust(CommandContext(ui=AnswerUI(None), project=empty), yes=True)
    assert caught.value.message.startswith(
        f"no project config in {empty / '.orb'} (settings.json or mcp.json)"
    )
    assert caught.value.hint == "run in the project directory or pass --project DIR"
    assert handlers.untrust(CommandContext(ui=AnswerUI(None), project=empty)).revoked is False

    _write(project / ".orb" / "mcp.json", {"mcpServers": {"p": {"command": "x"}}})
    approved = handlers.trust(CommandContext(ui=AnswerUI(None), project=project), yes=True)
    assert approved.ok and "Trusted:" in render_plain(approved)
    # A changed definition is pending again and needs a new approval.
    _write(project / ".orb" / "mcp.json", {"mcpServers": {"p": {"command": "y"}}})
    with pytest.raises(UsageError):
        handlers.trust(CommandContext(ui=AnswerUI(None), project=project))
    changed = handlers.trust(CommandContext(ui=AnswerUI(None), project=project), yes=True)
    assert "- p (new or changed)" in render_plain(changed)
