"""The loopback callback listener and the pasted-redirect parser."""

from __future__ import annotations

from typing import Any

import anyio
import httpx2
import pytest
from anyio.abc import SocketAttribute

from orbmcp.auth.callback import CallbackListener, CallbackResult, parse_pasted_redirect
from orbmcp.errors import AuthError
from tests.timeouts import HANG_GUARD_S

STATE = "st-" + "Pq4Wz8Lm" * 6


async def serve(listener: CallbackListener, out: list[Any], **kw: Any) -> None:
    try:
        out.append(await listener.wait(**kw))
    except AuthError as err:
        out.append(err)


async def test_only_the_expected_state_settles(tmp_path: Any) -> None:
    out: list[Any] = []
    async with CallbackListener(server="srv") as listener:
        assert listener._listener is not None
        assert listener._listener.extra(SocketAttribute.local_address)[0] == "127.0.0.1"
        port = listener.port
        listener.expect_state(STATE)
        base = f"http://127.0.0.1:{port}"
        with anyio.fail_after(HANG_GUARD_S):
            async with anyio.create_task_group() as tg, httpx2.AsyncClient(timeout=5) as hc:
                tg.start_soon(serve, listener, out)
                r = await hc.get(f"{base}/callback", params={"code": "c1", "state": "wrong"})
                assert r.status_code == 400 and "still pending" in r.text and "success" not in r.text.lower()
                r = await hc.get(f"{base}/callback", params={"code": "c1"})
                assert r.status_code == 400
                r = await hc.get(
                    f"{base}/callback",
                    params={"code": "c1", "state": STATE},
                    headers={"Host": "evil.example"},
                )
                assert r.status_code == 421
                r = await hc.post(f"{base}/callback", params={"code": "c1", "state": STATE})
                assert r.status_code == 405
                r = await hc.get(f"{base}/elsewhere")
                assert r.status_code == 404
                assert out == []  # none of those settled (or cancelled) the flow
                r = await hc.get(
                    f"{base}/callback", params={"code": "c1", "state": STATE, "iss": "https://as.example"}
                )
                assert r.status_code == 200 and "success" not in r.text.lower()
    assert out == [CallbackResult(code="c1", state=STATE, iss="https://as.example")]
    assert listener.rejected == 4 and listener.closed
    with pytest.raises(httpx2.ConnectError):  # closed after one success
        async with httpx2.AsyncClient(timeout=5) as hc:
            await hc.get(f"{base}/callback", params={"code": "c2", "state": STATE})


async def test_timeout_closes_the_listener_and_frees_the_port() -> None:
    listener = CallbackListener(server="srv")
    await listener.start()
    port = listener.port
    listener.expect_state(STATE)
    with (
        anyio.fail_after(HANG_GUARD_S),
        pytest.raises(AuthError, match="no authorization response arrived within 0 s"),
    ):
        await listener.wait(0.3)
    async with CallbackListener(port=port) as again:
        assert again.port == port


async def test_error_response_fails_without_echoing_the_description() -> None:
    out: list[Any] = []
    async with CallbackListener(server="srv") as listener:
        listener.expect_state(STATE)
        with anyio.fail_after(HANG_GUARD_S):
            async with anyio.create_task_group() as tg, httpx2.AsyncClient(timeout=5) as hc:
                tg.start_soon(serve, listener, out)
                params = {
                    "error": "access_denied",
                    "error_description": "<script>x</script>\nforged",
                    "state": STATE,
                }
                r = await hc.get(f"http://127.0.0.1:{listener.port}/callback", params=params)
    assert r.status_code == 400 and "<script>" not in r.text
    (err,) = out
    assert isinstance(err, AuthError) and err.message == "the authorization server refused: access_denied"
    assert err.reason == "authorization_refused"


async def test_pasted_redirect_races_the_listener() -> None:
    pastes = iter(
        [
            "http://127.0.0.1:1/callback?code=x&state=bad",
            f"http://127.0.0.1:1/callback?code=good&state={STATE}",
        ]
    )
    notes: list[str] = []
    out: list[Any] = []
    async with CallbackListener() as listener:
        listener.expect_state(STATE)
        with anyio.fail_after(HANG_GUARD_S):
            await serve(listener, out, timeout_s=5, paste=lambda: next(pastes), notify=notes.append)
    assert out == [CallbackResult(code="good", state=STATE)]
    assert len(notes) == 1 and "state mismatch" in notes[0]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"http://127.0.0.1:5555/callback?code=abc&state={STATE}", CallbackResult("abc", STATE)),
        (
            f"  code=abc&state={STATE}&iss=https%3A%2F%2Fas.example \n",
            CallbackResult("abc", STATE, "https://as.example"),
        ),
        (f"?state={STATE}&code=abc", CallbackResult("abc", STATE)),
        ("http://127.0.0.1:5555/callback?code=abc&state=other", "state mismatch"),
        ("http://127.0.0.1:5555/callback?code=abc", "state mismatch"),
        (f"http://127.0.0.1:5555/callback?state={STATE}", "no code"),
        (f"http://127.0.0.1:5555/callback?state={STATE}&code=a&code=b", "no code"),
        (f"http://127.0.0.1:5555/callback?state={STATE}&error=%3Cbad%3E", "refused: invalid"),
    ],
)
def test_parse_pasted_redirect(text: str, expected: Any) -> None:
    if isinstance(expected, CallbackResult):
        assert parse_pasted_redirect(text, STATE) == expected
    else:
        with pytest.raises(AuthError, match=expected):
            parse_pasted_redirect(text, STATE)


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ("code=abc&state=other", "state_mismatch"),
        (f"state={STATE}", "no_code"),
        (f"state={STATE}&error=access_denied", "authorization_refused"),
    ],
)
def test_each_refusal_has_its_reason(query: str, reason: str) -> None:
    # The listener and the paste loop keep waiting on a state mismatch and stop on the others:
    # they tell them apart by this reason, never by the message.
    with pytest.raises(AuthError) as caught:
        parse_pasted_redirect(query, STATE)
    assert caught.value.reason == reason


def test_result_repr_hides_the_code() -> None:
    assert "secret-code" not in repr(CallbackResult("secret-code", STATE))
