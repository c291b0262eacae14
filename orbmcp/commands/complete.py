"""Completion, and the grammar both fronts share: which command a line names, which value comes next.

``complete_line`` answers for slash lines (``/mcp:st`` → ``/mcp:start``) and shell lines
(``orbmcp st`` → ``start status stop``) from the command table alone, plus server names from the
config and tool names from the discovery cache. It never connects anything and never imports
``mcp``, ``httpx2`` or pydantic: shells run it on every Tab.

Slash grammar, derived from ``CommandSpec.slash``: ``/mcp`` is the command whose spellings include
``"/mcp"``; ``/mcp:<verb>`` and ``/mcp <verb>`` are the same command for every verb a spelling
names (``/mcp:start`` gives ``/mcp start``, ``/mcp reconnect`` gives ``/mcp:reconnect``); every other
table command is reachable as ``/mcp <command> ...`` except the front-specific ones in
``NOT_SLASH``. A word after ``/mcp`` that is no command is a server: ``/mcp <name>``. Commands win
over servers of the same name; ``/mcp status <name>`` reaches such a server.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orbmcp.commands.completion_words import Candidate, CandidateKind, split_partial
from orbmcp.commands.live_query import LiveCompleter, LiveQuery
from orbmcp.commands.params import ADHOC, GLOBAL_OPTIONS
from orbmcp.commands.spec import CommandSpec, Param
from orbmcp.commands.table import COMMANDS, GROUPS
from orbmcp.commands.usage import PROGRAM, SLASH_ROOT
from orbmcp.config import paths
from orbmcp.config.names_cache import server_names
from orbmcp.text import shown_name

if TYPE_CHECKING:
    from orbmcp.config.model import ResolvedConfig
    from orbmcp.config.names_cache import CachedNames

SHELLS = ("bash", "zsh", "fish")
CHECK_FORMATS = ("text", "github")
# Commands that only make sense in a terminal of their own (and trust, which must stay a deliberate
# act of the person at the terminal, never a line an agent forwards; serve, which is a process an
# agent starts) are not slash commands.
NOT_SLASH: frozenset[tuple[str, ...]] = frozenset(
    {
        ("shell",),
        ("slash",),
        ("complete",),
        ("completion", "show"),
        ("completion", "install"),
        ("trust",),
        ("untrust",),
        ("serve",),
        # Writing the config is the person's act too: an agent that forwards lines must not add a
        # server that runs a command of its choosing (enable/disable only switch configured ones).
        ("add",),
        ("remove",),
        ("config", "import"),
    }
)
HELP_FLAGS = ("--help", "-h")

ConfigLoader = Callable[..., "ResolvedConfig"]  # called as loader(project=..., config_file=...)


# ------------------------------------------------------------------------------------ grammar


def _slash_words(spelling: str) -> tuple[str, ...] | None:
    """``"/mcp:start"`` → ``("start",)``; ``"/mcp reconnect"`` → ``("reconnect",)``; ``"/mcp"`` → ``()``."""
    if spelling == SLASH_ROOT:
        return ()
    if spelling.startswith(SLASH_ROOT + ":"):
        return tuple(spelling[len(SLASH_ROOT) + 1 :].split())
    if spelling.startswith(SLASH_ROOT + " "):
        return tuple(spelling[len(SLASH_ROOT) + 1 :].split())
    return None


def slash_commands() -> dict[tuple[str, ...], CommandSpec]:
    """Verb words after ``/mcp`` (or ``/mcp:``) → command."""
    out: dict[tuple[str, ...], CommandSpec] = {}
    for spec in COMMANDS:
        if spec.hidden:
            continue
        if spec.path not in NOT_SLASH:
            out[spec.path] = spec
        for spelling in spec.slash:
            words = _slash_words(spelling)
            if words:
                out[words] = spec
    return out


def bare_slash_command() -> CommandSpec | None:
    """The command ``/mcp`` alone runs (and ``/mcp <server>``)."""
    return next((spec for spec in COMMANDS if SLASH_ROOT in spec.slash), None)


def slash_spellings() -> list[str]:
    """What the first word of a slash line can be: ``/mcp`` and one colon form per slash verb."""
    out = {SLASH_ROOT}
    for spec in COMMANDS:
        for spelling in spec.slash:
            words = _slash_words(spelling)
            if words and len(words) == 1:
                out.add(f"{SLASH_ROOT}:{words[0]}")
    return sorted(out)


def shell_commands() -> dict[tuple[str, ...], CommandSpec]:
    return {spec.path: spec for spec in COMMANDS if not spec.hidden}


def resolve(
    paths: Mapping[tuple[str, ...], CommandSpec], words: Sequence[str]
) -> tuple[CommandSpec | None, int]:
    """The command whose path is the longest prefix of ``words``, and that path's length."""
    best: tuple[CommandSpec | None, int] = (None, 0)
    for path, spec in paths.items():
        n = len(path)
        if n > best[1] and tuple(words[:n]) == path:
            best = (spec, n)
    return best


def next_words(paths: Iterable[tuple[str, ...]], words: Sequence[str]) -> set[str]:
    """Words that can follow ``words`` on the way to some command path."""
    depth = len(words)
    prefix = tuple(words)
    return {p[depth] for p in paths if len(p) > depth and p[:depth] == prefix}


def split_slash_head(word: str) -> tuple[str, ...] | None:
    """The verb words carried by the first token: ``/mcp`` → ``()``, ``/mcp:start`` → ``("start",)``."""
    if word == SLASH_ROOT:
        return ()
    if word.startswith(SLASH_ROOT + ":") and len(word) > len(SLASH_ROOT) + 1:
        return (word[len(SLASH_ROOT) + 1 :],)
    return None


def is_program_word(word: str) -> bool:
    return Path(word).name == PROGRAM


def find_global(flag: str) -> Param | None:
    return next((p for p in GLOBAL_OPTIONS if flag in p.option_names), None)


def option_table(spec: CommandSpec) -> dict[str, Param]:
    return {flag: p for p in spec.params if p.kind != "argument" for flag in p.option_names}


# ---------------------------------------------------------------------------------- completion


class _World:
    """What completion may know: the config (loaded at most once, only when needed), the
    session's running servers, and tool names (live ones from a session, else the cache)."""

    def __init__(
        self,
        loader: ConfigLoader | None,
        project: Path | None,
        config_file: Path | None,
        running: set[str] | None,
        tool_names: Mapping[str, Sequence[str]] | None,
        *,
        live: LiveCompleter | None = None,
    ) -> None:
        self.live = live
        self._loader = loader
        self.project = project
        self.config_file = config_file
        self.running = running
        self.tool_names = tool_names
        self._config: ResolvedConfig | CachedNames | None = None
        self._loaded = False

    def config(self) -> ResolvedConfig | CachedNames | None:
        if not self._loaded:
            self._loaded = True
            loader = self._loader
            try:
                if loader is None:
                    # Not the loader: it validates with pydantic, too slow for every Tab.
                    self._config = server_names(self.project, self.config_file)
                else:
                    self._config = loader(project=self.project, config_file=self.config_file)
            except Exception:
                # Completion is a convenience: a broken config shows no server names, never a
                # traceback in the middle of the user's command line.
                self._config = None
        return self._config

    def servers(self, completer: str) -> list[str]:
        cfg = self.config()
        if cfg is None:
            return []
        names = list(cfg.servers)
        if completer == "servers:oauth":
            return [n for n in names if cfg.servers[n].has_oauth]
        if completer in ("servers:enabled", "servers:disabled"):
            return [n for n in names if cfg.servers[n].enabled == (completer == "servers:enabled")]
        if completer == "servers:stopped" and self.running is not None:
            return [n for n in names if n not in self.running]
        if completer == "servers:running" and self.running is not None:
            return [n for n in names if n in self.running]
        return names

    def tools(self, server: str) -> list[str]:
        """The server's tool names as listings show them (and ``call`` accepts them): a name
        with control characters must not reach the shell's completion as they are."""
        live = self.tool_names.get(server) if self.tool_names is not None else None
        if live:
            return [shown_name(name) for name in live]
        # Budget: only a tool's completion reads the cache; a Tab on anything else skips the module.
        from orbmcp.core.tooling import toolcache

        cfg = self.config()
        gdir = cfg.global_dir if cfg is not None else paths.global_dir()
        return [shown_name(name) for name in toolcache.load(gdir / "cache" / "tools.json").get(server, [])]


def _match(
    current: str, candidates: Iterable[str | Candidate], kind: CandidateKind = "value"
) -> list[Candidate]:
    """The candidates that start with ``current``, sorted by value, one per value."""
    out: dict[str, Candidate] = {}
    for c in candidates:
        item = c if isinstance(c, Candidate) else Candidate(c, kind)
        if item.value.startswith(current) and (item.value not in out or not out[item.value].description):
            out[item.value] = item
    return [out[v] for v in sorted(out)]


def _words_after(paths: Mapping[tuple[str, ...], CommandSpec], words: Sequence[str]) -> list[Candidate]:
    """The next word of each command path below ``words``, described by its command or group."""
    out = []
    for word in next_words(paths, words):
        spec = paths.get((*words, word))
        out.append(Candidate(word, "subcommand", spec.summary if spec is not None else GROUPS.get(word, "")))
    return out


_SERVER_KIND: dict[str, CandidateKind] = {"tools": "tool", "resource_uris": "resource"}


def _values_for(p: Param, current: str, world: _World, values: Mapping[str, Any]) -> list[Candidate]:
    c = p.completer
    if c is None:
        return []
    if c.startswith("servers"):
        names: list[str] = world.servers(c)
    elif c == "tools":
        server = values.get("server")
        names = world.tools(server) if isinstance(server, str) else []
    elif c == "shells":
        names = list(SHELLS)
    elif c == "check-formats":
        names = list(CHECK_FORMATS)
    elif c == "clients":
        from orbmcp.config.clients import CLIENTS  # budget: a Tab that names no client skips it

        names = list(CLIENTS)
    elif c == "agents":
        from orbmcp.integrate.agents import AGENTS  # budget: it loads asyncio and more, per Tab

        names = [a.name for a in AGENTS]
    elif c == "scopes":
        names = ["global", "project"]
    elif c in ("prompt_arguments", "resource_uris", "tool_arguments"):
        return _live_values(c, current, world, values)
    else:
        names = []
    if p.multiple:  # don't offer what the line already names
        given = values.get(p.name)
        taken = set(given) if isinstance(given, list) else set()
        names = [n for n in names if n not in taken]
    return _match(current, names, "server" if c.startswith("servers") else _SERVER_KIND.get(c, "value"))


def _live_values(completer: str, current: str, world: _World, values: Mapping[str, Any]) -> list[Candidate]:
    server = values.get("server")
    if world.live is None or not isinstance(server, str):
        return []
    if completer == "resource_uris":
        return _match(current, world.live(LiveQuery("resource_uri", server, current)), "resource")
    name = values.get("tool" if completer == "tool_arguments" else "name")
    if not isinstance(name, str):
        return []
    given = values.get("arguments")
    pairs = [tuple(a.split("=", 1)) for a in (given if isinstance(given, list) else []) if "=" in a]
    context = tuple((k, v) for k, v in pairs)
    query = LiveQuery(
        "tool_argument" if completer == "tool_arguments" else "prompt_argument",
        server,
        current,
        name,
        context,
    )
    found = world.live(query)
    return _match(current, found, "value" if "=" in current else "argument")


def _complete_params(
    spec: CommandSpec, args: Sequence[str], current: str, world: _World, *, slash: bool = False
) -> list[Candidate]:
    options = option_table(spec)
    positionals = [p for p in spec.params if p.kind == "argument"]
    values: dict[str, Any] = {}
    used: set[str] = set()
    index = 0
    only_positional = False
    expecting: Param | None = None
    for tok in args:
        if expecting is not None:
            values[expecting.name] = tok
            expecting = None
            continue
        if not only_positional and tok == "--":
            only_positional = True
            continue
        if not only_positional and tok.startswith("-") and tok != "-":
            flag, eq, _ = tok.partition("=")
            p = options.get(flag)
            if p is not None:
                used.add(p.name)
                if p.kind == "option" and not eq:
                    expecting = p
            continue
        if index < len(positionals):
            p = positionals[index]
            if p.multiple:
                values.setdefault(p.name, []).append(tok)
            else:
                values[p.name] = tok
                index += 1
    if expecting is not None:
        return _values_for(expecting, current, world, values)
    if not only_positional and current.startswith("-"):
        flags = [
            Candidate(f, "option", p.help)
            for p in spec.params
            if p.kind != "argument"
            and not p.hidden
            and (p.multiple or p.name not in used)
            and not (slash and p in ADHOC)  # a slash line runs in a shared session: no ad-hoc server
            for f in p.option_names
        ]
        return _match(current, [*flags, Candidate(HELP_FLAGS[0], "option", "Show this command's help.")])
    if index < len(positionals):
        p = positionals[index]
        if spec.path == ("slash",) and p.name == "line":
            return _complete_nested_slash(current, world)
        return _values_for(p, current, world, values)
    return []


def _complete_nested_slash(current: str, world: _World) -> list[Candidate]:
    """``orbmcp slash "/mcp:start gi``: the quoted word is a slash line of its own."""
    if not current.startswith("/"):
        return []
    words, inner = split_partial(current)
    head = current[: len(current) - len(inner)]
    return [c._replace(value=head + c.value) for c in _complete_slash(words, inner, world)]


def _complete_slash(words: list[str], current: str, world: _World) -> list[Candidate]:
    verbs = slash_commands()
    if not words:
        spellings = []
        for spelling in slash_spellings():
            spec = (
                bare_slash_command()
                if spelling == SLASH_ROOT
                else verbs.get(split_slash_head(spelling) or ())
            )
            spellings.append(Candidate(spelling, "command", spec.summary if spec is not None else ""))
        return _match(current, spellings)
    head = split_slash_head(words[0])
    if head is None:
        return []
    seq = [*head, *words[1:]]
    spec, n = resolve(verbs, seq)
    if spec is not None:
        return _complete_params(spec, seq[n:], current, world, slash=True)
    bare = bare_slash_command()
    if not seq:  # "/mcp <Tab>": a command or a server
        servers = world.servers("servers") if bare is not None else []
        return _match(current, [*_words_after(verbs, []), *(Candidate(s, "server") for s in servers)])
    following = _words_after(verbs, seq)
    if following:  # inside a multi-word command: "/mcp config <Tab>"
        return _match(current, following)
    if head or bare is None:  # "/mcp:frob ...": no such command
        return []
    return _complete_params(bare, seq, current, world, slash=True)  # "/mcp <server> <Tab>"


def _complete_shell(words: list[str], current: str, world: _World) -> list[Candidate]:
    if words and is_program_word(words[0]):
        words = words[1:]
    i = 0
    while i < len(words) and words[i].startswith("-"):
        flag, eq, value = words[i].partition("=")
        p = find_global(flag)
        if p is not None and p.kind == "option":
            if not eq:
                if i + 1 == len(words):
                    return []  # the value of --config/--project: a path, left to the shell
                value = words[i + 1]
                i += 1
            if p.name == "config":
                world.config_file = Path(value)
            elif p.name == "project":
                world.project = Path(value)
        i += 1
    rest = words[i:]
    paths = shell_commands()
    if not rest:
        if current.startswith("-"):
            flags = [Candidate(f, "option", p.help) for p in GLOBAL_OPTIONS for f in p.option_names]
            return _match(current, [c for c in flags if c.value.startswith("--")])
        top = [c._replace(kind="command") for c in _words_after(paths, [])]
        return _match(current, top)
    spec, n = resolve(paths, rest)
    if spec is None:
        if current.startswith("-"):
            return _match(current, HELP_FLAGS, "option")
        return _match(current, _words_after(paths, rest))
    return _complete_params(spec, rest[n:], current, world)


def complete_candidates(
    line: str,
    *,
    config_loader: ConfigLoader | None = None,
    running: set[str] | None = None,
    tool_names: Mapping[str, Sequence[str]] | None = None,
    project: Path | None = None,
    config_file: Path | None = None,
    live: LiveCompleter | None = None,
) -> list[Candidate]:
    """Candidates for the word being typed at the end of ``line`` (sorted, unique), each with
    its kind and description.

    ``line`` is a slash line (``/mcp:start gi``) or a shell line, with or without the program
    name (``orbmcp call srv ``, ``call srv ``). ``running`` is the set of servers a live session
    runs (``None``: no session knows, so ``stop`` offers every server). ``tool_names`` are a live
    session's tools by server; otherwise the discovery cache answers. ``config_loader`` is called as
    ``config_loader(project=..., config_file=...)`` (default: ``load_config``), with the values of
    ``--project``/``--config`` on the line if any, else ``project``/``config_file``. ``live`` answers
    what only a server knows (``LiveQuery``); without it those positions have no candidates.
    """
    words, current = split_partial(line)
    world = _World(config_loader, project, config_file, running, tool_names, live=live)
    first = words[0] if words else current
    if first.startswith("/"):
        return _complete_slash(words, current, world)
    return _complete_shell(words, current, world)


def complete_line(line: str, **options: Any) -> list[str]:
    """The values of ``complete_candidates`` (which documents the options)."""
    return [c.value for c in complete_candidates(line, **options)]
