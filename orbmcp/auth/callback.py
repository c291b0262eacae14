"""The loopback redirect target of the authorization-code flow, and its headless stand-ins.

:class:`CallbackListener` binds 127.0.0.1 only, serves ``GET /callback`` only, checks ``Host``
(DNS rebinding), and settles on the first response carrying the expected single-use ``state``.
A missing or wrong ``state`` gets an error page and leaves the flow pending. The page
never says "success": tokens are only obtained after it.

:func:`parse_pasted_redirect` is the same check for a redirect URL pasted on a headless machine.
(The tests' stand-in browser is ``tests/auth/browser.py``.)
"""

from __future__ import annotations

import html
import re
import secrets
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

import anyio
import anyio.abc
import anyio.to_thread

from orbmcp.errors import AuthError

DEFAULT_CALLBACK_TIMEOUT_S = 300.0
CALLBACK_PATH = "/callback"
_MAX_REQUEST = 16 * 1024
_CONNECTION_READ_S = 10.0
_ERROR_CODE_RE = re.compile(r"[A-Za-z0-9_.\-]{1,64}")


@dataclass(frozen=True)
class CallbackResult:
    code: str
    state: str
    iss: str | None = None

    def __repr__(self) -> str:  # never print the code
        return f"CallbackResult(state=<{len(self.state)} chars>, iss={self.iss!r})"


def _one(params: dict[str, list[str]], key: str) -> str | None:
    values = params.get(key)
    return values[0] if values and len(values) == 1 else None


def _error_code(value: str) -> str:
    return value if _ERROR_CODE_RE.fullmatch(value) else "invalid"


def _state_ok(got: str | None, expected: str | None) -> bool:
    return bool(got and expected) and secrets.compare_digest(str(got), str(expected))


# Reasons of the errors below: a response for another (or no) pending authorization is ignored
# and the flow keeps waiting; the others end it.
STATE_MISMATCH = "state_mismatch"
AUTHORIZATION_REFUSED = "authorization_refused"
NO_CODE = "no_code"
CALLBACK_TIMEOUT = "callback_timeout"
CANCELLED = "cancelled"
# At the paste prompt: pi's "Cancel authentication" and "Retry: open browser again".
CANCEL_WORDS = frozenset({"c", "cancel", "q", "quit"})
REOPEN_WORDS = frozenset({"o", "open", "r", "retry"})


def check_redirect_params(
    params: dict[str, list[str]], expected_state: str | None, *, server: str | None
) -> CallbackResult:
    """The callback parameters, checked: matching ``state``, then ``error``, then ``code``."""
    state = _one(params, "state")
    if not _state_ok(state, expected_state):
        raise AuthError(
            "the authorization response does not belong to this authorization (state mismatch); "
            "it was ignored",
            server=server,
            reason=STATE_MISMATCH,
        )
    error = _one(params, "error")
    if error is not None:
        # error_description is server-controlled and, on an iss mismatch, attacker-controlled.
        raise AuthError(
            f"the authorization server refused: {_error_code(error)}",
            server=server,
            reason=AUTHORIZATION_REFUSED,
        )
    code = _one(params, "code")
    if not code:
        raise AuthError("the authorization response carries no code", server=server, reason=NO_CODE)
    assert state is not None
    return CallbackResult(code=code, state=state, iss=_one(params, "iss"))


def parse_pasted_redirect(url: str, expected_state: str, *, server: str | None = None) -> CallbackResult:
    """A redirect URL (or just its query) pasted by the user on a headless machine."""
    text = url.strip()
    query = urlsplit(text).query if "://" in text else text.lstrip("?")
    return check_redirect_params(parse_qs(query, keep_blank_values=True), expected_state, server=server)


def _page(title: str, body: str) -> bytes:
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>orbmcp</title></head>"
        f"<body style='font-family:sans-serif'><h2>{html.escape(title)}</h2>"
        f"<p>{html.escape(body)}</p></body></html>"
    ).encode()


def _response(status: int, reason: str, body: bytes) -> bytes:
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\nCache-Control: no-store\r\n"
        "Referrer-Policy: no-referrer\r\nX-Content-Type-Options: nosniff\r\n\r\n"
    )
    return head.encode() + body


class CallbackListener:
    """One-shot loopback listener; ``async with`` binds it, ``wait()`` serves until settled."""

    def __init__(self, *, server: str | None = None, port: int = 0) -> None:
        self.server = server
        self._requested_port = port
        self._listener: anyio.abc.SocketListener | None = None
        self._expected_state: str | None = None
        self._result: CallbackResult | None = None
        self._failure: AuthError | None = None
        self._done = anyio.Event()
        self.rejected = 0
        self.closed = False

    async def start(self) -> None:
        try:
            multi = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=self._requested_port)
        except OSError as exc:
            raise AuthError(
                f"cannot listen for the OAuth callback on 127.0.0.1:{self._requested_port}: {exc.strerror}",
                server=self.server,
                hint="free that port or change auth.redirectPort",
            ) from None
        listener = multi.listeners[0]
        assert isinstance(listener, anyio.abc.SocketListener)
        self._listener = listener

    async def __aenter__(self) -> CallbackListener:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        listener, self._listener = self._listener, None
        self.closed = True
        if listener is not None:
            await listener.aclose()

    @property
    def port(self) -> int:
        if self._listener is None:
            raise RuntimeError("listener not started")
        return int(self._listener.extra(anyio.abc.SocketAttribute.local_port))  # noqa: S610

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"

    def expect_state(self, state: str) -> None:
        """Arm the listener for one authorization request; an older state stops being accepted."""
        self._expected_state = state
        self._result = None
        self._failure = None
        self._done = anyio.Event()

    async def wait(
        self,
        timeout_s: float = DEFAULT_CALLBACK_TIMEOUT_S,
        *,
        paste: Callable[[], str | None] | None = None,
        notify: Callable[[str], None] | None = None,
        reopen: Callable[[], bool] | None = None,
    ) -> CallbackResult:
        """Serve until the expected callback (or a valid pasted redirect) arrives; then close.

        What the person types at the paste prompt offers pi's choices: the final redirect URL,
        ``o`` to open the browser again (``reopen``), or ``c`` to cancel the authorization."""
        if self._listener is None:
            raise RuntimeError("listener not started")
        listener = self._listener
        try:
            with anyio.move_on_after(timeout_s):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self._accept_loop, listener, tg)
                    if paste is not None:
                        tg.start_soon(self._paste_loop, paste, notify, reopen)
                    await self._done.wait()
                    tg.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await self.aclose()
        if self._failure is not None:
            raise self._failure
        if self._result is None:
            raise AuthError(
                f"no authorization response arrived within {timeout_s:.0f} s",
                server=self.server,
                hint="run the authorization again; open the printed URL in a browser on this machine",
                reason=CALLBACK_TIMEOUT,
            )
        return self._result

    def _settle(self, result: CallbackResult | None, failure: AuthError | None) -> None:
        self._result, self._failure = result, failure
        self._expected_state = None  # single use
        self._done.set()

    async def _accept_loop(self, listener: anyio.abc.SocketListener, tg: anyio.abc.TaskGroup) -> None:
        while True:
            stream = await listener.accept()
            tg.start_soon(self._serve_one, stream)

    async def _paste_loop(
        self,
        paste: Callable[[], str | None],
        notify: Callable[[str], None] | None,
        reopen: Callable[[], bool] | None = None,
    ) -> None:
        while not self._done.is_set():
            text = await anyio.to_thread.run_sync(paste, abandon_on_cancel=True)
            if text is None:
                return  # no paste available: keep waiting for the loopback callback
            if self._done.is_set():
                return
            choice = text.strip().lower()
            if choice in CANCEL_WORDS:
                self._settle(
                    None,
                    AuthError("authorization cancelled", server=self.server, hint=None, reason=CANCELLED),
                )
                return
            if choice in REOPEN_WORDS and reopen is not None:
                opened = False
                try:
                    opened = bool(reopen())
                except Exception:
                    opened = False
                if notify is not None:
                    notify(
                        "opened the browser again; finish there, or paste the final redirect URL"
                        if opened
                        else "could not open a browser; open the URL above, or paste the final redirect URL"
                    )
                continue
            try:
                result = parse_pasted_redirect(text, self._expected_state or "", server=self.server)
            except AuthError as err:
                if err.reason == STATE_MISMATCH or not text.strip():
                    self.rejected += 1
                    if notify is not None:
                        notify(err.message)
                    continue
                self._settle(None, err)
                return
            self._settle(result, None)
            return

    async def _serve_one(self, stream: anyio.abc.SocketStream) -> None:
        async with stream:
            try:
                with anyio.fail_after(_CONNECTION_READ_S):
                    raw = await self._read_head(stream)
            except (TimeoutError, anyio.EndOfStream, anyio.BrokenResourceError, OSError):
                return
            status, reason, body = self._handle(raw)
            with suppress(anyio.BrokenResourceError, OSError):
                await stream.send(_response(status, reason, body))

    async def _read_head(self, stream: anyio.abc.SocketStream) -> bytes:
        buf = b""
        while b"\r\n\r\n" not in buf and len(buf) < _MAX_REQUEST:
            buf += await stream.receive(4096)
        return buf

    def _handle(self, raw: bytes) -> tuple[int, str, bytes]:
        try:
            head = raw.split(b"\r\n\r\n", 1)[0].decode("latin-1")
            request_line, *header_lines = head.split("\r\n")
            method, target, _version = request_line.split(" ", 2)
        except ValueError:
            return 400, "Bad Request", _page("Bad request", "")
        headers = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        host = headers.get("host", "").lower()
        port = self.port if self._listener is not None else self._requested_port
        if host not in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"):
            self.rejected += 1
            return 421, "Misdirected Request", _page("Wrong host", "This listener only answers on 127.0.0.1.")
        if method != "GET":
            self.rejected += 1
            return 405, "Method Not Allowed", _page("Method not allowed", "")
        parts = urlsplit(target)
        if parts.path != CALLBACK_PATH:
            return 404, "Not Found", _page("Not found", "")
        if self._done.is_set() or self._expected_state is None:
            self.rejected += 1
            return (
                409,
                "Conflict",
                _page("Nothing pending", "This authorization response was already received."),
            )
        params = parse_qs(parts.query, keep_blank_values=True)
        try:
            result = check_redirect_params(params, self._expected_state, server=self.server)
        except AuthError as err:
            if err.reason == STATE_MISMATCH:
                self.rejected += 1
                return (
                    400,
                    "Bad Request",
                    _page(
                        "Authorization response ignored",
                        "This response does not match the pending authorization (state mismatch). "
                        "Authorization is still pending; use the link orbmcp printed.",
                    ),
                )
            self._settle(None, err)
            return 400, "Bad Request", _page("Authorization failed", err.message)
        self._settle(result, None)
        return (
            200,
            "OK",
            _page(
                "Authorization response received", "orbmcp is finishing the sign-in; you can close this tab."
            ),
        )
