"""What one ``orbmcp serve`` asks for: which servers, how their tools are named, where it listens.

``ServeOptions`` crosses the daemon socket as JSON (``to_json``/``from_json``), so a serve process
can ask the scope's daemon for exactly the gateway it would have built itself.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from orbmcp.errors import UsageError

NameMode = Literal["bridged", "raw"]
NAME_MODES: tuple[NameMode, ...] = ("bridged", "raw")
DEFAULT_PORT_HOST = "127.0.0.1"
MCP_PATH = "/mcp"
_MAX_SERVERS = 1000


@dataclass(frozen=True)
class ServeOptions:
    names: NameMode = "bridged"
    prefix: str | None = None  # None: the configuration's toolPrefix
    servers: tuple[str, ...] = ()  # empty: every configured server

    def serves(self, server: str) -> bool:
        return not self.servers or server in self.servers

    def to_json(self) -> dict[str, Any]:
        return {"names": self.names, "prefix": self.prefix, "servers": list(self.servers)}

    @classmethod
    def from_json(cls, data: object) -> ServeOptions:
        """Options a client sent; anything malformed is a ``UsageError``."""
        if not isinstance(data, Mapping):
            raise UsageError("serve options must be an object")
        names = data.get("names", "bridged")
        prefix = data.get("prefix")
        servers = data.get("servers", [])
        if names not in NAME_MODES:
            raise UsageError(f"--names must be one of {', '.join(NAME_MODES)}, not {names!r}")
        if prefix is not None and not isinstance(prefix, str):
            raise UsageError("--prefix must be a string")
        if not isinstance(servers, list) or not all(isinstance(s, str) for s in servers):
            raise UsageError("--server must name servers")
        return cls(names=names, prefix=prefix, servers=tuple(dict.fromkeys(servers[:_MAX_SERVERS])))


@dataclass(frozen=True)
class HttpAddress:
    host: str
    port: int

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{MCP_PATH}"


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_address(text: str) -> HttpAddress:
    """``[HOST:]PORT`` (``8765``, ``127.0.0.1:8765``, ``[::1]:8765``, ``0.0.0.0:8765``); port 0
    picks a free one."""
    value = text.strip()
    host, sep, port_text = value.rpartition(":")
    if not sep:
        host, port_text = DEFAULT_PORT_HOST, value
    elif host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise UsageError(
            f"cannot read the address {text!r}", hint="write an IPv6 host in brackets: [::1]:8765"
        )
    if not host:
        host = DEFAULT_PORT_HOST
    if not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise UsageError(
            f"--http needs [HOST:]PORT with a port from 0 to 65535, not {text!r}",
            hint="e.g. --http 8765 or --http 127.0.0.1:8765",
        )
    return HttpAddress(host, int(port_text))
