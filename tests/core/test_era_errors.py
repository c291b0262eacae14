"""classify_error beyond the common table: OS errors, HTTP statuses, SDK RuntimeErrors, groups."""

from __future__ import annotations

import asyncio

import httpx2
import pytest

from orbmcp.core.session.classify import classify_error
from orbmcp.errors import (
    AuthError,
    ConnectionFailed,
    InternalError,
    Interrupted,
    OrbError,
    ProtocolError,
)


def _raised(exc: BaseException) -> BaseException:
    try:
        raise exc
    except BaseException as caught:
        return caught


def _status_error(status: int) -> httpx2.HTTPStatusError:
    request = httpx2.Request("POST", "https://mcp.example.test/mcp")
    response = httpx2.Response(status, request=request, headers={"www-authenticate": 'Bearer scope="repo"'})
    return httpx2.HTTPStatusError(f"HTTP {status}", request=request, response=response)


@pytest.mark.parametrize(
    ("exc", "kind", "message", "hint"),
    [
        (
            PermissionError(13, "Permission denied", "/opt/srv"),
            ConnectionFailed,
            "cannot start server 'x': permission denied: /opt/srv",
            None,
        ),
        (
            ConnectionRefusedError(111, "Connection refused"),
            ConnectionFailed,
            "cannot connect to server 'x': connection refused",
            "is it running?",
        ),
        (
            OSError(5, "Input/output error"),
            ConnectionFailed,
            "connection to server 'x' failed: Input/output error",
            None,
        ),
        (_status_error(404), ConnectionFailed, "server 'x' answered HTTP 404", "check the server URL"),
        (
            _status_error(502),
            ConnectionFailed,
            "server 'x' answered HTTP 502",
            "the server failed; try again later or check its logs",
        ),
        (_status_error(418), ConnectionFailed, "server 'x' answered HTTP 418", None),
        (KeyboardInterrupt(), Interrupted, "interrupted", None),
        (
            httpx2.SSEError("Expected response header Content-Type to contain 'text/event-stream'"),
            ProtocolError,
            "server 'x' did not answer with an event stream: Expected response header",
            None,
        ),
        (
            RuntimeError("Unsupported protocol version from the server: 2031-01-01"),
            ProtocolError,
            "server 'x' answered with protocol version '2031-01-01', which orbmcp does not support",
            None,
        ),
        (
            RuntimeError("our own bug"),
            InternalError,
            "unexpected RuntimeError while talking to server 'x': our own bug",
            None,
        ),
    ],
)
def test_classified_errors(exc: BaseException, kind: type[OrbError], message: str, hint: str | None) -> None:
    error = classify_error(_raised(exc), server="x")
    assert type(error) is kind
    assert error.message.startswith(message), error.message
    assert error.hint == hint
    assert error.server == "x" and error.args == (error.message,)


def test_a_401_or_403_status_on_the_exception_is_an_auth_error() -> None:
    unauthorized = classify_error(_status_error(401), server="gh")
    assert isinstance(unauthorized, AuthError)
    assert unauthorized.message == "server 'gh' requires authorization (HTTP 401)"
    scope = classify_error(
        _status_error(403), server="gh", www_authenticate='Bearer error="insufficient_scope"'
    )
    # The response's own header wins over what a hook saw earlier.
    assert scope.message == "server 'gh' refused access (HTTP 403)"


def test_runtime_error_raised_inside_the_sdk_is_the_servers_fault() -> None:
    from mcp import Client

    client = Client("http://127.0.0.1:9/mcp")
    with pytest.raises(RuntimeError) as caught:
        _ = client.session  # not entered: the SDK itself raises
    error = classify_error(caught.value, server="s")
    assert isinstance(error, ProtocolError)
    assert error.message == "server 's': Client must be used within an async context manager"


def test_orb_error_leaves_keep_their_server_or_get_this_one() -> None:
    mine = ConnectionFailed("detail")
    assert classify_error(mine, server="a") is mine and mine.server == "a"
    other = ConnectionFailed("detail", server="b")
    assert classify_error(other, server="a").server == "b"


def test_group_with_several_leaves_reports_the_telling_one() -> None:
    cancelled = asyncio.CancelledError()
    group = BaseExceptionGroup(
        "tasks", [cancelled, BaseExceptionGroup("inner", [cancelled, ConnectionRefusedError(111, "refused")])]
    )
    error = classify_error(group, server="x")
    assert isinstance(error, ConnectionFailed) and "connection refused" in error.message
    only_cancelled = classify_error(
        BaseExceptionGroup("tasks", [cancelled, asyncio.CancelledError()]), server="x"
    )
    assert isinstance(only_cancelled, InternalError) and "CancelledError" in only_cancelled.message


def test_messages_are_one_bounded_line() -> None:
    error = classify_error(ValueError("line one\nline two " + "y" * 1000), server="x")
    assert "\n" not in error.message
    assert len(error.message) == 400 and error.message.endswith("…")
    assert "line one line two" in error.message
