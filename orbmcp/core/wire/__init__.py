"""The wire: opening one connection to a server and the SDK glue around its messages.

Owns ``connect`` (process or HTTP client, SDK ``Client``, the negotiated era), the transports
(stdio over orbmcp's own pipes, Streamable HTTP, legacy SSE), loading the SDK off the event loop,
newline framing, flood control of notifications, the inbound guard between a transport and the
session, and the protocol-era cache. Connect-time only: the CLI's fast paths never import it.
"""
