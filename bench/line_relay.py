"""The least a gateway process can do: copy lines from its stdin to a child's stdin and from the
child's stdout to its stdout, a blocking thread each way, nothing parsed.

``bench_serve`` runs calls through it beside ``orbmcp serve``: the throughput of this hop is the
ceiling of any gateway that is a process of its own on the machine at hand.

    python bench/line_relay.py COMMAND [ARGS...]
"""

from __future__ import annotations

import subprocess
import sys
import threading


def main(argv: list[str]) -> int:
    child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    assert child.stdin is not None and child.stdout is not None
    to_child = child.stdin

    def upstream() -> None:
        for line in sys.stdin.buffer:
            to_child.write(line)
        to_child.close()

    threading.Thread(target=upstream, daemon=True).start()
    out = sys.stdout.buffer
    for line in child.stdout:
        out.write(line)
        out.flush()
    return child.wait()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
