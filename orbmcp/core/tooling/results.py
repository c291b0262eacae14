"""orbmcp's own tool-result model, free of SDK types so renderers and hosts never import ``mcp``.

``from_sdk`` converts an ``mcp_types.CallToolResult`` (imported lazily: it costs start-up time);
each block keeps its wire form (``wire``), so ``ToolResult.to_json`` gives back every field the
server sent (annotations, ``_meta``) for ``--json``; ``ToolResult.text`` is the plain-text view of
the content blocks for agents (structured content goes beside it, as details).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    import mcp_types


@dataclass(frozen=True, slots=True)
class TextBlock:
    text: str
    wire: Mapping[str, object] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class ImageBlock:
    data_b64: str
    mime_type: str
    wire: Mapping[str, object] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class AudioBlock:
    data_b64: str
    mime_type: str
    wire: Mapping[str, object] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class ResourceTextBlock:
    uri: str
    text: str
    mime_type: str | None = None
    wire: Mapping[str, object] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class ResourceBlobBlock:
    uri: str
    blob_b64: str
    mime_type: str | None = None
    wire: Mapping[str, object] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class ResourceLinkBlock:
    uri: str
    name: str
    mime_type: str | None = None
    description: str | None = None
    wire: Mapping[str, object] | None = field(default=None, compare=False, repr=False)


Block: TypeAlias = (
    TextBlock | ImageBlock | AudioBlock | ResourceTextBlock | ResourceBlobBlock | ResourceLinkBlock
)


@dataclass(frozen=True, slots=True)
class ToolResult:
    """One tool call's outcome. ``structured`` and ``meta`` are the details an agent host keeps
    beside the content; ``is_error`` routes the result through the caller's error path."""

    content: list[Block] = field(default_factory=list)
    structured: object | None = None
    meta: dict[str, object] | None = None
    is_error: bool = False

    def to_json(self) -> dict[str, object]:
        """The MCP wire shape (camelCase), omitting absent optional fields as the wire does."""
        body: dict[str, object] = {"content": [block_to_json(block) for block in self.content]}
        if self.structured is not None:
            body["structuredContent"] = self.structured
        body["isError"] = self.is_error
        if self.meta is not None:
            body["_meta"] = self.meta
        return body

    def text(self) -> str:
        """Text and embedded text resources verbatim; one summary line per binary or linked block.
        Structured content is not in it: an agent host passes it as details; the transcript of
        ``orbmcp call`` (``commands/results/call.py``) is where people see it."""
        return "\n".join(block_text(block) for block in self.content)

    @staticmethod
    def decoded_size(block: Block) -> int:
        return decoded_size(block)


def block_to_json(block: Block) -> dict[str, object]:
    if block.wire is not None:
        return dict(block.wire)  # every field the server sent, not only those orbmcp models
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ImageBlock):
        return {"type": "image", "data": block.data_b64, "mimeType": block.mime_type}
    if isinstance(block, AudioBlock):
        return {"type": "audio", "data": block.data_b64, "mimeType": block.mime_type}
    if isinstance(block, ResourceTextBlock):
        text_resource: dict[str, object] = {"uri": block.uri}
        if block.mime_type is not None:
            text_resource["mimeType"] = block.mime_type
        text_resource["text"] = block.text
        return {"type": "resource", "resource": text_resource}
    if isinstance(block, ResourceBlobBlock):
        blob_resource: dict[str, object] = {"uri": block.uri}
        if block.mime_type is not None:
            blob_resource["mimeType"] = block.mime_type
        blob_resource["blob"] = block.blob_b64
        return {"type": "resource", "resource": blob_resource}
    link: dict[str, object] = {"type": "resource_link", "uri": block.uri, "name": block.name}
    if block.mime_type is not None:
        link["mimeType"] = block.mime_type
    if block.description is not None:
        link["description"] = block.description
    return link


MAX_LEAVES = 10_000  # past this many values in structured content, it is shown (not compared)
MAX_DEPTH = 64


def structured_is_redundant(result: ToolResult) -> bool:
    """True when the text blocks already say what ``structuredContent`` says.

    Servers commonly send both (the spec asks for a text copy); showing the same JSON twice, or
    ``3`` followed by ``{"result": 3}``, is noise, and so is a wrapper of the text itself
    (server-filesystem's ``{"content": <the file>}``) in an agent's context. The rule: a text
    block is the structured content (as JSON, or ``result`` unwrapped), or every value in it (each
    string, number and boolean) appears in the text blocks. JSON output keeps it all.
    """
    wanted = [result.structured]
    if isinstance(result.structured, dict) and set(result.structured) == {"result"}:
        wanted.append(result.structured["result"])
    texts = [block.text for block in result.content if isinstance(block, TextBlock | ResourceTextBlock)]
    for text in texts:
        try:
            parsed: object = json.loads(text)
        except ValueError:
            parsed = text
        if any(w in (parsed, text) for w in wanted):
            return True
    leaves: list[str] = []
    if not texts or not _leaves(result.structured, leaves, 0) or not leaves:
        return False
    said = "\n".join(texts)
    return all(leaf in said for leaf in leaves)


def _leaves(value: object, out: list[str], depth: int) -> bool:
    """Collect each value of ``value`` as it would read in text; False when there are too many
    or they nest too deep to compare cheaply (the content is then shown)."""
    if depth > MAX_DEPTH or len(out) > MAX_LEAVES:
        return False
    if isinstance(value, dict):
        return all(_leaves(v, out, depth + 1) for v in value.values())
    if isinstance(value, list):
        return all(_leaves(v, out, depth + 1) for v in value)
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, bool):
        out.append("true" if value else "false")
    elif isinstance(value, int | float):
        out.append(repr(value) if isinstance(value, float) and not value.is_integer() else str(int(value)))
    return True


def block_annotations(block: Block) -> Mapping[str, object] | None:
    """The block's ``annotations`` (audience, priority, lastModified) as the server sent them."""
    found = block.wire.get("annotations") if block.wire is not None else None
    return found if isinstance(found, Mapping) and found else None


def block_text(block: Block) -> str:
    """The plain-text line(s) for one block: ``[image image/png, 1.2 KB]``, ``[resource link: uri]``."""
    if isinstance(block, TextBlock):
        return block.text
    if isinstance(block, ResourceTextBlock):
        return block.text
    if isinstance(block, ImageBlock | AudioBlock):
        kind = "image" if isinstance(block, ImageBlock) else "audio"
        return f"[{kind} {block.mime_type}, {format_size(decoded_size(block))}]"
    if isinstance(block, ResourceBlobBlock):
        mime = f" {block.mime_type}" if block.mime_type else ""
        return f"[resource {block.uri}{mime}, {format_size(decoded_size(block))}]"
    return f"[resource link: {block.uri}]"


def decoded_size(block: Block) -> int:
    """Bytes of the block's payload: decoded base64 for binary blocks, UTF-8 for text.

    Computed from the base64 length, so a multi-megabyte image is never decoded just to be sized.
    """
    if isinstance(block, ImageBlock | AudioBlock):
        return _base64_size(block.data_b64)
    if isinstance(block, ResourceBlobBlock):
        return _base64_size(block.blob_b64)
    if isinstance(block, TextBlock | ResourceTextBlock):
        return len(block.text.encode("utf-8", "surrogatepass"))
    return 0


def _base64_size(data: str) -> int:
    compact = "".join(data.split())
    padding = len(compact) - len(compact.rstrip("="))
    return max(0, len(compact) * 3 // 4 - min(padding, 2))


def format_size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    value = float(size)
    for unit in ("KB", "MB", "GB"):
        value /= 1024
        if value < 1024 or unit == "GB":
            break
    return f"{value:.1f} {unit}"


def from_sdk(result: mcp_types.CallToolResult) -> ToolResult:
    """Map an SDK result onto orbmcp's model; embedded resources keep their text or blob."""
    import mcp_types

    blocks: list[Block] = []
    for item in result.content:
        wire = _wire(item)
        if isinstance(item, mcp_types.TextContent):
            blocks.append(TextBlock(item.text, wire=wire))
        elif isinstance(item, mcp_types.ImageContent):
            blocks.append(ImageBlock(item.data, item.mime_type, wire=wire))
        elif isinstance(item, mcp_types.AudioContent):
            blocks.append(AudioBlock(item.data, item.mime_type, wire=wire))
        elif isinstance(item, mcp_types.ResourceLink):
            blocks.append(ResourceLinkBlock(item.uri, item.name, item.mime_type, item.description, wire=wire))
        elif isinstance(item, mcp_types.EmbeddedResource):
            resource = item.resource
            if isinstance(resource, mcp_types.TextResourceContents):
                blocks.append(ResourceTextBlock(resource.uri, resource.text, resource.mime_type, wire=wire))
            else:
                blocks.append(ResourceBlobBlock(resource.uri, resource.blob, resource.mime_type, wire=wire))
        else:
            # A content type newer than this SDK's union: say so rather than drop it silently.
            kind = getattr(item, "type", type(item).__name__)
            blocks.append(TextBlock(f"[unsupported content: {kind}]"))
    meta = dict(result.meta) if result.meta is not None else None
    return ToolResult(blocks, result.structured_content, meta, bool(result.is_error))


def _wire(item: object) -> Mapping[str, object] | None:
    """A content block as the server sent it (camelCase, ``_meta`` included); None if it cannot
    be serialised, and the modelled fields then stand for it."""
    dump = getattr(item, "model_dump", None)
    if dump is None:
        return None
    try:
        wire = dump(by_alias=True, exclude_none=True, mode="json")
    except Exception:
        return None
    return wire if isinstance(wire, dict) else None
