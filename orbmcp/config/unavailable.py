"""Names a config file defines that did not load, and why: invalid, skipped or untrusted entries.

``status`` and ``check`` list them beside the loaded servers, so nothing a file names is silently
missing.
"""

from __future__ import annotations

from collections.abc import Mapping

from orbmcp.config.model import ConfigWarning, ServerConfig, Source, UnavailableEntry
from orbmcp.errors import cmd


def unavailable_entries(
    servers: Mapping[str, ServerConfig],
    dropped: Mapping[str, tuple[Source, ConfigWarning]],
    untrusted: Mapping[str, UnavailableEntry],
) -> dict[str, UnavailableEntry]:
    """Every name a file defines that did not load, and why (a loaded name is never listed)."""
    out: dict[str, UnavailableEntry] = {}
    for name, (source, warning) in dropped.items():
        if name in servers:
            continue
        skipped = warning.reason == "env_missing"
        fix = warning.fix or f"fix the entry (`{cmd('config', 'validate')}` lists every problem)"
        out[name] = UnavailableEntry(
            name=name,
            kind="skipped" if skipped else "invalid",
            file=warning.file,
            source=source,
            message=warning.message.removesuffix("; entry skipped"),
            reason=warning.reason,
            fix=fix,
        )
    for name, entry in untrusted.items():
        if name not in servers and name not in out:
            out[name] = entry
    return out


def untrusted_entry(name: str, file: str, source: Source, *, changed: bool) -> UnavailableEntry:
    """A project server left out because nobody approved it (or its definition changed since);
    ``source`` is ``project``, or ``import:<client>`` for another client's project file."""
    if changed:
        message = "its entry is new or changed since the project was approved"
    else:
        message = "it is defined in a project config, and the project is not trusted"
    return UnavailableEntry(
        name=name,
        kind="untrusted",
        file=file,
        source=source,
        message=message,
        reason="project_untrusted",
        fix=f"review and approve the project's servers: `{cmd('trust')}`",
    )
