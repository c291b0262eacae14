"""The result models of tools/call/resources/read/prompts/prompt: every content kind and the edge
cases of their text views (the live tests in test_call_cli.py cover the common paths)."""

from __future__ import annotations

import base64
import json

from orbmcp.commands.results.call import CallOutcome, structured_is_redundant, transcript_text
from orbmcp.commands.results.tools import (
    PromptListing,
    PromptMessages,
    ResourceContents,
    ResourceListing,
    ToolEntry,
    ToolListing,
    prompt_arguments,
)
from orbmcp.core.tooling.results import (
    AudioBlock,
    ImageBlock,
    ResourceBlobBlock,
    ResourceLinkBlock,
    ResourceTextBlock,
    TextBlock,
    ToolResult,
)
from orbmcp.render import to_json_text
from orbmcp.render.plain import render_plain
from orbmcp.render.plain.tools import prompt_signature, wire_block_text

B64_3 = base64.b64encode(b"\x00\x01\x02").decode()
B64_2K = base64.b64encode(b"z" * 2048).decode()


def entry(name: str, description: str = "", **kw: object) -> ToolEntry:
    return ToolEntry(
        server=str(kw.get("server", "s")),
        name=name,
        bridged_name=f"mcp__s__{name}_0000",
        description=description,
        raw_description=description or None,
        input_schema={"type": "object"},
        annotations=None,
        signature=f"{name}()",
    )


# -- tools ---------------------------------------------------------------------------------------


def test_tool_listing_of_nothing_says_why_and_notices_replace_it() -> None:
    assert render_plain(ToolListing((), ())) == "No tools: no server is connected."
    listing = ToolListing((), (), notices=("lz: lazy, not connected",))
    assert render_plain(listing) == "lz: lazy, not connected"
    assert listing.to_json() == []


def test_tool_without_description_is_one_line_and_counts_are_singular() -> None:
    listing = ToolListing((entry("bare"),), ("s",))
    assert render_plain(listing) == "s (1 tool)\n  bare()"
    two = ToolListing((entry("a", "first"), entry("b")), ("s", "empty"))
    assert render_plain(two).splitlines() == ["s (2 tools)", "  a()", "    first", "  b()", "empty (0 tools)"]
    assert two.to_json()[1]["description"] is None


def test_tool_description_escapes_control_sequences_and_drops_blank_lines() -> None:
    listing = ToolListing((entry("t", "line one\n\n\x1b[31mred\x1b[0m\n[read-only]"),), ("s",))
    text = render_plain(listing)
    assert "\x1b" not in text
    assert text.splitlines()[2:] == ["    line one", "    red", "    [read-only]"]


# -- call ----------------------------------------------------------------------------------------


def test_every_block_kind_in_call_text_and_json() -> None:
    result = ToolResult(
        [
            TextBlock("hello"),
            ImageBlock(B64_2K, "image/png"),
            AudioBlock(B64_3, "audio/wav"),
            ResourceTextBlock("file:///a.md", "# A", "text/markdown"),
            ResourceTextBlock("file:///plain", "no mime"),
            ResourceBlobBlock("file:///b.bin", B64_3, "application/octet-stream"),
            ResourceBlobBlock("file:///c", B64_3),
            ResourceLinkBlock("https://x.test/r", "r", "text/plain", "the r"),
            ResourceLinkBlock("https://x.test/bare", ""),
        ]
    )
    outcome = CallOutcome("s", "t", result, saved={1: "/tmp/out/t-2.png"})
    assert render_plain(outcome).splitlines() == [
        "hello",
        "[image image/png, 2.0 KB] saved to /tmp/out/t-2.png",
        "[audio audio/wav, 3 B] (--save-images DIR saves it)",
        "[resource file:///a.md text/markdown]",
        "# A",
        "[resource file:///plain]",
        "no mime",
        "[resource file:///b.bin application/octet-stream, 3 B]",
        "[resource file:///c, 3 B]",
        "[resource link: https://x.test/r] r (text/plain) - the r",
        "[resource link: https://x.test/bare]",
    ]
    wire = json.loads(to_json_text(outcome, pretty=False))
    assert [b["type"] for b in wire["content"]] == [
        "text",
        "image",
        "audio",
        "resource",
        "resource",
        "resource",
        "resource",
        "resource_link",
        "resource_link",
    ]
    assert wire["content"][5]["resource"] == {
        "uri": "file:///b.bin",
        "mimeType": "application/octet-stream",
        "blob": B64_3,
    }
    assert wire["isError"] is False and "structuredContent" not in wire


def test_server_strings_in_summaries_cannot_break_lines() -> None:
    result = ToolResult([ResourceLinkBlock("https://x.test/\x1b]0;t\x07", "n\nm", None, "d\x1b[2J")])
    shown = render_plain(CallOutcome("s", "t", result))
    assert "\n" not in shown and "\x1b" not in shown and "\x07" not in shown
    assert shown.startswith("[resource link: https://x.test/")
    raw = transcript_text(result, {})
    assert "\x1b]0;t\x07" in raw  # --output keeps the bytes the server sent


def test_structured_content_beside_non_text_blocks_is_shown() -> None:
    result = ToolResult([ImageBlock(B64_3, "image/png")], structured={"w": 1})
    assert not structured_is_redundant(result)
    text = render_plain(CallOutcome("s", "t", result))
    assert text.splitlines()[1:] == ["structured content:", "{", '  "w": 1', "}"]
    lone = ToolResult([], structured=[1, 2])
    assert render_plain(CallOutcome("s", "t", lone)) == "structured content:\n[\n  1,\n  2\n]"


def test_max_output_that_is_not_reached_adds_no_note() -> None:
    outcome = CallOutcome("s", "t", ToolResult([TextBlock("short")]), max_output=100)
    assert render_plain(outcome) == "short"
    zero = CallOutcome("s", "t", ToolResult([TextBlock("abc")]), max_output=0)
    assert (
        render_plain(zero) == "\n[output truncated: showed 0 of 3 bytes; use --output FILE to keep all of it]"
    )


def test_long_output_written_to_a_file_is_summarised_with_its_size() -> None:
    outcome = CallOutcome(
        "s", "t", ToolResult([TextBlock("x" * 3000)]), output_file="/tmp/o.txt", output_bytes=3000
    )
    assert render_plain(outcome) == "[output: 2.9 KB written to /tmp/o.txt]"
    assert transcript_text(outcome.result, outcome.saved) == "x" * 3000


# -- resources -----------------------------------------------------------------------------------


def test_resource_listing_rows_names_mimes_descriptions_and_templates() -> None:
    listing = ResourceListing(
        resources=(
            {"server": "s", "uri": "mem://a", "name": "mem://a"},  # name == uri: not repeated
            {"server": "s", "uri": "mem://b", "title": "Bee", "name": "b", "mimeType": "text/plain"},
            {"server": "s", "uri": "mem://c", "description": "  "},  # blank description: dropped
            {"server": "s", "uri": "mem://d", "description": "d" * 300},
        ),
        templates=({"server": "s", "uriTemplate": "mem://t/{x}", "name": "t"},),
        servers=("s", "quiet"),
    )
    lines = render_plain(listing).splitlines()
    assert lines[0] == "s (4 resources, 1 template)"
    assert lines[1] == "  mem://a"
    assert lines[2] == "  mem://b      Bee  (text/plain)"
    assert lines[3] == "  mem://c"
    assert lines[4].startswith("  mem://d" + " " * 25 + "- " + "d" * 160) and lines[4].endswith(
        "…[+140 chars]"
    )
    assert lines[5] == "  mem://t/{x}  t                  (template)"
    assert lines[6] == "quiet (0 resources)"
    assert [r.get("uri", r.get("uriTemplate")) for r in listing.to_json()][-1] == "mem://t/{x}"


def test_empty_resource_listing() -> None:
    assert render_plain(ResourceListing(())) == "No resources: no server is connected."
    assert render_plain(ResourceListing((), notices=("s: offers no resources",))) == "s: offers no resources"


def test_resource_contents_text_blob_many_and_empty() -> None:
    one = ResourceContents("s", "mem://a", ({"uri": "mem://a", "text": "hello"},))
    assert render_plain(one) == "hello"
    many = ResourceContents(
        "s",
        "mem://dir",
        (
            {"uri": "mem://dir/a", "mimeType": "text/plain", "text": "A\x1b[2J"},
            {"uri": "mem://dir/b", "mimeType": "image/png", "blob": B64_3},
            {"blob": B64_2K},  # no uri or mime: the requested uri labels it
        ),
    )
    assert render_plain(many).splitlines() == [
        "[resource mem://dir/a text/plain]",
        "A",
        "[resource mem://dir/b image/png, 3 B]",
        "[resource mem://dir, 2.0 KB]",
        "[binary content: --output FILE saves it]",
    ]
    assert many.to_json()["contents"][1]["blob"] == B64_3
    assert render_plain(ResourceContents("s", "mem://none", ())) == "(resource mem://none is empty)"


# -- prompts -------------------------------------------------------------------------------------


def test_prompt_listing_signatures_descriptions_and_empty() -> None:
    listing = PromptListing(
        (
            {
                "server": "s",
                "name": "greet",
                "description": " Say hi. ",
                "arguments": [{"name": "who", "required": True}, {"name": "tone"}, {"bogus": 1}, "x"],
            },
            {"server": "s", "name": "plain", "arguments": "not a list"},
        ),
        ("s",),
    )
    assert render_plain(listing).splitlines() == [
        "s (2 prompts)",
        "  greet(who, tone?)",
        "    Say hi.",
        "  plain()",
    ]
    assert render_plain(PromptListing(())) == "No prompts: no server is connected."
    assert render_plain(PromptListing((), notices=("s: offers no prompts",))) == "s: offers no prompts"
    assert prompt_arguments({"arguments": None}) == []
    assert prompt_signature({}) == "()"


def test_prompt_messages_with_every_wire_block_kind() -> None:
    result = {
        "description": "A greeting",
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "hi \x1b[31mthere"}},
            {
                "role": "assistant",
                "content": [
                    {"type": "image", "data": B64_3, "mimeType": "image/png"},
                    {"type": "audio", "data": B64_2K, "mimeType": "audio/wav"},
                    {"type": "resource", "resource": {"uri": "mem://t", "text": "embedded"}},
                    {"type": "resource", "resource": {"uri": "mem://b", "blob": B64_3, "mimeType": "x/y"}},
                    {"type": "resource", "resource": {"uri": "mem://c", "blob": B64_3, "mimeType": 7}},
                    {"type": "resource", "resource": "broken"},
                    {"type": "resource_link", "uri": "https://x.test/l", "name": "l"},
                    {"type": "hologram"},
                    "not a block",
                ],
            },
            "not a message",
            {"content": {"type": "text", "text": "no role"}},
        ],
    }
    text = render_plain(PromptMessages("s", "greet", result))
    assert text.splitlines() == [
        "A greeting",
        "",
        "[user]",
        "hi there",
        "[assistant]",
        "[image image/png, 3 B]",
        "[audio audio/wav, 2.0 KB]",
        "[resource mem://t]",
        "embedded",
        "[resource mem://b x/y, 3 B]",
        "[resource mem://c, 3 B]",
        "[unsupported content: resource]",
        "[resource link: https://x.test/l]",
        "[unsupported content: hologram]",
        "",
        "[?]",
        "no role",
    ]
    assert render_plain(PromptMessages("s", "p", {"messages": "junk"})) == ""
    assert PromptMessages("s", "p", result).to_json() == result


def test_wire_block_text_of_a_non_mapping_is_empty() -> None:
    assert wire_block_text(None) == ""
    assert wire_block_text(["text"]) == ""
