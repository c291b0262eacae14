"""Every MCP content kind through orbmcp's result model, built from real ``mcp_types`` objects."""

from __future__ import annotations

import base64
import json

import mcp_types
import pytest

from orbmcp.commands.results.call import transcript_text
from orbmcp.core.tooling.results import (
    AudioBlock,
    ImageBlock,
    ResourceBlobBlock,
    ResourceLinkBlock,
    ResourceTextBlock,
    TextBlock,
    ToolResult,
    format_size,
    from_sdk,
)

PNG_BYTES = b"\x89PNG\r\n\x1a\n" + b"x" * 1221  # 1229 bytes: "1.2 KB"
PNG_B64 = base64.b64encode(PNG_BYTES).decode()
WAV_B64 = base64.b64encode(b"RIFF" + b"\0" * 60).decode()
PDF_B64 = base64.b64encode(b"%PDF-1.7" + b"y" * 3000).decode()


def every_kind() -> mcp_types.CallToolResult:
    return mcp_types.CallToolResult(
        content=[
            mcp_types.TextContent(type="text", text="hello"),
            mcp_types.ImageContent(type="image", data=PNG_B64, mime_type="image/png"),
            mcp_types.AudioContent(type="audio", data=WAV_B64, mime_type="audio/wav"),
            mcp_types.EmbeddedResource(
                type="resource",
                resource=mcp_types.TextResourceContents(
                    uri="file:///notes.md", mime_type="text/markdown", text="# notes"
                ),
            ),
            mcp_types.EmbeddedResource(
                type="resource",
                resource=mcp_types.BlobResourceContents(
                    uri="file:///doc.pdf", mime_type="application/pdf", blob=PDF_B64
                ),
            ),
            mcp_types.ResourceLink(
                type="resource_link",
                uri="https://example.test/r/1",
                name="r1",
                mime_type="text/plain",
                description="the first resource",
            ),
        ],
        structured_content={"count": 3, "items": ["a", "b"]},
        meta={"trace": "abc"},
        is_error=False,
    )


def test_every_content_kind_maps_to_its_block() -> None:
    result = from_sdk(every_kind())
    assert result.content == [
        TextBlock("hello"),
        ImageBlock(PNG_B64, "image/png"),
        AudioBlock(WAV_B64, "audio/wav"),
        ResourceTextBlock("file:///notes.md", "# notes", "text/markdown"),
        ResourceBlobBlock("file:///doc.pdf", PDF_B64, "application/pdf"),
        ResourceLinkBlock("https://example.test/r/1", "r1", "text/plain", "the first resource"),
    ]
    assert result.structured == {"count": 3, "items": ["a", "b"]}
    assert result.meta == {"trace": "abc"}
    assert result.is_error is False


def test_to_json_is_the_mcp_wire_shape() -> None:
    sdk = every_kind()
    wire = from_sdk(sdk).to_json()
    expected = sdk.model_dump(mode="json", by_alias=True, exclude_none=True)
    expected.pop("resultType")
    assert wire == expected
    # and the SDK accepts it back unchanged
    assert mcp_types.CallToolResult.model_validate(wire) == sdk


def test_error_result_without_details() -> None:
    sdk = mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text="boom")], is_error=True)
    result = from_sdk(sdk)
    assert result.is_error is True
    assert result.structured is None
    assert result.meta is None
    assert result.to_json() == {"content": [{"type": "text", "text": "boom"}], "isError": True}


def test_structured_content_that_is_not_an_object_is_kept() -> None:
    # 2026-07-28 allows any JSON value as structured content
    sdk = mcp_types.CallToolResult(content=[], structured_content=[1, 2, 3])
    assert from_sdk(sdk).structured == [1, 2, 3]
    assert from_sdk(sdk).to_json()["structuredContent"] == [1, 2, 3]


def test_text_joins_text_and_summarises_the_rest() -> None:
    lines = from_sdk(every_kind()).text().split("\n")
    assert lines == [
        "hello",
        "[image image/png, 1.2 KB]",
        "[audio audio/wav, 64 B]",
        "# notes",
        "[resource file:///doc.pdf application/pdf, 2.9 KB]",
        "[resource link: https://example.test/r/1]",
    ]


def test_structured_content_renders_once_in_the_call_transcript() -> None:
    # Every text front (plain, rich, slash, shell, --output, check --call) shows a call through
    # this one transcript: structured content after the blocks, unless a text block says it.
    result = from_sdk(every_kind())
    text = transcript_text(result, {})
    assert text.startswith("hello\n") and text.endswith(json.dumps(result.structured, indent=2))
    said = from_sdk(
        mcp_types.CallToolResult(
            content=[mcp_types.TextContent(type="text", text="3")], structured_content={"result": 3}
        )
    )
    assert transcript_text(said, {}) == "3"


def test_every_field_of_a_block_is_kept_for_json() -> None:
    block = mcp_types.TextContent(
        type="text",
        text="hi",
        annotations=mcp_types.Annotations(audience=["user"], priority=0.5),
        _meta={"x": 1},
    )
    wire = from_sdk(mcp_types.CallToolResult(content=[block])).to_json()["content"]
    assert wire == [
        {
            "type": "text",
            "text": "hi",
            "annotations": {"audience": ["user"], "priority": 0.5},
            "_meta": {"x": 1},
        }
    ]


def test_empty_result_has_empty_text() -> None:
    assert ToolResult([], None, None, False).text() == ""


@pytest.mark.parametrize(
    ("raw", "size"),
    [(b"", 0), (b"a", 1), (b"ab", 2), (b"abc", 3), (b"abcd", 4), (bytes(range(256)) * 5, 1280)],
)
def test_decoded_size_matches_the_decoded_bytes(raw: bytes, size: int) -> None:
    encoded = base64.b64encode(raw).decode()
    assert ToolResult.decoded_size(ImageBlock(encoded, "image/png")) == size
    assert ToolResult.decoded_size(ResourceBlobBlock("u", encoded)) == size
    # MIME-style line breaks in base64 do not count
    wrapped = "\n".join(encoded[i : i + 76] for i in range(0, len(encoded), 76))
    assert ToolResult.decoded_size(AudioBlock(wrapped, "audio/wav")) == size


def test_decoded_size_of_text_is_utf8_bytes() -> None:
    assert ToolResult.decoded_size(TextBlock("né")) == 3
    assert ToolResult.decoded_size(ResourceTextBlock("u", "abc")) == 3
    assert ToolResult.decoded_size(ResourceLinkBlock("u", "n")) == 0


@pytest.mark.parametrize(
    ("size", "text"),
    [
        (0, "0 B"),
        (1023, "1023 B"),
        (1024, "1.0 KB"),
        (1229, "1.2 KB"),
        (5 * 1024**2, "5.0 MB"),
        (3 * 1024**4, "3072.0 GB"),
    ],
)
def test_format_size(size: int, text: str) -> None:
    assert format_size(size) == text


def test_link_and_blob_without_optional_fields() -> None:
    sdk = mcp_types.CallToolResult(
        content=[
            mcp_types.ResourceLink(type="resource_link", uri="file:///x", name="x"),
            mcp_types.EmbeddedResource(
                type="resource", resource=mcp_types.BlobResourceContents(uri="file:///y", blob="AAAA")
            ),
        ]
    )
    result = from_sdk(sdk)
    assert result.content == [
        ResourceLinkBlock("file:///x", "x", None, None),
        ResourceBlobBlock("file:///y", "AAAA", None),
    ]
    assert result.to_json()["content"] == [
        {"type": "resource_link", "uri": "file:///x", "name": "x"},
        {"type": "resource", "resource": {"uri": "file:///y", "blob": "AAAA"}},
    ]
    assert result.text() == "[resource link: file:///x]\n[resource file:///y, 3 B]"


def test_results_module_does_not_import_the_sdk() -> None:
    import subprocess
    import sys

    code = "import sys, orbmcp.core.tooling.results; print('mcp_types' in sys.modules, 'mcp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.split() == ["False", "False"]
