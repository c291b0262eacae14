"""The result of ``call``, and the transcript of a tool result: its parts, in order, as text.

The transcript is defined once, here, for its two readers: ``--output FILE`` keeps it verbatim
(``transcript_text``; the handler writes the file), and the plain renderer shows the same parts
escaped for a terminal. Structured content appears in it only where no text block already says
the same thing.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from orbmcp.commands.outcome import ExitCode
from orbmcp.commands.results.base import Result
from orbmcp.core.capabilities import Interaction
from orbmcp.core.tooling.results import (
    AudioBlock,
    ImageBlock,
    ResourceBlobBlock,
    ResourceLinkBlock,
    ResourceTextBlock,
    TextBlock,
    ToolResult,
    block_annotations,
    block_text,
    structured_is_redundant,
)


@dataclass(frozen=True)
class CallOutcome(Result):
    """One ``orbmcp call``: the tool's result plus what the command did with it."""

    server: str
    tool: str
    result: ToolResult
    saved: Mapping[int, str] = field(default_factory=dict)  # content index -> file written
    max_output: int | None = None
    output_file: str | None = None
    output_bytes: int = 0
    # The server's questions during the call and how they were answered (declines included).
    interactions: tuple[Interaction, ...] = ()

    @property
    def exit_code(self) -> int:
        return int(ExitCode.TOOL_ERROR if self.result.is_error else ExitCode.OK)

    def to_json(self) -> dict[str, object]:
        body = self.result.to_json()
        if self.interactions:
            body["interactions"] = [i.to_json() for i in self.interactions]
        return body


@dataclass(frozen=True)
class TranscriptPart:
    """``text``: what the server said (may span lines); ``label``: one line orbmcp wrote about a
    block (its summary, a saved file), which may quote a server's URI or name."""

    kind: Literal["text", "label"]
    value: str
    unsaved_media: bool = False  # an image or audio summary whose data went nowhere


def pretty_json(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False, default=str)


def transcript(result: ToolResult, saved: Mapping[int, str]) -> list[TranscriptPart]:
    parts: list[TranscriptPart] = []

    def text(value: str) -> None:
        parts.append(TranscriptPart("text", value))

    def label(value: str) -> None:
        parts.append(TranscriptPart("label", value))

    for index, block in enumerate(result.content):
        annotations = block_annotations(block)
        if annotations is not None:
            line = annotation_line(annotations)
            if line:
                label(line)
        if isinstance(block, TextBlock):
            text(block.text)
        elif isinstance(block, ResourceTextBlock):
            mime = f" {block.mime_type}" if block.mime_type else ""
            label(f"[resource {block.uri}{mime}]")
            text(block.text)
        elif isinstance(block, ResourceBlobBlock) and (decoded := blob_text(block.blob_b64, block.mime_type)):
            label(f"[resource {block.uri} {block.mime_type}]")
            text(decoded)
        elif isinstance(block, ImageBlock | AudioBlock):
            where = saved.get(index)
            if where:
                label(f"{block_text(block)} saved to {where}")
            else:
                parts.append(TranscriptPart("label", block_text(block), unsaved_media=True))
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
            label(f"[resource link: {block.uri}] {extra}".rstrip())
        else:
            label(block_text(block))
    if result.structured is not None and not structured_is_redundant(result):
        label("structured content:")
        text(pretty_json(result.structured))
    return parts


# Blobs shown as text when their type says they are text: every text/*, JSON, XML, YAML, scripts.
_TEXT_SUFFIXES = ("+json", "+xml", "+yaml")
_TEXT_TYPES = frozenset(
    {
        "application/json",
        "application/xml",
        "application/yaml",
        "application/x-yaml",
        "application/javascript",
    }
)
_UTF8 = frozenset({"utf-8", "utf8", "us-ascii", "ascii"})
# Larger text blobs keep their one-line summary (``read --output FILE`` saves any size).
MAX_BLOB_TEXT = 1 << 20


def blob_text(blob_b64: str, mime_type: str | None) -> str | None:
    """A blob's text when its MIME type is a text type (UTF-8, or no charset) and its bytes decode
    as UTF-8, up to ``MAX_BLOB_TEXT`` bytes; None: show it as a blob."""
    if not mime_type:
        return None
    kind, *params = (p.strip().lower() for p in mime_type.split(";"))
    if not (kind.startswith("text/") or kind in _TEXT_TYPES or kind.endswith(_TEXT_SUFFIXES)):
        return None
    charset = next((p.partition("=")[2].strip('"') for p in params if p.startswith("charset=")), "utf-8")
    compact = "".join(blob_b64.split())
    if charset not in _UTF8 or len(compact) * 3 // 4 > MAX_BLOB_TEXT:
        return None

    try:
        return base64.b64decode(compact, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):  # UnicodeDecodeError is a ValueError
        return None


def transcript_text(result: ToolResult, saved: Mapping[int, str]) -> str:
    """Everything the tool said, unescaped: what ``--output FILE`` keeps."""
    return "\n".join(part.value for part in transcript(result, saved))


def annotation_line(annotations: Mapping[str, object]) -> str | None:
    """``[audience: user; priority: 0.9]`` for a block the server annotated; None for none of those."""
    bits: list[str] = []
    audience = annotations.get("audience")
    if isinstance(audience, list) and audience:
        bits.append("audience: " + ", ".join(str(a) for a in audience[:5]))
    priority = annotations.get("priority")
    if isinstance(priority, int | float) and not isinstance(priority, bool):
        bits.append(f"priority: {priority:g}")
    return f"[{'; '.join(bits)}]" if bits else None
