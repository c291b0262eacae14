"""A session daemon in a process of its own, with limits a test sets (not a mock: the real daemon).

    python -m tests.daemon.limited_daemon --home H --project P [--nofile N] [--hello-timeout S]
        [--max-connections N]

Serves the scope of ``--home`` (the global dir) and ``--project`` on that scope's socket, as
``orbmcp daemon start`` would, with ``RLIMIT_NOFILE`` lowered to ``--nofile``. It prints ``ready``
once it listens, and ``accept-failed`` the first time ``accept`` failed (the daemon's own counter):
lines a test reads from its stdout to know where the daemon is.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
from pathlib import Path

import anyio

from orbmcp.daemon.server import Daemon
from orbmcp.session.daemon_scope import current_scope


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


async def watch(daemon: Daemon) -> None:
    while not getattr(daemon, "accept_failures", 0):
        await anyio.sleep(0.01)
    say("accept-failed")


async def main(args: argparse.Namespace) -> None:
    environ = dict(os.environ)
    scope = current_scope(environ={"ORB_AGENT_DIR": args.home}, cwd=Path(args.project))
    kwargs = {}
    if args.hello_timeout is not None:
        kwargs["hello_timeout_s"] = args.hello_timeout
    if args.max_connections is not None:
        kwargs["max_connections"] = args.max_connections
    daemon = Daemon(scope, environ=environ, cwd=Path(args.project), idle_timeout_s=None, **kwargs)  # type: ignore[arg-type]
    daemon.acquire()
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(watch, daemon)
            await daemon.serve(on_ready=lambda: say("ready"))
            tg.cancel_scope.cancel()
    finally:
        daemon.release()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--home", required=True)
    parser.add_argument("--project", required=True)
    parser.add_argument("--nofile", type=int)
    parser.add_argument("--hello-timeout", type=float)
    parser.add_argument("--max-connections", type=int)
    parsed = parser.parse_args()
    if parsed.nofile is not None:
        _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (parsed.nofile, hard))
    anyio.run(main, parsed)
