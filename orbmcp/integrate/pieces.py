"""Applying an integration plan: whole files orbmcp owns, and one entry in another program's config.

A ``ManagedFile`` is written whole and carries ``MARKER``: a file at its path without the marker is
the person's own and is left alone (install and remove both say so). A ``ConfigEntry`` is one server
entry in an agent's JSON(C) or TOML config: the file's other content is kept (JSON edited in place by
``config/edit.py``, TOML by ``toml_entry``), an entry of that name that orbmcp did not write is left
alone, and ``remove`` deletes only an entry orbmcp wrote. Every change is computed first (its before
and after text: the diff), then written unless it is a dry run.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from orbmcp import fs
from orbmcp.config import edit as config_edit
from orbmcp.errors import ConfigError
from orbmcp.integrate import MARKER, toml_entry

Outcome = Literal["created", "updated", "unchanged", "removed", "absent", "kept"]
MAX_FILE_BYTES = 16 * 1024 * 1024  # another program's config; bigger is not one


@dataclass(frozen=True)
class ManagedFile:
    path: Path
    text: str  # contains MARKER


@dataclass(frozen=True)
class ConfigEntry:
    path: Path
    format: Literal["json", "toml"]
    keys: tuple[str, ...]  # ("mcpServers", "orbmcp"), ("mcp_servers", "orbmcp")
    value: Mapping[str, object]
    private: bool = True  # a new file is 0600 (user configs hold secrets)


Piece = ManagedFile | ConfigEntry


@dataclass(frozen=True)
class Change:
    path: str
    kind: Literal["file", "entry"]
    outcome: Outcome
    before: str
    after: str
    reason: str | None = None
    entry: str | None = None  # "mcpServers.orbmcp" for an entry

    @property
    def writes(self) -> bool:
        return self.outcome in ("created", "updated", "removed")


def is_orbmcp_entry(value: object) -> bool:
    """An entry that runs ``orbmcp serve``: one orbmcp wrote (or the person wrote the same)."""
    if not isinstance(value, Mapping):
        return False
    command = value.get("command")
    words = [*(command if isinstance(command, list) else [command]), *(value.get("args") or [])]
    text = " ".join(str(w) for w in words)
    return "orbmcp" in text and "serve" in text


def _read(path: Path) -> str | None:
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise ConfigError(
            f"{path}: cannot read it ({exc.strerror or exc}); nothing was changed", file=str(path)
        ) from None
    if len(data) > MAX_FILE_BYTES:
        raise ConfigError(f"{path}: over {MAX_FILE_BYTES >> 20} MiB; nothing was changed", file=str(path))
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not valid UTF-8; nothing was changed", file=str(path)) from None


def plan_file(piece: ManagedFile, *, remove: bool) -> Change:
    before = _read(piece.path)
    path = str(piece.path)
    if before is not None and MARKER not in before:
        why = "exists and orbmcp did not write it; left alone (move it away and run this again)"
        return Change(path, "file", "kept", before, before, why)
    if remove:
        if before is None:
            return Change(path, "file", "absent", "", "")
        return Change(path, "file", "removed", before, "")
    if before is None:
        return Change(path, "file", "created", "", piece.text)
    return Change(path, "file", "unchanged" if before == piece.text else "updated", before, piece.text)


def plan_entry(piece: ConfigEntry, *, remove: bool, global_dir: Path) -> Change:
    name = ".".join(piece.keys)
    if piece.format == "toml":
        return _plan_toml(piece, remove=remove, name=name)

    outcome: list[Outcome] = []

    def plan(document: dict[str, object]) -> list[config_edit.Op]:
        current: object = document
        for key in piece.keys:
            current = current.get(key) if isinstance(current, dict) else None
        outcome[:] = [_entry_outcome(current, piece.value, remove)]
        if outcome[0] in ("created", "updated"):
            return [config_edit.Op("set", piece.keys, dict(piece.value))]
        if outcome[0] == "removed":
            return [config_edit.Op("delete", piece.keys)]
        return []

    done = config_edit.edit(piece.path, plan, global_dir=global_dir, private=piece.private, dry_run=True)
    return _entry_change(piece, outcome[0], done.before, done.after, name)


def _entry_outcome(current: object, wanted: Mapping[str, object], remove: bool) -> Outcome:
    if current is None:
        return "absent" if remove else "created"
    if not is_orbmcp_entry(current):
        return "kept"
    if remove:
        return "removed"
    return "unchanged" if current == dict(wanted) else "updated"


def _entry_change(piece: ConfigEntry, outcome: Outcome, before: str, after: str, name: str) -> Change:
    reason = None
    if outcome == "kept":
        reason = f"{name} is already there and does not run orbmcp serve; left alone"
        after = before
    return Change(str(piece.path), "entry", outcome, before, after, reason, name)


def _plan_toml(piece: ConfigEntry, *, remove: bool, name: str) -> Change:
    before = _read(piece.path) or ""
    try:
        current = toml_entry.get(toml_entry.parse(before), piece.keys)
        outcome = _entry_outcome(current, piece.value, remove)
        after = before
        if outcome in ("created", "updated"):
            after = toml_entry.set_table(before, piece.keys, piece.value, MARKER)
        elif outcome == "removed":
            after = toml_entry.delete_table(before, piece.keys, MARKER)
    except toml_entry.TomlEditError as exc:
        raise ConfigError(
            f"{piece.path}: cannot edit [{name}] in place ({exc}); nothing was changed",
            file=str(piece.path),
            hint=f"edit {piece.path} by hand",
            reason="cannot_edit",
        ) from None
    return _entry_change(piece, outcome, before, after, name)


def plan(pieces: Sequence[Piece], *, remove: bool, global_dir: Path) -> list[Change]:
    return [
        plan_file(p, remove=remove)
        if isinstance(p, ManagedFile)
        else plan_entry(p, remove=remove, global_dir=global_dir)
        for p in pieces
    ]


def write(changes: Sequence[Change], pieces: Sequence[Piece], *, global_dir: Path) -> None:
    """Make the planned changes, each file under the lock orbmcp's config edits use."""
    for change, piece in zip(changes, pieces, strict=True):
        if not change.writes:
            continue
        target = Path(os.path.realpath(change.path))
        with _locked(target, global_dir):
            if (_read(target) or "") != change.before:
                raise ConfigError(
                    f"{change.path}: changed while orbmcp was editing it; nothing more was changed",
                    file=change.path,
                    hint="run the command again",
                )
            if change.outcome == "removed" and isinstance(piece, ManagedFile):
                target.unlink()
                _remove_empty_namespace(target.parent)
            else:
                _write_text(target, change.after, private=isinstance(piece, ConfigEntry) and piece.private)


def _locked(target: Path, global_dir: Path) -> contextlib.AbstractContextManager[None]:
    name = hashlib.sha256(str(target).encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return fs.locked(global_dir / "locks" / name, timeout=10.0)


def _write_text(target: Path, text: str, *, private: bool) -> None:
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        mode = fs.FILE_MODE if private else 0o644
    try:
        fs.atomic_write(target, text, mode=mode, private_dir=False)
    except OSError as exc:
        raise ConfigError(
            f"{target}: cannot write it ({exc.strerror or exc}); nothing more was changed", file=str(target)
        ) from None


def _remove_empty_namespace(directory: Path) -> None:
    """A command namespace directory orbmcp made (``commands/orbmcp/``) goes once it is empty."""
    if directory.name == "orbmcp":
        with contextlib.suppress(OSError):
            directory.rmdir()
