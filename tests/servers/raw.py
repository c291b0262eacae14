"""Hand-written 2025-era MCP stdio server with switchable faults.

Stdlib only, so it starts in a few tens of milliseconds: it stands in for the "light" servers of
benchmarks and for the misbehaving servers the SDK cannot be made to imitate. Flags combine freely;
run with ``--help`` for the list.

Descendant processes (``--spawn-child``/``--spawn-grandchild``) run this same script with
``--liveness-only``: they connect to the ``--liveness`` socket, send ``"<pid> <role>\\n"`` and block,
so the test sees EOF on that connection exactly when the process dies.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
from typing import Any, BinaryIO

KNOWN_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
FALLBACK_VERSION = "2025-06-18"
FAKE_SECRET = "Authorization: Bearer sk-test-SECRET123"
REPEATED_CURSOR = "again"
NEXT_ROLE = {"server": "child", "child": "grandchild"}
# Leaked descendants of a failed test must not live on in CI forever.
DESCENDANT_MAX_LIFETIME = 300.0
# A hang guard (a descendant that never says it is ready), generous for a loaded machine.
READY_TIMEOUT = 30.0
# A barrier that never fills (the client connected its servers one at a time) must not hold a
# server forever: past this the server answers anyway and the test's own bound has failed it.
BARRIER_TIMEOUT = 60.0

_keep_alive: list[object] = []


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--ignore-unknown", action=argparse.BooleanOptionalAction, default=True)
    p.add_argument("--answer-discover-error", type=int, metavar="CODE")
    p.add_argument("--protocol-version", metavar="V", help="answer initialize with exactly this version")
    p.add_argument("--delay-start", type=float, default=0.0, metavar="SECONDS")
    p.add_argument("--delay-answer", type=float, default=0.0, metavar="SECONDS")
    p.add_argument("--hang", action="store_true", help="never answer initialize")
    p.add_argument(
        "--barrier",
        metavar="DIR:N",
        help="answer initialize only once N servers sharing DIR have received theirs",
    )
    p.add_argument("--crash-on-call", action="store_true", help="os._exit(1) when tools/call arrives")
    p.add_argument("--exit-after-init", action="store_true")
    p.add_argument("--linger", action="store_true", help="keep running after stdin EOF")
    p.add_argument("--ignore-sigterm", action="store_true")
    p.add_argument("--exit-on-sigterm-fast", action="store_true", help="default SIGTERM action (explicit)")
    p.add_argument("--liveness", metavar="HOST:PORT")
    p.add_argument("--spawn-child", action="store_true")
    p.add_argument("--spawn-grandchild", action="store_true")
    p.add_argument("--daemon-child", action="store_true", help="spawn a child, exit right after initialize")
    p.add_argument("--setsid-child", action="store_true", help="the child leaves the process group")
    p.add_argument("--child-keeps-pipes", action="store_true", help="descendants inherit stdin/stdout/stderr")
    p.add_argument("--garbage", action="store_true", help="non-JSON and invalid UTF-8 lines before 1st reply")
    p.add_argument("--garbage-json", action="store_true", help="valid JSON, not JSON-RPC, before 1st reply")
    p.add_argument("--huge-line", type=int, default=0, metavar="BYTES", help="on first tools/list")
    p.add_argument("--stderr-lines", type=int, default=0, metavar="N")
    p.add_argument("--stderr-flood", type=int, default=0, metavar="BYTES")
    p.add_argument("--tools", type=int, metavar="N", help="synthetic tools t0000.. instead of echo/never")
    p.add_argument("--page-size", type=int, default=0, metavar="K")
    p.add_argument("--repeat-cursor", action="store_true")
    p.add_argument("--record", metavar="PATH", help="append every received message as a JSON line")
    p.add_argument("--die-at", choices=("start", "call"), help="print --fatal to stderr and exit there")
    p.add_argument("--fatal", default="fatal: missing API_KEY", metavar="TEXT")
    p.add_argument("--exit-code", type=int, default=3, metavar="N", help="the code --die-at exits with")
    p.add_argument("--huge-on-call", type=int, default=0, metavar="BYTES", help="answer tools/call so")
    p.add_argument("--open-tool", action="store_true", help="a tool 'open' whose schema allows any key")
    p.add_argument("--big-tool", action="store_true", help="a tool 'big' answering size=N characters")
    p.add_argument("--rich-tool", action="store_true", help="a tool 'configure' with every schema detail")
    p.add_argument(
        "--ref-tool", action="store_true", help="a tool 'book' whose schema has $ref, allOf, anyOf null"
    )
    p.add_argument("--annotated", action="store_true", help="echo's content carries annotations and _meta")
    p.add_argument(
        "--fail-first",
        metavar="N:PATH",
        help="the first N starts (counted as lines of PATH) die at start like --die-at start",
    )
    # internal: descendant mode
    p.add_argument("--liveness-only", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--role", default="server", help=argparse.SUPPRESS)
    p.add_argument("--ready-fd", type=int, help=argparse.SUPPRESS)
    p.add_argument("--setsid", action="store_true", help=argparse.SUPPRESS)
    return p.parse_args(argv)


# --- process tree -----------------------------------------------------------------------------


def connect_liveness(address: str, role: str) -> socket.socket:
    host, _, port = address.rpartition(":")
    sock = socket.create_connection((host, int(port)), timeout=READY_TIMEOUT)
    sock.sendall(f"{os.getpid()} {role}\n".encode())
    # Sockets are not inherited by children, so this one closes exactly when this process dies.
    _keep_alive.append(sock)
    return sock


def spawn_descendant(args: argparse.Namespace, role: str, *, grandchild: bool) -> None:
    """Start the next process of the tree and wait until it (and its own descendant) registered."""
    ready_r, ready_w = os.pipe()
    cmd = [sys.executable, "-S", os.path.abspath(__file__), "--liveness-only", "--role", role]
    cmd += ["--ready-fd", str(ready_w)]
    if args.liveness:
        cmd += ["--liveness", args.liveness]
    if grandchild:
        cmd.append("--spawn-child")
    if args.ignore_sigterm:
        cmd.append("--ignore-sigterm")
    if args.setsid_child and role == "child":
        cmd.append("--setsid")
    std = None if args.child_keeps_pipes else subprocess.DEVNULL
    proc = subprocess.Popen(cmd, stdin=std, stdout=std, stderr=std, pass_fds=(ready_w,))
    _keep_alive.append(proc)
    os.close(ready_w)
    # EOF (descendant died) also ends the wait; the test then sees the missing role itself.
    if select.select([ready_r], [], [], READY_TIMEOUT)[0]:
        os.read(ready_r, 1)
    os.close(ready_r)


def run_descendant(args: argparse.Namespace) -> int:
    if args.setsid:
        os.setsid()
    sock = connect_liveness(args.liveness, args.role) if args.liveness else None
    if args.spawn_child:
        spawn_descendant(args, NEXT_ROLE.get(args.role, "descendant"), grandchild=False)
    if args.ready_fd is not None:
        # The parent may already be dead (a test kills it once we registered): not our problem.
        try:
            os.write(args.ready_fd, b"r")
        except OSError:
            pass
        os.close(args.ready_fd)
    # The liveness server closing (end of test) also ends us: no leaked processes.
    block(sock, DESCENDANT_MAX_LIFETIME)
    return 0


_wakeup: int | None = None


def arm_signal_wakeup() -> None:
    """Make every signal with a Python handler wake ``block``. Python runs a handler between
    bytecodes, so a signal that lands just before a plain blocking call (``sleep``, ``recv``) waits
    for that call to return: with coverage's SIGTERM handler in a measured run, a SIGTERM sent the
    instant a lingering server reached ``time.sleep(3600)`` would not end it. The handler's C part
    writes to this pipe, which ``block`` watches. Called first thing in ``main``."""
    global _wakeup
    if _wakeup is None:
        _wakeup, write = os.pipe()
        os.set_blocking(write, False)
        signal.set_wakeup_fd(write)


def block(sock: socket.socket | None, limit: float) -> None:
    """Wait ``limit`` seconds, or until ``sock`` closes; a pending signal handler runs at once."""
    arm_signal_wakeup()
    assert _wakeup is not None
    watched: list[Any] = [_wakeup] + ([sock] if sock is not None else [])
    deadline = time.monotonic() + limit
    while (left := deadline - time.monotonic()) > 0:
        ready = select.select(watched, [], [], left)[0]
        if _wakeup in ready:
            os.read(_wakeup, 512)  # the handlers run as this call returns
        if sock is not None and sock in ready:
            try:
                if not sock.recv(64):
                    return
            except OSError:
                return


# --- protocol ---------------------------------------------------------------------------------


OPEN_TOOL = {
    "name": "open",
    "description": "Takes any argument",
    "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "additionalProperties": True,
    },
}
RICH_TOOL = {
    "name": "configure",
    "title": "Configure the thing",
    "description": "Set the mode and the level of the thing.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "mode": {"type": "string", "enum": ["fast", "safe"], "description": "How to run"},
            "level": {"type": "integer", "default": 3, "description": "From 1 to 5"},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["mode"],
        "additionalProperties": False,
    },
    "execution": {"taskSupport": "optional"},
    "annotations": {"readOnlyHint": True},
}
# What an SDK (pydantic) server emits for typed parameters: $defs/$ref, allOf, Optional as anyOf null.
REF_TOOL = {
    "name": "book",
    "description": "Book a room",
    "inputSchema": {
        "type": "object",
        "$defs": {
            "Room": {"type": "object", "properties": {"floor": {"type": "integer"}}, "required": ["floor"]},
            "Named": {"type": "object", "properties": {"name": {"type": "string"}}},
        },
        "properties": {
            "room": {"allOf": [{"$ref": "#/$defs/Room"}, {"$ref": "#/$defs/Named"}], "description": "Where"},
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        },
        "required": ["room"],
    },
}


BIG_TOOL: dict[str, Any] = {
    "name": "big",
    "description": "Answer size=N characters of text (quotes, newlines, non-ASCII: JSON escapes them)",
    "inputSchema": {"type": "object", "properties": {"size": {"type": "integer"}}, "required": ["size"]},
}
BIG_PATTERN = 'say "hi" to C:\\dir\\ é\n'


def big_text(size: int) -> str:
    return (BIG_PATTERN * (size // len(BIG_PATTERN) + 1))[:size]


def tool_list(args: argparse.Namespace) -> list[dict[str, Any]]:
    empty: dict[str, Any] = {"type": "object", "properties": {}}
    if args.tools is not None:
        return [
            {"name": f"t{i:04d}", "description": f"synthetic tool {i}", "inputSchema": empty}
            for i in range(args.tools)
        ]
    extra = ([OPEN_TOOL] if args.open_tool else []) + ([RICH_TOOL] if args.rich_tool else [])
    extra += [BIG_TOOL] if args.big_tool else []
    extra += [REF_TOOL] if args.ref_tool else []
    return [
        *extra,
        {
            "name": "echo",
            "description": "Echo the text back",
            "inputSchema": {
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
            },
        },
        {"name": "never", "description": "Never answers", "inputSchema": empty},
    ]


class RawServer:
    def __init__(self, args: argparse.Namespace, out: BinaryIO) -> None:
        self.args = args
        self.out = out
        self.garbage_pending = args.garbage or args.garbage_json
        self.huge_pending = args.huge_line > 0
        self.tools = tool_list(args)

    def write_line(self, data: bytes) -> None:
        self.out.write(data + b"\n")
        self.out.flush()

    def send(self, message: dict[str, Any]) -> None:
        if self.args.delay_answer:
            time.sleep(self.args.delay_answer)
        if self.garbage_pending:
            self.garbage_pending = False
            if self.args.garbage:
                self.write_line(b"hello from a chatty server")
                self.write_line(b"\xff\xfe not utf-8 \xc3\x28")
            if self.args.garbage_json:
                self.write_line(b'{"hello": "world"}')
        # ensure_ascii keeps every message on one line whatever its strings hold.
        self.write_line(json.dumps(message, separators=(",", ":")).encode())

    def result(self, req_id: Any, result: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "id": req_id, "result": result})

    def error(self, req_id: Any, code: int, message: str) -> None:
        self.send({"jsonrpc": "2.0", "id": req_id, "error": {"code": code, "message": message}})

    def handle(self, msg: dict[str, Any]) -> None:
        method = msg.get("method")
        if not isinstance(method, str) or "id" not in msg:
            return  # notifications and stray responses need no answer
        req_id = msg["id"]
        params = msg.get("params") or {}
        if method == "initialize":
            self.initialize(req_id, params)
        elif method == "ping":
            self.result(req_id, {})
        elif method == "tools/list":
            self.list_tools(req_id, params)
        elif method == "tools/call":
            self.call_tool(req_id, params)
        elif method == "server/discover" and self.args.answer_discover_error is not None:
            self.error(req_id, self.args.answer_discover_error, "discover not supported")
        elif not self.args.ignore_unknown:
            self.error(req_id, -32601, f"Method not found: {method}")

    def initialize(self, req_id: Any, params: dict[str, Any]) -> None:
        if self.args.hang:
            return
        if self.args.barrier:
            wait_at_barrier(self.args.barrier)
        version = self.args.protocol_version
        if version is None:
            asked = params.get("protocolVersion")
            version = asked if asked in KNOWN_VERSIONS else FALLBACK_VERSION
        self.result(
            req_id,
            {
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": "raw", "version": "1.0.0"},
            },
        )
        if self.args.exit_after_init or self.args.daemon_child:
            os._exit(0)

    def list_tools(self, req_id: Any, params: dict[str, Any]) -> None:
        if self.huge_pending:
            self.huge_pending = False
            self.write_huge(self.args.huge_line)
            return
        size = self.args.page_size or len(self.tools) or 1
        cursor = params.get("cursor")
        if self.args.repeat_cursor:
            self.result(req_id, {"tools": self.tools[:size], "nextCursor": REPEATED_CURSOR})
            return
        try:
            start = 0 if cursor is None else int(cursor)
        except (TypeError, ValueError):
            self.error(req_id, -32602, f"Invalid cursor: {cursor!r}")
            return
        page: dict[str, Any] = {"tools": self.tools[start : start + size]}
        if start + size < len(self.tools):
            page["nextCursor"] = str(start + size)
        self.result(req_id, page)

    def write_huge(self, size: int) -> None:
        chunk = b"x" * min(size, 1 << 20)
        left = size
        while left > 0:
            self.out.write(chunk[:left])
            left -= len(chunk)
        self.out.flush()

    def call_tool(self, req_id: Any, params: dict[str, Any]) -> None:
        if self.args.crash_on_call:
            os._exit(1)
        if self.args.die_at == "call":
            die(self.args)
        if self.args.huge_on_call:
            self.write_huge(self.args.huge_on_call)
            self.write_line(b"")
            return
        name = params.get("name")
        if name == "never":
            return
        arguments = params.get("arguments") or {}
        block: dict[str, Any] = {"type": "text"}
        if name == "echo":
            block["text"] = str(arguments.get("text", ""))
            if self.args.annotated:
                block["annotations"] = {"audience": ["user", "assistant"], "priority": 0.9}
                block["_meta"] = {"example.com/trace": "t-1"}
        elif name == "big" and self.args.big_tool:
            block["text"] = big_text(int(arguments.get("size", 0)))
        elif name in ("open", "configure", "book"):
            block["text"] = json.dumps(arguments, sort_keys=True)
        elif any(t["name"] == name for t in self.tools):
            block["text"] = str(name)
        else:
            self.error(req_id, -32602, f"Unknown tool: {name}")
            return
        self.result(req_id, {"content": [block], "isError": False})


def count_start(spec: str) -> bool:
    """Record this start in PATH; True while it is one of the first N (it must fail)."""
    count, _, path = spec.partition(":")
    with open(path, "a+", encoding="utf-8") as f:
        f.write("start\n")
        f.seek(0)
        starts = len(f.read().splitlines())
    return starts <= int(count)


def die(args: argparse.Namespace) -> None:
    sys.stderr.write(args.fatal + "\n")
    sys.stderr.flush()
    os._exit(args.exit_code)


def wait_at_barrier(spec: str) -> None:
    """Register this server's initialize in DIR, then wait until N servers have registered theirs:
    every one of them gets past only if the client had all N initializes in flight at once."""
    directory, _, count = spec.rpartition(":")
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, str(os.getpid())), "w"):
        pass
    deadline = time.monotonic() + BARRIER_TIMEOUT
    while len(os.listdir(directory)) < int(count) and time.monotonic() < deadline:
        time.sleep(0.01)


def record(path: str | None, msg: Any) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(msg) + "\n")


def serve(args: argparse.Namespace) -> int:
    server = RawServer(args, sys.stdout.buffer)
    for line in sys.stdin.buffer:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        record(args.record, msg)
        if isinstance(msg, dict):
            server.handle(msg)
    if args.linger:
        while True:
            block(None, 3600)
    return 0


def main(argv: list[str]) -> int:
    arm_signal_wakeup()
    args = parse_args(argv)
    if args.ignore_sigterm:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    elif args.exit_on_sigterm_fast:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if args.liveness_only:
        return run_descendant(args)
    for i in range(args.stderr_lines):
        sys.stderr.write(f"raw stderr line {i}: {FAKE_SECRET}\n")
    if args.stderr_flood:
        line = b"e" * 1023 + b"\n"
        for _ in range(args.stderr_flood // len(line)):
            sys.stderr.buffer.write(line)
    sys.stderr.flush()
    if args.die_at == "start" and args.child_keeps_pipes:
        # A wrapper whose server lives on holding stdout (``sh -c 'server & exit 3'``): no EOF on
        # stdout tells the client; only the exit of the process it started does.
        spawn_descendant(args, "child", grandchild=False)
    if args.die_at == "start" or (args.fail_first and count_start(args.fail_first)):
        die(args)
    if args.liveness:
        connect_liveness(args.liveness, "server")
    if args.spawn_child or args.spawn_grandchild or args.daemon_child:
        spawn_descendant(args, "child", grandchild=args.spawn_grandchild)
    if args.delay_start:
        time.sleep(args.delay_start)
    return serve(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
