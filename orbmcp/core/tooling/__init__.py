"""Tools and calls: what a session's servers offer and the requests that use it.

Owns the tool registry (registered once, toggled on reconnects), provider-safe tool names,
salvaged tool listings, the discovery cache completion reads, requests on a live connection (tool
calls, resources, prompts), the raw ``tools/call`` relay of serve's fast lane, and orbmcp's own
SDK-free tool-result model.
"""
