"""Embedding orbmcp in a Python agent: MCP tools in the agent's tool table, ``/mcp`` commands.

An agent implements ``Host`` (and any of the optional ``ActiveToolNames``, ``OpensUrls``,
``Prompts``, ``Elicits``, ``Samples``) and runs an ``McpExtension``::

    from pathlib import Path

    from orbmcp.host import HostTool, McpExtension

    class MyHost:
        interactive = True  # a person can answer questions

        def __init__(self) -> None:
            self.tools: dict[str, HostTool] = {}
            self.active: set[str] = set()

        def register_tool(self, tool: HostTool) -> None:
            self.tools[tool.name] = tool

        def set_tool_active(self, bridged_name: str, active: bool) -> None:
            (self.active.add if active else self.active.discard)(bridged_name)

        def notify(self, message: str, level: str) -> None:
            print(f"[{level}] {message}")

        def choose(self, question: str, options: list[str]) -> str | None:
            return options[0]

        def is_project_trusted(self, project_dir: Path) -> bool | None:
            return None  # let orbmcp's trust store decide

    host = MyHost()
    async with McpExtension(host) as ext:  # or: await ext.start() ... await ext.shutdown()
        search = next(t for t in ext.tools if t.tool_name == "search" and t.name in host.active)
        result = await search.call({"q": "orbmcp"})  # a ToolResult
        print(await ext.slash("/mcp"))  # the text of a slash command

``ext.config`` (a ``SessionConfig``) and ``ext.server(name)`` (a ``ServerInfo``) say what is
configured and each server's state; ``ext.slash_reply(line)`` gives a slash line's ``SlashReply``.
Only the names exported here are public (README, "Stability").

Tools are registered with the host once and then only toggled as servers connect, disconnect,
die or change their tool lists, so a reconnect never churns the host's tool table. Besides the
servers' tools the host gets ``mcp_status`` and ``mcp_connect`` for the model.

Servers registered, replaced or removed with ``orbmcp.register_server`` /
``orbmcp.config.registry.unregister_server`` while the extension runs are picked up without a
restart (files still win over registered servers). An agent that rebuilds its tool registry calls
``ext.register_into(new_host)``: the tools move over without reconnecting.

With no enabled server (or MCP turned off) the extension builds nothing and imports nothing heavy.

Servers may ask things while they work. A host implementing ``Elicits`` answers their questions
(forms typed by a schema, URLs to open) with its own UI; ``Samples`` answers their sampling requests
with the agent's model. Without them orbmcp does not advertise those capabilities. Roots are the
project directory (``ext.set_project(path)`` when the agent moves); ``ext.instructions()`` gives
the servers' instructions for the agent's system prompt.

Calls: ``HostTool.call`` returns a ``ToolResult`` (``is_error`` set when the tool itself failed:
route it through the agent's ordinary error path) and raises ``OrbError`` subclasses for failures
around the tool (connection lost, protocol, auth, timeout); ``agent_message(err)`` spells the
commands an error names as slash commands. Cancelling the calling task cancels the call on the
server (``notifications/cancelled``). Every host callback runs on the event loop, never
concurrently with another.
"""

from __future__ import annotations

from orbmcp.core.capabilities.elicitation import Choice, ElicitationAnswer, ElicitationRequest, FormField
from orbmcp.core.capabilities.sampling import SamplingAnswer, SamplingRequest
from orbmcp.core.tooling.results import (
    AudioBlock,
    ImageBlock,
    ResourceBlobBlock,
    ResourceLinkBlock,
    ResourceTextBlock,
    TextBlock,
    ToolResult,
)
from orbmcp.host.agent_tools import CONNECT_TOOL, STATUS_TOOL
from orbmcp.host.extension import McpExtension
from orbmcp.host.protocol import ActiveToolNames, Elicits, Host, OpensUrls, Prompts, Samples
from orbmcp.host.schemas import normalize_schema
from orbmcp.host.spelling import agent_message, agent_spelling
from orbmcp.host.tools import HostTool, ProgressCallback, ToolRunner, error_result, text_result
from orbmcp.host.views import ServerInfo, SessionConfig, SlashReply

# The public API (README, "Stability"): these names, their signatures and the fields of the values
# they return. The value types defined lower in orbmcp (tool results and their content blocks, a
# server's questions and their answers) are public as exported here.
__all__ = [
    "CONNECT_TOOL",
    "STATUS_TOOL",
    "ActiveToolNames",
    "AudioBlock",
    "Choice",
    "ElicitationAnswer",
    "ElicitationRequest",
    "Elicits",
    "FormField",
    "Host",
    "HostTool",
    "ImageBlock",
    "McpExtension",
    "OpensUrls",
    "ProgressCallback",
    "Prompts",
    "ResourceBlobBlock",
    "ResourceLinkBlock",
    "ResourceTextBlock",
    "Samples",
    "SamplingAnswer",
    "SamplingRequest",
    "ServerInfo",
    "SessionConfig",
    "SlashReply",
    "TextBlock",
    "ToolResult",
    "ToolRunner",
    "agent_message",
    "agent_spelling",
    "error_result",
    "normalize_schema",
    "text_result",
]
