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
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from orbmcp.core.naming import bridged_name

if TYPE_CHECKING:
    from orbmcp.core.tools import BridgedTool
    from orbmcp.serve.options import NameMode

SCHEME = "orbmcp://"
PROMPT_SEPARATOR = "__"
_EXPRESSION = re.compile(r"(\{[^{}]*\})")


class ToolNames:
    """Gateway names of bridged tools, and the tool behind a name (first one wins in raw mode)."""

    def __init__(self, mode: NameMode, prefix: str | None) -> None:
        self.mode = mode
        self.prefix = prefix  # None: the session's own prefix (the host API's names)
        self._names: dict[tuple[str, str], str] = {}

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
        out: dict[str, BridgedTool] = {}
        for tool in tools:
            name = self.name(tool)
            if name not in taken and name not in out:
                out[name] = tool
        return out


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
