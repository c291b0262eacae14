"""'Did you mean' for names a user typed.

Only close matches are suggested: a hint that points at an unrelated name (``ptime`` → ``time``
when ``ptime`` exists but was skipped) costs more trust than no hint at all. Callers that know
more about a name (a server entry that exists but is invalid) must say that first.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from orbmcp.errors import UsageError

# difflib's ratio: 2 * matches / (len(a) + len(b)). 0.75 keeps one-letter typos of short names
# ("tme" → "time", "evrything" → "everything") and drops look-alikes ("github" → "gitlab").
CUTOFF = 0.75


def close_names(name: str, choices: Sequence[str], n: int = 3) -> list[str]:
    """Up to ``n`` choices close to ``name`` (a case-only difference counts as the closest)."""
    same_case = [c for c in choices if c.lower() == name.lower() and c != name]
    close = difflib.get_close_matches(name, list(choices), n=n, cutoff=CUTOFF)
    return list(dict.fromkeys([*same_case, *close]))[:n]


def did_you_mean(name: str, choices: Sequence[str]) -> str | None:
    """``did you mean 'x'?`` (or 'x' or 'y'), or None when nothing is close."""
    close = close_names(name, choices)
    if not close:
        return None
    return "did you mean " + " or ".join(f"'{c}'" for c in close) + "?"


def unknown(kind: str, name: str, choices: Sequence[str], *, server: str | None = None) -> UsageError:
    hint = did_you_mean(name, choices)
    if hint is None and choices:
        shown = ", ".join(sorted(choices)[:20])
        more = f" (+{len(choices) - 20} more)" if len(choices) > 20 else ""
        hint = f"known {kind}s: {shown}{more}"
    elif hint is None:
        hint = f"no {kind}s are configured" if kind == "server" else f"this server has no {kind}s"
    return UsageError(f"unknown {kind} '{name}'", server=server, hint=hint, reason=f"unknown_{kind}")


def unknown_server(name: str, choices: Sequence[str]) -> UsageError:
    return unknown("server", name, choices)
