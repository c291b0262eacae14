"""What the daemon's client and the daemon agree on without talking: which ``slash`` lines run
here, and how a variable's value is compared without crossing the socket (which commands the
daemon runs: ``fastpath/argv.py``). Standard library only."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from orbmcp.session.daemon_scope import sha256_hex

# ``${VAR}`` and ``${env:VAR}`` (VS Code's spelling), defaults' own references included.
_VARIABLE = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)")
MAX_CONFIG_BYTES = 8 * 1024 * 1024
MAX_VARIABLES = 1000


def variables_in(paths: Iterable[str]) -> list[str]:
    """The names of the environment variables the files at ``paths`` reference (missing ones
    skipped). The client digests only these, from its own files: the daemon never names what is
    hashed."""
    texts: list[str] = []
    for path in paths:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                texts.append(f.read(MAX_CONFIG_BYTES))
        except OSError:
            continue
    return variables_in_texts(texts)


def variables_in_texts(texts: Iterable[str]) -> list[str]:
    """The names of the environment variables these files' contents reference."""
    names: set[str] = set()
    for text in texts:
        names.update(_VARIABLE.findall(text))
    return sorted(names)


def digest_key(nonce: str, client_salt: str) -> str:
    """What salts a digest: the daemon's nonce and the client's own salt, so a daemon cannot
    precompute answers for a salt of its choosing."""
    return f"{nonce}\0{client_salt}"


def slash_manages_daemon(words: Sequence[str]) -> bool:
    """``slash "/mcp daemon ..."``: it runs here, as ``daemon ...`` does. It asks the daemon over
    its socket like any client, and a daemon is never started just to answer (or to stop)."""
    text = " ".join(words[1:]).split()
    return text[:2] == ["/mcp", "daemon"] or text[:1] == ["/mcp:daemon"]


def slash_runs_here(words: Sequence[str]) -> bool:
    """``slash`` lines the daemon does not take: the daemon's own management, and the agent
    protocol (``--stdio``: a long-running process with its own session and its own questions
    channel; ``--list``: the command table, no connection)."""
    options = set(words[1:])
    return bool(options & {"--stdio", "--list"}) or slash_manages_daemon(words)


def env_digests(env: Mapping[str, str], names: Sequence[str], nonce: str) -> dict[str, str | None]:
    """Salted digests of the variables both configs reference (None: unset here)."""
    out: dict[str, str | None] = {}
    for name in names[:MAX_VARIABLES]:
        value = env.get(name)
        out[name] = None if value is None else digest(nonce, value)
    return out


def digest(nonce: str, value: str) -> str:
    return sha256_hex(f"{nonce}\0{value}".encode("utf-8", "surrogatepass"))
