"""Generate the shell completion scripts, the man page and the daemon client's command list from
the command table.

    python scripts/gen_docs.py            # write completions/, man/orbmcp.1 and a block of
                                          # orbmcp/fastpath/argv.py (DAEMON_COMMANDS)
    python scripts/gen_docs.py --check    # exit 1 (naming the files) when any is stale

The command table (orbmcp/commands/table.py) is the source of every command, option and slash
form; this file adds what the table does not hold: environment variables, files, exit statuses
and the documented keys of each command's ``--json`` output (tests/frontends pin them).
Output is deterministic: no dates, no terminal widths.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from orbmcp._version import __version__  # noqa: E402
from orbmcp.commands.complete import SHELLS  # noqa: E402
from orbmcp.commands.handlers.completion import install_path, script, script_filename  # noqa: E402
from orbmcp.commands.outcome import ExitCode  # noqa: E402
from orbmcp.commands.params import GLOBAL_OPTIONS  # noqa: E402
from orbmcp.commands.spec import CommandSpec, Param  # noqa: E402
from orbmcp.commands.table import COMMANDS  # noqa: E402
from orbmcp.commands.usage import usage_line, value_metavar  # noqa: E402

# ------------------------------------------------------------------------------ what the table lacks

ENVIRONMENT: tuple[tuple[str, str], ...] = (
    (
        "ORB_AGENT_DIR",
        "The global directory (default ~/.orb/agent): global config, tokens, trust "
        "records, logs and caches. A project file can never move it.",
    ),
    ("ORBMCP_CONFIG", "Same as --config FILE: use only this config file (trusted because you named it)."),
    (
        "ORBMCP_PROJECT",
        "Same as --project DIR: the project whose .orb/ config is read (default: the working directory).",
    ),
    (
        "ORBMCP_DEBUG",
        "1 writes a redacted JSON Lines debug log to <global dir>/logs/orbmcp.log "
        "(0600, rotated at about 2 MB, one backup).",
    ),
    ("PI_MCP_DEBUG", "pi-mcp-extension's name for ORBMCP_DEBUG; ORBMCP_DEBUG wins when both are set."),
    (
        "GITHUB_STEP_SUMMARY",
        "Set by GitHub Actions: check --format github appends its summary (Markdown) to this file.",
    ),
    ("NO_COLOR", "Any non-empty value: no colours and no rich tables, as with --no-color."),
    ("CI", "true/1: never prompt and never open a browser (authorization fails fast with exit 5)."),
    (
        "ORBMCP_MAX_INPUT_MIB",
        "How much call reads from stdin (-) or one k=@FILE, in MiB (default 16, at most 4096); "
        "more is a usage error (exit 2).",
    ),
    (
        "ORBMCP_TOOL_PREFIX, ORBMCP_TOOL_NAMING, ORBMCP_REQUEST_TIMEOUT_MS, ORBMCP_MAX_RETRIES, "
        "ORBMCP_DAEMON, ORBMCP_TOKEN_STORE, ORBMCP_LOCK",
        "The settings toolPrefix, toolNaming, requestTimeoutMs, maxRetries, daemon, tokenStore and lock, "
        "above every config file; a bad value is a config error naming the variable (exit 3).",
    ),
)

FILES: tuple[tuple[str, str], ...] = (
    ("<global dir>/settings.json", "Global settings and mcpServers (JSONC/JSON5)."),
    (
        "<global dir>/mcp.json",
        "Global settings and mcpServers; wins over settings.json. Bridged tool names: settings.toolPrefix "
        '(default mcp) and settings.toolNaming, "hashed" (default: <prefix>__<server>__<tool>_<hash>) or '
        '"pi" (<prefix>_<server>_<tool>, as pi-mcp-extension names them; a hash only when cut or taken).',
    ),
    (
        "<project>/.orb/settings.json, <project>/.orb/mcp.json",
        "Project config, read only once the project is trusted (orbmcp trust).",
    ),
    ("<global dir>/trusted-projects.json", "Approved projects, bound to a hash of their server definitions."),
    (
        "<global dir>/mcp-auth/<hash>.json",
        "OAuth client registration and tokens of one server (0600); "
        "<hash>.json.lock serializes interactive logins across processes.",
    ),
    ("<global dir>/logs/orbmcp.log", "Debug log (ORBMCP_DEBUG=1); crash reports are written beside it."),
    ("<global dir>/cache/tools.json", "Tool names from the last discovery, for shell completion."),
    ("<global dir>/cache/protocol-eras.json", "Which protocol revision each server spoke last."),
    ("<global dir>/shell_history", "History of orbmcp shell (0600)."),
    *(
        (
            str(install_path(s, {"HOME": "~"})),
            f"{s} completion script written by orbmcp completion install {s}.",
        )
        for s in SHELLS
    ),
)

EXIT_STATUS: tuple[tuple[ExitCode, str], ...] = (
    (ExitCode.OK, "Success."),
    (ExitCode.TOOL_ERROR, "A tool returned an error (isError), or a check failed."),
    (ExitCode.USAGE, "Usage error: unknown command, server, tool or option; bad arguments."),
    (ExitCode.CONFIG, "Configuration error (file, key and server are named)."),
    (ExitCode.CONNECTION, "Connection or protocol failure."),
    (ExitCode.AUTH, "Authorization required or failed."),
    (ExitCode.TIMEOUT, "Timed out."),
    (ExitCode.INTERRUPTED, "Interrupted (Ctrl-C, SIGTERM, SIGHUP); every server was stopped."),
    (
        ExitCode.INTERNAL,
        "Internal error (a bug): one line on stderr and a crash report in the log directory.",
    ),
)


@dataclass(frozen=True)
class JsonDoc:
    """The documented shape of one command's ``--json`` output on stdout."""

    shape: str  # "array", "object", "array of strings", "none", "inner"
    keys: tuple[str, ...] = ()  # keys of the object, or of each array element
    note: str = ""
    open: bool = False  # True: at least these keys (more depend on the options)


ROW_KEYS = ("name", "lifecycle", "state", "tools", "auth", "source", "lastError", "hint", "warnings")
DAEMON_KEYS = (
    "action",
    "running",
    "socket",
    "pid",
    "version",
    "uptimeS",
    "idleTimeoutS",
    "scope",
    "servers",
    "clientsServed",
    "activeClients",
    "refusedClients",
    "residentMemoryBytes",
)
DETAIL_KEYS = (
    "name",
    "state",
    "retries",
    "maxRetries",
    "transport",
    "lifecycle",
    "source",
    "file",
    "tools",
    "toolNames",
    "auth",
    "oauth",
    "lastError",
    "errorCode",
    "errorReason",
    "hint",
    "recentOutput",
    "projectConfig",
    "protocolVersion",
    "serverInfo",
    "warnings",
    "instructions",
    "capabilities",
)
TOOL_KEYS = ("server", "name", "bridgedName", "description", "inputSchema", "annotations")
MESSAGE_KEYS = ("ok", "message")
EDIT_KEYS = ("ok", "message", "action", "server", "file", "scope", "entry", "notes", "state")
ERROR_KEYS = ("code", "message", "server")

# Keyed by command name; "status SERVER" is the second shape of status.
JSON_OUTPUT: dict[str, JsonDoc] = {
    "status": JsonDoc(
        "array",
        ROW_KEYS,
        "one row per configured entry; tools is {discovered, active}; state is ready, starting, "
        "retrying (with retry: {attempt, maxRetries, inSeconds}), stopped, failed or needs-auth, or for "
        "an entry that did not load invalid, skipped or untrusted (with file)",
        open=True,
    ),
    "status SERVER": JsonDoc(
        "object",
        DETAIL_KEYS,
        "projectConfig is null or {loaded, path}; command, args, cwd, envNames (stdio) or url, "
        "headerNames (HTTP), secrets masked; capabilities is {advertised, server} (what orbmcp "
        "advertised, what the server offered; null until connected)",
        open=True,
    ),
    "start": JsonDoc(
        "array", DETAIL_KEYS, "the detail of the server, its last error when it failed", open=True
    ),
    "stop": JsonDoc("array", DETAIL_KEYS, "the detail of the server", open=True),
    "reconnect": JsonDoc("array", DETAIL_KEYS, "the detail of each server reconnected", open=True),
    "auth": JsonDoc(
        "object", (*MESSAGE_KEYS, "server"), "plus details of the outcome; with --status: auth", open=True
    ),
    "logout": JsonDoc(
        "object",
        (*MESSAGE_KEYS, "server", "removed", "revocation"),
        "revocation: revoked, unsupported, failed (with revocationError) or none",
        open=True,
    ),
    "tools": JsonDoc(
        "array",
        TOOL_KEYS,
        "inputSchema exactly as the server sent it; tools --diff A B: {same, before, after, changes}",
    ),
    "tools SERVER TOOL": JsonDoc(
        "object",
        (*TOOL_KEYS, "title", "parameters", "taskSupport", "outputSchema"),
        "parameters: {name, type, required, default?, enum?, description}; taskSupport: forbidden, "
        "optional or required",
    ),
    "call": JsonDoc(
        "object",
        ("content", "isError"),
        "the MCP CallToolResult: content, isError, and structuredContent and _meta when present; "
        "interactions (the server's questions and how they were answered) when it asked any",
        open=True,
    ),
    "resources": JsonDoc(
        "array",
        (),
        "resources and resource templates as the server sent them, each with a server key; "
        "templates also with parameters (the uriTemplate's variable names)",
    ),
    "read": JsonDoc(
        "object",
        ("contents",),
        "the MCP ReadResourceResult contents; saved [{uri, path, bytes}] with --output; with --follow "
        "one object per line, each with uri and update (0 for the first read)",
        open=True,
    ),
    "prompts": JsonDoc("array", (), "prompts as the server sent them, each with a server key"),
    "prompt": JsonDoc(
        "object",
        ("messages",),
        "the MCP GetPromptResult (description when present); interactions when the server asked any",
        open=True,
    ),
    "config show": JsonDoc("object", ("servers", "warnings", "project", "settings"), "secrets masked"),
    "config paths": JsonDoc(
        "object",
        (
            "globalDir",
            "globalFiles",
            "projectFiles",
            "configOverride",
            "trustStore",
            "authDir",
            "debugLog",
            "cacheDir",
            "imports",
        ),
        "imports: other clients' files orbmcp reads, each {client, path, scope, exists}",
    ),
    "config validate": JsonDoc("object", ("ok", "servers", "warnings", "project")),
    "config import": JsonDoc(
        "object",
        ("file", "scope", "dryRun", "written", "servers", "diff", "read", "notes"),
        "servers are {name, source, file, outcome, reason}; outcome: added, replaced, unchanged, "
        "conflict, skipped; the diff masks secrets",
    ),
    **{
        name: JsonDoc(
            "object",
            EDIT_KEYS,
            "action: added, replaced, removed, enabled, disabled or unchanged; entry (add) has secrets "
            "masked; state: the server's state in a running session, else null; add --json with several "
            "servers: an array of these",
        )
        for name in ("add", "remove", "enable", "disable")
    },
    "integrate": JsonDoc(
        "object",
        ("agent", "scope", "action", "dryRun", "changed", "written", "files", "commands", "notes"),
        "files are {path, kind, outcome, entry, reason, diff}; kind: file or entry; outcome: created, "
        "updated, unchanged, removed, absent, kept (not orbmcp's: left alone)",
    ),
    "integrate LIST": JsonDoc("object", ("agents",), "agents are {name, label, gets, installed, foundAt}"),
    "trust": JsonDoc("object", ("ok", "message", "trusted", "review")),
    "untrust": JsonDoc("object", ("ok", "message", "trusted", "revoked")),
    "check": JsonDoc(
        "object",
        (
            "ok",
            "exitCode",
            "servers",
            "missingTools",
            "requiredTools",
            "calls",
            "problems",
            "junit",
            "lock",
            "lockChanges",
        ),
        "servers: status rows plus ok, verdict (ok, failed, invalid, skipped, untrusted, disabled), "
        "file, recentOutput; calls: {call, server, tool, ok, error, expect, output}; lockChanges (with "
        "--lock): {server, tool, change, fields, descriptionDiff, schemaChanges}",
    ),
    "lock": JsonDoc(
        "object",
        ("ok", "file", "servers", "written", "created", "changes"),
        "changes: the tools changed since the lock, as check's lockChanges; written is false (exit 1) "
        "when tools changed and --update was not given",
    ),
    "slash": JsonDoc(
        "object",
        ("exit", "text", "json", "error", "content"),
        "the agent protocol's result envelope (README); json: the JSON of the command the line runs; "
        'with --list: {"commands": [{name, usage, description, args}]}',
    ),
    "complete": JsonDoc("object", ("items",), "each item: value, description, kind, replace_from"),
    "completion show": JsonDoc("object", ("shell", "script")),
    "completion install": JsonDoc("object", ("ok", "message", "shell", "path")),
    "shell": JsonDoc("none", (), "interactive; each line takes --json itself"),
    "serve": JsonDoc(
        "array of strings", (), "with --print-token: the token; serving writes nothing else on stdout"
    ),
    **{
        f"daemon {verb}": JsonDoc(
            "object",
            DAEMON_KEYS,
            "running is false (and the daemon keys absent) when none runs; servers are {name, state}",
        )
        for verb in ("start", "stop", "restart", "status")
    },
}


def documented_commands() -> list[CommandSpec]:
    return [c for c in COMMANDS if not c.hidden]


# ------------------------------------------------------------------------------------------- roff


def roff(text: str) -> str:
    """Escape text for a roff line: backslashes, and a leading dot or quote."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    if text.startswith((".", "'")):
        text = "\\&" + text
    return text


def _bold(text: str) -> str:
    return f"\\fB{roff(text)}\\fR"


def _italic(text: str) -> str:
    return f"\\fI{roff(text)}\\fR"


def _param_head(p: Param) -> str:
    if p.kind == "argument":
        name = p.metavar or p.name.upper()
        return _italic(name + ("..." if p.multiple else ""))
    head = ", ".join(_bold(f) for f in p.option_names)
    if p.kind == "option":
        head += " " + _italic(value_metavar(p))
    return head


def _param_help(p: Param) -> str:
    extra = []
    if p.required:
        extra.append("required")
    if p.multiple and p.kind == "option":
        extra.append("repeatable")
    if p.envvar:
        extra.append(f"env {p.envvar}")
    return p.help + (f" ({', '.join(extra)})" if extra else "")


def _json_line(doc: JsonDoc) -> str:
    if doc.shape == "none":
        return f"no JSON output; {doc.note}" if doc.note else "no JSON output"
    if doc.shape == "inner":
        return doc.note
    listed = ", ".join(doc.keys) + (", ..." if doc.open else "")
    keys = (
        f" of {{{listed}}}" if doc.keys and doc.shape == "array" else (f" {{{listed}}}" if doc.keys else "")
    )
    text = f"{doc.shape}{keys}"
    return f"{text}; {doc.note}" if doc.note else text


def man_page() -> str:
    out: list[str] = [
        f'.\\" {roff("orbmcp(1): generated by scripts/gen_docs.py from the command table; do not edit")}',
        f'.TH ORBMCP 1 "" "orbmcp {__version__}" "User Commands"',
        ".SH NAME",
        "orbmcp \\- check, start, stop, authorize and call MCP (Model Context Protocol) servers",
        ".SH SYNOPSIS",
        f".B orbmcp\n[{_italic('GLOBAL OPTIONS')}] {_italic('COMMAND')} [{_italic('ARGS')}]...",
        ".br",
        f'.B orbmcp slash\n"{_italic("/mcp ...")}" [{_bold("--json")}]',
        ".SH DESCRIPTION",
        roff(
            "orbmcp reads the mcpServers you configured, connects to them over stdio, Streamable HTTP or "
            "legacy SSE, discovers and calls their tools, shows why each server is in its state, and "
            "starts, stops, reconnects and authorizes them (OAuth 2.1)."
        ),
        ".PP",
        roff(
            "The same command handlers serve the shell (this program) and an agent's slash commands "
            "(orbmcp slash, orbmcp shell, or a Python agent embedding orbmcp). Without orbmcp shell or "
            "an agent session, each command is one session: it connects what it needs and stops it "
            "before it exits."
        ),
        ".PP",
        roff(
            "Output is plain text when stdout is not a terminal, rich tables and colour when it is (unless "
            "--no-color or NO_COLOR). Text a server supplied is escaped before it is printed. With --json, "
            "stdout holds only the JSON result and errors are one JSON line on stderr."
        ),
        ".SH GLOBAL OPTIONS",
        roff("Given before the command."),
    ]
    for p in GLOBAL_OPTIONS:
        out += [".TP", _param_head(p), roff(_param_help(p))]
    out.append(".SH COMMANDS")
    for spec in documented_commands():
        out.append(f".SS {roff(usage_line(spec))}")
        out.append(roff(spec.help))
        params = [p for p in spec.params if not p.hidden]
        for p in params:
            out += [".TP", _param_head(p), roff(_param_help(p))]
        if spec.slash:
            out += [".PP", f"Slash form: {', '.join(_bold(s) for s in spec.slash)}"]
        for key, doc in JSON_OUTPUT.items():
            variant = key[len(spec.name) :].strip()
            if key == spec.name or (key.startswith(spec.name + " ") and variant.isupper()):
                label = f"JSON with {variant}" if variant else "JSON"
                out += [".PP", f"{label}: {roff(_json_line(doc))}"]
        for example in spec.examples:
            out += [".PP", "Example:", ".RS", ".nf", roff(example), ".fi", ".RE"]
    out += _slash_section()
    out += _json_section()
    out.append(".SH ENVIRONMENT")
    for name, text in ENVIRONMENT:
        out += [".TP", _bold(name), roff(text)]
    out.append(".SH FILES")
    out.append(roff("<global dir> is $ORB_AGENT_DIR, by default ~/.orb/agent."))
    for name, text in FILES:
        out += [".TP", _italic(name), roff(text)]
    out.append(".SH EXIT STATUS")
    for code, text in EXIT_STATUS:
        out += [".TP", _bold(str(int(code))), roff(text)]
    out += [
        ".SH SEE ALSO",
        roff("orbmcp completion show bash|zsh|fish; the README of orbmcp."),
    ]
    return "\n".join(out) + "\n"


def _slash_section() -> list[str]:
    out = [
        ".SH SLASH COMMANDS",
        roff(
            'orbmcp slash "<line>" runs one line; orbmcp shell accepts them interactively; agents '
            "embedding orbmcp dispatch them the same way. /mcp:verb and /mcp verb are the same command."
        ),
    ]
    for spec in documented_commands():
        if spec.slash:
            out += [".TP", _bold(usage_line(spec, slash=True)), roff(spec.summary)]
    out += [
        ".TP",
        _bold("/mcp <server>"),
        roff("Why that server is in its state (as orbmcp status SERVER)."),
        ".TP",
        _bold("/mcp <command> ..."),
        roff(
            "Most other commands too (tools, call, config show, ...); a command name wins over a server "
            "of the same name, which /mcp status NAME still reaches. Not available as slash commands: "
            "shell, slash, complete, completion, trust, untrust."
        ),
    ]
    return out


def _json_section() -> list[str]:
    out = [
        ".SH JSON OUTPUT",
        roff("Every command takes --json (or the global --json). Keys per command:"),
    ]
    for name, doc in JSON_OUTPUT.items():
        out += [".TP", _bold(name), roff(_json_line(doc))]
    out += [
        ".TP",
        _bold("errors (stderr)"),
        roff(
            '{"error": {' + ", ".join(f'"{k}": ...' for k in ERROR_KEYS) + '}} plus "hint" when there is one.'
        ),
    ]
    return out


# ---------------------------------------------------------------------------------------- output


def outputs() -> dict[str, str]:
    """Path (relative to the repository) → generated text."""
    files = {f"completions/{_completion_file(s)}": script(s) for s in SHELLS}
    files["man/orbmcp.1"] = man_page()
    files[ARGV] = with_daemon_commands((ROOT / ARGV).read_text(encoding="utf-8"))
    return files


# The daemon's client decides from a line's first word whether the daemon runs it, without the
# table (its start-up budget): this block of its module is the table's ``runs_in_daemon``.
ARGV = "orbmcp/fastpath/argv.py"
_BEGIN = "# BEGIN DAEMON_COMMANDS, written by scripts/gen_docs.py from the table's runs_in_daemon\n"
_END = "# END DAEMON_COMMANDS\n"


def with_daemon_commands(source: str) -> str:
    """``source`` (fastpath/argv.py) with its generated ``DAEMON_COMMANDS`` block rewritten."""
    paths = [spec.path for spec in COMMANDS if spec.runs_in_daemon]
    if any(len(path) != 1 for path in paths):
        raise SystemExit(
            "the daemon runs single-word commands only (fastpath/argv.py routes by the first word)"
        )
    head, begin, rest = source.partition(_BEGIN)
    _, end, tail = rest.partition(_END)
    if not begin or not end:
        raise SystemExit(f"{ARGV}: its {_BEGIN.strip()!r} ... {_END.strip()!r} block is missing")
    words = "".join(f'        "{path[0]}",\n' for path in paths)
    return f"{head}{_BEGIN}DAEMON_COMMANDS = frozenset(\n    {{\n{words}    }}\n)\n{_END}{tail}"


def _completion_file(shell: str) -> str:
    # bash-completion's file is plain "orbmcp"; keep the extension in the repository for clarity.
    return f"{script_filename(shell)}.bash" if shell == "bash" else script_filename(shell)


def stale(root: Path, files: dict[str, str]) -> list[str]:
    out = []
    for rel, text in files.items():
        path = root / rel
        try:
            current = path.read_text(encoding="utf-8")
        except OSError:
            current = None
        if current != text:
            out.append(rel)
    return out


def write(root: Path, files: dict[str, str]) -> Iterable[str]:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            if path.read_text(encoding="utf-8") == text:
                continue
        except OSError:
            pass
        path.write_text(text, encoding="utf-8")
        yield rel


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a generated file is stale")
    parser.add_argument("--root", type=Path, default=ROOT, help="repository root (default: this checkout)")
    args = parser.parse_args(argv)
    files = outputs()
    if args.check:
        old = stale(args.root, files)
        for rel in old:
            print(f"stale: {rel} (run: python scripts/gen_docs.py)", file=sys.stderr)
        return 1 if old else 0
    for rel in write(args.root, files):
        print(f"wrote {rel}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
