"""Process supervision: a stdio server's process, from spawn to the stop that ends its whole tree.

Owns spawning (its own session and process group, pipes orbmcp owns, the parent-death launcher),
the process tree as the kernel sees it (liveness, escaped descendants, signals), the disk record
that lets the next run reap what a crashed one left, the pipes' fds, how a server ended (exit code,
the stderr tail) and the detached stop a one-shot command hands its servers to. Nothing here
imports ``mcp``.
"""
