"""How a gateway names what it passes on: tools, prompts and resources of several servers in one
namespace.

``bridged`` (the default): a tool is ``<prefix>__<server>__<tool>_<hash8>``, the stable name the
host API gives it; a prompt is ``<server>__<prompt>``; a resource is
``orbmcp://<server>/<original URI, percent-encoded>`` (a template keeps its ``{...}`` expressions,
so an agent expands it as it would the original). ``raw``: every name and URI is the server's own,
and two served servers offering the same one is an error at start (``clashes``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from orbmcp.core.tooling.naming import bridged_name

if TYPE_CHECKING:
    from orbmcp.core.tooling.registry import BridgedTool
    from orbmcp.serve.options import NameMode

SCHEME = "orbmcp://"
PROMPT_SEPARATOR = "__"
_EXPRESSION = re.compile(r"(\{[^{}]*\})")


# What MCP allows in a tool name (and what an agent's provider will take): a raw name outside it
# (an escape sequence, an invisible character) is not passed to agents.
_VALID_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")


def valid_name(name: str) -> bool:
    return _VALID_NAME.fullmatch(name) is not None


class ToolNames:
    """Gateway names of bridged tools, and the tool behind a name.

    In raw mode a name, once served, keeps its owner for the session: a server connected later
    (a lazy one the agent starts with ``mcp_connect``) that offers the same name does not take it
    over, whatever the configuration order. Each clash and each name outside the MCP name rules is
    reported once, through ``report``."""

    def __init__(
        self, mode: NameMode, prefix: str | None, report: Callable[[str], None] | None = None
    ) -> None:
        self.mode = mode
        self.prefix = prefix  # None: the session's own prefix (the host API's names)
        self._names: dict[tuple[str, str], str] = {}
        self._owners: dict[str, str] = {}  # raw: name -> the server that served it first
        self._reported: set[str] = set()
        self._report = report or (lambda message: None)

    def name(self, tool: BridgedTool) -> str:
        if self.mode == "raw":
            return tool.name
        if self.prefix is None:
            return tool.bridged_name
        key = (tool.server, tool.name)
        name = self._names.get(key)
        if name is None:
            name = self._names[key] = bridged_name(self.prefix, tool.server, tool.name)
        return name

    def index(self, tools: Iterable[BridgedTool], reserved: Iterable[str]) -> dict[str, BridgedTool]:
        taken = set(reserved)
        tools = list(tools)
        out: dict[str, BridgedTool] = {}
        if self.mode == "raw":
            # Owners first, so a name already served goes to its owner whatever the order.
            tools.sort(key=lambda t: self._owners.get(t.name, t.server) != t.server)
        for tool in tools:
            name = self.name(tool)
            if name in taken or name in out:
                if self.mode == "raw" and name in out and out[name].server != tool.server:
                    self.report_once(
                        f"clash:{name}:{tool.server}",
                        f"tool '{name}' is served by '{out[name].server}'; '{tool.server}' offers it "
                        "too and is not served under that name (--names raw)",
                    )
                continue
            if self.mode == "raw" and not valid_name(name):
                self.report_once(
                    f"invalid:{tool.server}:{name}",
                    f"tool {name!r} of '{tool.server}' is outside the MCP name rules; not served "
                    "(--names bridged serves it under a safe name)",
                )
                continue
            if self.mode == "raw":
                self._owners.setdefault(name, tool.server)
            out[name] = tool
        return out

    def report_once(self, key: str, message: str) -> None:
        if key not in self._reported:
            self._reported.add(key)
            self._report(message)


def tool_wire(name: str, tool: BridgedTool) -> dict[str, Any]:
    """A tool as ``tools/list`` gives it: the server's title, description, schemas and annotations
    unchanged, under the gateway's name."""
    wire: dict[str, Any] = {"name": name, "inputSchema": tool.input_schema}
    if tool.title is not None:
        wire["title"] = tool.title
    if tool.raw_description is not None:
        wire["description"] = tool.raw_description
    if tool.output_schema is not None:
        wire["outputSchema"] = tool.output_schema
    if tool.annotations is not None:
        wire["annotations"] = tool.annotations
    return wire


def clashes(names: Mapping[str, Iterable[str]], reserved: Iterable[str], what: str) -> list[str]:
    """In raw mode: every name offered by two servers (``names``: server -> its names, in order),
    or by a server and orbmcp itself, as one message each."""
    owners: dict[str, str] = dict.fromkeys(reserved, "orbmcp itself")
    out: list[str] = []
    for server, offered in names.items():
        for name in offered:
            owner = owners.get(name)
            if owner is None:
                owners[name] = f"'{server}'"
            elif owner != f"'{server}'":
                out.append(f"{what} '{name}' is offered by {owner} and '{server}'")
    return out


def prompt_name(mode: NameMode, server: str, prompt: str) -> str:
    return prompt if mode == "raw" else f"{server}{PROMPT_SEPARATOR}{prompt}"


def resource_uri(mode: NameMode, server: str, uri: str) -> str:
    if mode == "raw":
        return uri
    return f"{SCHEME}{quote(server, safe='')}/{quote(uri, safe='')}"


def template_uri(mode: NameMode, server: str, template: str) -> str:
    """A resource template's gateway form: literal text percent-encoded, ``{...}`` kept."""
    if mode == "raw":
        return template
    parts = _EXPRESSION.split(template)
    encoded = "".join(part if _EXPRESSION.fullmatch(part) else quote(part, safe="") for part in parts)
    return f"{SCHEME}{quote(server, safe='')}/{encoded}"


def parse_resource_uri(uri: str) -> tuple[str, str] | None:
    """``(server, original URI)`` of a bridged resource URI; None for anything else."""
    if not uri.startswith(SCHEME):
        return None
    server, sep, rest = uri[len(SCHEME) :].partition("/")
    if not sep or not server:
        return None
    return unquote(server), unquote(rest)
