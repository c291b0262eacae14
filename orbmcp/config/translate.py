"""Other clients' server entries, translated into orbmcp entries (the field table is in the README).

Each client has its own spelling: VS Code keeps servers under ``servers``, OpenCode puts the whole
command line in one array and says ``local``/``remote``, Codex writes TOML tables, Gemini calls a
Streamable HTTP URL ``httpUrl`` and an SSE one ``url``, Windsurf says ``serverUrl``. And each has its
own variables: ``${env:X}`` (Cursor, VS Code, Windsurf), ``$X`` (Gemini), ``{env:X}`` (OpenCode),
none at all (Claude Desktop, Codex). Translation makes every value mean here what it meant there:
a ``$`` the client would pass on literally becomes orbmcp's ``$$``. Unknown fields are dropped; a
field orbmcp cannot honour (a VS Code ``${input:...}`` prompt, an ``envFile``) is a problem: the
entry is skipped, or kept with a warning when only something secondary is lost (tool filters).

The result is a plain orbmcp entry; ``schema.parse_server`` then checks it like any other.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from orbmcp.config.clients import ClientFile
from orbmcp.config.entry_values import scaled_duration_ms
from orbmcp.config.jsonc import type_name
from orbmcp.config.transports import SSE, STREAMABLE_HTTP, from_spelling

MAX_SERVERS_PER_FILE = 500

_EDITOR_VARIABLE = re.compile(r"\$\{(workspaceFolder|workspaceFolderBasename|userHome|pathSeparator|/)\}")
_INPUT_VARIABLE = re.compile(r"\$\{input:([^}]*)\}")
_GEMINI_TOKEN = re.compile(r"\$\$|\$\{[^}]*\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_OPENCODE_TOKEN = re.compile(r"\{(env|file):([^}]*)\}")


class Untranslatable(ValueError):
    """The entry cannot mean here what it means in its client; the message says why."""


class Malformed(ValueError):
    """The file cannot be read as that client's config; the message says why."""


@dataclass(frozen=True)
class Imported:
    """One server of another client's file: the orbmcp entry it becomes (None: skipped, and
    ``problems`` say why) and what was dropped on the way (``problems`` of a kept entry)."""

    name: str
    entry: dict[str, object] | None
    raw: object
    problems: tuple[str, ...] = ()


@dataclass
class _Context:
    """What translating one file needs: its client, the project, and the problems found."""

    file: ClientFile
    project_dir: Path
    home: Path
    problems: list[str] = field(default_factory=list)


# ---- the servers block of each format -------------------------------------------------------------


def servers_of(file: ClientFile, document: Mapping[str, object], project_dir: Path) -> Mapping[str, object]:
    """The name -> entry mapping a document holds in its client's format; raises Malformed when
    the block exists but is not an object."""
    fmt = file.format
    if fmt == "codex":
        return _block(document, "mcp_servers")
    if fmt == "vscode":
        return _block(document, "servers")
    if fmt == "vscode-settings":
        mcp = document.get("mcp")
        if isinstance(mcp, dict) and "servers" in mcp:
            return _block(mcp, "servers", "mcp.servers")
        return _block(document, "mcp.servers")
    if fmt == "opencode":
        block = _block(document, "mcp")
        inner = block.get("servers")
        # OpenCode 2 nests the servers one level deeper ("mcp": {"servers": {...}}).
        if isinstance(inner, dict) and not ({"type", "command", "url"} & inner.keys()):
            return _block(block, "servers", "mcp.servers")
        return block
    if fmt == "claude-local":
        projects = document.get("projects")
        if not isinstance(projects, dict):
            return {}
        for key in dict.fromkeys((str(project_dir), os.path.realpath(project_dir))):
            entry = projects.get(key)
            if isinstance(entry, dict):
                return _block(entry, "mcpServers", f"projects[{key!r}].mcpServers")
        return {}
    return _block(document, "mcpServers")


def _block(document: Mapping[str, object], key: str, where: str | None = None) -> Mapping[str, object]:
    value = document.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise Malformed(
            f'"{where or key}" must be an object mapping server names to entries, not {type_name(value)}'
        )
    return cast("dict[str, object]", value)


def translate_file(
    file: ClientFile, document: Mapping[str, object], *, project_dir: Path, home: Path
) -> list[Imported]:
    """Every server of ``document`` translated; raises Malformed when the servers block is malformed."""
    block = servers_of(file, document, project_dir)
    inputs = _vscode_inputs(document) if file.format in ("vscode", "vscode-settings") else frozenset()
    out: list[Imported] = []
    for name, raw in list(block.items())[:MAX_SERVERS_PER_FILE]:
        ctx = _Context(file, project_dir, home)
        try:
            entry = _translate(ctx, raw, inputs)
        except Untranslatable as exc:
            out.append(Imported(name, None, raw, (str(exc),)))
            continue
        out.append(Imported(name, entry, raw, tuple(ctx.problems)))
    return out


def _translate(ctx: _Context, raw: object, inputs: frozenset[str]) -> dict[str, object]:
    if not isinstance(raw, dict):
        raise Untranslatable(f"the entry must be an object, not {type_name(raw)}")
    return _TRANSLATORS[ctx.file.client](ctx, cast("dict[str, object]", raw), inputs)


def _vscode_inputs(document: Mapping[str, object]) -> frozenset[str]:
    inputs = document.get("inputs")
    if not isinstance(inputs, list):
        mcp = document.get("mcp")
        inputs = mcp.get("inputs") if isinstance(mcp, dict) else None
    if not isinstance(inputs, list):
        return frozenset()
    return frozenset(str(i["id"]) for i in inputs if isinstance(i, dict) and "id" in i)


# ---- variables ------------------------------------------------------------------------------------


def _literal(text: str) -> str:
    """A value the client passes on as it is: orbmcp must not expand anything in it."""
    return text.replace("$", "$$")


def _editor_variables(ctx: _Context, text: str, inputs: frozenset[str]) -> str:
    """Cursor/VS Code/Windsurf values: ``${env:X}`` stays (orbmcp reads it the same way); the
    editor's own variables become their values; ``${input:ID}`` cannot be answered here."""
    prompt = _INPUT_VARIABLE.search(text)
    if prompt is not None:
        known = "an input" if prompt.group(1) in inputs else "an undeclared input"
        raise Untranslatable(
            f"uses ${{input:{prompt.group(1)}}} ({known} VS Code asks the person for), which orbmcp "
            "cannot ask: put the value in an environment variable and write ${env:NAME}"
        )
    if "${file:" in text:
        raise Untranslatable("uses ${file:...}, which orbmcp does not read: use ${env:NAME}")
    values = {
        "workspaceFolder": str(ctx.project_dir),
        "workspaceFolderBasename": ctx.project_dir.name,
        "userHome": str(ctx.home),
        "pathSeparator": os.sep,
        "/": os.sep,
    }
    return _EDITOR_VARIABLE.sub(lambda m: _literal(values[m.group(1)]), text)


def _gemini_variables(text: str) -> str:
    """Gemini reads ``$X`` as well as ``${X}``; orbmcp only the second."""
    return _GEMINI_TOKEN.sub(lambda m: "${" + m.group(1) + "}" if m.group(1) else m.group(0), text)


def _opencode_variables(text: str) -> str:
    """OpenCode substitutes ``{env:X}`` (and ``{file:path}``); any ``$`` is literal there."""

    def one(m: re.Match[str]) -> str:
        if m.group(1) == "file":
            raise Untranslatable("uses {file:...}, which orbmcp does not read: use {env:NAME}")
        return "${" + m.group(2) + "}"

    return _OPENCODE_TOKEN.sub(one, _literal(text))


def _map_strings(value: object, convert: Callable[[str], str]) -> object:
    """``convert`` applied to a string, the strings of a list, or the values of an object."""
    if isinstance(value, str):
        return convert(value)
    if isinstance(value, list):
        return [convert(v) if isinstance(v, str) else v for v in value]
    if isinstance(value, dict):
        return {k: convert(v) if isinstance(v, str) else v for k, v in value.items()}
    return value


_VALUE_KEYS = ("command", "args", "env", "cwd", "url", "headers")


def _with_variables(entry: dict[str, object], convert: Callable[[str], str]) -> dict[str, object]:
    return {k: _map_strings(v, convert) if k in _VALUE_KEYS else v for k, v in entry.items()}


# ---- per client -----------------------------------------------------------------------------------


def _copy(raw: Mapping[str, object], *keys: str) -> dict[str, object]:
    return {k: raw[k] for k in keys if k in raw}


def _transport(raw: Mapping[str, object], key: str = "type") -> dict[str, object]:
    value = raw.get(key)
    if value is None:
        return {}
    kind = from_spelling(value) if isinstance(value, str) else None
    # An unknown spelling goes through as it is: orbmcp's own check names it.
    return {"transport": kind.name if kind is not None else value}


def _tool_filters(ctx: _Context, raw: Mapping[str, object], *keys: str) -> None:
    stated = [k for k in keys if raw.get(k)]
    if stated:
        ctx.problems.append(
            f"{' and '.join(stated)} ignored: orbmcp has no per-server tool filter, so every tool of "
            "this server is active"
        )


def _duration(raw: Mapping[str, object], key: str, unit_ms: int) -> int:
    """A client's duration in milliseconds, through the range check orbmcp's own keys pass (so
    ``inf`` or ``1e308`` skips the entry, naming the client's key, instead of overflowing)."""
    from pydantic_core import PydanticCustomError

    try:
        return scaled_duration_ms(key, raw[key], unit_ms=unit_ms)
    except PydanticCustomError as exc:
        raise Untranslatable(exc.message()) from None


def _env_file(raw: Mapping[str, object]) -> None:
    if raw.get("envFile"):
        raise Untranslatable('uses "envFile", which orbmcp does not read: move the variables into "env"')


def _claude_code(ctx: _Context, raw: dict[str, object], inputs: frozenset[str]) -> dict[str, object]:
    entry = _copy(raw, "command", "args", "env", "url", "headers") | _transport(raw)
    oauth = raw.get("oauth")
    if isinstance(oauth, dict):
        auth: dict[str, object] = {"type": "oauth", **_copy(oauth, "clientId")}
        if "callbackPort" in oauth:
            auth["redirectPort"] = oauth["callbackPort"]
        entry["auth"] = auth
    return entry  # ${VAR} and ${VAR:-default}: the same syntax as orbmcp's


def _claude_desktop(ctx: _Context, raw: dict[str, object], inputs: frozenset[str]) -> dict[str, object]:
    entry = _copy(raw, "command", "args", "env", "url", "headers") | _transport(raw)
    return _with_variables(entry, _literal)


def _cursor(ctx: _Context, raw: dict[str, object], inputs: frozenset[str]) -> dict[str, object]:
    _env_file(raw)
    entry = _copy(raw, "command", "args", "env", "cwd", "url", "headers") | _transport(raw)
    if raw.get("disabled") is True or raw.get("enabled") is False:
        entry["enabled"] = False
    return _with_variables(entry, lambda text: _editor_variables(ctx, text, inputs))


def _vscode(ctx: _Context, raw: dict[str, object], inputs: frozenset[str]) -> dict[str, object]:
    return _cursor(ctx, raw, inputs)


def _windsurf(ctx: _Context, raw: dict[str, object], inputs: frozenset[str]) -> dict[str, object]:
    entry = _copy(raw, "command", "args", "env", "headers") | _transport(raw)
    url = raw.get("serverUrl", raw.get("url"))
    if url is not None:
        entry["url"] = url
    if raw.get("disabled") is True:
        entry["enabled"] = False
    _tool_filters(ctx, raw, "disabledTools")
    return _with_variables(entry, lambda text: _editor_variables(ctx, text, inputs))


def _codex(ctx: _Context, raw: dict[str, object], inputs: frozenset[str]) -> dict[str, object]:
    entry = _with_variables(_copy(raw, "command", "args", "env", "cwd", "url"), _literal)
    stated = raw.get("http_headers")
    headers: dict[str, object] = {}
    if isinstance(stated, dict):
        headers = {k: _literal(v) if isinstance(v, str) else v for k, v in stated.items()}
    env_headers = raw.get("env_http_headers")
    if isinstance(env_headers, dict):
        headers |= {name: "${" + str(var) + "}" for name, var in env_headers.items()}
    token_var = raw.get("bearer_token_env_var")
    if isinstance(token_var, str) and token_var:
        headers["Authorization"] = "Bearer ${" + token_var + "}"
    if headers:
        entry["headers"] = headers
    for key, target, unit_ms in (
        ("startup_timeout_sec", "timeoutMs", 1000),
        ("startup_timeout_ms", "timeoutMs", 1),
        ("tool_timeout_sec", "requestTimeoutMs", 1000),
    ):
        if key in raw:
            entry[target] = _duration(raw, key, unit_ms)
    if raw.get("enabled") is False:
        entry["enabled"] = False
    _tool_filters(ctx, raw, "enabled_tools", "disabled_tools")
    return entry


def _gemini(ctx: _Context, raw: dict[str, object], inputs: frozenset[str]) -> dict[str, object]:
    entry = _copy(raw, "command", "args", "env", "cwd", "headers")
    if "httpUrl" in raw:
        entry |= {"url": raw["httpUrl"], "transport": STREAMABLE_HTTP.name}
    elif "url" in raw:
        entry |= {"url": raw["url"], "transport": SSE.name}  # Gemini's "url" is an SSE endpoint
    if "timeout" in raw:
        entry["requestTimeoutMs"] = _duration(raw, "timeout", 1)  # milliseconds there too
    oauth = raw.get("oauth")
    if isinstance(oauth, dict) and oauth.get("enabled") is not False:
        auth: dict[str, object] = {"type": "oauth", **_copy(oauth, "clientId", "clientSecret")}
        scopes = oauth.get("scopes")
        if isinstance(scopes, list) and all(isinstance(s, str) for s in scopes):
            auth["scope"] = " ".join(scopes)
        entry["auth"] = auth
    if raw.get("authProviderType") not in (None, "dynamic_discovery"):
        ctx.problems.append(f'"authProviderType" {raw["authProviderType"]!r} ignored: orbmcp uses OAuth 2.1')
    _tool_filters(ctx, raw, "includeTools", "excludeTools")
    return _with_variables(entry, _gemini_variables)


def _opencode(ctx: _Context, raw: dict[str, object], inputs: frozenset[str]) -> dict[str, object]:
    kind = raw.get("type")
    entry: dict[str, object]
    if kind == "local":
        command = raw.get("command")
        if not isinstance(command, list) or not command or not all(isinstance(c, str) for c in command):
            raise Untranslatable('"command" must be a non-empty array of strings (program and arguments)')
        entry = {"command": command[0], "args": command[1:], **_copy(raw, "environment")}
        if "environment" in entry:
            entry["env"] = entry.pop("environment")
    elif kind == "remote":
        entry = _copy(raw, "url", "headers")
        oauth = raw.get("oauth")
        if isinstance(oauth, dict):
            entry["auth"] = {"type": "oauth", **_copy(oauth, "clientId", "clientSecret", "scope")}
    else:
        raise Untranslatable(f'"type" must be "local" or "remote" (got {kind!r})')
    if raw.get("enabled") is False or raw.get("disabled") is True:
        entry["enabled"] = False
    if "timeout" in raw:
        entry["timeoutMs"] = _duration(raw, "timeout", 1)  # OpenCode: milliseconds to connect and list tools
    return _with_variables(entry, _opencode_variables)


def _pi(ctx: _Context, raw: dict[str, object], inputs: frozenset[str]) -> dict[str, object]:
    return dict(raw)  # pi-mcp-extension's entries are orbmcp's (both grew from the same design)


_TRANSLATORS: Mapping[str, Callable[[_Context, dict[str, object], frozenset[str]], dict[str, object]]] = {
    "claude-code": _claude_code,
    "claude-desktop": _claude_desktop,
    "cursor": _cursor,
    "vscode": _vscode,
    "windsurf": _windsurf,
    "codex": _codex,
    "gemini": _gemini,
    "opencode": _opencode,
    "pi": _pi,
}
