"""``HeadlessBrowser``: an ``AuthUI`` that "plays the browser" for the tests and the conformance
client: it fetches the authorization URL without following redirects and delivers the
``Location`` (test-only; it left ``orbmcp.auth.callback``, issue 25 item 8)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urlsplit


@dataclass
class HeadlessBrowser:
    """An AuthUI that plays the browser against an auto-approving authorization server.

    ``open_url`` GETs the authorization URL (no redirects followed) in a thread and delivers the
    ``Location``: ``mode="callback"`` requests it from the loopback listener as a browser would;
    ``mode="paste"`` hands it to ``prompt_paste`` as a user on a headless machine would.
    """

    mode: Literal["callback", "paste"] = "callback"
    timeout_s: float = 10.0
    opened: list[str] = field(default_factory=list)
    shown: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    locations: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    _pasted: list[str] = field(default_factory=list)
    _ready: threading.Event = field(default_factory=threading.Event)

    def open_url(self, url: str) -> bool:
        self.opened.append(url)
        threading.Thread(target=self._play, args=(url,), daemon=True).start()
        return True

    def show_url(self, url: str) -> None:
        self.shown.append(url)
        if self.mode == "paste" and url not in self.opened:
            self.opened.append(url)
            threading.Thread(target=self._play, args=(url,), daemon=True).start()

    def prompt_paste(self) -> str | None:
        if self.mode != "paste":
            return None
        if not self._ready.wait(self.timeout_s):
            return None
        self._ready.clear()
        return self._pasted.pop(0) if self._pasted else None

    def notify(self, msg: str) -> None:
        self.notices.append(msg)

    def _play(self, url: str) -> None:
        # http.client, not httpx2: the URLs carry state and code, and httpx2 logs every request line.
        try:
            status, location = _get_no_redirect(url, self.timeout_s)
            if not location:
                self.errors.append(f"authorization endpoint answered {status} without Location")
                return
            self.locations.append(location)
            if self.mode == "paste":
                self._pasted.append(location)
                self._ready.set()
                return
            target = urlsplit(location)
            if target.scheme == "http" and target.hostname in ("127.0.0.1", "localhost"):
                _get_no_redirect(location, self.timeout_s)
        except Exception as exc:
            self.errors.append(type(exc).__name__)


def _get_no_redirect(url: str, timeout_s: float) -> tuple[int, str | None]:
    import http.client

    parts = urlsplit(url)
    conn_cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = conn_cls(parts.hostname or "", parts.port, timeout=timeout_s)
    try:
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        conn.request("GET", target, headers={"Accept": "text/html"})
        response = conn.getresponse()
        response.read()
        return response.status, response.getheader("Location")
    finally:
        conn.close()
