"""What the daemon's client and the daemon agree on without talking: which commands the daemon
runs, and how a variable's value is compared without crossing the socket. Standard library only."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def forwardable(path: tuple[str, ...], connects: bool) -> bool:
    """Commands that connect run in the daemon, and so do ``slash`` and ``complete`` (the live
    session's servers and tool names). ``daemon ...`` and the REPL always run here; ``serve`` has
    a request of its own (``serve_client``)."""
    if path[:1] in (("daemon",), ("shell",), ("serve",)):
        return False
    return connects or path in (("slash",), ("complete",))


def slash_manages_daemon(words: Sequence[str]) -> bool:
    """``slash "/mcp daemon ..."``: it runs here, as ``daemon ...`` does. It asks the daemon over
    its socket like any client, and a daemon is never started just to answer (or to stop)."""
    text = " ".join(words[1:]).split()
    return text[:2] == ["/mcp", "daemon"] or text[:1] == ["/mcp:daemon"]


def env_digests(env: Mapping[str, str], names: Sequence[str], nonce: str) -> dict[str, str | None]:
    """Salted digests of the variables the daemon's config references (None: unset here)."""
    out: dict[str, str | None] = {}
    for name in names[:1000]:
        value = env.get(name)
        out[name] = None if value is None else digest(nonce, value)
    return out


def digest(nonce: str, value: str) -> str:
    import hashlib  # only when the config references variables: not on every invocation

    return hashlib.sha256(f"{nonce}\0{value}".encode("utf-8", "surrogatepass")).hexdigest()
