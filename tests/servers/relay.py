"""A 2025-era stdlib stdio server for the tests of calls relayed raw (``orbmcp.core.tooling.call_paths``):
each tool is one behaviour.

    python tests/servers/relay.py [--record PATH]

Tools: ``echo(text)``; ``progress(steps)``: one ``notifications/progress`` per step for the call's
token, then the answer; ``hold``: never answered (cancellation, timeouts); ``crash``: the process
exits with the call pending; ``hostile(text)``: before its answer, lines aimed at the relay's reader
(bad JSON, deep nesting, an answer to an id never sent, ids that are a list or an object, all
carrying the relay's id prefix); ``gather(n)``: held until ``n`` gather calls are pending, then
answered last first; ``ask``: an ``elicitation/create`` to the client first, the answer is its
action; ``bad_result``: a result that is no ``CallToolResult``; ``weather(good)``: structured
content for its output schema (of the wrong type unless ``good``); ``fail``: an ``isError`` result
whose structured content does not fit the schema either (an error is not checked against it);
``later``: a result carrying a field of a later protocol revision (``resultType``). ``--record`` appends every message
received as a JSON line (flushed), e.g. the ``notifications/cancelled`` of a held call.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

PREFIX = "orbmcp-lane-"
TEXT = {"type": "object", "properties": {"text": {"type": "string"}}}
COUNT = {"type": "object", "properties": {"n": {"type": "integer"}, "steps": {"type": "integer"}}}
EMPTY: dict[str, Any] = {"type": "object", "properties": {}}
TOOLS = [
    {"name": "echo", "inputSchema": TEXT},
    {"name": "progress", "inputSchema": COUNT},
    {"name": "hold", "inputSchema": EMPTY},
    {"name": "crash", "inputSchema": EMPTY},
    {"name": "hostile", "inputSchema": TEXT},
    {"name": "gather", "inputSchema": COUNT},
    {"name": "ask", "inputSchema": EMPTY},
    {"name": "bad_result", "inputSchema": EMPTY},
    {
        "name": "weather",
        "inputSchema": {"type": "object", "properties": {"good": {"type": "boolean"}}},
        "outputSchema": {
            "type": "object",
            "properties": {"celsius": {"type": "number"}},
            "required": ["celsius"],
        },
    },
]


class Relay:
    def __init__(self, record: str | None) -> None:
        self.record = record
        self.gathered: list[Any] = []
        self.asking: dict[str, Any] = {}  # our request id -> the tool call waiting for its answer

    def write(self, message: Any) -> None:
        sys.stdout.buffer.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        sys.stdout.buffer.flush()

    def raw(self, line: bytes) -> None:
        sys.stdout.buffer.write(line + b"\n")
        sys.stdout.buffer.flush()

    def answer(self, req_id: Any, text: str) -> None:
        self.write({"jsonrpc": "2.0", "id": req_id, "result": {"content": [{"type": "text", "text": text}]}})

    def handle(self, msg: dict[str, Any]) -> None:
        if self.record:
            with open(self.record, "a", encoding="utf-8") as f:
                f.write(json.dumps(msg) + "\n")
        method, req_id = msg.get("method"), msg.get("id")
        if method is None and req_id in self.asking:  # the client's answer to our question
            action = (msg.get("result") or {}).get("action", "error")
            self.answer(self.asking.pop(req_id), str(action))
            return
        if not isinstance(method, str) or "id" not in msg:
            return
        params = msg.get("params") or {}
        if method == "initialize":
            self.write(
                {
                    "jsonrpc": "2.0",
                    "id": req_id,
                    "result": {
                        "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "relay", "version": "1"},
                    },
                }
            )
        elif method == "tools/list":
            self.write({"jsonrpc": "2.0", "id": req_id, "result": {"tools": TOOLS}})
        elif method == "tools/call":
            self.call(req_id, params)
        else:
            self.write({"jsonrpc": "2.0", "id": req_id, "error": {"code": -32601, "message": "no " + method}})

    def call(self, req_id: Any, params: dict[str, Any]) -> None:
        name, arguments = params.get("name"), params.get("arguments") or {}
        token = (params.get("_meta") or {}).get("progressToken")
        if name == "echo":
            self.answer(req_id, str(arguments.get("text", "")))
        elif name == "progress":
            steps = int(arguments.get("steps", 3))
            for step in range(1, steps + 1):
                note = {"progressToken": token, "progress": step, "total": steps, "message": f"step {step}"}
                self.write({"jsonrpc": "2.0", "method": "notifications/progress", "params": note})
            self.answer(req_id, f"done {steps}")
        elif name == "crash":
            os._exit(3)
        elif name == "hostile":
            self.raw(b'{"id": "' + PREFIX.encode() + b'1", "result": ')  # cut short
            self.raw(b"[" * 100_000 + b'"' + PREFIX.encode() + b'1"' + b"]" * 100_000)
            self.raw(b'{"id": {"x": "' + PREFIX.encode() + b'1"}, "result": {}, "jsonrpc": "2.0"}')
            self.raw(b'{"id": ["' + PREFIX.encode() + b'1"], "result": {}, "jsonrpc": "2.0"}')
            fake = {"jsonrpc": "2.0", "id": PREFIX + "999999", "result": {"content": []}}
            self.write(fake)
            self.answer(req_id, str(arguments.get("text", "")))
        elif name == "gather":
            self.gathered.append(req_id)
            if len(self.gathered) >= int(arguments.get("n", 1)):
                while self.gathered:
                    self.answer(self.gathered.pop(), "gathered")
        elif name == "ask":
            ask_id = f"ask-{req_id}"
            self.asking[ask_id] = req_id
            schema = {"type": "object", "properties": {"name": {"type": "string"}}}
            question = {"message": "Your name?", "requestedSchema": schema}
            self.write({"jsonrpc": "2.0", "id": ask_id, "method": "elicitation/create", "params": question})
        elif name == "bad_result":
            self.write({"jsonrpc": "2.0", "id": req_id, "result": {"content": "not a list"}})
        elif name == "later":
            result = {"content": [{"type": "text", "text": "later"}], "resultType": "complete"}
            self.write({"jsonrpc": "2.0", "id": req_id, "result": result})
        elif name in ("weather", "fail"):
            celsius: Any = 21.5 if arguments.get("good") else "warm"
            result = {
                "content": [{"type": "text", "text": "weather"}],
                "structuredContent": {"celsius": celsius},
            }
            if name == "fail":
                result["isError"] = True
            self.write({"jsonrpc": "2.0", "id": req_id, "result": result})
        # hold: never answered


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--record", default=None)
    args = p.parse_args()
    relay = Relay(args.record)
    for line in sys.stdin.buffer:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if isinstance(msg, dict):
            relay.handle(msg)


if __name__ == "__main__":
    main()
