"""One entry at a time: every alias, and every kind of bad entry (skipped with one warning)."""

from __future__ import annotations

from pathlib import Path

import pytest

from orbmcp.config.documents import apply_override, servers_block
from orbmcp.config.entries import parse_override, parse_server
from orbmcp.config.expand import finalize
from orbmcp.config.model import AuthConfig, ConfigWarning, ServerConfig
from orbmcp.config.settings import Settings, parse_settings
from orbmcp.errors import ConfigError
from tests.config import Layout

FILE = "/cfg/mcp.json"


def parse(
    raw: object, *, settings: Settings | None = None
) -> tuple[ServerConfig | None, list[ConfigWarning]]:
    return parse_server("srv", raw, file=FILE, source="global", settings=settings or Settings())


def ok(raw: object) -> ServerConfig:
    server, warnings = parse(raw)
    assert server is not None, warnings
    assert warnings == []
    return server


# ---- aliases -----------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["type", "transport"])
@pytest.mark.parametrize(
    ("value", "expected"),
    [("stdio", "stdio"), ("streamable-http", "streamable-http"), ("http", "streamable-http"), ("sse", "sse")],
)
def test_type_and_transport_are_aliases(key: str, value: str, expected: str) -> None:
    entry: dict[str, object] = {key: value}
    entry.update({"command": "x"} if expected == "stdio" else {"url": "https://h.test/mcp"})
    assert ok(entry).transport == expected


def test_url_only_is_streamable_http_and_command_only_is_stdio() -> None:
    assert ok({"url": "http://127.0.0.1:9/mcp"}).transport == "streamable-http"
    assert ok({"command": "srv"}).transport == "stdio"


def test_oauth_is_an_alias_of_auth_with_camel_and_snake_keys() -> None:
    camel = ok(
        {
            "url": "https://h.test/mcp",
            "oauth": {
                "type": "oauth",
                "clientId": "cid",
                "clientSecret": "sec",
                "clientName": "orbmcp test",
                "scopes": ["read", "write"],
                "redirectPort": 8765,
                "clientMetadataUrl": "https://client.test/meta.json",
                "allowMissingPkce": True,
                "tokenEndpointAuthMethod": "client_secret_post",
            },
        }
    )
    snake = ok(
        {
            "url": "https://h.test/mcp",
            "auth": {
                "client_id": "cid",
                "client_secret": "sec",
                "client_name": "orbmcp test",
                "scope": "read write",
                "callback_port": 8765,
                "client_metadata_url": "https://client.test/meta.json",
                "allow_missing_pkce": True,
                "token_endpoint_auth_method": "client_secret_post",
            },
        }
    )
    expected = AuthConfig(
        client_id="cid",
        client_secret="sec",
        client_name="orbmcp test",
        scope="read write",
        redirect_port=8765,
        client_metadata_url="https://client.test/meta.json",
        allow_missing_pkce_advertisement=True,
        token_endpoint_auth_method="client_secret_post",
    )
    assert camel.auth == expected
    assert snake.auth == expected
    assert ok({"url": "https://h.test", "auth": {"type": "oauth"}}).auth == AuthConfig()


def test_timeout_seconds_is_request_timeout_ms() -> None:
    assert ok({"command": "x", "timeout": 45}).request_timeout_ms == 45000
    assert ok({"command": "x", "timeout": 0.5}).request_timeout_ms == 500
    assert ok({"command": "x", "requestTimeoutMs": 1234}).request_timeout_ms == 1234
    server, warnings = parse({"command": "x", "timeout": 9, "requestTimeoutMs": 1234})
    assert server is not None and server.request_timeout_ms == 1234
    assert any('"timeout"' in w.message for w in warnings)


@pytest.mark.parametrize("off", [{"enabled": False}, {"disabled": True}, {"enabled": True, "disabled": True}])
def test_enabled_false_and_disabled_true_keep_the_server_off_and_lazy(off: dict[str, object]) -> None:
    server = ok({"command": "x", "lifecycle": "eager", **off})
    assert (server.enabled, server.lifecycle, server.eager) == (False, "lazy", False)


def test_enabled_true_and_disabled_false_are_on() -> None:
    server = ok({"command": "x", "enabled": True, "disabled": False})
    assert (server.enabled, server.lifecycle) == (True, "eager")


def test_compatibility_keys_are_ignored_silently() -> None:
    server = ok({"command": "x", "exposure": "all", "toolExposure": {"a": 1}, "description": "y"})
    assert server.command == "x"


def test_an_unknown_key_warns_and_suggests_only_a_close_match() -> None:
    server, warnings = parse({"command": "x", "lifecycel": "lazy", "futureKey": []})
    assert server is not None and server.lifecycle == "eager"
    assert [(w.message, w.reason) for w in warnings] == [
        ("unknown key 'lifecycel' — did you mean 'lifecycle'? (ignored)", "unknown_key"),
        ("unknown key 'futureKey' ignored", "unknown_key"),
    ]


def test_an_entry_invalid_for_a_misspelled_key_says_which_key_it_meant() -> None:
    server, warnings = parse({"comand": "x"})
    assert server is None
    fatal = [w for w in warnings if w.skipped]
    assert len(fatal) == 1 and fatal[0].reason == "invalid_entry"
    assert fatal[0].fix == "'comand' — did you mean 'command'?"


def test_defaults_come_from_settings() -> None:
    settings = Settings(request_timeout_ms=1111, max_retries=2)
    server, _ = parse({"command": "x"}, settings=settings)
    assert server is not None
    assert (server.timeout_ms, server.request_timeout_ms, server.max_retries) == (10000, 1111, 2)


@pytest.mark.parametrize(("value", "expected"), [(0, 0), (-3, 0), (7, 7), (1e1, 10)])
def test_max_retries_zero_or_negative_disables(value: float, expected: int) -> None:
    assert ok({"url": "https://h.test", "maxRetries": value}).max_retries == expected


def test_max_retries_above_ten_is_clamped_with_a_warning() -> None:
    server, warnings = parse({"url": "https://h.test", "maxRetries": 50})
    assert server is not None and server.max_retries == 10
    assert len(warnings) == 1 and '"maxRetries"' in warnings[0].message


def test_health_check_interval() -> None:
    assert ok({"command": "x", "healthCheckIntervalMs": 15000}).health_check_interval_ms == 15000
    assert ok({"command": "x", "healthCheckIntervalMs": 0}).health_check_interval_ms is None


# ---- bad entries: skipped, one warning naming file, server and key ----------------------------

BAD_ENTRIES: list[tuple[str, object, str]] = [
    ("not an object", "npx foo", "must be an object"),
    ("null entry", None, "must be an object"),
    ("no transport", {"args": ["a"]}, '"command"'),
    ("both command and url", {"command": "x", "url": "https://h.test"}, "choose one transport"),
    ("stdio without command", {"transport": "stdio", "url": "https://h.test"}, '"command"'),
    ("http without url", {"type": "http", "command": "x"}, '"url"'),
    ("sse without url", {"transport": "sse", "command": "x"}, '"url"'),
    ("unknown transport", {"transport": "websocket", "url": "wss://h.test"}, '"transport"'),
    ("type and transport disagree", {"type": "sse", "transport": "stdio", "command": "x"}, '"transport"'),
    ("command not a string", {"command": ["npx"]}, '"command"'),
    ("empty command", {"command": "  "}, '"command"'),
    ("url not a string", {"url": 5}, '"url"'),
    ("url scheme", {"url": "file:///etc/passwd"}, '"url"'),
    ("url without host", {"url": "https://"}, '"url"'),
    ("args not a list", {"command": "x", "args": "--stdio"}, '"args"'),
    ("args item not a string", {"command": "x", "args": ["--port", 8080]}, '"args[1]"'),
    ("env not an object", {"command": "x", "env": ["A=1"]}, '"env"'),
    ("env value not a string", {"command": "x", "env": {"PORT": 8080}}, '"env.PORT"'),
    ("env value bool", {"command": "x", "env": {"DEBUG": True}}, '"env.DEBUG"'),
    ("env name with =", {"command": "x", "env": {"A=B": "1"}}, '"env.A=B"'),
    ("cwd not a string", {"command": "x", "cwd": 1}, '"cwd"'),
    ("headers not an object", {"url": "https://h.test", "headers": "Authorization: x"}, '"headers"'),
    (
        "header value not a string",
        {"url": "https://h.test", "headers": {"X-Retries": 3}},
        '"headers.X-Retries"',
    ),
    ("header name invalid", {"url": "https://h.test", "headers": {"Bad Name": "v"}}, '"headers.Bad Name"'),
    ("header value injection", {"url": "https://h.test", "headers": {"X-A": "v\r\nX-B: w"}}, '"headers.X-A"'),
    ("lifecycle value", {"command": "x", "lifecycle": "keep-alive"}, '"lifecycle"'),
    ("enabled not a bool", {"command": "x", "enabled": "no"}, '"enabled"'),
    ("disabled not a bool", {"command": "x", "disabled": 1}, '"disabled"'),
    ("timeoutMs zero", {"command": "x", "timeoutMs": 0}, '"timeoutMs"'),
    ("timeoutMs string", {"command": "x", "timeoutMs": "10s"}, '"timeoutMs"'),
    ("timeoutMs fraction", {"command": "x", "timeoutMs": 1.5}, '"timeoutMs"'),
    ("requestTimeoutMs negative", {"command": "x", "requestTimeoutMs": -1}, '"requestTimeoutMs"'),
    ("timeout not a number", {"command": "x", "timeout": "30"}, '"timeout"'),
    ("maxRetries bool", {"command": "x", "maxRetries": True}, '"maxRetries"'),
    ("healthCheckIntervalMs", {"command": "x", "healthCheckIntervalMs": -5}, '"healthCheckIntervalMs"'),
    ("auth.provider", {"url": "https://h.test", "auth": {"provider": "anthropic"}}, '"auth.provider"'),
    (
        "oauth.provider",
        {"url": "https://h.test", "oauth": {"type": "oauth", "provider": "x"}},
        '"oauth.provider"',
    ),
    ("auth.provider on stdio", {"command": "x", "auth": {"provider": "x"}}, '"auth.provider"'),
    ("auth not an object", {"url": "https://h.test", "auth": "oauth"}, '"auth"'),
    ("auth type", {"url": "https://h.test", "auth": {"type": "bearer"}}, '"auth.type"'),
    ("auth port", {"url": "https://h.test", "auth": {"redirectPort": 70000}}, '"auth.redirectPort"'),
    ("auth scope", {"url": "https://h.test", "auth": {"scope": 5}}, '"auth.scope"'),
    (
        "auth metadata url",
        {"url": "https://h.test", "auth": {"clientMetadataUrl": "http://c.test/m"}},
        "clientMetadataUrl",
    ),
    (
        "auth method",
        {"url": "https://h.test", "auth": {"tokenEndpointAuthMethod": "magic"}},
        "tokenEndpointAuthMethod",
    ),
    ("auth pkce flag", {"url": "https://h.test", "auth": {"allowMissingPkce": "yes"}}, "allowMissingPkce"),
    ("auth client id", {"url": "https://h.test", "auth": {"clientId": 42}}, '"auth.clientId"'),
]


@pytest.mark.parametrize(("kind", "entry", "key"), BAD_ENTRIES, ids=[b[0] for b in BAD_ENTRIES])
def test_bad_entry_is_skipped_with_one_warning_naming_file_server_and_key(
    tmp_path: Path, kind: str, entry: object, key: str
) -> None:
    layout = Layout(tmp_path)
    path = layout.global_file("mcp.json", {"mcpServers": {"good": {"command": "ok"}, "bad": entry}})
    config = layout.load()

    assert list(config.servers) == ["good"], kind  # the valid one still loads
    assert len(config.warnings) == 1, config.warnings
    warning = config.warnings[0]
    assert (warning.file, warning.server) == (str(path), "bad")
    assert key in warning.message
    assert "skipped" in warning.message
    assert str(path) in str(warning) and "'bad'" in str(warning)


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1:8080/mcp", "https://user:pw@h.test/x?y#z", "HTTPS://H.TEST", "http://[::1]:9/mcp"],
)
def test_valid_urls(url: str) -> None:
    assert ok({"url": url}).url == url


@pytest.mark.parametrize(
    "url",
    [
        "h.test/mcp",
        "https://",
        "https://user@",
        "https://:80/x",
        "ws://h.test",
        "http://[::1/x",
        "https://h .test",
    ],
)
def test_invalid_urls(url: str) -> None:
    server, warnings = parse({"url": url})
    assert server is None and '"url"' in warnings[0].message


def test_empty_server_name_is_invalid() -> None:
    server, warnings = parse_server(" ", {"command": "x"}, file=FILE, source="global", settings=Settings())
    assert server is None and "name" in warnings[0].message


IGNORED_KEYS: list[tuple[dict[str, object], str]] = [
    ({"command": "x", "headers": {"A": "b"}}, '"headers"'),
    ({"url": "https://h.test", "args": ["a"]}, '"args"'),
    ({"url": "https://h.test", "env": {"A": "b"}}, '"env"'),
    ({"url": "https://h.test", "cwd": "."}, '"cwd"'),
    ({"command": "x", "auth": {"type": "oauth"}}, '"auth"'),
    ({"url": "https://h.test", "auth": {}, "oauth": {}}, '"auth"'),
]


@pytest.mark.parametrize(("entry", "key"), IGNORED_KEYS)
def test_keys_of_the_other_transport_are_ignored_with_a_warning(entry: dict[str, object], key: str) -> None:
    server, warnings = parse(entry)
    assert server is not None
    assert len(warnings) == 1 and key in warnings[0].message and "ignored" in warnings[0].message
    assert server.headers == {} if server.is_stdio else server.args == ()


def test_several_problems_in_one_entry_give_one_warning() -> None:
    server, warnings = parse({"command": 1, "args": "x", "timeoutMs": -1})
    assert server is None
    assert len(warnings) == 1
    assert all(k in warnings[0].message for k in ('"command"', '"args"', '"timeoutMs"'))


def test_project_entry_trust_keys_are_ignored_with_a_warning() -> None:
    server, warnings = parse_server(
        "srv", {"command": "x", "autoApprove": ["*"]}, file=FILE, source="project", settings=Settings()
    )
    assert server is not None
    assert len(warnings) == 1 and '"autoApprove"' in warnings[0].message
    assert warnings[0].reason == "trust_key"


def test_warning_reasons_tell_skipped_entries_from_ignored_keys() -> None:
    _, skipped = parse({"command": "x", "cwd": 3})
    _, ignored = parse({"command": "x", "headers": {"A": "b"}})
    assert [w.reason for w in skipped] == ["invalid_entry"]
    assert [w.reason for w in ignored] == ["ignored_key"]
    assert ConfigWarning("same text", FILE, "srv", "a") == ConfigWarning("same text", FILE, "srv", "b")


# ---- mcpServers block, settings, partial overrides ---------------------------------------------


@pytest.mark.parametrize("value", [[], "x", 3, None, True])
def test_malformed_mcp_servers_is_an_error_for_the_file(value: object) -> None:
    with pytest.raises(ConfigError) as caught:
        servers_block({"mcpServers": value}, file=FILE)
    assert FILE in str(caught.value) and "mcpServers" in str(caught.value)
    assert (caught.value.code, caught.value.reason) == ("config", "not_an_object")


def test_absent_mcp_servers_is_empty() -> None:
    assert servers_block({"settings": {}}, file=FILE) == {}


def test_settings_state_only_valid_keys() -> None:
    stated, warnings = parse_settings(
        {"settings": {"toolPrefix": "orb", "requestTimeoutMs": 500, "maxRetries": 0}}, file=FILE
    )
    assert stated == {"tool_prefix": "orb", "request_timeout_ms": 500, "max_retries": 0}
    assert warnings == []
    assert parse_settings({}, file=FILE) == ({}, [])


@pytest.mark.parametrize(
    ("settings", "key"),
    [
        ({"maxRetries": 11}, "maxRetries"),
        ({"maxRetries": -1}, "maxRetries"),
        ({"requestTimeoutMs": 0}, "requestTimeoutMs"),
        ({"toolPrefix": "has space"}, "toolPrefix"),
        ({"toolPrefix": ""}, "toolPrefix"),
    ],
)
def test_out_of_range_settings_are_ignored_with_a_warning(settings: dict[str, object], key: str) -> None:
    stated, warnings = parse_settings({"settings": settings}, file=FILE)
    assert stated == {}
    assert len(warnings) == 1 and f'"settings.{key}"' in warnings[0].message and warnings[0].file == FILE
    assert warnings[0].reason == "invalid_setting"


def test_settings_not_an_object_and_go_extensions() -> None:
    stated, warnings = parse_settings({"settings": [], "goExtensions": {"mcp": False}}, file=FILE)
    assert stated == {"extension_enabled": False}
    assert len(warnings) == 1 and '"settings"' in warnings[0].message
    _, warnings = parse_settings({"goExtensions": {"mcp": "off"}}, file=FILE)
    assert '"goExtensions.mcp"' in warnings[0].message


def test_partial_override_accepts_only_its_keys() -> None:
    kept, warnings = parse_override(
        "srv", {"enabled": False, "lifecycle": "lazy", "exposure": "x", "toolExposure": "y"}, file=FILE
    )
    assert kept is not None and warnings == []
    bad, warnings = parse_override("srv", {"enabled": False, "args": ["--evil"]}, file=FILE)
    assert bad is None and '"args"' in warnings[0].message and warnings[0].server == "srv"
    bad, warnings = parse_override("srv", {"lifecycle": "sometimes"}, file=FILE)
    assert bad is None and '"lifecycle"' in warnings[0].message


def test_override_on_off_replaces_both_spellings() -> None:
    base = {"command": "x", "disabled": True, "lifecycle": "eager"}
    merged = apply_override(base, {"enabled": True})
    assert merged == {"command": "x", "enabled": True, "lifecycle": "eager"}
    server, _ = parse(merged)
    assert server is not None and (server.enabled, server.lifecycle) == (True, "eager")


# ---- finalize: expansion and cwd ------------------------------------------------------------------


def test_finalize_expands_only_the_allowed_fields(tmp_path: Path) -> None:
    server = ok(
        {
            "command": "${BIN}",
            "args": ["--token=${env:TOKEN}", "$${LITERAL}"],
            "env": {"KEY": "${TOKEN}", "${NAME}": "v"},
            "cwd": "${SUB:-work}/dir",
        }
    )
    env = {"BIN": "/bin/srv", "TOKEN": "t0k", "NAME": "never"}
    final, warnings = finalize(server, environ=env, cwd=tmp_path)
    assert warnings == [] and final is not None
    assert final.command == "/bin/srv"
    assert final.args == ("--token=t0k", "${LITERAL}")
    assert dict(final.env) == {"KEY": "t0k", "${NAME}": "v"}  # names are not expanded
    assert final.cwd == str(tmp_path / "work" / "dir")

    http = ok({"url": "https://${HOST}/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}})
    final, _ = finalize(http, environ={"HOST": "h.test", "TOKEN": "t0k"}, cwd=tmp_path)
    assert final is not None
    assert (final.url, dict(final.headers)) == ("https://h.test/mcp", {"Authorization": "Bearer t0k"})


def test_finalize_missing_variable_names_it_and_skips_the_entry(tmp_path: Path) -> None:
    server = ok({"url": "https://h.test/mcp", "headers": {"Authorization": "Bearer ${API_KEY}"}})
    final, warnings = finalize(server, environ={}, cwd=tmp_path)
    assert final is None
    assert len(warnings) == 1
    assert "API_KEY" in warnings[0].message and "headers.Authorization" in warnings[0].message
    assert warnings[0].reason == "env_missing"
    assert (warnings[0].file, warnings[0].server) == (FILE, "srv")


def test_finalize_checks_the_expanded_url_and_headers(tmp_path: Path) -> None:
    server = ok({"url": "${URL}"})
    final, warnings = finalize(server, environ={"URL": "ftp://h.test"}, cwd=tmp_path)
    assert final is None and '"url"' in warnings[0].message
    server = ok({"url": "https://h.test", "headers": {"X": "${V}"}})
    final, warnings = finalize(server, environ={"V": "a\nb"}, cwd=tmp_path)
    assert final is None and "headers.X" in warnings[0].message


def test_finalize_home_in_cwd(tmp_path: Path) -> None:
    server = ok({"command": "x", "cwd": "~/code"})
    final, _ = finalize(server, environ={"HOME": str(tmp_path)}, cwd=Path("/"))
    assert final is not None and final.cwd == str(tmp_path / "code")


def test_definition_hash_binds_what_runs() -> None:
    base = ok({"command": "x", "args": ["a"], "lifecycle": "lazy"})
    same = ok({"command": "x", "args": ["a"], "lifecycle": "eager", "timeoutMs": 5})
    other = ok({"command": "x", "args": ["b"]})
    assert base.definition_hash() == same.definition_hash() != other.definition_hash()
