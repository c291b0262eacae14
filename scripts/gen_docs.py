"""Generate the shell completion scripts, the man page and the daemon client's command list from
the command table.

    python scripts/gen_docs.py            # write completions/, man/orbmcp.1 and a block of
                                          # orbmcp/fastpath/argv.py (DAEMON_COMMANDS)
    python scripts/gen_docs.py --check    # exit 1 (naming the files) when any is stale

The command table (orbmcp/commands/table.py) is the source of every command, option, slash form
and ``--json`` shape (``CommandSpec.json_output``; tests/frontends hold the output to them); this
file adds what the table does not hold: environment variables, files, exit statuses.
Output is deterministic: no dates, no terminal widths.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from orbmcp._version import __version__  # noqa: E402
from orbmcp.commands.complete import SHELLS  # noqa: E402
from orbmcp.commands.handlers.completion import install_path, script, script_filename  # noqa: E402
from orbmcp.commands.outcome import ExitCode  # noqa: E402
from orbmcp.commands.params import GLOBAL_OPTIONS  # noqa: E402
from orbmcp.commands.spec import CommandSpec, JsonDoc, Param  # noqa: E402
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


ERROR_KEYS = ("code", "message", "server")

# Keyed by command name; "status SERVER" is the second shape of status (its ``variant``).
JSON_OUTPUT: dict[str, JsonDoc] = {
    " ".join(filter(None, (spec.name, doc.variant))): doc for spec in COMMANDS for doc in spec.json_output
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
