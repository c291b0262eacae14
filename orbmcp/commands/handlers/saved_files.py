"""Files a command writes for the person: saved images and audio (``call --save-images``), resource
contents (``read --output``), a call's full output (``--output``).

A file name never comes from a server: the stem is the tool's sanitised name, the extension is
chosen from the MIME type, and a file is only ever created, never overwritten or followed through
a planted symlink.
"""

from __future__ import annotations

import base64
import binascii
import os
from pathlib import Path

from orbmcp.commands.context import CommandContext
from orbmcp.core.tooling.naming import sanitize
from orbmcp.core.tooling.results import AudioBlock, ImageBlock, ToolResult
from orbmcp.errors import UsageError

# Extensions for saved media, chosen by us from the MIME type: a file name never comes from the server.
MEDIA_EXTENSIONS: dict[str, str] = {
    "image/png": "png",
    "image/jpeg": "jpg",
    "image/jpg": "jpg",
    "image/gif": "gif",
    "image/webp": "webp",
    "image/svg+xml": "svg",
    "image/bmp": "bmp",
    "image/tiff": "tiff",
    "image/avif": "avif",
    "audio/wav": "wav",
    "audio/wave": "wav",
    "audio/x-wav": "wav",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
    "audio/ogg": "ogg",
    "audio/webm": "webm",
    "audio/flac": "flac",
    "audio/aac": "aac",
    "audio/mp4": "m4a",
}
_MAX_SAVE_ATTEMPTS = 1000


def prepare_dir(directory: Path) -> Path:
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(
            f"--save-images {directory}: cannot create the directory ({exc.strerror or exc})"
        ) from None
    if not directory.is_dir():
        raise UsageError(f"--save-images {directory}: not a directory")
    return directory


def user_path(option: str, value: Path | str) -> Path:
    try:
        return Path(value).expanduser()
    except RuntimeError:  # "~someone/..." naming no known user: a typo, not a crash
        raise UsageError(f"{option} {value}: cannot expand '~' (no such user or home directory)") from None


def check_output(path: Path) -> None:
    parent = path.parent
    if path.is_dir():
        raise UsageError(f"--output {path}: is a directory")
    if not parent.is_dir():
        raise UsageError(f"--output {path}: directory {parent} does not exist")


def write_new_file(
    directory: Path, stem: str, ext: str, data: bytes, *, option: str = "--save-images"
) -> Path:
    """Create a file that did not exist (never overwrite, never follow a planted symlink)."""
    for n in range(_MAX_SAVE_ATTEMPTS):
        path = directory / (f"{stem}.{ext}" if n == 0 else f"{stem}-{n}.{ext}")
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        except FileExistsError:
            continue
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        return path
    raise UsageError(f"{option} {directory}: too many files named {stem}-*.{ext}")


def save_media(ctx: CommandContext, result: ToolResult, directory: Path, tool: str) -> dict[int, str]:
    """Write every image and audio block to ``directory``; returns content index -> path."""
    stem_base = sanitize(tool)[:40].strip("_-") or "tool"
    saved: dict[int, str] = {}
    for index, block in enumerate(result.content):
        if not isinstance(block, ImageBlock | AudioBlock):
            continue
        try:
            data = base64.b64decode("".join(block.data_b64.split()), validate=True)
        except (binascii.Error, ValueError):
            ctx.ui.notify(
                f"content block {index + 1} of '{tool}' is not valid base64; not saved", level="warning"
            )
            continue
        mime = block.mime_type.split(";", 1)[0].strip().lower()
        ext = MEDIA_EXTENSIONS.get(mime, "bin")
        try:
            path = write_new_file(directory, f"{stem_base}-{index + 1}", ext, data)
        except OSError as exc:
            raise UsageError(f"--save-images {directory}: cannot write ({exc.strerror or exc})") from None
        saved[index] = str(path)
    return saved
