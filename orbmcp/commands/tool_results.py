"""Result models of ``tools``, ``call``, ``resources``, ``read``, ``prompts`` and ``prompt``.

Each model has ``to_json()`` (the documented shape) and ``text()`` (plain text, already escaped
for a terminal: ``render_plain`` falls back to it). Server-supplied strings are stored raw and
escaped only in ``text()``. Free of the SDK: these models are built from orbmcp's own types.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from orbmcp.core.results import (
    AudioBlock,
    Block,
    ImageBlock,
    ResourceBlobBlock,
    ResourceLinkBlock,
    ResourceTextBlock,
    TextBlock,
    ToolResult,
    block_text,
    format_size,
)
from orbmcp.text import one_line, safe_text

INDENT = "    "


def _indent(text: str, prefix: str = INDENT) -> str:
    return "\n".join(prefix + line if line else line for line in text.splitlines())


def _pretty(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False, default=str)


# -- tools ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolEntry:
    """A snapshot of one bridged tool (the registry's objects change as servers come and go)."""

    server: str
    name: str
    bridged_name: str
    description: str  # with the title and annotation hints, as an LLM sees it
    raw_description: str | None
    input_schema: Mapping[str, Any]
    annotations: Mapping[str, Any] | None
    signature: str

    def to_json(self) -> dict[str, Any]:
        from orbmcp.core.tools import tool_json

        return tool_json(
            server=self.server,
            name=self.name,
            bridged_name=self.bridged_name,
            description=self.raw_description,
            input_schema=self.input_schema,
            annotations=self.annotations,
        )


@dataclass(frozen=True)
class ToolListing:
    tools: tuple[ToolEntry, ...]
    servers: tuple[str, ...]  # the servers listed, in order (a server may have no tools)
    schema: bool = False
    notices: tuple[str, ...] = ()

    def to_json(self) -> list[dict[str, Any]]:
        return [t.to_json() for t in self.tools]

    def text(self) -> str:
        lines: list[str] = []
        for server in self.servers:
            mine = [t for t in self.tools if t.server == server]
            noun = "tool" if len(mine) == 1 else "tools"
            lines.append(f"{one_line(server)} ({len(mine)} {noun})")
            for tool in mine:
                lines.append("  " + one_line(tool.signature))
                if tool.description:
                    # Paragraph breaks (description, then the hints line) are noise in a listing.
                    compact = "\n".join(x for x in tool.description.splitlines() if x.strip())
                    lines.append(_indent(safe_text(compact, multiline=True)))
                if self.schema:
                    lines.append(f"{INDENT}bridged name: {tool.bridged_name}")
                    lines.append(f"{INDENT}input schema:")
                    lines.append(
                        _indent(safe_text(_pretty(dict(tool.input_schema)), multiline=True), INDENT * 2)
                    )
        if not self.servers and not self.notices:
            lines.append("No tools: no server is connected.")
        lines += [one_line(n) for n in self.notices]
        return "\n".join(lines)


# -- call ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CallOutcome:
    """One ``orbmcp call``: the tool's result plus what the command did with it."""

    server: str
    tool: str
    result: ToolResult
    saved: Mapping[int, str] = field(default_factory=dict)  # content index -> file written
    max_output: int | None = None
    output_file: str | None = None
    output_bytes: int = 0

    @property
    def exit_code(self) -> int:
        return 1 if self.result.is_error else 0

    def to_json(self) -> dict[str, object]:
        return self.result.to_json()

    def full_text(self) -> str:
        """Everything the tool said, unescaped: what ``--output FILE`` keeps."""
        return call_text(self.result, self.saved, escape=False)

    def text(self) -> str:
        if self.output_file is not None and self.max_output is None:
            return f"[output: {format_size(self.output_bytes)} written to {one_line(self.output_file)}]"
        shown = call_text(self.result, self.saved, escape=True)
        if self.max_output is not None:
            shown, total = truncate_bytes(shown, self.max_output)
            if total is not None:
                where = (
                    f"the full output is in {one_line(self.output_file)}"
                    if self.output_file
                    else "use --output FILE to keep all of it"
                )
                shown += f"\n[output truncated: showed {self.max_output} of {total} bytes; {where}]"
        return shown


def truncate_bytes(text: str, limit: int) -> tuple[str, int | None]:
    """``text`` cut to at most ``limit`` UTF-8 bytes on a character boundary, and the original size
    when something was cut (None otherwise)."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text, None
    return data[: max(limit, 0)].decode("utf-8", "ignore"), len(data)


def call_text(result: ToolResult, saved: Mapping[int, str], *, escape: bool) -> str:
    def esc(s: str) -> str:
        return safe_text(s, multiline=True) if escape else s

    def line(s: str) -> str:
        return one_line(s) if escape else s

    parts: list[str] = []
    for index, block in enumerate(result.content):
        if isinstance(block, TextBlock):
            parts.append(esc(block.text))
        elif isinstance(block, ResourceTextBlock):
            mime = f" {block.mime_type}" if block.mime_type else ""
            parts.append(line(f"[resource {block.uri}{mime}]"))
            parts.append(esc(block.text))
        elif isinstance(block, ImageBlock | AudioBlock):
            where = saved.get(index)
            summary = block_text(block)
            parts.append(line(summary + (f" saved to {where}" if where else "")))
        elif isinstance(block, ResourceLinkBlock):
            extra = " ".join(
                x
                for x in (
                    block.name,
                    f"({block.mime_type})" if block.mime_type else "",
                    f"- {block.description}" if block.description else "",
                )
                if x
            )
            parts.append(line(f"[resource link: {block.uri}] {extra}".rstrip()))
        else:
            parts.append(line(block_text(block)))
    if result.structured is not None and not structured_is_redundant(result):
        parts.append("structured content:")
        parts.append(esc(_pretty(result.structured)))
    return "\n".join(parts)


def structured_is_redundant(result: ToolResult) -> bool:
    """True when a text block already says what ``structuredContent`` says.

    Servers commonly send both (the spec asks for a text copy); printing the same JSON twice, or
    ``3`` followed by ``{"result": 3}``, is noise.
    """
    wanted = [result.structured]
    if isinstance(result.structured, dict) and set(result.structured) == {"result"}:
        wanted.append(result.structured["result"])
    for block in result.content:
        if not isinstance(block, TextBlock):
            continue
        try:
            parsed: object = json.loads(block.text)
        except ValueError:
            parsed = block.text
        if any(w in (parsed, block.text) for w in wanted):
            return True
    return False


# -- resources -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ResourceListing:
    """Resources (and resource templates) of one or more servers, each row in wire form + server."""

    resources: tuple[Mapping[str, Any], ...]
    templates: tuple[Mapping[str, Any], ...] = ()
    servers: tuple[str, ...] = ()
    notices: tuple[str, ...] = ()

    def to_json(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self.resources] + [dict(t) for t in self.templates]

    def text(self) -> str:
        lines: list[str] = []
        for server in self.servers:
            mine = [r for r in self.resources if r.get("server") == server]
            tmpl = [t for t in self.templates if t.get("server") == server]
            lines.append(
                f"{one_line(server)} ({len(mine)} resources"
                + (f", {len(tmpl)} templates" if tmpl else "")
                + ")"
            )
            for r in mine:
                lines.append("  " + _resource_line(str(r.get("uri", "")), r))
            for t in tmpl:
                lines.append("  " + _resource_line(str(t.get("uriTemplate", "")), t) + "  (template)")
        if not self.servers and not self.notices:
            lines.append("No resources: no server is connected.")
        lines += [one_line(n) for n in self.notices]
        return "\n".join(lines)


def _resource_line(uri: str, row: Mapping[str, Any]) -> str:
    bits = [one_line(uri)]
    name = row.get("title") or row.get("name")
    if isinstance(name, str) and name and name != uri:
        bits.append(one_line(name))
    mime = row.get("mimeType")
    if isinstance(mime, str):
        bits.append(f"({one_line(mime)})")
    desc = row.get("description")
    if isinstance(desc, str) and desc.strip():
        bits.append("- " + one_line(desc, max_len=160))
    return "  ".join(bits)


@dataclass(frozen=True)
class ResourceContents:
    server: str
    uri: str
    contents: tuple[Mapping[str, Any], ...]  # wire TextResourceContents / BlobResourceContents

    def to_json(self) -> dict[str, Any]:
        return {"contents": [dict(c) for c in self.contents]}

    def text(self) -> str:
        parts: list[str] = []
        many = len(self.contents) > 1
        for item in self.contents:
            uri = str(item.get("uri", self.uri))
            mime = item.get("mimeType")
            label = f"[resource {uri}{' ' + str(mime) if mime else ''}]"
            if isinstance(item.get("text"), str):
                if many:
                    parts.append(one_line(label))
                parts.append(safe_text(str(item["text"]), multiline=True))
            else:
                blob = ResourceBlobBlock(
                    uri, str(item.get("blob", "")), mime if isinstance(mime, str) else None
                )
                parts.append(one_line(block_text(blob)))
        if not parts:
            parts.append(f"(resource {one_line(self.uri)} is empty)")
        return "\n".join(parts)


# -- prompts -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PromptListing:
    prompts: tuple[Mapping[str, Any], ...]  # wire Prompt + "server"
    servers: tuple[str, ...] = ()
    notices: tuple[str, ...] = ()

    def to_json(self) -> list[dict[str, Any]]:
        return [dict(p) for p in self.prompts]

    def text(self) -> str:
        lines: list[str] = []
        for server in self.servers:
            mine = [p for p in self.prompts if p.get("server") == server]
            lines.append(f"{one_line(server)} ({len(mine)} prompts)")
            for p in mine:
                lines.append("  " + one_line(prompt_signature(p)))
                desc = p.get("description")
                if isinstance(desc, str) and desc.strip():
                    lines.append(_indent(safe_text(desc.strip(), multiline=True)))
        if not self.servers and not self.notices:
            lines.append("No prompts: no server is connected.")
        lines += [one_line(n) for n in self.notices]
        return "\n".join(lines)


def prompt_arguments(prompt: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    args = prompt.get("arguments")
    if not isinstance(args, list):
        return []
    return [a for a in args if isinstance(a, Mapping) and isinstance(a.get("name"), str)]


def prompt_signature(prompt: Mapping[str, Any]) -> str:
    names = [str(a["name"]) + ("" if a.get("required") else "?") for a in prompt_arguments(prompt)]
    return f"{prompt.get('name', '')}({', '.join(names)})"


@dataclass(frozen=True)
class PromptMessages:
    server: str
    name: str
    result: Mapping[str, Any]  # wire GetPromptResult: description?, messages[]

    def to_json(self) -> dict[str, Any]:
        return dict(self.result)

    def text(self) -> str:
        parts: list[str] = []
        desc = self.result.get("description")
        if isinstance(desc, str) and desc.strip():
            parts.append(safe_text(desc.strip(), multiline=True))
            parts.append("")
        messages = self.result.get("messages")
        for message in messages if isinstance(messages, list) else []:
            if not isinstance(message, Mapping):
                continue
            parts.append(f"[{one_line(str(message.get('role', '?')))}]")
            content = message.get("content")
            blocks: Sequence[object] = content if isinstance(content, list) else [content]
            for block in blocks:
                parts.append(wire_block_text(block))
        return "\n".join(parts)


def wire_block_text(block: object) -> str:
    """Escaped text for one wire content block (prompt messages carry the tool content kinds)."""
    if not isinstance(block, Mapping):
        return ""
    kind = block.get("type")
    if kind == "text":
        return safe_text(str(block.get("text", "")), multiline=True)
    if kind in ("image", "audio"):
        typed: Block = (ImageBlock if kind == "image" else AudioBlock)(
            str(block.get("data", "")), str(block.get("mimeType", ""))
        )
        return one_line(block_text(typed))
    if kind == "resource":
        res = block.get("resource")
        if isinstance(res, Mapping) and isinstance(res.get("text"), str):
            return (
                one_line(f"[resource {res.get('uri', '')}]")
                + "\n"
                + safe_text(str(res["text"]), multiline=True)
            )
        if isinstance(res, Mapping):
            blob = ResourceBlobBlock(
                str(res.get("uri", "")),
                str(res.get("blob", "")),
                res.get("mimeType") if isinstance(res.get("mimeType"), str) else None,
            )
            return one_line(block_text(blob))
    if kind == "resource_link":
        return one_line(f"[resource link: {block.get('uri', '')}]")
    return one_line(f"[unsupported content: {kind}]")
