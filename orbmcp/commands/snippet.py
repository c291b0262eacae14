"""A server README's JSON snippet for ``orbmcp add NAME --json '...'``: one entry, or
``{"mcpServers": {...}}`` holding one or several (VS Code's ``servers`` too).

Pasted text is untrusted like any file: bounded in size, parsed as JSON (comments allowed, as in
orbmcp's own files), and each entry is then checked by ``add`` like any entry it writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import suppress

from orbmcp.config.documents import is_entry_like, servers_block, servers_key
from orbmcp.config.jsonc import parse_jsonc
from orbmcp.errors import ConfigError, UsageError

MAX_SNIPPET_BYTES = 1024 * 1024


def snippet_entries(name: str | None, text: str) -> list[tuple[str, Mapping[str, object]]]:
    """(name, entry) pairs to add: the one ``name`` picks, or every server of the snippet."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_SNIPPET_BYTES:
        raise UsageError(f"--json: the snippet is larger than {MAX_SNIPPET_BYTES} bytes")
    document = _parse(text)
    if servers_key(document) is None:
        if name is None:
            raise UsageError("--json with one entry needs the server's name: orbmcp add NAME --json '...'")
        return [(name, document)]
    block = servers_block(document, file=None)
    entries = {k: v for k, v in block.items() if isinstance(v, dict) and is_entry_like(v)}
    bad = [k for k in block if k not in entries]
    if bad:
        raise UsageError(f"--json: not a server entry: {', '.join(repr(k) for k in bad[:5])}")
    if not entries:
        raise UsageError("--json: the snippet names no server")
    if name is None:
        return list(entries.items())
    if name in entries:
        return [(name, entries[name])]
    if len(entries) == 1:
        return [(name, next(iter(entries.values())))]
    raise UsageError(
        f"--json: the snippet holds {len(entries)} servers, none named '{name}': {', '.join(entries)}",
        hint="name one of them, or leave the name out to add them all",
    )


def _parse(text: str) -> dict[str, object]:
    """The snippet as an object; a README's ``"mcpServers": {...}`` without its outer braces too."""
    try:
        return parse_jsonc(text, file="--json")
    except ConfigError as exc:
        if text.lstrip().startswith('"'):
            with suppress(ConfigError):
                return parse_jsonc("{" + text + "}", file="--json")
        raise UsageError(
            exc.message, hint="""e.g. --json '{"command": "npx", "args": ["-y", "PACKAGE"]}'"""
        ) from None
