"""orbmcp's own ``/mcp`` commands as MCP prompts, and the same as tools for agents without prompts.

Agents that show server prompts as slash commands (Claude Code: ``/mcp__<server>__<prompt>``) get
``mcp``, ``mcp_server``, ``mcp_start``, ``mcp_stop``, ``mcp_auth`` and ``mcp_reconnect``. Each runs
its slash line through the slash dispatcher on the gateway's session, exactly as ``orbmcp slash``
would, and its message is the plain-text output (commands it names spelled as slash commands).
Arguments complete through ``completion/complete`` with the completer of ``orbmcp complete``.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from orbmcp.commands.spec import CommandSpec, Param
from orbmcp.errors import UsageError

if TYPE_CHECKING:
    from orbmcp.serve.gateway import Gateway
    from orbmcp.serve.peer import InFlight, Peer
    from orbmcp.session.slash import SlashReply

_TRUE = frozenset({"1", "true", "yes", "on", "reset", "--reset"})
MAX_COMPLETIONS = 100


@dataclass(frozen=True)
class SlashPrompt:
    name: str
    path: tuple[str, ...]  # the command in the table
    words: tuple[str, ...]  # what follows the command's slash spelling before the arguments
    params: tuple[str, ...]  # the command's parameters the prompt takes, in order
    required: frozenset[str] = frozenset()

    @property
    def spec(self) -> CommandSpec:
        from orbmcp.commands.table import find

        spec = find(self.path)
        assert spec is not None, self.path
        return spec

    @property
    def head(self) -> str:
        from orbmcp.commands.usage import SLASH_ROOT, primary_slash

        if self.words:
            return " ".join((SLASH_ROOT, *self.words))
        return primary_slash(self.spec)

    @property
    def description(self) -> str:
        return f"{self.spec.summary} ({self.usage})"

    @property
    def usage(self) -> str:
        names = [
            f"<{p}>" if p in self.required else f"[{'--reset' if p == 'reset' else p}]" for p in self.params
        ]
        return " ".join((self.head, *names))

    def param(self, name: str) -> Param:
        return self.spec.param(name)

    def line(self, arguments: Mapping[str, Any]) -> str:
        """The slash line for these arguments (a flag is on for true, "true", "yes", "reset")."""
        words = [self.head]
        for name in self.params:
            value = arguments.get(name)
            if self.param(name).kind == "flag":
                if value is True or (isinstance(value, str) and value.strip().lower() in _TRUE):
                    words.append(self.param(name).option_names[0])
                continue
            if value is None or value == "":
                if name in self.required:
                    raise UsageError(f"{self.name} needs '{name}'", hint=f"usage: {self.usage}")
                continue
            words.append(shlex.quote(str(value)))
        return " ".join(words)


SERVER = frozenset({"server"})
PROMPTS: tuple[SlashPrompt, ...] = (
    SlashPrompt("mcp", ("status",), (), ()),
    SlashPrompt("mcp_server", ("status",), ("status",), ("server",), SERVER),
    SlashPrompt("mcp_start", ("start",), (), ("server",), SERVER),
    SlashPrompt("mcp_stop", ("stop",), (), ("server",), SERVER),
    SlashPrompt("mcp_auth", ("auth",), (), ("server", "reset"), SERVER),
    SlashPrompt("mcp_reconnect", ("reconnect",), (), ("server",)),
)
BY_NAME: dict[str, SlashPrompt] = {p.name: p for p in PROMPTS}


def prompt_wire(prompt: SlashPrompt) -> dict[str, Any]:
    arguments = [
        {"name": name, "description": prompt.param(name).help, "required": name in prompt.required}
        for name in prompt.params
    ]
    return {
        "name": prompt.name,
        "title": prompt.usage,
        "description": prompt.description,
        "arguments": arguments,
    }


def tool_wire(prompt: SlashPrompt, servers: list[str]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for name in prompt.params:
        param = prompt.param(name)
        if param.kind == "flag":
            properties[name] = {"type": "boolean", "description": param.help}
        else:
            properties[name] = {"type": "string", "description": param.help}
            if name == "server" and servers:
                properties[name]["enum"] = servers
    schema = {"type": "object", "properties": properties, "additionalProperties": False}
    if prompt.required:
        schema["required"] = sorted(prompt.required)
    return {
        "name": prompt.name,
        "title": prompt.usage,
        "description": f"{prompt.description}. Returns the command's output as text.",
        "inputSchema": schema,
    }


async def run(
    gateway: Gateway, peer: Peer, via: InFlight | None, prompt: SlashPrompt, arguments: Mapping[str, Any]
) -> tuple[str, int]:
    """Run the prompt's slash line on the gateway's session: its text (notices after it) and exit code."""
    from orbmcp.commands.context import CommandContext
    from orbmcp.render import present
    from orbmcp.serve.ui import ServeUI
    from orbmcp.session.slash import format_error, run_slash

    ui = ServeUI(peer, via, gateway.spawn, gateway.hub.asker)
    config = gateway.config
    try:
        line = prompt.line(arguments)
    except UsageError as err:
        return format_error(err, json_output=False, front="serve"), 2
    ctx = CommandContext(
        ui=ui,
        sessions=gateway.sessions,
        project=config.project.dir,
        config_file=config.config_override,
        front="serve",
        present=present,
    )
    ctx.set_config(config)
    reply: SlashReply = await run_slash(line, ctx, json_output=False)
    text = reply.text.rstrip("\n")
    if ui.notices:
        text += "\n\n" + "\n".join(ui.notices)
    return text, reply.exit_code


def complete(gateway: Gateway, prompt: SlashPrompt, argument: str, value: str) -> list[str]:
    """Candidates for one argument, from ``orbmcp complete``'s completer on the live session."""
    if argument not in prompt.params:
        return []
    if prompt.param(argument).kind == "flag":
        return [v for v in ("true", "false") if v.startswith(value.lower())]
    from orbmcp.commands.complete import complete_line

    sessions = gateway.sessions
    config = gateway.config
    line = f"{prompt.head} {_partial(value)}"
    return complete_line(
        line,
        config_loader=lambda **_: config,
        running=sessions.running_names(),
        tool_names=sessions.tool_names(),
    )[:MAX_COMPLETIONS]


def _partial(value: str) -> str:
    """``value`` as the word being typed (quoted when it has spaces, left open)."""
    return value if value and shlex.quote(value) == value else ("'" + value.replace("'", "") if value else "")
