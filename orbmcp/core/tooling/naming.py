"""Provider-safe tool names and LLM-facing tool descriptions.

Providers accept tool names matching ``[A-Za-z0-9_-]{1,64}``. A bridged name keeps the server and
tool readable but owes its uniqueness to the hash of the *raw* names, so two tools that sanitise or
truncate to the same text still get different names, and the same server+tool always gets the same
name across runs and reconnects.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping

MAX_NAME_LENGTH = 64
HASH_LENGTH = 8
# The prefix is a user setting; capping it keeps room for the server and tool, which matter more.
_MAX_PREFIX_LENGTH = 16
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def sanitize(text: str) -> str:
    """Replace every character outside ``[A-Za-z0-9_-]`` with ``_`` (one for one)."""
    return _UNSAFE.sub("_", text)


def name_hash(server: str, tool: str) -> str:
    """First 8 hex digits of sha256 over an unambiguous encoding of the raw names.

    The server part is length-prefixed, so ``("a:b", "c")`` and ``("a", "b:c")`` hash differently
    whatever characters the names contain. ``surrogatepass`` keeps lone surrogates hashable.
    """
    server_bytes = server.encode("utf-8", "surrogatepass")
    tool_bytes = tool.encode("utf-8", "surrogatepass")
    payload = b"%d:" % len(server_bytes) + server_bytes + tool_bytes
    return hashlib.sha256(payload).hexdigest()[:HASH_LENGTH]


def bridged_name(prefix: str, server: str, tool: str) -> str:
    """``<prefix>__<server>__<tool>_<hash8>``, at most 64 characters, ``[A-Za-z0-9_-]`` only.

    When too long, the server and tool parts share the room left after the prefix; the shorter
    part keeps its full length if it fits in half, so the tool name stays recognisable. An empty
    prefix drops the leading ``<prefix>__``.
    """
    suffix = "_" + name_hash(server, tool)
    safe_prefix = sanitize(prefix)[:_MAX_PREFIX_LENGTH]
    head = f"{safe_prefix}__" if safe_prefix else ""
    room = MAX_NAME_LENGTH - len(suffix) - len(head) - len("__")
    safe_server, safe_tool = _share(sanitize(server), sanitize(tool), room)
    return f"{head}{safe_server}__{safe_tool}{suffix}"


_PI_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


def pi_name(prefix: str, server: str, tool: str, *, hashed: bool = False) -> str:
    """``<prefix>_<server>_<tool>`` as pi-mcp-extension names tools (the ``toolNaming: "pi"``
    setting): ``[A-Za-z0-9_]`` only, at most 64 characters. The 8-hex hash of the raw names ends
    it only when the name had to be cut, or when ``hashed`` (the plain name is another tool's)."""
    parts = (
        _PI_UNSAFE.sub("_", prefix)[:_MAX_PREFIX_LENGTH],
        _PI_UNSAFE.sub("_", server),
        _PI_UNSAFE.sub("_", tool),
    )
    plain = "_".join(p for p in parts if p)
    if not hashed and len(plain) <= MAX_NAME_LENGTH:
        return plain
    suffix = "_" + name_hash(server, tool)
    return plain[: MAX_NAME_LENGTH - len(suffix)] + suffix


def _share(first: str, second: str, room: int) -> tuple[str, str]:
    if len(first) + len(second) <= room:
        return first, second
    half = room // 2
    if len(first) <= half:
        return first, second[: room - len(first)]
    if len(second) <= room - half:
        return first[: room - len(second)], second
    return first[:half], second[: room - half]


_HINTS: tuple[tuple[str, str, str, str], ...] = (
    # (wire key, snake_case key, text when true, text when false)
    ("readOnlyHint", "read_only_hint", "read-only", "may modify state"),
    ("destructiveHint", "destructive_hint", "destructive", "non-destructive"),
    ("idempotentHint", "idempotent_hint", "idempotent", "not idempotent"),
    ("openWorldHint", "open_world_hint", "open-world", "closed-world"),
)


def _hint(annotations: Mapping[str, object], wire_key: str, snake_key: str) -> bool | None:
    value = annotations.get(wire_key, annotations.get(snake_key))
    return value if isinstance(value, bool) else None


def annotation_hints(annotations: Mapping[str, object] | None) -> list[str]:
    """The behaviour hints the server actually gave, as short phrases, in a fixed order.

    Only hints present as booleans count: a missing hint is *unknown*, and stating the spec's
    default (destructive, open-world) would tell the model something the server never claimed.
    Per the spec, destructive/idempotent hints only mean something for tools that are not
    read-only, so for a read-only tool the destructive hint and a false idempotent hint are
    dropped — "read-only, destructive" would only confuse.
    """
    if not annotations:
        return []
    read_only = _hint(annotations, "readOnlyHint", "read_only_hint")
    phrases: list[str] = []
    for wire_key, snake_key, when_true, when_false in _HINTS:
        value = _hint(annotations, wire_key, snake_key)
        if value is None:
            continue
        if read_only and wire_key == "destructiveHint":
            continue
        if read_only and wire_key == "idempotentHint" and not value:
            continue
        phrases.append(when_true if value else when_false)
    return phrases


def describe_tool(
    description: str | None,
    annotations: Mapping[str, object] | None,
    title: str | None,
) -> str:
    """The description an LLM sees: title, the server's description, then one line of hints.

    The bridged name is mangled (prefix, hash), so the human title is worth a line when it adds
    something the description does not already start with; ``title`` falls back to
    ``annotations["title"]``. The hints line reads e.g. ``[read-only, idempotent]``,
    ``[destructive, not idempotent]`` or ``[closed-world]``: whether a call changes anything,
    whether it is safe to repeat after a timeout, and whether it reaches outside systems are
    what a model needs to decide to call, retry or ask the user first.
    """
    parts: list[str] = []
    body = (description or "").strip()
    shown_title = title if title is not None else _annotation_title(annotations)
    shown_title = (shown_title or "").strip()
    if shown_title and not body.casefold().startswith(shown_title.casefold()):
        parts.append(shown_title)
    if body:
        parts.append(body)
    hints = annotation_hints(annotations)
    if hints:
        parts.append("[" + ", ".join(hints) + "]")
    return "\n\n".join(parts)


def _annotation_title(annotations: Mapping[str, object] | None) -> str | None:
    if not annotations:
        return None
    value = annotations.get("title")
    return value if isinstance(value, str) else None
