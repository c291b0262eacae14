"""Task-augmented tool calls (protocol 2025-11-25, "tasks"): call now, fetch the result later.

A tool whose ``execution.taskSupport`` is ``required`` must be called with a ``task`` field; the
server answers at once with a task (``CreateTaskResult``), and the client polls ``tasks/get``
(honouring the task's ``pollInterval``) until the task is terminal, then fetches ``tasks/result``.
A task in ``input_required`` needs the client to call ``tasks/result`` right away: the server
delivers its questions (elicitations, sampling) while that request is open, and answers it once
the task ends. Status messages reach the caller as progress. Cancelling the caller (Ctrl-C, a
timeout) sends ``tasks/cancel`` before the cancellation goes on.

The SDK knows the task types but not the methods (a ``CreateTaskResult`` fails its check of a
``tools/call`` result), so these requests go through the session's dispatcher as raw JSON-RPC,
stamped like every other request (``raw_request``; pinned by a contract test).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from contextlib import suppress
from typing import Any

import anyio

TERMINAL = frozenset({"completed", "failed", "cancelled"})
STATUSES = TERMINAL | {"working", "input_required"}
DEFAULT_POLL_S = 1.0
MIN_POLL_S = 0.05  # a server's pollInterval is honoured, but never as a busy loop
MAX_POLL_S = 30.0
CANCEL_WAIT_S = 5.0
TASK_TTL_MS = 60 * 60 * 1000  # how long the server should keep the task's result for us

StatusFn = Callable[[str, str | None], None]  # (status, statusMessage)


class TaskProtocolError(Exception):
    """The server's task answers do not follow the protocol; the message says how."""


async def raw_request(session: Any, method: str, params: Mapping[str, Any], timeout_s: float | None) -> Any:
    """One JSON-RPC request on an SDK ``ClientSession``, its raw result (``MCPError`` on errors)."""
    data: dict[str, Any] = {"method": method, "params": dict(params)}
    opts: dict[str, Any] = {}
    session._stamp(data, opts)
    if timeout_s is not None:
        opts["timeout"] = timeout_s
    return await session._dispatcher.send_raw_request(method, data["params"], opts)


def _task(raw: object) -> dict[str, Any]:
    """A task object checked enough to drive the loop: an id and a known status."""
    task = raw.get("task", raw) if isinstance(raw, Mapping) else raw
    if not isinstance(task, Mapping):
        raise TaskProtocolError("the task is not an object")
    task_id, status = task.get("taskId"), task.get("status")
    if not isinstance(task_id, str) or not task_id or len(task_id) > 1000:
        raise TaskProtocolError("the task has no usable taskId")
    if status not in STATUSES:
        raise TaskProtocolError(f"unknown task status {str(status)[:40]!r}")
    return dict(task)


def poll_interval(task: Mapping[str, Any]) -> float:
    """Seconds to wait before the next ``tasks/get``: the server's ``pollInterval``, bounded."""
    value = task.get("pollInterval")
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return DEFAULT_POLL_S
    return min(max(value / 1000, MIN_POLL_S), MAX_POLL_S)


def _message(task: Mapping[str, Any]) -> str | None:
    value = task.get("statusMessage")
    return value[:500] if isinstance(value, str) and value else None


async def call_as_task(
    session: Any,
    tool: str,
    arguments: Mapping[str, Any],
    *,
    timeout_s: float | None,
    on_status: StatusFn,
    meta: Mapping[str, Any] | None = None,
) -> Any:
    """Call ``tool`` as a task and return the raw ``tools/call`` result of ``tasks/result``.

    ``timeout_s`` bounds each request (``tasks/result`` excepted: it waits for the task by
    design); bound the whole call from outside when needed.
    """
    params: dict[str, Any] = {"name": tool, "arguments": dict(arguments), "task": {"ttl": TASK_TTL_MS}}
    if meta:
        params["_meta"] = dict(meta)
    created = await raw_request(session, "tools/call", params, timeout_s)
    if isinstance(created, Mapping) and "task" not in created and "content" in created:
        return created  # the server ran it at once after all: that is the result
    task = _task(created)
    task_id = task["taskId"]
    try:
        return await _follow(session, task, timeout_s, on_status)
    except BaseException:
        # Ctrl-C, a timeout, a lost connection: the server should stop working for nobody.
        with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_WAIT_S), suppress(Exception):
            await raw_request(session, "tasks/cancel", {"taskId": task_id}, CANCEL_WAIT_S)
        raise


async def _follow(session: Any, task: dict[str, Any], timeout_s: float | None, on_status: StatusFn) -> Any:
    task_id = task["taskId"]
    on_status(task["status"], _message(task))
    while task["status"] not in TERMINAL and task["status"] != "input_required":
        await anyio.sleep(poll_interval(task))
        task = _task(await raw_request(session, "tasks/get", {"taskId": task_id}, timeout_s))
        on_status(task["status"], _message(task))
    if task["status"] == "cancelled":
        raise TaskProtocolError(f"the server cancelled the task{': ' + m if (m := _message(task)) else ''}")
    # Terminal, or waiting for input that the server delivers while tasks/result is open: fetch
    # the result, and keep showing the task's status until it arrives.
    result: list[Any] = []
    failure: list[Exception] = []
    async with anyio.create_task_group() as tg:

        async def fetch() -> None:
            try:
                result.append(await raw_request(session, "tasks/result", {"taskId": task_id}, None))
            except Exception as exc:  # raised below, outside the task group: no ExceptionGroup
                failure.append(exc)
            tg.cancel_scope.cancel()

        tg.start_soon(fetch)
        if task["status"] not in TERMINAL:
            try:
                await _watch(session, task, timeout_s, on_status)
            except Exception:
                pass  # only the status display failed; tasks/result decides
    if failure:
        raise failure[0]
    return result[0]


async def _watch(session: Any, task: dict[str, Any], timeout_s: float | None, on_status: StatusFn) -> None:
    """Poll while ``tasks/result`` is open, for the status messages (until cancelled)."""
    task_id = task["taskId"]
    while True:
        await anyio.sleep(poll_interval(task))
        try:
            task = _task(await raw_request(session, "tasks/get", {"taskId": task_id}, timeout_s))
        except TaskProtocolError:
            continue
        on_status(task["status"], _message(task))
        if task["status"] in TERMINAL:
            return


def task_support(tool: object) -> str | None:
    """A listed tool's ``execution.taskSupport`` (``forbidden``, ``optional``, ``required``)."""
    execution = getattr(tool, "execution", None)
    value = getattr(execution, "task_support", None)
    return value if value in ("forbidden", "optional", "required") else None


__all__ = ["TaskProtocolError", "call_as_task", "poll_interval", "raw_request", "task_support"]
