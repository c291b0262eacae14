"""Changing a server entry in one of orbmcp's own config files: add, remove, switch on or off.

Each change is made to the text (``jsonc_edit``), so the person's comments, key order and
formatting survive, and is checked before anything is written: the new text must parse, with the
real parser, into exactly the old document with the change applied. The file is replaced
atomically with its mode kept (a symlinked file is written where the link points, so dotfiles stay
linked), under a lock in orbmcp's global dir that serialises two orbmcp processes editing it. A file
that does not parse is never written: the error names it.
"""

from __future__ import annotations

import copy
import hashlib
import os
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from orbmcp import fs
from orbmcp.config.documents import servers_block
from orbmcp.config.entry_options import switched_off
from orbmcp.config.jsonc import parse_jsonc
from orbmcp.config.jsonc_edit import EditError, delete_value, set_value
from orbmcp.errors import ConfigError, UsageError

LOCK_TIMEOUT_S = 10.0
PROJECT_FILE_MODE = 0o644  # a project's .orb/mcp.json is usually committed and shared

Keys = tuple[str, ...]


@dataclass(frozen=True)
class Op:
    """``set`` ``value`` at ``keys``, or ``delete`` what is there."""

    kind: str  # "set" | "delete"
    keys: Keys
    value: object = None


@dataclass(frozen=True)
class FileEdit:
    """What an edit did to one file."""

    path: Path
    before: str  # "" for a file that did not exist
    after: str

    @property
    def changed(self) -> bool:
        return self.before != self.after


def _apply_text(text: str, ops: Sequence[Op]) -> str:
    for op in ops:
        text = set_value(text, op.keys, op.value) if op.kind == "set" else delete_value(text, op.keys)
    return text


def _apply_document(document: dict[str, object], ops: Sequence[Op]) -> dict[str, object]:
    document = copy.deepcopy(document)
    for op in ops:
        node: dict[str, object] = document
        for key in op.keys[:-1]:
            inner = node.get(key)
            if not isinstance(inner, dict):
                if op.kind == "delete":
                    break
                inner = node[key] = {}
            node = inner
        else:
            if op.kind == "set":
                node[op.keys[-1]] = copy.deepcopy(op.value)
            else:
                node.pop(op.keys[-1], None)
    return document


def read_document(path: Path) -> tuple[str, dict[str, object]]:
    """The text of an own config file ("" when absent) and its document; refuses one that does not parse."""
    try:
        data = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return "", {}
    except OSError as exc:
        raise ConfigError(
            f"{path}: cannot read it ({exc.strerror or exc}); nothing was changed",
            file=str(path),
            reason="unreadable",
        ) from None
    try:
        text = data.decode("utf-8-sig")
        document = parse_jsonc(text, file=str(path))
        servers_block(document, file=str(path))
    except UnicodeDecodeError:
        raise ConfigError(
            f"{path}: not valid UTF-8; nothing was changed", file=str(path), reason="not_utf8"
        ) from None
    except ConfigError as exc:
        raise ConfigError(
            f"{exc.message}; the file was not changed",
            file=str(path),
            hint=f"fix {path} first (orbmcp edits only a file it can parse)",
            reason="unparsable_target",
        ) from None
    return text, document


def edit(
    path: Path,
    plan: Callable[[dict[str, object]], Sequence[Op]],
    *,
    global_dir: Path,
    private: bool,
    dry_run: bool = False,
) -> FileEdit:
    """Apply the ops ``plan`` chooses for the current document of ``path`` (read under the lock)."""
    target = Path(os.path.realpath(path))
    lock = (
        global_dir / "locks" / hashlib.sha256(str(target).encode("utf-8", "surrogateescape")).hexdigest()[:32]
    )
    try:
        with fs.locked(lock, timeout=LOCK_TIMEOUT_S):
            before, document = read_document(target)
            ops = plan(document)
            try:
                after = _apply_text(before, ops)
                result = parse_jsonc(after, file=str(path))
            except (EditError, ConfigError) as exc:
                raise _cannot_edit(path, str(exc)) from None
            if result != _apply_document(document, ops):
                raise _cannot_edit(path, "the edited text would not say what was asked")
            if after != before and not dry_run:
                _write(target, after, had_bom=_has_bom(target), private=private)
            return FileEdit(path, before, after)
    except fs.LockTimeout:
        raise ConfigError(
            f"{path}: another orbmcp is editing it (lock {fs.lock_path(lock)} held); nothing was changed",
            file=str(path),
            hint="try again in a moment",
            reason="config_locked",
        ) from None
    except OSError as exc:  # the lock's directory (orbmcp's global dir) cannot be made
        raise ConfigError(
            f"{path}: cannot write it ({exc.strerror or exc}); nothing was changed",
            file=str(path),
            reason="unwritable",
        ) from None


def _cannot_edit(path: Path, why: str) -> ConfigError:
    return ConfigError(
        f"{path}: cannot edit it in place ({why}); nothing was changed",
        file=str(path),
        hint=f"edit {path} by hand",
        reason="cannot_edit",
    )


def _has_bom(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(3) == b"\xef\xbb\xbf"
    except OSError:
        return False


def _write(target: Path, text: str, *, had_bom: bool, private: bool) -> None:
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = fs.FILE_MODE if private else PROJECT_FILE_MODE
    data = ("\ufeff" if had_bom else "") + text
    try:
        fs.atomic_write(target, data, mode=mode, private_dir=private)
    except OSError as exc:
        raise ConfigError(
            f"{target}: cannot write it ({exc.strerror or exc}); nothing was changed",
            file=str(target),
            reason="unwritable",
        ) from None


# ---- server entries -------------------------------------------------------------------------------


def entry_of(document: Mapping[str, object], name: str) -> dict[str, object] | None:
    entry = servers_block(document, file=None).get(name)
    return cast("dict[str, object]", entry) if isinstance(entry, dict) else None


def add_ops(
    document: Mapping[str, object], name: str, entry: Mapping[str, object], *, overwrite: bool, file: Path
) -> list[Op]:
    if name in servers_block(document, file=None) and not overwrite:
        raise UsageError(
            f"server '{name}' is already defined in {file}",
            hint="remove it first, or pass --overwrite to replace it",
            reason="server_exists",
        )
    return [Op("set", ("mcpServers", name), dict(entry))]


def remove_ops(document: Mapping[str, object], name: str) -> list[Op]:
    if name not in servers_block(document, file=None):
        return []
    return [Op("delete", ("mcpServers", name))]


def switch_ops(document: Mapping[str, object], name: str, on: bool) -> list[Op]:
    """Turn an entry on or off with as small a change as the entry allows; a missing entry becomes
    ``{"enabled": on}`` (a partial override of the server another layer defines)."""
    entry = entry_of(document, name)
    keys = ("mcpServers", name)
    if entry is None:
        return [Op("set", keys, {"enabled": on})]
    if is_on(entry) == on:
        return []
    if on:
        ops = [Op("delete", (*keys, "disabled"))] if "disabled" in entry else []
        if "enabled" in entry:
            ops.append(Op("set", (*keys, "enabled"), True))
        return ops
    if "disabled" in entry:
        return [Op("set", (*keys, "disabled"), True)]
    return [Op("set", (*keys, "enabled"), False)]


def is_on(entry: Mapping[str, object]) -> bool:
    return not switched_off(dict(entry))
