"""The small rules of the client side: sampling results and command, log messages, roots, URI
templates, task polling, and who is asked."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from orbmcp.core.capabilities import ClientFeatures, Interaction
from orbmcp.core.capabilities.askers import AskerRoute
from orbmcp.core.capabilities.client_side import default_sampling, is_legacy
from orbmcp.core.capabilities.roots import Root, root_of, roots_of
from orbmcp.core.capabilities.sampling import (
    MAX_OUTPUT_BYTES,
    SamplingFailed,
    SamplingRequest,
    check_result,
    run_command,
)
from orbmcp.core.capabilities.server_log import MAX_TEXT, check_level, message_from
from orbmcp.core.capabilities.tasks import MAX_POLL_S, MIN_POLL_S, TaskProtocolError, _task, poll_interval
from orbmcp.core.capabilities.templates import completion_point, literal_prefix, parameters
from tests.timeouts import scaled
from tests.ui import SilentUI


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


RESULT = {
    "role": "assistant",
    "content": {"type": "text", "text": "hi"},
    "model": "m",
    "stopReason": "endTurn",
}


def sampler(tmp_path: Path, body: str) -> tuple[str, ...]:
    script = tmp_path / "sampler.py"
    script.write_text(body, encoding="utf-8")
    return (sys.executable, str(script))


def request(command: tuple[str, ...] | None, timeout_ms: int = 30_000) -> SamplingRequest:
    params = {
        "messages": [{"role": "user", "content": {"type": "text", "text": "question"}}],
        "systemPrompt": "be brief",
        "modelPreferences": {"hints": [{"name": "small"}]},
        "maxTokens": 20,
    }
    return SamplingRequest("srv", params, command, timeout_ms)


def test_sampling_results_are_checked() -> None:
    assert check_result(RESULT) == RESULT
    assert check_result({**RESULT, "role": None} | {"role": "assistant"})["role"] == "assistant"
    for bad, why in [
        ([], "not a JSON object"),
        ({**RESULT, "role": "system"}, "role"),
        ({**RESULT, "content": {"type": "video"}}, "content"),
        ({**RESULT, "content": {"type": "text"}}, "needs 'text'"),
        ({**RESULT, "model": ""}, "model"),
    ]:
        with pytest.raises(SamplingFailed, match=why):
            check_result(bad)
    req = request(None)
    assert (req.system_prompt, req.max_tokens, req.model_preferences) == (
        "be brief",
        20,
        {"hints": [{"name": "small"}]},
    )
    assert json.loads(req.command_input())["server"] == "srv"


async def test_the_sampling_command_gets_the_request_and_answers(tmp_path: Path) -> None:
    echo = sampler(
        tmp_path,
        "import json, sys\nreq = json.load(sys.stdin)\n"
        "text = req['request']['messages'][0]['content']['text']\n"
        "print(json.dumps({'content': {'type': 'text', 'text': text + ' from ' + req['server']},"
        " 'model': 'fake'}))\n",
    )
    result = await run_command(request(echo))
    assert result["content"]["text"] == "question from srv" and result["role"] == "assistant"
    answer = await default_sampling(request(echo))
    assert answer.action == "result"


@pytest.mark.parametrize(
    ("body", "timeout_ms", "why"),
    [
        ("import sys; sys.exit(3)", 60_000, "exited with status 3"),
        ("print('not json')", 60_000, "did not print a JSON object"),
        (f"import sys; sys.stdout.write('x' * ({MAX_OUTPUT_BYTES} + 10))", 60_000, "more than"),
        ("import time; time.sleep(600)", 300, "did not answer within 300 ms"),  # never answers
    ],
)
async def test_a_failing_sampling_command_is_a_refusal(
    tmp_path: Path, body: str, timeout_ms: int, why: str
) -> None:
    with anyio.fail_after(scaled(150)):
        with pytest.raises(SamplingFailed, match=why):
            await run_command(request(sampler(tmp_path, body), timeout_ms=timeout_ms))
        answer = await default_sampling(request(sampler(tmp_path, body), timeout_ms=timeout_ms))
    assert answer.action == "reject" and answer.reason is not None and why in answer.reason


async def test_without_a_command_sampling_is_refused(tmp_path: Path) -> None:
    assert (await default_sampling(request(None))).reason == "no sampling command is configured"
    with pytest.raises(SamplingFailed, match="cannot run"):
        await run_command(request((str(tmp_path / "missing"),)))


def test_log_messages_are_cut_and_levels_checked() -> None:
    msg = message_from("warning", "db", "x" * (MAX_TEXT + 50))
    assert len(msg.text) == MAX_TEXT + 1 and msg.line().startswith("[log warning] db: xxx")
    assert message_from("bogus", 5, {"a": [1]}).line() == '[log info] {"a":[1]}'
    assert message_from("error", "", object()).text.startswith('"<object object')
    assert [check_level(v) for v in ("WARN", "err", "debug")] == ["warning", "error", "debug"]
    with pytest.raises(ValueError, match="one of debug, info"):
        check_level("loud")


def test_roots_are_file_uris_named_after_their_directory(tmp_path: Path) -> None:
    assert root_of(tmp_path) == Root(tmp_path.as_uri(), tmp_path.name)
    assert roots_of([tmp_path, tmp_path, "/"]) == (
        Root(tmp_path.as_uri(), tmp_path.name),
        Root("file:///", "/"),
    )
    assert root_of("rel").uri == (Path.cwd() / "rel").as_uri()
    assert Root("file:///x").to_json() == {"uri": "file:///x"}


def test_uri_templates() -> None:
    assert parameters("gh://{owner}/{repo}{?state,page}{#frag*}") == [
        "owner",
        "repo",
        "state",
        "page",
        "frag",
    ]
    assert literal_prefix("gh://{owner}") == "gh://" and literal_prefix("static://x") == "static://x"
    point = completion_point("gh://{owner}/{repo}/issues", "gh://orb/mc")
    assert point is not None and (point.prefix, point.variable, point.partial, point.earlier) == (
        "gh://orb/",
        "repo",
        "mc",
        {"owner": "orb"},
    )
    assert completion_point("gh://{owner}", "http://x") is None
    assert completion_point("gh://{+path}", "gh://a") is None  # operators are not completed
    assert completion_point("gh://{owner}/x", "gh://o/x") is None  # nothing left to type


def test_task_polling_honours_the_server_within_bounds() -> None:
    assert poll_interval({"pollInterval": 250}) == 0.25
    assert poll_interval({"pollInterval": 0}) == MIN_POLL_S
    assert poll_interval({"pollInterval": 10**9}) == MAX_POLL_S
    assert poll_interval({"pollInterval": "soon"}) == poll_interval({}) == 1.0
    assert _task({"task": {"taskId": "t", "status": "working"}})["taskId"] == "t"
    for bad in ({"taskId": "", "status": "working"}, {"taskId": "t", "status": "sleeping"}, [], {"task": 3}):
        with pytest.raises(TaskProtocolError):
            _task(bad)


async def test_the_newest_waiting_command_is_asked_and_told() -> None:
    session_ui, first, second = SilentUI(), SilentUI(), SilentUI()
    route = AskerRoute(lambda: session_ui)
    record: list[Interaction] = []
    logs: list[Any] = []
    assert route.current() is session_ui and not route.has_log_listeners()
    with route.asking(first, record=record):
        with route.asking(second, logs=logs.append):
            assert route.current() is second and route.has_log_listeners()
            route.note(Interaction("elicitation", "s", "decline"))
            route.log(message_from("info", None, "x"))
        with route.asking(None):
            assert route.current() is first  # a command with no UI of its own leaves the asking
    assert route.current() is session_ui
    assert record == [Interaction("elicitation", "s", "decline")] and len(logs) == 1
    assert (await first.elicit(None)).action == "decline"  # type: ignore[arg-type]


def test_features_and_eras() -> None:
    assert ClientFeatures().to_json() == {
        "elicitation": {"form": {}, "url": {}},
        "roots": {"listChanged": True},
    }
    assert ClientFeatures(elicitation=False, roots=False, sampling=True).to_json() == {"sampling": {}}
    assert is_legacy("2025-11-25") and not is_legacy("2026-07-28") and not is_legacy(None)
    assert Interaction("url", "s", "accept", url="https://x").to_json() == {
        "kind": "url",
        "server": "s",
        "action": "accept",
        "url": "https://x",
    }


async def test_following_needs_a_server_that_offers_subscriptions() -> None:
    from types import SimpleNamespace

    from orbmcp.core.capabilities.subscriptions import follow
    from orbmcp.errors import UsageError

    caps = SimpleNamespace(resources=SimpleNamespace(subscribe=False))
    legacy = SimpleNamespace(
        name="s",
        snap=SimpleNamespace(protocol_version="2025-11-25"),
        client=SimpleNamespace(server_capabilities=caps),
    )
    with pytest.raises(UsageError, match="does not offer resource subscriptions"):
        await follow(legacy, "mem://x", lambda: None)  # type: ignore[arg-type]
    modern = SimpleNamespace(name="s", snap=SimpleNamespace(protocol_version="2026-07-28"), client=None)
    with pytest.raises(UsageError, match="not connected"):
        await follow(modern, "mem://x", lambda: None)  # type: ignore[arg-type]
