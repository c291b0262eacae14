"""Field by field: what each client's spelling becomes (the README's mapping table)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from orbmcp.config.clients import ClientFile, Format
from orbmcp.config.model import ClientName
from orbmcp.config.translate import Malformed, translate_file

PROJECT = Path("/work/proj")
HOME = Path("/home/u")


def one(client: ClientName, fmt: Format, document: dict[str, Any], scope: str = "user") -> tuple[Any, ...]:
    file = ClientFile(client, Path("/f"), scope, fmt)  # type: ignore[arg-type]
    [imported] = translate_file(file, document, project_dir=PROJECT, home=HOME)
    return imported.entry, imported.problems


@pytest.mark.parametrize(
    ("client", "fmt", "document", "entry"),
    [
        (
            "claude-code",
            "mcpServers",
            {
                "mcpServers": {
                    "s": {
                        "type": "http",
                        "url": "https://h/mcp",
                        "oauth": {"clientId": "c", "callbackPort": 8080},
                    }
                }
            },
            {
                "url": "https://h/mcp",
                "transport": "streamable-http",
                "auth": {"type": "oauth", "clientId": "c", "redirectPort": 8080},
            },
        ),
        (
            "claude-code",
            "claude-local",
            {"projects": {str(PROJECT): {"mcpServers": {"s": {"command": "c", "args": ["${X:-1}"]}}}}},
            {"command": "c", "args": ["${X:-1}"]},
        ),
        (
            "vscode",
            "vscode-settings",
            {"mcp.servers": {"s": {"type": "sse", "url": "http://h/sse"}}},
            {"url": "http://h/sse", "transport": "sse"},
        ),
        (
            "vscode",
            "vscode",
            {
                "servers": {
                    "s": {"command": "c", "args": ["${workspaceFolderBasename}${pathSeparator}x", "$"]}
                }
            },
            {"command": "c", "args": ["proj/x", "$"]},
        ),
        (
            "cursor",
            "mcpServers",
            {"mcpServers": {"s": {"command": "c", "disabled": True, "type": "STDIO"}}},
            {"command": "c", "transport": "stdio", "enabled": False},
        ),
        (
            "gemini",
            "mcpServers",
            {
                "mcpServers": {
                    "s": {
                        "httpUrl": "https://h/mcp",
                        "headers": {"A": "$TOKEN $$ ${B}"},
                        "oauth": {"clientId": "g", "scopes": ["a", "b"]},
                    }
                }
            },
            {
                "headers": {"A": "${TOKEN} $$ ${B}"},
                "url": "https://h/mcp",
                "transport": "streamable-http",
                "auth": {"type": "oauth", "clientId": "g", "scope": "a b"},
            },
        ),
        (
            "opencode",
            "opencode",
            {
                "mcp": {
                    "servers": {
                        "s": {
                            "type": "remote",
                            "url": "https://h/$x",
                            "oauth": {"clientId": "o"},
                            "disabled": True,
                            "timeout": 5000,
                        }
                    }
                }
            },
            {
                "url": "https://h/$$x",
                "auth": {"type": "oauth", "clientId": "o"},
                "enabled": False,
                "timeoutMs": 5000,
            },
        ),
        (
            "opencode",
            "opencode",
            {
                "mcp": {"servers": {"type": "local", "command": ["servers-named-server"]}}
            },  # a server called "servers"
            {"command": "servers-named-server", "args": []},
        ),
        (
            "pi",
            "mcpServers",
            {"mcpServers": {"s": {"url": "https://h/mcp", "exposure": "x"}}},
            {"url": "https://h/mcp", "exposure": "x"},
        ),
    ],
)
def test_fields(client: ClientName, fmt: Format, document: dict[str, Any], entry: dict[str, Any]) -> None:
    got, problems = one(client, fmt, document)
    assert got == entry and problems == ()


def test_what_is_dropped_is_said() -> None:
    _, problems = one(
        "gemini",
        "mcpServers",
        {"mcpServers": {"s": {"command": "c", "authProviderType": "google_credentials"}}},
    )
    assert problems == ("\"authProviderType\" 'google_credentials' ignored: orbmcp uses OAuth 2.1",)


@pytest.mark.parametrize(
    ("client", "fmt", "entry", "why"),
    [
        ("windsurf", "mcpServers", {"serverUrl": "${file:/run/secret}"}, "${file:...}"),
        ("vscode", "vscode", {"command": "c", "env": {"K": "${input:undeclared}"}}, "an undeclared input"),
        ("opencode", "opencode", {"type": "local", "command": []}, "non-empty array"),
    ],
)
def test_untranslatable(client: ClientName, fmt: Format, entry: dict[str, Any], why: str) -> None:
    key = {"vscode": "servers", "opencode": "mcp"}.get(client, "mcpServers")
    got, problems = one(client, fmt, {key: {"s": entry}})
    assert got is None and why in problems[0]


@pytest.mark.parametrize(
    ("fmt", "document"),
    [
        ("mcpServers", {"mcpServers": []}),
        ("vscode-settings", {"mcp": {"servers": "no"}}),
        ("opencode", {"mcp": {"servers": {"a": {}}, "other": 1}, "x": 1} | {"mcp": 3}),
        ("claude-local", {"projects": {str(PROJECT): {"mcpServers": "no"}}}),
    ],
)
def test_malformed_blocks(fmt: Format, document: dict[str, Any]) -> None:
    with pytest.raises(Malformed, match="must be an object"):
        translate_file(ClientFile("pi", Path("/f"), "user", fmt), document, project_dir=PROJECT, home=HOME)


@pytest.mark.parametrize("document", [{}, {"projects": []}, {"projects": {str(PROJECT): "no"}}, {"mcp": {}}])
def test_nothing_there(document: dict[str, Any]) -> None:
    for fmt in ("claude-local", "vscode-settings"):
        assert (
            translate_file(
                ClientFile("pi", Path("/f"), "user", fmt), document, project_dir=PROJECT, home=HOME
            )
            == []
        )  # type: ignore[arg-type]


def test_a_file_with_too_many_servers_is_cut() -> None:
    from orbmcp.config import translate

    servers = {f"s{i}": {"command": "c"} for i in range(translate.MAX_SERVERS_PER_FILE + 5)}
    out = translate_file(
        ClientFile("pi", Path("/f"), "user", "mcpServers"),
        {"mcpServers": servers},
        project_dir=PROJECT,
        home=HOME,
    )
    assert len(out) == translate.MAX_SERVERS_PER_FILE
