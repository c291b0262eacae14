"""Plain text of ``tools``, ``resources``, ``read``, ``prompts`` and ``prompt``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from orbmcp.commands.jsonschema import json_preview
from orbmcp.commands.results.call import blob_text, pretty_json
from orbmcp.commands.results.tools import (
    PromptListing,
    PromptMessages,
    ResourceContents,
    ResourceListing,
    ToolDetail,
    ToolListing,
    prompt_arguments,
)
from orbmcp.core.tooling.results import (
    AudioBlock,
    Block,
    ImageBlock,
    ResourceBlobBlock,
    block_text,
    format_size,
)
from orbmcp.render.plain.basic import aligned, interaction_notes
from orbmcp.render.plain.dispatch import renders
from orbmcp.text import one_line, safe_text

INDENT = "    "


def _indent(text: str, prefix: str = INDENT) -> str:
    return "\n".join(prefix + line if line else line for line in text.splitlines())


@renders
def tool_listing(listing: ToolListing) -> str:
    lines: list[str] = []
    for server in listing.servers:
        mine = [t for t in listing.tools if t.server == server]
        noun = "tool" if len(mine) == 1 else "tools"
        lines.append(f"{one_line(server)} ({len(mine)} {noun})")
        for tool in mine:
            lines.append("  " + one_line(tool.signature))
            if tool.description:
                # Paragraph breaks (description, then the hints line) are noise in a listing.
                compact = "\n".join(x for x in tool.description.splitlines() if x.strip())
                lines.append(_indent(safe_text(compact, multiline=True)))
            if listing.schema:
                lines.append(f"{INDENT}bridged name: {one_line(tool.bridged_name)}")
                lines.append(f"{INDENT}input schema:")
                schema = safe_text(pretty_json(dict(tool.input_schema)), multiline=True)
                lines.append(_indent(schema, INDENT * 2))
    if not listing.servers and not listing.notices:
        lines.append("No tools: no server is connected.")
    lines += [one_line(n) for n in listing.notices]
    return "\n".join(lines)


@renders
def resource_listing(listing: ResourceListing) -> str:
    """Per server, one row per resource and template in columns: URI, name, MIME type, description."""
    lines: list[str] = []
    for server in listing.servers:
        mine = [r for r in listing.resources if r.get("server") == server]
        tmpl = [t for t in listing.templates if t.get("server") == server]
        counts = _count(len(mine), "resource") + (f", {_count(len(tmpl), 'template')}" if tmpl else "")
        lines.append(f"{one_line(server)} ({counts})")
        rows = [_resource_cells(str(r.get("uri", "")), r) for r in mine]
        for t in tmpl:
            params = t.get("parameters")
            names = ", ".join(str(p) for p in params) if isinstance(params, list) else ""
            label = f"(template: {one_line(names, max_len=200)})" if names else "(template)"
            cells = _resource_cells(str(t.get("uriTemplate", "")), t)
            rows.append([*cells[:3], f"{cells[3]}  {label}" if cells[3] else label])
        # A column no row fills (no server gave a MIME type) takes no room.
        used = [i for i in range(4) if any(row[i] for row in rows)]
        lines += aligned([[row[i] for i in used] for row in rows], cap=_RESOURCE_COLUMN_CAP)
    if not listing.servers and not listing.notices:
        lines.append("No resources: no server is connected.")
    lines += [one_line(n) for n in listing.notices]
    return "\n".join(lines)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


# The widest a URI, name or MIME type column is padded to: a longer cell overruns its row only.
_RESOURCE_COLUMN_CAP = 48


def _resource_cells(uri: str, row: Mapping[str, Any]) -> list[str]:
    """URI, name (when it says more than the URI), ``(mime)``, ``- description``; blanks for none."""
    name = row.get("title") or row.get("name")
    mime = row.get("mimeType")
    desc = row.get("description")
    return [
        one_line(uri),
        one_line(name) if isinstance(name, str) and name and name != uri else "",
        f"({one_line(mime)})" if isinstance(mime, str) else "",
        "- " + one_line(desc, max_len=160) if isinstance(desc, str) and desc.strip() else "",
    ]


@renders
def resource_contents(result: ResourceContents) -> str:
    parts: list[str] = []
    if result.update:
        parts.append(f"[updated ({result.update}): {one_line(result.uri)}]")
    if result.saved:
        parts += [
            f"[saved {one_line(s.uri)}: {format_size(s.size)} to {one_line(s.path)}]" for s in result.saved
        ]
        return "\n".join([*parts, *interaction_notes(result.interactions)])
    many = len(result.contents) > 1
    blobs = False
    for item in result.contents:
        uri = str(item.get("uri", result.uri))
        mime = item.get("mimeType")
        label = f"[resource {uri}{' ' + str(mime) if mime else ''}]"
        text = item.get("text")
        if not isinstance(text, str):
            text = blob_text(str(item.get("blob", "")), mime if isinstance(mime, str) else None)
        if text is not None:
            if many:
                parts.append(one_line(label))
            parts.append(safe_text(text, multiline=True))
        else:
            blob = ResourceBlobBlock(uri, str(item.get("blob", "")), mime if isinstance(mime, str) else None)
            parts.append(one_line(block_text(blob)))
            blobs = True
    if blobs:
        parts.append("[binary content: --output FILE saves it]")
    if not result.contents:
        parts.append(f"(resource {one_line(result.uri)} is empty)")
    return "\n".join([*parts, *interaction_notes(result.interactions)])


@renders
def prompt_listing(listing: PromptListing) -> str:
    lines: list[str] = []
    for server in listing.servers:
        mine = [p for p in listing.prompts if p.get("server") == server]
        lines.append(f"{one_line(server)} ({_count(len(mine), 'prompt')})")
        for p in mine:
            lines.append("  " + one_line(prompt_signature(p)))
            desc = p.get("description")
            if isinstance(desc, str) and desc.strip():
                lines.append(_indent(safe_text(desc.strip(), multiline=True)))
    if not listing.servers and not listing.notices:
        lines.append("No prompts: no server is connected.")
    lines += [one_line(n) for n in listing.notices]
    return "\n".join(lines)


def prompt_signature(prompt: Mapping[str, Any]) -> str:
    names = [str(a["name"]) + ("" if a.get("required") else "?") for a in prompt_arguments(prompt)]
    return f"{prompt.get('name', '')}({', '.join(names)})"


@renders
def prompt_messages(result: PromptMessages) -> str:
    parts: list[str] = []
    desc = result.result.get("description")
    if isinstance(desc, str) and desc.strip():
        parts.append(safe_text(desc.strip(), multiline=True))
        parts.append("")
    messages = result.result.get("messages")
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, Mapping):
            continue
        parts.append(f"[{one_line(str(message.get('role', '?')))}]")
        content = message.get("content")
        blocks: Sequence[object] = content if isinstance(content, list) else [content]
        for block in blocks:
            parts.append(wire_block_text(block))
    return "\n".join([*parts, *interaction_notes(result.interactions)])


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
        mime = res.get("mimeType") if isinstance(res, Mapping) else None
        if isinstance(res, Mapping) and (text := blob_text(str(res.get("blob", "")), str(mime or ""))):
            return (
                one_line(f"[resource {res.get('uri', '')} {mime}]") + "\n" + safe_text(text, multiline=True)
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


_TASKS = {
    "required": "required: the server accepts only task-augmented calls, and orbmcp's call makes plain ones",
    "optional": "optional: it may be called as a task (a task-augmented call) or directly",
    "forbidden": "no: it is called directly",
}


@renders
def tool_detail(detail: ToolDetail) -> str:
    """One tool: what it does, each parameter (type, required, default, choices), how to call it."""
    entry = detail.entry
    head = f"{one_line(entry.server)}/{one_line(entry.name)}"
    if detail.title and detail.title != entry.name:
        head += f" — {one_line(detail.title)}"
    lines = [head]
    described = [x for x in (entry.description or "").splitlines() if x.strip()]
    if described and detail.title and described[0].strip() == detail.title.strip():
        described = described[1:]  # the title, already in the heading
    if described:
        lines.append(_indent(safe_text("\n".join(described), multiline=True), "  "))
    lines.append("Parameters:" if detail.parameters else "Parameters: none")
    for p in detail.parameters:
        facts = [one_line(p.type), "required" if p.required else "optional"]
        if p.has_default:
            facts.append(f"default {one_line(json_preview(p.default))}")
        choices = [json_preview(c) for c in p.choices]
        if choices and "|".join(choices) != p.type:
            facts.append("one of " + one_line(", ".join(choices), max_len=200))
        lines.append(f"  {one_line(p.name)}{'' if p.required else '?'}  " + "; ".join(facts))
        if p.description:
            lines.append(_indent(safe_text(p.description.strip(), multiline=True), INDENT + "  "))
    support = detail.task_support or "forbidden"
    lines.append(f"Task-augmented calls: {_TASKS.get(support, one_line(support))}")
    lines.append(f"Bridged name: {one_line(entry.bridged_name)}")
    return "\n".join(line.rstrip() for line in lines)
