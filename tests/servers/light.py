"""The lightest 2025-era MCP stdio server: ``sys`` and ``json`` only, one ``echo`` tool.

It stands in for the "light" servers of the concurrent start-up benchmark (``bench/bench_status.py``),
which must measure orbmcp rather than ten interpreters booting on two cores: it boots in a few
milliseconds (run it with ``python -S``: it needs nothing from site-packages) and answers every
request after ``argv[1]`` seconds (default 0). It exits on stdin EOF.

``LIGHT_ECHO_DESCRIPTION`` and ``LIGHT_ECHO_TYPE`` change its tool between two runs: a server
whose tool changed after it was reviewed (the tool lock's tests).
"""

import json
import os
import sys
import time

TOOLS = [
    {
        "name": "echo",
        "description": os.environ.get("LIGHT_ECHO_DESCRIPTION", "Echo the text back."),
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": os.environ.get("LIGHT_ECHO_TYPE", "string")}},
        },
    }
]


def answer(method: str, params: dict) -> dict:  # type: ignore[type-arg]
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "light", "version": "1"},
        }
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        text = str(params.get("arguments", {}).get("text", ""))
        return {"content": [{"type": "text", "text": text}]}
    return {}


def main() -> None:
    delay = float(sys.argv[1]) if len(sys.argv) > 1 else 0.0
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if not isinstance(msg, dict) or "id" not in msg or "method" not in msg:
            continue  # notifications and replies need no answer
        if delay:
            time.sleep(delay)
        method = msg["method"]
        if method in ("initialize", "tools/list", "tools/call", "ping"):
            reply = {"jsonrpc": "2.0", "id": msg["id"], "result": answer(method, msg.get("params") or {})}
        else:
            reply = {
                "jsonrpc": "2.0",
                "id": msg["id"],
                "error": {"code": -32601, "message": "Method not found"},
            }
        out.write(json.dumps(reply).encode() + b"\n")
        out.flush()


if __name__ == "__main__":
    main()
