"""Fuzzing as tests: every parser of untrusted or typed input fails only the way it documents.

Bounded (a few hundred examples each) and deterministic (derandomized: CI runs the same examples
every time). Each target and its one allowed failure:

- the config reader (``parse_jsonc``, ``load_config`` on any document): ``ConfigError``;
- ``${VAR}`` expansion: ``ExpansionError``; finalizing an entry never raises;
- slash and shell lines: ``UsageError``;
- ``k=v`` arguments against any schema: ``UsageError``;
- the redactor: never raises, idempotent, never leaks a planted secret;
- the sanitiser: no C0, C1, bidi or invisible character survives (``tests/test_text.py``).
"""

from __future__ import annotations

import json
import math
import re
import string
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from orbmcp.commands.arguments import parse_call_arguments
from orbmcp.config.expand import ExpansionError, expand, finalize, referenced_variables
from orbmcp.config.jsonc import parse_jsonc
from orbmcp.config.loader import load_config
from orbmcp.config.model import ServerConfig
from orbmcp.errors import ConfigError, UsageError
from orbmcp.redact import redact
from orbmcp.session.slash import parse_shell, parse_slash

FUZZ = settings(max_examples=150, derandomize=True, suppress_health_check=[HealthCheck.too_slow])

# -- the config reader ------------------------------------------------------------------------------

JSON_TEXT = st.text(alphabet=st.sampled_from("{}[]\",:0123456789.eE-+ \n\t/*\\'abcnul$"), max_size=200)
NUMBERS = st.sampled_from([0, -1, 1, 2**63, 10**400, 1e308, -1e308, 0.5, 1e-320]) | st.floats(allow_nan=False)
SCALARS = st.none() | st.booleans() | NUMBERS | st.text(max_size=20)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=20,
)
ENTRY_KEYS = st.sampled_from(
    [
        "command", "args", "env", "cwd", "url", "headers", "type", "transport", "lifecycle", "enabled",
        "disabled", "timeoutMs", "requestTimeoutMs", "timeout", "maxRetries", "healthCheckIntervalMs",
        "auth", "oauth", "exposure",
    ]
)  # fmt: skip
ENTRIES = st.dictionaries(ENTRY_KEYS, VALUES, max_size=6)
DOCUMENTS = st.fixed_dictionaries(
    {},
    optional={
        "mcpServers": st.dictionaries(st.text(max_size=10), ENTRIES | VALUES, max_size=4) | VALUES,
        "settings": st.dictionaries(
            st.sampled_from(["toolPrefix", "requestTimeoutMs", "maxRetries", "daemon", "tokenStore"]),
            VALUES,
            max_size=4,
        )
        | VALUES,
        "goExtensions": VALUES,
    },
)


@FUZZ
@given(JSON_TEXT)
def test_fuzz_parse_jsonc_raises_only_config_errors(text: str) -> None:
    try:
        parse_jsonc(text, file="fuzz.json")
    except ConfigError:
        pass


@FUZZ
@given(st.integers(min_value=1, max_value=5000), st.sampled_from(["[", "{", '{"a":']))
def test_fuzz_deep_nesting_is_a_config_error_never_a_crash(depth: int, opener: str) -> None:
    text = '{"x": ' + opener * depth
    try:
        parse_jsonc(text, file="deep.json")
    except ConfigError:
        pass


def _json_safe(value: object) -> object:
    """JSON5 spells infinity; JSON has no such number: keep the file writable as JSON5."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


@FUZZ
@given(DOCUMENTS)
def test_fuzz_load_config_raises_only_config_errors(
    tmp_path_factory: object, document: dict[str, object]
) -> None:
    root: Path = tmp_path_factory.mktemp("fuzz")  # type: ignore[attr-defined]
    path = root / "mcp.json"
    path.write_text(json.dumps(document, default=str), encoding="utf-8")
    try:
        config = load_config(config_file=path, cwd=root, global_dir=root / "agent", environ={"HOME": "/h"})
    except ConfigError:
        return
    for server in config.servers.values():
        assert 0 < server.timeout_ms <= 86_400_000 and 0 < server.request_timeout_ms <= 86_400_000


# -- ${VAR} expansion -----------------------------------------------------------------------------------

EXPANSION_TEXT = st.text(alphabet=st.sampled_from("${}:-env:AB_x0 $$"), max_size=40)


@FUZZ
@given(EXPANSION_TEXT, st.dictionaries(st.sampled_from(["A", "B", "x", "A_0"]), st.text(max_size=5)))
def test_fuzz_expansion_raises_only_expansion_errors(text: str, environ: dict[str, str]) -> None:
    try:
        expanded = expand(text, environ)
    except ExpansionError:
        assert isinstance(referenced_variables(text), tuple)
        return
    assert isinstance(expanded, str)
    assert all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) for name in referenced_variables(text))


@FUZZ
@given(st.lists(EXPANSION_TEXT, max_size=3), EXPANSION_TEXT)
def test_fuzz_finalize_never_raises(args: list[str], url: str) -> None:
    for server in (
        ServerConfig(
            name="s", transport="stdio", command="cmd", args=tuple(args), env={"K": url}, cwd=url or None
        ),
        ServerConfig(name="h", transport="streamable-http", url=f"https://x/{url}", headers={"H": url}),
    ):
        final, warnings = finalize(server, environ={"A": "a"}, cwd=Path("/"))
        assert (final is None) == bool(warnings)


# -- slash and shell lines -------------------------------------------------------------------------------

LINES = st.text(
    alphabet=st.sampled_from(string.ascii_letters[:8] + " /:-'\"\\=mcp" + "\x00\u202e"), max_size=40
)


@FUZZ
@given(LINES | st.sampled_from(["/mcp", "/mcp:start x", "/mcp reconnect", "/mcp:auth 'x --reset"]))
def test_fuzz_slash_lines_fail_only_with_usage_errors(line: str) -> None:
    try:
        parse_slash(line, servers=lambda: ["x", "github"])
    except UsageError:
        pass


@FUZZ
@given(LINES | st.sampled_from(["status", "call x y a=1", "orbmcp tools", "config show --json"]))
def test_fuzz_shell_lines_fail_only_with_usage_errors(line: str) -> None:
    try:
        parse_shell(line)
    except UsageError:
        pass


# -- k=v arguments -------------------------------------------------------------------------------------

TOKENS = st.lists(
    st.text(alphabet=st.sampled_from('ab.=:@-{}[]"1tnul,'), max_size=12)
    | st.sampled_from(["-", "a=1", "a:=[", "a.b=2", "a=@@x", "a:=null", "b=true"]),
    max_size=6,
)
SCHEMAS = st.none() | st.recursive(
    st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(["object", "string", "integer", "number", "boolean", "array", "null"])
            | st.lists(st.sampled_from(["string", "null", "integer"]), max_size=3),
            "enum": st.lists(SCALARS, max_size=3),
            "$ref": st.sampled_from(["#", "#/properties/a", "#/$defs/x", "http://x/y", "#/nope"]),
            "additionalProperties": st.booleans(),
            "required": st.lists(st.sampled_from(["a", "b", "c"]), max_size=3),
        },
    ),
    lambda inner: st.fixed_dictionaries(
        {"type": st.just("object")},
        optional={
            "properties": st.dictionaries(st.sampled_from(["a", "b", "a.b"]), inner, max_size=3),
            "anyOf": st.lists(inner, max_size=2),
            "$defs": st.dictionaries(st.just("x"), inner, max_size=1),
        },
    ),
    max_leaves=8,
)


@FUZZ
@given(TOKENS, SCHEMAS, st.none() | st.text(max_size=20))
def test_fuzz_call_arguments_fail_only_with_usage_errors(
    tokens: list[str], schema: dict[str, object] | None, stdin: str | None
) -> None:
    def no_files(path: str) -> str:
        raise OSError(2, "No such file or directory")

    try:
        parse_call_arguments(tokens, schema, stdin_text=stdin, read_file=no_files)
    except UsageError:
        pass


# -- the redactor ------------------------------------------------------------------------------------

SECRET = st.text(alphabet=string.ascii_letters + string.digits + "-_.", min_size=24, max_size=40).filter(
    lambda s: any(c.isdigit() for c in s) and any(c.isalpha() for c in s)
)
CARRIERS = st.sampled_from(
    [
        "Authorization: Bearer {s}",
        "authorization=Bearer {s}",
        '{{"access_token": "{s}"}}',
        '{{"refresh_token":"{s}"}}',
        "https://u:{s}@host.example/path",
        "https://host.example/cb?code={s}&state=ok",
        "client_secret={s}",
        "Cookie: session={s}",
        "x-api-key: {s}",
    ]
)
NOISE = st.text(alphabet=st.sampled_from(string.printable + "\u202e\x00é"), max_size=40)


@FUZZ
@given(NOISE, CARRIERS, SECRET, NOISE)
def test_fuzz_redact_never_leaks_a_planted_secret_and_is_idempotent(
    before: str, carrier: str, secret: str, after: str
) -> None:
    assume(secret not in before + after)  # the secret is planted once, in its carrier
    text = before + "\n" + carrier.format(s=secret) + "\n" + after
    once = redact(text)
    assert secret not in once
    assert redact(once) == once


@FUZZ
@given(st.text(max_size=200))
def test_fuzz_redact_never_raises_and_is_idempotent(text: str) -> None:
    once = redact(text)
    assert redact(once) == once
