"""Sampling as plain data, and the configured command that answers it from the shell.

A server's ``sampling/createMessage`` becomes a ``SamplingRequest`` for a front: an agent host
answers with its own model; the shell runs the command of ``"sampling": {"command": [...]}``
(global settings only) or refuses. The command gets one JSON object on stdin::

    {"server": "<name>", "request": <the createMessage params, wire JSON>}

and prints the result JSON on stdout: ``{"role": "assistant", "content": {"type": "text",
"text": "..."}, "model": "...", "stopReason": "endTurn"}``. Its output is bounded, its run is
bounded by ``timeoutMs``, and a failure is a refusal the server sees as an error, never a crash.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio

MAX_OUTPUT_BYTES = 4 * 1024 * 1024
DEFAULT_TIMEOUT_MS = 120_000
# The spec's error for "the user rejected the sampling request" (-1 in its examples).
USER_REJECTED = -1
_ROLES = ("assistant", "user")
_CONTENT_TYPES = ("text", "image", "audio")


@dataclass(frozen=True)
class SamplingRequest:
    """What a server wants a model to answer. ``params`` is the wire ``createMessage`` params
    (camelCase), raw: fronts escape what they show. ``command`` is the configured command, if any."""

    server: str
    params: Mapping[str, Any]
    command: tuple[str, ...] | None = None
    timeout_ms: int = DEFAULT_TIMEOUT_MS

    @property
    def system_prompt(self) -> str | None:
        value = self.params.get("systemPrompt")
        return value if isinstance(value, str) else None

    @property
    def model_preferences(self) -> Mapping[str, Any] | None:
        value = self.params.get("modelPreferences")
        return value if isinstance(value, Mapping) else None

    @property
    def max_tokens(self) -> int | None:
        value = self.params.get("maxTokens")
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    @property
    def messages(self) -> list[Mapping[str, Any]]:
        value = self.params.get("messages")
        return [m for m in value if isinstance(m, Mapping)] if isinstance(value, list) else []

    def command_input(self) -> str:
        """The JSON the configured command reads on stdin."""
        return json.dumps({"server": self.server, "request": dict(self.params)}, ensure_ascii=False)


@dataclass(frozen=True)
class SamplingAnswer:
    """``result`` (the wire ``CreateMessageResult``) or a refusal with the reason to report."""

    action: Literal["result", "reject"]
    result: Mapping[str, Any] | None = None
    reason: str | None = None
    model: str | None = field(default=None, compare=False)


class SamplingFailed(Exception):
    """The configured command did not produce a usable result; the message says why."""


def check_result(value: object) -> dict[str, Any]:
    """A ``CreateMessageResult`` in wire form, or ``SamplingFailed`` naming what is wrong."""
    if not isinstance(value, Mapping):
        raise SamplingFailed("the result is not a JSON object")
    role = value.get("role", "assistant")
    if role not in _ROLES:
        raise SamplingFailed(f"'role' must be assistant or user, not {str(role)[:40]!r}")
    content = value.get("content")
    blocks = content if isinstance(content, list) else [content]
    for block in blocks:
        if not isinstance(block, Mapping) or block.get("type") not in _CONTENT_TYPES:
            raise SamplingFailed("'content' must be a text, image or audio block")
        if block.get("type") == "text" and not isinstance(block.get("text"), str):
            raise SamplingFailed("a text block needs 'text'")
    model = value.get("model")
    if not isinstance(model, str) or not model:
        raise SamplingFailed("'model' (the name of the model that answered) is missing")
    out = dict(value)
    out["role"] = role
    return out


async def run_command(request: SamplingRequest) -> dict[str, Any]:
    """Run the configured command on ``request``; its result, or ``SamplingFailed``."""
    argv: Sequence[str] = request.command or ()
    if not argv:
        raise SamplingFailed("no sampling command is configured")
    try:
        with anyio.fail_after(request.timeout_ms / 1000):
            code, output = await _run(list(argv), request.command_input().encode("utf-8"))
    except TimeoutError:
        raise SamplingFailed(f"the sampling command did not answer within {request.timeout_ms} ms") from None
    except OSError as exc:
        raise SamplingFailed(f"cannot run the sampling command: {exc.strerror or exc}") from None
    if code != 0:
        raise SamplingFailed(f"the sampling command exited with status {code}")
    try:
        parsed = json.loads(output.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise SamplingFailed("the sampling command did not print a JSON object") from None
    return check_result(parsed)


async def _run(argv: list[str], data: bytes) -> tuple[int, bytes]:
    """Feed ``data`` to the command and read at most ``MAX_OUTPUT_BYTES`` of its stdout; the
    process is killed when the caller is cancelled (a timeout) or the output is too large."""
    process = await anyio.open_process(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    chunks: list[bytes] = []
    try:
        async with anyio.create_task_group() as tg:

            async def feed() -> None:
                assert process.stdin is not None
                try:
                    await process.stdin.send(data)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    pass  # the command did not read its input: its output still counts
                finally:
                    await process.stdin.aclose()

            tg.start_soon(feed)
            assert process.stdout is not None
            size = 0
            async for chunk in process.stdout:
                size += len(chunk)
                if size > MAX_OUTPUT_BYTES:
                    tg.cancel_scope.cancel()
                    break
                chunks.append(chunk)
        if size > MAX_OUTPUT_BYTES:
            raise SamplingFailed(f"the sampling command printed more than {MAX_OUTPUT_BYTES} bytes")
        code = await process.wait()
    finally:
        if process.returncode is None:
            process.kill()
        with anyio.CancelScope(shield=True):
            await process.aclose()
    return code, b"".join(chunks)


__all__ = [
    "SamplingAnswer",
    "SamplingFailed",
    "SamplingRequest",
    "check_result",
    "run_command",
]
