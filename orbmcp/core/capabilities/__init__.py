"""The client side of MCP: what orbmcp answers when a server asks something of it.

A server may ask the person a question (elicitation: a form, or a URL to open), ask for the
workspace (roots), ask a model to answer (sampling), send log messages, and run long tool calls as
tasks. One module per capability holds its plain data and rules (``elicitation``, ``roots``,
``sampling``, ``server_log``, ``tasks``); ``client_side`` turns them into the SDK's callbacks for
one server, and ``askers`` decides who answers: the person whose command is waiting on that server,
else the session's own front (an agent host, the REPL, a one-shot command's terminal), else nobody
(orbmcp then declines and says so).

A capability is advertised only when some front of the session can honour it (``ClientFeatures``):
elicitation wherever a person may be asked (or told that orbmcp declined), roots only to a server
that has roots (configured, or given by an agent or an embedder: ``Runtime.roots_for``; never the
bare current directory), sampling only with a host model or a configured command.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ClientFeatures:
    """The client capabilities a session advertises to its servers."""

    elicitation: bool = True
    sampling: bool = False
    roots: bool = True  # a server is offered roots only when it has some (``Runtime.offers_roots``)

    def to_json(self) -> dict[str, Any]:
        """The ``capabilities`` object orbmcp sends in ``initialize`` (wire spelling)."""
        out: dict[str, Any] = {}
        if self.elicitation:
            out["elicitation"] = {"form": {}, "url": {}}
        if self.roots:
            out["roots"] = {"listChanged": True}
        if self.sampling:
            out["sampling"] = {}
        return out


@dataclass(frozen=True)
class Interaction:
    """A server's question during a command, and how orbmcp answered it (for the command's notes).

    ``kind``: ``elicitation``, ``url`` (a URL to open) or ``sampling``; ``action``: the answer
    (``accept``, ``decline``, ``cancel``; for sampling ``result`` or ``reject``); ``reason``: why
    orbmcp answered without the person, if it did. Strings are the server's, raw.
    """

    kind: str
    server: str
    action: str
    message: str = ""
    reason: str | None = None
    url: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "server": self.server, "action": self.action}
        if self.message:
            out["message"] = self.message
        if self.url:
            out["url"] = self.url
        if self.reason:
            out["reason"] = self.reason
        return out


__all__ = ["ClientFeatures", "Interaction"]
