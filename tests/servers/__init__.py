"""Real MCP servers (stdio, HTTP, SSE, raw JSON-RPC) that tests run as subprocesses."""
