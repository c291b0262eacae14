"""Connections to MCP servers, below every front: ``processes`` (a stdio server's process tree),
``wire`` (one connection: connect, the transports, the SDK glue), ``session`` (the manager and a
supervisor per server), ``tooling`` (tools and calls) and ``capabilities`` (what a server asks of
the client). Each sub-package's docstring says what it owns; ARCHITECTURE.md maps them.
"""
