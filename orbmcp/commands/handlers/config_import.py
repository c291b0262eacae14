"""config import: copy other clients' servers into orbmcp's own mcp.json, after showing the diff.

``--scope global`` (the default) copies the entries of the clients' user-level files into the
global ``mcp.json``; ``--scope project`` those of their project-level files into the project's
``.orb/mcp.json``, where they await ``orbmcp trust`` like any project entry (a cloned repository's
``.cursor/mcp.json`` must never reach the user's own config this way). A name the target file
already defines differently is a conflict, listed and skipped unless ``--overwrite NAME``; an entry
orbmcp cannot translate or that is invalid is listed with why. The output shows the diff of the
file (every secret masked) before saying what was written; ``--dry-run`` writes nothing.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence

from orbmcp.commands.context import CommandContext
from orbmcp.commands.handlers.edit import target_for
from orbmcp.commands.results.edit import ImportItem, ImportPlan
from orbmcp.commands.spelling import spell_for
from orbmcp.config import edit as config_edit
from orbmcp.config.clients import CLIENTS, parse_client
from orbmcp.config.documents import servers_block
from orbmcp.config.entries import parse_server
from orbmcp.config.imports import ClientRead, read_clients, source_of
from orbmcp.config.model import ClientName, ConfigWarning
from orbmcp.config.settings import Settings
from orbmcp.errors import UsageError, cmd


def config_import(
    ctx: CommandContext,
    clients: list[str],
    scope: str | None = None,
    dry_run: bool = False,
    overwrite: list[str] | None = None,
) -> ImportPlan:
    chosen = _clients(clients)
    where = target_for(ctx, scope)
    config = where.config
    warnings: list[ConfigWarning] = []
    reads = read_clients(
        chosen,
        config.project.dir,
        environ=None,
        warnings=warnings,
        scope="project" if where.scope == "project" else "user",
    )
    candidates, items = _candidates(reads, config.settings)
    replace_ok = set(overwrite or ())
    outcome: dict[str, ImportItem] = {}

    def plan(document: dict[str, object]) -> list[config_edit.Op]:
        outcome.clear()
        existing = servers_block(document, file=None)
        ops = []
        for name, (read, entry) in candidates.items():
            item = ImportItem(name, read.file.source, str(read.file.path), "added")
            if name in existing:
                if existing[name] == entry:
                    item = ImportItem(name, item.source, item.file, "unchanged")
                elif name in replace_ok:
                    item = ImportItem(name, item.source, item.file, "replaced")
                else:
                    item = ImportItem(
                        name,
                        item.source,
                        item.file,
                        "conflict",
                        f"{where.path} already defines it differently",
                    )
            outcome[name] = item
            if item.outcome in ("added", "replaced"):
                ops.append(config_edit.Op("set", ("mcpServers", name), entry))
        return ops

    preview = config_edit.edit(
        where.path, plan, global_dir=config.global_dir, private=where.private, dry_run=True
    )
    diff = _diff(preview, _secrets(candidates, preview.before))
    written = False
    if preview.changed and not dry_run:
        config_edit.edit(where.path, plan, global_dir=config.global_dir, private=where.private)
        written = True
    notes = [str(w) for w in warnings]
    if not reads:
        level = "project" if where.scope == "project" else "user"
        notes.append(f"no {level}-level config of {', '.join(chosen)} found")
    if written and where.scope == "project":
        notes.append(spell_for(f"the project's new servers run once approved: `{cmd('trust')}`", ctx.front))
    unknown = sorted(replace_ok - set(candidates))
    if unknown:
        notes.append(f"--overwrite names no imported server: {', '.join(unknown)}")
    return ImportPlan(
        file=str(where.path),
        scope=where.scope,
        items=(*outcome.values(), *items),
        diff=diff,
        written=written,
        dry_run=dry_run,
        read=tuple(str(read.file.path) for read in reads),
        notes=tuple(notes),
    )


def _clients(names: Sequence[str]) -> list[ClientName]:
    chosen: list[ClientName] = []
    for name in names:
        client = parse_client(name)
        if client is None:
            raise UsageError(
                f"unknown client {name!r}", hint=f"one of: {', '.join(CLIENTS)}", reason="unknown_client"
            )
        if client not in chosen:
            chosen.append(client)
    if not chosen:
        raise UsageError("name the clients to import from", hint=f"one of: {', '.join(CLIENTS)}")
    return chosen


def _candidates(
    reads: Sequence[ClientRead], settings: Settings
) -> tuple[dict[str, tuple[ClientRead, dict[str, object]]], list[ImportItem]]:
    """The entry to copy per name (the first client's, in the order given) and what is left out."""
    chosen: dict[str, tuple[ClientRead, dict[str, object]]] = {}
    left: list[ImportItem] = []
    for read in reads:
        file = read.file
        for imported in read.servers:
            item = (imported.name, file.source, str(file.path))
            if imported.entry is None:
                left.append(ImportItem(*item, "skipped", "; ".join(imported.problems)))
                continue
            server, problems = parse_server(
                imported.name,
                imported.entry,
                file=str(file.path),
                source=source_of(file.client),
                settings=settings,
            )
            if server is None:
                left.append(ImportItem(*item, "skipped", "; ".join(w.message for w in problems)))
            elif imported.name in chosen:
                first = chosen[imported.name][0].file
                left.append(ImportItem(*item, "conflict", f"{first.source} ({first.path}) is copied instead"))
            else:
                chosen[imported.name] = (read, imported.entry)
    return chosen, left


def _secrets(candidates: Mapping[str, tuple[ClientRead, dict[str, object]]], before: str) -> list[str]:
    """Values the diff must not show: env, header and client-secret values, new and existing."""
    from orbmcp.config.jsonc import parse_jsonc

    entries: list[object] = [entry for _, entry in candidates.values()]
    try:
        entries.extend(servers_block(parse_jsonc(before), file=None).values())
    except Exception:
        pass
    out: set[str] = set()
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        for key in ("env", "headers"):
            values = entry.get(key)
            if isinstance(values, dict):
                out.update(v for v in values.values() if isinstance(v, str) and len(v) >= 4 and "${" not in v)
        auth = entry.get("auth")
        if isinstance(auth, dict) and isinstance(auth.get("clientSecret"), str):
            out.add(auth["clientSecret"])
    return sorted(out, key=len, reverse=True)


def _diff(change: config_edit.FileEdit, secrets: Sequence[str]) -> str:
    from orbmcp.redact import MASK, redact

    lines = difflib.unified_diff(
        change.before.splitlines(keepends=True),
        change.after.splitlines(keepends=True),
        fromfile=f"{change.path} (now)",
        tofile=f"{change.path} (after import)",
    )
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    for secret in secrets:
        for form in (secret, json.dumps(secret, ensure_ascii=False)[1:-1]):
            text = text.replace(form, MASK)
    # The values are masked above; the redactor also catches what hides elsewhere (a URL's
    # password, a token in an argument), but a line that only refers to a variable keeps it visible.
    return "".join(line if "${" in line else redact(line) for line in text.splitlines(keepends=True))
