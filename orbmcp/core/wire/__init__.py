"""The wire: opening one connection to a server and the SDK glue around its messages.

Owns ``connect`` (process or HTTP client, SDK ``Client``, the negotiated era), the transports
(``transports/``: one module per transport behind one interface, the registry keyed by name), the
raw channel a stdio transport hands relayed ``tools/call`` answers to (``raw_channel``), loading
the SDK off the event loop, newline framing, flood control of notifications, the inbound guard
between a transport and the session, and the protocol-era cache. Connect-time only: the CLI's fast
paths never import it.
"""
