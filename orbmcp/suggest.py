"""'Did you mean' for names a user typed."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from orbmcp.errors import UsageError


def close_names(name: str, choices: Sequence[str], n: int = 3) -> list[str]:
    return difflib.get_close_matches(name, list(choices), n=n, cutoff=0.5)


def unknown(kind: str, name: str, choices: Sequence[str], *, server: str | None = None) -> UsageError:
    close = close_names(name, choices)
    if close:
        hint = "did you mean " + " or ".join(f"'{c}'" for c in close) + "?"
    elif choices:
        shown = ", ".join(sorted(choices)[:20])
        more = f" (+{len(choices) - 20} more)" if len(choices) > 20 else ""
        hint = f"known {kind}s: {shown}{more}"
    else:
        hint = f"no {kind}s are configured" if kind == "server" else f"this server has no {kind}s"
    return UsageError(f"unknown {kind} '{name}'", server=server, hint=hint)


def unknown_server(name: str, choices: Sequence[str]) -> UsageError:
    return unknown("server", name, choices)
