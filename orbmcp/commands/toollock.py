"""The tool lock: what a server's tools looked like when someone reviewed them, and what changed.

A server can change a tool's description or schema after it was reviewed (a "rug pull"), and a
server author can break clients with a schema change without noticing. ``orbmcp lock`` pins, per
server, its name and version and, per tool, name, title, annotations, the description text and
its schemas, with sha256 hashes of description, input and output schema (canonical JSON: sorted
keys, no spaces). The file is plain, sorted, indented JSON so a pull request shows what changed;
it is written with the one atomic writer (``orbmcp/fs.py``). ``diff`` names each added, removed or
changed tool with a readable diff: the description as a unified diff, each schema path that changed.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orbmcp import fs
from orbmcp.errors import ConfigError

LOCK_FILE = "orbmcp-lock.json"
FORMAT = 1
MAX_LOCK_BYTES = 16 * 1024 * 1024
MAX_PATHS = 200  # schema paths shown per tool: a rewritten schema says "and N more"
MAX_DEPTH = 64


def canonical_hash(value: object) -> str:
    blob = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


def tool_entry(
    *,
    name: str,
    title: str | None,
    description: str | None,
    annotations: Mapping[str, Any] | None,
    input_schema: Mapping[str, Any],
    output_schema: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """One tool's pinned form."""
    return {
        "name": name,
        "title": title,
        "annotations": None if annotations is None else dict(annotations),
        "description": description,
        "descriptionSha256": canonical_hash(description),
        "inputSchema": dict(input_schema),
        "inputSchemaSha256": canonical_hash(dict(input_schema)),
        "outputSchema": None if output_schema is None else dict(output_schema),
        "outputSchemaSha256": canonical_hash(None if output_schema is None else dict(output_schema)),
    }


def server_entry(server_info: str | None, tools: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """One server's pinned form: serverInfo (``name version``) and its tools by name."""
    info_name, _, version = (server_info or "").rpartition(" ")
    if not info_name:  # one word: a name without a version
        info_name, version = version, ""
    return {
        "serverInfo": {"name": info_name or None, "version": version or None},
        "tools": {str(t["name"]): dict(t) for t in tools},
    }


# -- the file ----------------------------------------------------------------------------------


def read(path: Path) -> dict[str, Any] | None:
    """The lock's servers (name -> entry); None when there is no file. A file that is not a lock
    is a config error naming it."""
    try:
        with path.open("rb") as f:
            data = f.read(MAX_LOCK_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(
            f"{path}: cannot read the lock file ({exc.strerror or exc})", file=str(path)
        ) from None
    if len(data) > MAX_LOCK_BYTES:
        raise ConfigError(f"{path}: the lock file is larger than {MAX_LOCK_BYTES} bytes", file=str(path))
    try:
        document = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise ConfigError(
            f"{path}: not a JSON lock file ({exc})", file=str(path), hint="orbmcp lock --update"
        ) from None
    servers = document.get("servers") if isinstance(document, dict) else None
    if not isinstance(servers, dict) or not all(
        isinstance(s, dict) and isinstance(s.get("tools"), dict) for s in servers.values()
    ):
        raise ConfigError(
            f'{path}: not an orbmcp lock file (no "servers" with "tools")',
            file=str(path),
            hint="orbmcp lock --update",
        )
    return servers


def write(path: Path, servers: Mapping[str, Any]) -> None:
    document = {"format": FORMAT, "servers": dict(servers)}
    text = json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    fs.atomic_write(path, text.encode(), mode=0o644, private_dir=False)


# -- what changed ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolChange:
    """One tool of one server that differs from the lock: ``added``, ``removed`` or ``changed``."""

    server: str
    tool: str
    kind: str
    fields: tuple[str, ...] = ()  # which of title, annotations, description, inputSchema, outputSchema
    description_diff: tuple[str, ...] = ()  # unified diff lines
    schema_changes: tuple[str, ...] = ()  # 'inputSchema.properties.a.type: "number" -> "string"'

    def to_json(self) -> dict[str, Any]:
        return {
            "server": self.server,
            "tool": self.tool,
            "change": self.kind,
            "fields": list(self.fields),
            "descriptionDiff": list(self.description_diff),
            "schemaChanges": list(self.schema_changes),
        }


_COMPARED = ("title", "annotations", "description", "inputSchema", "outputSchema")


def diff_server(server: str, old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> list[ToolChange]:
    """The tools of ``new`` that differ from ``old`` (a lock entry; None: nothing was locked)."""
    old_tools: Mapping[str, Any] = (old or {}).get("tools") or {}
    new_tools: Mapping[str, Any] = new.get("tools") or {}
    changes: list[ToolChange] = []
    for name in sorted(set(old_tools) | set(new_tools)):
        before, after = old_tools.get(name), new_tools.get(name)
        if not isinstance(before, Mapping):
            changes.append(ToolChange(server, name, "added"))
        elif not isinstance(after, Mapping):
            changes.append(ToolChange(server, name, "removed"))
        else:
            change = diff_tool(server, name, before, after)
            if change is not None:
                changes.append(change)
    return changes


def diff_tool(
    server: str, name: str, before: Mapping[str, Any], after: Mapping[str, Any]
) -> ToolChange | None:
    fields = tuple(f for f in _COMPARED if _field(before, f) != _field(after, f))
    if not fields:
        return None
    description: tuple[str, ...] = ()
    if "description" in fields:
        description = text_diff(_text(before.get("description")), _text(after.get("description")))
    paths: list[str] = []
    for key in ("title", "annotations", "inputSchema", "outputSchema"):
        if key in fields:
            paths += schema_changes(before.get(key), after.get(key), key)
    if len(paths) > MAX_PATHS:
        paths = [*paths[:MAX_PATHS], f"... and {len(paths) - MAX_PATHS} more"]
    return ToolChange(server, name, "changed", fields, description, tuple(paths))


def _field(entry: Mapping[str, Any], key: str) -> str:
    """A field as compared: by its hash where the lock has one (the text may have been trimmed)."""
    digest = entry.get(f"{key}Sha256")
    return digest if isinstance(digest, str) else canonical_hash(entry.get(key))


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def text_diff(before: str, after: str) -> tuple[str, ...]:
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), "locked", "now", lineterm="", n=2)
    return tuple(lines)


def schema_changes(before: object, after: object, path: str, depth: int = 0) -> list[str]:
    """Each path whose value differs: ``inputSchema.properties.a.type: "number" -> "string"``."""
    if before == after:
        return []
    if isinstance(before, Mapping) and isinstance(after, Mapping) and depth < MAX_DEPTH:
        out: list[str] = []
        for key in sorted(set(before) | set(after), key=str):
            sub = f"{path}.{key}"
            if key not in before:
                out.append(f"{sub}: added {_short(after[key])}")
            elif key not in after:
                out.append(f"{sub}: removed (was {_short(before[key])})")
            else:
                out += schema_changes(before[key], after[key], sub, depth + 1)
        return out
    return [f"{path}: {_short(before)} -> {_short(after)}"]


def _short(value: object, limit: int = 120) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."
