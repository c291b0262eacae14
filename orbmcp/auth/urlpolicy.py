"""Which URLs a server may make orbmcp open in a browser or fetch during OAuth discovery.

Everything here is attacker-controlled input (WWW-Authenticate, protected-resource and
authorization-server metadata). Two policies:

- browser: ``https:``, or ``http:`` to a loopback host, one argv element, never a shell;
  leading ``-``, whitespace and control characters are rejected (CVE-2025-6514, CVE-2026-4519);
- fetch (SSRF): ``https:``, or loopback ``http:``; loopback only when the MCP server
  itself is loopback; private ranges only when the MCP server is private or loopback;
  link-local, cloud metadata, unspecified and multicast addresses never. Hosts are parsed with
  ``ipaddress`` and the inet_aton forms (``0x7f.1``, ``2130706433``, ``017700000001``) a
  resolver would accept.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import webbrowser
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from orbmcp.errors import AuthError

HostClass = Literal["loopback", "private", "public", "forbidden", "name"]

_INET_ATON_RE = re.compile(r"^[0-9a-fA-FxX.]+$")
_BAD_CHARS_RE = re.compile(r"[\x00-\x20\x7f\"'<>\\^`{|}]")
_BAD_PERCENT_RE = re.compile(r"%(?![0-9A-Fa-f]{2})")
_LOOPBACK_NAMES = ("localhost",)
# Addresses of cloud metadata services beyond 169.254.0.0/16 (already link-local).
_METADATA = (ipaddress.ip_address("fd00:ec2::254"),)


def _ip_of(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    host = host.strip("[]")
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        if not _INET_ATON_RE.match(host) or not any(c.isdigit() for c in host):
            return None
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def host_class(host: str) -> HostClass:
    host = host.lower().rstrip(".")
    if host in _LOOPBACK_NAMES or host.endswith(".localhost"):
        return "loopback"
    ip = _ip_of(host)
    if ip is None:
        return "name"
    # Loopback first: ::1 lies inside the reserved ::/8, yet it is this machine.
    if ip.is_loopback:
        return "loopback"
    if ip in _METADATA or ip.is_link_local or ip.is_unspecified or ip.is_multicast or ip.is_reserved:
        return "forbidden"
    if ip.is_private:
        return "private"
    return "public"


def _escaped(url: str, limit: int = 200) -> str:
    text = url.encode("unicode_escape").decode("ascii")
    return text if len(text) <= limit else text[:limit] + "..."


def check_browser_url(url: str) -> str:
    """The URL, if it may be handed to a browser opener; else AuthError showing it escaped."""
    reason = _browser_problem(url)
    if reason:
        raise AuthError(
            f"refusing to open the authorization URL {_escaped(url)!r}: {reason}",
            hint="the server's authorization metadata is unsafe; report it to the server's operator",
        )
    return url


def _browser_problem(url: str) -> str | None:
    if not url:
        return "empty"
    if url.startswith("-"):
        return "it starts with '-'"
    if _BAD_CHARS_RE.search(url):
        return "it contains whitespace, quotes or control characters"
    if _BAD_PERCENT_RE.search(url) or "%action" in url.lower():
        # webbrowser substitutes %s and %action inside its command templates (gh-148169).
        return "it contains a '%' that is not percent-encoding"
    try:
        parts = urlsplit(url)
    except ValueError:
        return "it is not a valid URL"
    scheme = parts.scheme.lower()
    if scheme not in ("https", "http"):
        return f"scheme {scheme + ':' if scheme else '(none)'} is not allowed (https only)"
    try:
        host = parts.hostname
        _ = parts.port
    except ValueError:
        return "it is not a valid URL"
    if not host:
        return "it has no host"
    if scheme == "http" and host_class(host) != "loopback":
        return "plain http is allowed only for loopback hosts"
    if "%" in host:
        return "the host contains percent-encoding"
    return None


def browser_problem(url: str) -> str | None:
    """Why ``url`` must not be handed to a browser (a scheme, host or character), or None."""
    return _browser_problem(url)


def fetch_problem(url: str, server_url: str) -> str | None:
    """Why a discovery/registration/token URL must not be fetched for this MCP server, or None."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
        _ = parts.port
    except ValueError:
        return "not a valid URL"
    scheme = parts.scheme.lower()
    if scheme not in ("https", "http") or not host:
        return f"scheme {scheme or '(none)'} is not allowed"
    if parts.username is not None or parts.password is not None:
        return "URLs with credentials are not allowed"
    target = host_class(host)
    try:
        server_host = urlsplit(server_url).hostname or ""
    except ValueError:
        server_host = ""
    origin = host_class(server_host) if server_host else "public"
    if target == "forbidden":
        return "link-local, metadata and unspecified addresses are never fetched"
    if target == "loopback" and origin != "loopback":
        return "loopback addresses are fetched only for a loopback MCP server"
    if target == "private" and origin not in ("private", "loopback"):
        return "private addresses are fetched only for a private or loopback MCP server"
    if scheme == "http" and target != "loopback":
        return "plain http is allowed only for loopback hosts"
    return None


def check_fetch_url(url: str, server_url: str, *, server: str | None = None) -> None:
    reason = fetch_problem(url, server_url)
    if reason:
        raise AuthError(
            f"refusing to contact {_escaped(display_url(url))!r} during authorization: {reason}",
            server=server,
            hint="the server's OAuth metadata points somewhere unsafe; report it to the server's operator",
        )


def display_url(url: str) -> str:
    """The URL with an internationalised host shown in punycode (no look-alike hosts)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
        if not host or host.isascii():
            return url
        ascii_host = host.encode("idna").decode("ascii")
        netloc = ascii_host if parts.port is None else f"{ascii_host}:{parts.port}"
        return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    except (ValueError, UnicodeError):
        return _escaped(url)


def open_in_browser(url: str) -> bool:
    """Validate, then hand the URL to :mod:`webbrowser` (one argv element, no shell)."""
    check_browser_url(url)

    try:
        return bool(webbrowser.open(url, new=2))
    except Exception:
        return False
