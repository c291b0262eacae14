"""An ad-hoc server: one the person names on the command line instead of in a config file.

``--stdio "COMMAND ARGS"``, ``--http URL``, ``--sse URL`` or a bare ``http(s)://`` URL where a
server name goes make a synthetic entry, named from the command or host (``everything`` from
``npx -y @modelcontextprotocol/server-everything``) or by ``--name``; ``--env`` and ``--header``
go with it. The entry is checked like any other, and the command's configuration then holds that
one server: the same handlers, output, errors and exit codes as a configured server.

Only what the person typed runs: nothing here reads a project file, and a shared session (the
daemon, the REPL, an agent's host) refuses an ad-hoc target, so the session's servers stay the
ones its config names. The shell front rewrites the line before Typer binds it
(``place_server``): the server's name goes where a configured server's name would stand, so
``call --stdio CMD TOOL k=v`` binds as ``call NAME TOOL k=v``. The daemon's client tells an
ad-hoc line from the words alone (``fastpath/argv.py``, where ``is_url`` lives too); an
entry's models (pydantic) load only when a line names a server, so those imports stay inside
``take`` and ``entry``: every command line passes through ``place_server``, ``--help`` too.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping, MutableMapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from orbmcp.commands.params import ADHOC
from orbmcp.commands.spec import CommandSpec
from orbmcp.commands.table import find
from orbmcp.config.transports import BY_OPTION
from orbmcp.errors import UsageError
from orbmcp.fastpath.argv import ADHOC_OPTIONS, ProgramLine, is_url

if TYPE_CHECKING:
    from pathlib import Path

    from orbmcp.config.model import ServerConfig

__all__ = [
    "KEYS",
    "entry",
    "is_url",
    "name_for_command",
    "name_for_url",
    "place_server",
    "requested",
    "take",
    "taken_by",
]


def taken_by(spec: CommandSpec) -> bool:
    """Whether a command takes the shared ad-hoc params (``commands/params.py`` ``ADHOC``; ``serve``
    has its own)."""
    return ADHOC[0] in spec.params


# The handler keyword arguments of the shared ad-hoc params (commands/params.py: ADHOC).
KEYS = (*BY_OPTION, "env", "header", "adhoc_name")
# Launchers whose first plain argument names the server (npx PACKAGE, uvx PACKAGE, node FILE).
_LAUNCHERS = frozenset(
    {"npx", "bunx", "pnpx", "uvx", "pipx", "node", "deno", "bun", "uv", "python", "python3", "docker", "run"}
)
_AFFIXES = (
    ("mcp-server-", ""),
    ("server-", ""),
    ("mcp-", ""),
    ("", "-mcp-server"),
    ("", "-server"),
    ("", "-mcp"),
)
_GENERIC = frozenset({"index", "main", "server", "cli", "app", "__main__", "mcp"})
_BUILD_DIRS = frozenset({"dist", "build", "lib", "src", "bin", "out", ".", ".."})
_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts")
_NAME_CHARS = re.compile(r"[^A-Za-z0-9_.-]+")


# -- names -------------------------------------------------------------------------------------


def name_for_command(command: str) -> str:
    """``everything`` from ``npx -y @modelcontextprotocol/server-everything``, ``my_server`` from
    ``python -m my_server``, ``weather`` from ``node weather.js``."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    chosen = words[0] if words else ""
    if words and _basename(words[0]) in _LAUNCHERS:
        rest = words[1:]
        if "-m" in rest and rest.index("-m") + 1 < len(rest):  # python -m module
            chosen = rest[rest.index("-m") + 1]
        else:
            plain = [w for w in rest if not w.startswith("-") and _basename(w) not in _LAUNCHERS]
            chosen = plain[0] if plain else words[0]
    return _tidy(_telling_part(chosen))


def _telling_part(word: str) -> str:
    """A script's name, or for a generic one (``dist/index.js``) its package's directory."""
    base = _basename(word)
    stem = base.rsplit(".", 1)[0] if "." in base else base
    if stem.lower() in _GENERIC and "/" in word.rstrip("/"):
        parts = [p for p in word.rstrip("/").split("/")[:-1] if p and p.lower() not in _BUILD_DIRS]
        if parts:
            return _basename(parts[-1])
    return base


def name_for_url(url: str) -> str:
    """The host's telling part: ``deepwiki`` from ``https://mcp.deepwiki.com/mcp``, ``localhost``."""
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        host = ""
    if re.fullmatch(r"[0-9.]+|\[?[0-9a-fA-F:]+\]?", host):
        return _tidy(host.replace(".", "-").replace(":", "-")) if host else "server"
    labels = [p for p in host.split(".") if p]
    while len(labels) > 2 and labels[0] in ("www", "mcp", "api"):
        labels = labels[1:]
    if len(labels) >= 2:
        labels = labels[:-1]
    return _tidy(labels[0] if labels else "")


def _basename(word: str) -> str:
    word = word.rstrip("/").rsplit("/", 1)[-1] if not word.startswith("@") else word.rsplit("/", 1)[-1]
    at = word.find("@", 1)  # a package's version: server-everything@1.2.3
    return word[:at] if at > 0 else word


def _tidy(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) > len(suffix):
            word = word[: -len(suffix)]
    for prefix, suffix in _AFFIXES:
        if prefix and word.startswith(prefix) and len(word) > len(prefix):
            word = word[len(prefix) :]
            break
        if suffix and word.endswith(suffix) and len(word) > len(suffix):
            word = word[: -len(suffix)]
            break
    word = _NAME_CHARS.sub("-", word).strip("-.")
    return word[:64] or "server"


# -- the command line --------------------------------------------------------------------------


def _scan(words: Sequence[str], valued: frozenset[str]) -> tuple[dict[str, str], int | None, int]:
    """(the ad-hoc options given, the index of the first positional word, where ``--`` is)."""
    given: dict[str, str] = {}
    first: int | None = None
    end = len(words)
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--":
            end = i
            if first is None and i + 1 < len(words):
                first = i + 1
            break
        name, eq, value = word.partition("=")
        if word.startswith("-") and word != "-":
            if eq and name in valued:
                given[name] = value
            elif word in valued and i + 1 < len(words):
                given[word] = words[i + 1]
                i += 1
        elif first is None:
            first = i
        i += 1
    return given, first, end


def place_server(args: list[str]) -> list[str]:
    """The line with the ad-hoc server's name where a configured server's name would stand.

    ``args`` has the program's options first (``hoist_global_options``). A bare URL in the server
    position becomes ``--http URL`` and the name; with ``--stdio``/``--http``/``--sse`` the name
    is inserted unless the line already names it.
    """
    line = ProgramLine(args)
    path = line.command()
    spec = find(path) if path is not None else None
    if spec is None or "adhoc_name" not in {p.name for p in spec.params}:
        return args
    positional = [p for p in spec.params if p.kind == "argument"]
    if not positional or positional[0].name not in ("server", "servers"):
        return args
    head = args[: len(args) - len(line.words) + len(spec.path)]
    rest = list(line.words[len(spec.path) :])
    valued = frozenset(f for p in spec.params if p.kind == "option" for f in p.option_names)
    given, first, end = _scan(rest, valued)
    targets = [o for o in ADHOC_OPTIONS if o in given]
    if first is not None and first < end and is_url(rest[first]) and not targets:
        url = rest[first]
        name = given.get("--name") or name_for_url(url)
        rest[first : first + 1] = [name]
        return [*head, *rest[:end], "--http", url, *rest[end:]]
    if not targets:
        return args
    kind = targets[0]
    name = given.get("--name") or (
        name_for_command(given[kind]) if BY_OPTION[kind[2:]].local else name_for_url(given[kind])
    )
    if first is not None and first < end and rest[first] == name:
        return args
    at = first if first is not None and first <= end else end
    rest.insert(at, name)
    return [*head, *rest]


# -- the entry ---------------------------------------------------------------------------------


def requested(kwargs: Mapping[str, Any]) -> bool:
    """An ad-hoc target on the line: a string value (``slash --stdio``, a flag of the same name, is
    the agent protocol, not a server)."""
    return any(isinstance(kwargs.get(k), str) for k in BY_OPTION)


def take(kwargs: MutableMapping[str, Any], *, cwd: Path) -> ServerConfig | None:
    """Remove the ad-hoc keywords from a handler's arguments; the entry they describe, if any."""
    values = {k: kwargs.pop(k) for k in KEYS if k in kwargs}
    targets = [(k, values[k]) for k in BY_OPTION if values.get(k) is not None]
    if not targets:
        extra = [f"--{k}" for k in ("env", "header", "adhoc_name") if values.get(k)]
        if extra:
            shown = ", ".join(o.replace("adhoc-name", "name").replace("adhoc_name", "name") for o in extra)
            raise UsageError(
                f"{shown} describe a server given with --stdio, --http or --sse (or a URL)",
                hint='orbmcp tools --stdio "npx -y @modelcontextprotocol/server-everything"',
            )
        return None
    return entry(targets, values.get("env"), values.get("header"), values.get("adhoc_name"), cwd=cwd)


def entry(
    targets: Sequence[tuple[str, str]],
    env: Sequence[str] | None,
    header: Sequence[str] | None,
    name: str | None,
    *,
    cwd: Path,
) -> ServerConfig:
    """The synthetic entry of ``--stdio``/``--http``/``--sse``, checked like a file's entry."""
    # Local: every command line passes through ``place_server`` (see the docstring); these load
    # pydantic.
    from orbmcp.commands.handlers.edit import build_entry, pairs
    from orbmcp.config.entries import parse_server
    from orbmcp.config.expand import finalize
    from orbmcp.config.settings import Settings

    if len(targets) > 1:
        raise UsageError(
            f"give one of --stdio, --http and --sse (got {' and '.join('--' + k for k, _ in targets)})"
        )
    option, value = targets[0]
    kind = BY_OPTION[option]
    if kind.local:
        try:
            words = shlex.split(value)
        except ValueError as exc:
            raise UsageError(f"--stdio {value!r}: {exc}") from None
        if not words:
            raise UsageError("--stdio needs a command, e.g. --stdio 'python -m my_server'")
        target = words
    else:
        if not is_url(value):
            raise UsageError(f"--{option} {value!r}: expected an http:// or https:// URL")
        target = [value]
    server_name = name or (name_for_command(value) if kind.local else name_for_url(value))
    raw = build_entry(
        target, env=pairs(env, "env"), headers=pairs(header, "header"), transport=kind.name, lazy=False
    )
    checked, problems = parse_server(server_name, raw, file=None, source="config", settings=Settings())
    if checked is not None:
        checked, problems = finalize(checked, environ=os.environ, cwd=cwd)
    if checked is None:
        raise UsageError(f"--{option}: " + "; ".join(w.message for w in problems), server=server_name)
    return checked
