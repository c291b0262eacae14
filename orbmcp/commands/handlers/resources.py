"""resources, read (``--output`` saves text and binary contents, ``--follow`` prints updates).

A file name is never taken from a server: ``--output FILE`` is the person's, and with a directory
each content gets ``resource-N.<ext>``, the extension chosen from its MIME type, never
overwriting a file that exists.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orbmcp.commands.context import CommandContext
from orbmcp.commands.handlers.saved_files import MEDIA_EXTENSIONS, user_path, write_new_file
from orbmcp.commands.handlers.tools import each_server, has_capability, ready_servers
from orbmcp.commands.results.base import Message
from orbmcp.commands.results.tools import ResourceContents, ResourceListing, SavedContent
from orbmcp.core.capabilities.subscriptions import follow
from orbmcp.core.capabilities.templates import parameters
from orbmcp.core.tooling.calls import list_resource_templates, list_resources, read_resource
from orbmcp.errors import ProtocolError, UsageError, cmd

if TYPE_CHECKING:
    from orbmcp.core.capabilities import Interaction
    from orbmcp.core.session.supervisor import Supervisor

_RESOURCE_NOT_FOUND = "(code -32002)"  # the spec's "resource not found" JSON-RPC error
_INVALID_PARAMS = "(code -32602)"  # what SDK servers send for an unknown resource instead
TEXT_EXTENSIONS = {
    "text/plain": "txt",
    "text/markdown": "md",
    "application/json": "json",
    "text/html": "html",
}


def is_not_found(message: str) -> bool:
    lowered = message.lower()
    return _RESOURCE_NOT_FOUND in message or (
        _INVALID_PARAMS in message and ("unknown resource" in lowered or "not found" in lowered)
    )


async def resources(ctx: CommandContext, server: str | None = None) -> ResourceListing:
    sups, notices = await ready_servers(ctx, server, "resources")
    offering = [s for s in sups if has_capability(s, "resources")]
    notices += [f"{s.name}: offers no resources" for s in sups if s not in offering]

    async def one(sup: Supervisor) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        return await list_resources(sup), await list_resource_templates(sup)

    rows: list[dict[str, Any]] = []
    templates: list[dict[str, Any]] = []
    for sup, (found, tmpl) in zip(offering, await each_server(offering, one), strict=True):
        rows += [{"server": sup.name, **item} for item in found]
        for item in tmpl:
            uri_template = item.get("uriTemplate")
            params = parameters(uri_template) if isinstance(uri_template, str) else []
            templates.append({"server": sup.name, **item, "parameters": params})
    return ResourceListing(tuple(rows), tuple(templates), tuple(s.name for s in offering), tuple(notices))


async def _read(
    ctx: CommandContext, sup: Supervisor, uri: str, record: list[Interaction]
) -> list[dict[str, Any]]:
    try:
        return await read_resource(sup, uri, asker=ctx.ui, record=record)
    except ProtocolError as err:
        if is_not_found(err.message):
            raise UsageError(
                f"server '{sup.name}' has no resource '{uri}'",
                server=sup.name,
                hint=f"`{cmd('resources', sup.name)}` lists them",
            ) from None
        raise


def _payload(item: Mapping[str, Any]) -> tuple[bytes, str]:
    """The bytes of one content and the file extension for it."""
    mime = str(item.get("mimeType") or "").split(";", 1)[0].strip().lower()
    if isinstance(item.get("text"), str):
        ext = TEXT_EXTENSIONS.get(mime, "txt")
        return str(item["text"]).encode("utf-8", "surrogatepass"), ext
    try:
        data = base64.b64decode("".join(str(item.get("blob", "")).split()), validate=True)
    except (binascii.Error, ValueError):
        raise UsageError(f"resource '{item.get('uri', '')}' is not valid base64; nothing saved") from None
    return data, MEDIA_EXTENSIONS.get(mime, "bin")


def _save(target: Path, contents: list[dict[str, Any]], uri: str) -> tuple[SavedContent, ...]:
    if target.is_dir():
        saved = []
        for index, item in enumerate(contents, 1):
            data, ext = _payload(item)
            path = write_new_file(target, f"resource-{index}", ext, data, option="--output")
            saved.append(SavedContent(str(item.get("uri", uri)), str(path), len(data)))
        return tuple(saved)
    if len(contents) != 1:
        raise UsageError(
            f"--output {target}: the resource has {len(contents)} contents; give a directory to save each"
        )
    if not target.parent.is_dir():
        raise UsageError(f"--output {target}: directory {target.parent} does not exist")
    data, _ext = _payload(contents[0])
    try:
        target.write_bytes(data)
    except OSError as exc:
        raise UsageError(f"--output {target}: cannot write ({exc.strerror or exc})") from None
    return (SavedContent(str(contents[0].get("uri", uri)), str(target), len(data)),)


async def read(
    ctx: CommandContext, server: str, uri: str, output: Path | None = None, follow: bool = False
) -> ResourceContents | Message:
    ctx.server(server)
    target = user_path("--output", output) if output is not None else None
    emit = ctx.emit
    if follow and emit is None:
        raise UsageError("--follow prints updates as they come: run it in a shell (orbmcp read ... --follow)")
    manager = await ctx.manager()
    sup = await manager.ready(server)
    record: list[Interaction] = []
    contents = await _read(ctx, sup, uri, record)
    saved = _save(target, contents, uri) if target is not None else ()
    first = ResourceContents(server, uri, tuple(contents), saved, tuple(record), update=0 if follow else None)
    if not follow:
        return first
    assert emit is not None
    return await _follow(ctx, sup, uri, target, first)


async def _follow(
    ctx: CommandContext, sup: Supervisor, uri: str, target: Path | None, first: ResourceContents
) -> Message:
    """Print ``first``, then the resource again after every update, until interrupted."""
    emit = ctx.emit
    assert emit is not None
    emit(first)
    count = 0

    async def on_update() -> None:
        nonlocal count
        count += 1
        record: list[Interaction] = []
        contents = await _read(ctx, sup, uri, record)
        saved = _save(target, contents, uri) if target is not None else ()
        emit(ResourceContents(sup.name, uri, tuple(contents), saved, tuple(record), update=count))

    await follow(sup, uri, on_update)
    # Only a 2026-07-28 server ends a subscription stream by itself.
    return Message(f"server '{sup.name}' ended the subscription to '{uri}'", {"uri": uri, "updates": count})
