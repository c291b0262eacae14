"""Hand-written 2025-11-25 stdio server whose tools run as tasks (the SDK serves none).

    python tests/servers/tasks.py [--poll-ms N] [--stage-ms N]

Tools: ``research`` (``taskSupport: required``; stages reported as status messages; with
``ambiguous=true`` the task goes ``input_required`` and asks for a clarification, delivered while
the client's ``tasks/result`` is open, as server-everything's ``simulate-research-query`` does),
``count`` (``optional``: a plain call answers at once, a task call runs as a task; ``instant``,
``give_up``, ``fail`` and ``bogus`` make it answer directly, end cancelled, end failed, or report
an unknown status), ``forever``
(``required``; runs until cancelled) and ``plain`` (no tasks). A required tool called without a
``task`` gets -32601, like the TypeScript SDK answers.

With ``ORB_TEST_MARKER_DIR`` set, ``forever`` writes ``task-started`` once it runs and
``task-cancelled`` when ``tasks/cancel`` reaches it: the proof a client's Ctrl-C cancelled it.
Stdlib only.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

VERSION = "2025-11-25"
MARKER_ENV = "ORB_TEST_MARKER_DIR"
STAGES = ("Gathering sources", "Analyzing content", "Synthesizing findings", "Generating report")
TOOLS: list[dict[str, Any]] = [
    {
        "name": "research",
        "description": "A research job that runs as a task.",
        "inputSchema": {
            "type": "object",
            "properties": {"topic": {"type": "string"}, "ambiguous": {"type": "boolean"}},
            "required": ["topic"],
        },
        "execution": {"taskSupport": "required"},
    },
    {
        "name": "count",
        "description": "Count to n; as a task when asked.",
        "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}},
        "execution": {"taskSupport": "optional"},
    },
    {
        "name": "forever",
        "description": "Runs until cancelled.",
        "inputSchema": {"type": "object", "properties": {}},
        "execution": {"taskSupport": "required"},
    },
    {"name": "plain", "description": "No tasks.", "inputSchema": {"type": "object", "properties": {}}},
]


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _marker(name: str) -> None:
    directory = os.environ.get(MARKER_ENV)
    if directory:
        Path(directory, name).write_text(str(os.getpid()), encoding="utf-8")


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": False}


class Task:
    def __init__(self, task_id: str, poll_ms: int) -> None:
        self.id = task_id
        self.status = "working"
        self.message: str | None = None
        self.poll_ms = poll_ms
        self.created = _now()
        self.result: dict[str, Any] | None = None
        self.done = threading.Event()
        self.result_open = threading.Event()  # a tasks/result request is waiting

    def wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "taskId": self.id,
            "status": self.status,
            "createdAt": self.created,
            "lastUpdatedAt": _now(),
            "ttl": 60000,
            "pollInterval": self.poll_ms,
        }
        if self.message:
            out["statusMessage"] = self.message
        return out

    def finish(self, status: str, result: dict[str, Any] | None, message: str | None = None) -> None:
        if self.done.is_set():
            return
        self.status, self.result, self.message = status, result, message
        self.done.set()


class Server:
    def __init__(self, poll_ms: int, stage_ms: int) -> None:
        self.poll_ms = poll_ms
        self.stage_s = stage_ms / 1000
        self.tasks: dict[str, Task] = {}
        self.ids = itertools.count(1)
        self.lock = threading.Lock()
        self.pending: dict[str, tuple[threading.Event, list[dict[str, Any]]]] = {}
        self.created_by: dict[str, Task] = {}  # the tools/call request id that created a task
        self.current_request = threading.local()

    def send(self, message: dict[str, Any]) -> None:
        with self.lock:
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
            sys.stdout.flush()

    def ask(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """A request to the client; blocks this thread until its answer."""
        request_id = f"srv-{next(self.ids)}"
        event, box = threading.Event(), []
        self.pending[request_id] = (event, box)
        self.send({"id": request_id, "method": method, "params": params})
        event.wait(60)
        return box[0] if box else {"error": {"message": "no answer"}}

    # -- the loop --------------------------------------------------------------------------------

    def serve(self, record: str | None = None) -> None:
        for line in sys.stdin:
            if not line.strip():
                continue
            if record:
                with open(record, "a", encoding="utf-8") as f:
                    f.write(line if line.endswith("\n") else line + "\n")
            message = json.loads(line)
            if "method" not in message:
                waiting = self.pending.pop(str(message.get("id")), None)
                if waiting is not None:
                    waiting[1].append(message)
                    waiting[0].set()
                continue
            if "id" not in message:
                if message["method"] == "notifications/cancelled":
                    self.cancelled((message.get("params") or {}).get("requestId"))
                continue  # other notifications
            threading.Thread(target=self.handle, args=(message,), daemon=True).start()

    def cancelled(self, request_id: object) -> None:
        """The client gave up on a request: a task it created is cancelled too."""
        task = self.created_by.get(str(request_id))
        if task is not None and not task.done.is_set():
            task.finish("cancelled", None, "the request was cancelled")
            _marker("task-cancelled")

    def handle(self, message: dict[str, Any]) -> None:
        method, params = message["method"], message.get("params") or {}
        self.current_request.value = str(message["id"])
        try:
            result = getattr(self, "on_" + method.replace("/", "_"), self.unknown)(params)
        except LookupError as exc:
            self.send({"id": message["id"], "error": {"code": -32602, "message": str(exc)}})
            return
        except PermissionError as exc:
            self.send({"id": message["id"], "error": {"code": -32601, "message": str(exc)}})
            return
        self.send({"id": message["id"], "result": result})

    def unknown(self, params: dict[str, Any]) -> dict[str, Any]:
        raise PermissionError("Method not found")

    # -- methods ---------------------------------------------------------------------------------

    def on_initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        capabilities = {
            "tools": {},
            "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
        }
        return {
            "protocolVersion": VERSION,
            "capabilities": capabilities,
            "serverInfo": {"name": "tasks", "version": "1"},
        }

    def on_tools_list(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"tools": TOOLS}

    def on_tools_call(self, params: dict[str, Any]) -> dict[str, Any]:
        name, args = params.get("name"), params.get("arguments") or {}
        tool = next((t for t in TOOLS if t["name"] == name), None)
        if tool is None:
            raise LookupError(f"unknown tool {name}")
        support = tool.get("execution", {}).get("taskSupport")
        if "task" not in params:
            if support == "required":
                raise PermissionError(f"tool {name} requires task augmentation (taskSupport: required)")
            return _text(f"{name} done: {args.get('n', 0)}")
        if args.get("instant"):
            return _text(f"{name} done at once")  # a server may answer a task request directly
        task = Task(f"task-{next(self.ids)}", self.poll_ms)
        self.tasks[task.id] = task
        self.created_by[self.current_request.value] = task
        if args.get("bogus"):
            return {"task": {**task.wire(), "status": "sleeping"}}
        work = {"research": self.research, "count": self.count, "forever": self.forever}[str(name)]
        threading.Thread(target=work, args=(task, args), daemon=True).start()
        return {"task": task.wire()}

    def _task(self, params: dict[str, Any]) -> Task:
        task = self.tasks.get(str(params.get("taskId")))
        if task is None:
            raise LookupError("unknown task")
        return task

    def on_tasks_get(self, params: dict[str, Any]) -> dict[str, Any]:
        return self._task(params).wire()

    def on_tasks_result(self, params: dict[str, Any]) -> dict[str, Any]:
        task = self._task(params)
        task.result_open.set()
        task.done.wait()
        if task.result is None:
            raise LookupError(f"task {task.id} ended {task.status}")
        meta = {"io.modelcontextprotocol/related-task": {"taskId": task.id}}
        return {**task.result, "_meta": meta}

    def on_tasks_cancel(self, params: dict[str, Any]) -> dict[str, Any]:
        task = self._task(params)
        if not task.done.is_set():
            task.finish("cancelled", None, "cancelled by the client")
            _marker("task-cancelled")
        return task.wire()

    # -- the work --------------------------------------------------------------------------------

    def research(self, task: Task, args: dict[str, Any]) -> None:
        clarification = None
        for index, stage in enumerate(STAGES):
            if task.done.is_set():
                return
            task.status, task.message = "working", f"{stage}..."
            if index == 2 and args.get("ambiguous"):
                task.status, task.message = "input_required", "needs a clarification"
                task.result_open.wait(60)  # delivered while the client's tasks/result is open
                schema = {
                    "type": "object",
                    "properties": {
                        "interpretation": {
                            "type": "string",
                            "title": "Clarification",
                            "oneOf": [
                                {"const": "technical", "title": "Technical"},
                                {"const": "historical", "title": "Historical"},
                            ],
                        }
                    },
                    "required": ["interpretation"],
                }
                meta = {"io.modelcontextprotocol/related-task": {"taskId": task.id}}
                answer = self.ask(
                    "elicitation/create",
                    {"message": f"Which {args.get('topic')}?", "requestedSchema": schema, "_meta": meta},
                )
                result = answer.get("result") or {}
                content = result.get("content") or {}
                clarification = content.get("interpretation") or result.get("action", "no answer")
                task.status, task.message = "working", f"Continuing with {clarification}"
            time.sleep(self.stage_s)
        topic = args.get("topic", "?") + (f" ({clarification})" if clarification else "")
        task.finish("completed", _text(f"Report on {topic}: {len(STAGES)} stages"))

    def count(self, task: Task, args: dict[str, Any]) -> None:
        if args.get("give_up"):
            task.finish("cancelled", None, "the server gave up")
            return
        if args.get("fail"):
            task.finish("failed", None, "it broke")
            return
        n = int(args.get("n", 3))
        for i in range(1, n + 1):
            task.message = f"counted {i} of {n}"
            time.sleep(self.stage_s)
        task.finish("completed", _text(f"count done: {n}"))

    def forever(self, task: Task, args: dict[str, Any]) -> None:
        task.message = "running until cancelled"
        _marker("task-started")
        task.done.wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--poll-ms", type=int, default=20)
    parser.add_argument("--stage-ms", type=int, default=20)
    parser.add_argument("--record", metavar="PATH", help="append every received message as a JSON line")
    args = parser.parse_args()
    Server(args.poll_ms, args.stage_ms).serve(args.record)


if __name__ == "__main__":
    main()
