"""orbmcp's settings: one ``pydantic_settings.BaseSettings`` over the config files' layers.

Sources, highest precedence first (``Settings.settings_customise_sources``): values given in code,
then orbmcp's settings variables (``ORBMCP_TOOL_PREFIX``, ``ORBMCP_DAEMON``, ...: the list is
``environment.SETTINGS``), then one JSONC source per file, in the documented order: project
``.orb/mcp.json``, project ``.orb/settings.json``, global ``mcp.json``, global ``settings.json``
(or the one ``--config`` file). A file states ``settings`` (``daemon`` and ``imports`` also at the
top level, as the orb agent's ``settings.json`` does) and ``goExtensions.mcp``. Each source
validates its own keys one by one: a bad value is ignored with a warning naming the file and key,
and the layers below it still count; a key a file leaves out never resets what a lower one set (a
project file carries no defaults). Settings that only the user's own files may state are dropped
from a project's.

A settings variable is the user's own, like a global file: it may state a global-only setting.
Its value is validated as a file's is, but a bad one is an error naming the variable (the
command stops, exit 3), not a warning: nobody reads the warnings of a CI job's environment. The
other ``ORB*`` variables (``ORBMCP_CONFIG``, ``ORBMCP_DEBUG``, ...) choose files or switches, not
settings; ``orbmcp.environment`` is every variable's one reader (stdlib: the fast paths, which
never import pydantic, read ``ORBMCP_DAEMON`` with it too).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from pydantic import ValidationError, ValidationInfo, field_validator
from pydantic.fields import FieldInfo

from orbmcp import environment
from orbmcp.config import entry_values as values
from orbmcp.config.basics import (
    DEFAULT_MAX_RETRIES,
    DEFAULT_REQUEST_TIMEOUT_MS,
    DEFAULT_SAMPLING_TIMEOUT_MS,
    DEFAULT_TOOL_PREFIX,
    ClientName,
    ConfigWarning,
    SamplingConfig,
)
from orbmcp.config.clients import CLIENTS, parse_client
from orbmcp.config.deferred_asyncio import on_first_use
from orbmcp.config.jsonc import type_name
from orbmcp.config.problems import MAX_DURATION_MS, Problems, as_int, invalid, show
from orbmcp.errors import ConfigError

with on_first_use("asyncio"):  # ~40 ms of CPU kept off the config-only commands (deferred_asyncio)
    from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

MAX_RETRIES_LIMIT = 10
MAX_ROOTS = values.MAX_ROOTS
_TOOL_PREFIX = re.compile(r"[A-Za-z0-9_-]{1,32}")

# settings key -> (Settings field, what it must be)
_KEYS: Mapping[str, tuple[str, str]] = {
    "toolPrefix": ("tool_prefix", "1-32 characters of A-Z a-z 0-9 _ -"),
    "toolNaming": ("tool_naming", '"hashed" or "pi"'),
    "requestTimeoutMs": ("request_timeout_ms", f"a positive integer up to {MAX_DURATION_MS}"),
    "maxRetries": ("max_retries", f"an integer from 0 to {MAX_RETRIES_LIMIT}"),
    "daemon": ("daemon", '"auto" or "off"'),
    "roots": ("roots", f"an array of at most {MAX_ROOTS} directory paths"),
    "tokenStore": ("credential_store", '"file" or "keyring"'),
    "lock": ("lock", '"warn" or "strict"'),
    "sampling": (
        "sampling",
        'an object with "command" (a non-empty array of strings) and an optional positive "timeoutMs"'
        f" up to {MAX_DURATION_MS}",
    ),
}
# Settings only the user's own files may state: a cloned project must not start processes that
# outlive the command the user ran, choose which other files orbmcp reads, nor choose the program
# that answers with the user's model, nor decide where the user's credentials are kept.
# Nor loosen the tool lock the user chose.
GLOBAL_ONLY = frozenset({"daemon", "imports", "sampling", "credential_store", "lock"})
# settings.json (the orb agent's file) states these at the top level, mcp.json under "settings".
_TOP_LEVEL = ("daemon", "imports")
# Settings field -> the key a file spells it with (for messages).
SETTING_KEYS = {field_name: key for key, (field_name, _) in _KEYS.items()}


class Settings(BaseSettings):
    """The settings in effect. Validators accept their own output, as every source's values are
    validated once by the source (per key) and once more when the layers are merged."""

    model_config = SettingsConfigDict(frozen=True, extra="ignore")

    tool_prefix: str = DEFAULT_TOOL_PREFIX
    tool_naming: str = "hashed"  # "pi": <prefix>_<server>_<tool>, as pi-mcp-extension names tools
    request_timeout_ms: int = DEFAULT_REQUEST_TIMEOUT_MS
    max_retries: int = DEFAULT_MAX_RETRIES
    extension_enabled: bool = True  # goExtensions.mcp: false turns the whole thing off
    daemon: str = "off"  # "auto": the first connecting command starts the session daemon
    credential_store: str = "file"  # "keyring": OAuth secrets in the OS keyring (global settings only)
    # Other clients whose servers are read through, in precedence order; None: every client whose
    # files exist on this machine (the default), () turns imports off.
    imports: tuple[ClientName, ...] | None = None
    roots: tuple[str, ...] | None = None  # every server's roots (expanded); None: the project dir
    sampling: SamplingConfig | None = None
    # The tool lock (orbmcp lock): "warn" names a changed tool on stderr before a call, "strict"
    # refuses the call.
    lock: str = "warn"

    @field_validator("tool_prefix", mode="before")
    @classmethod
    def _tool_prefix(cls, value: object) -> str:
        if isinstance(value, str) and _TOOL_PREFIX.fullmatch(value):
            return value
        raise invalid("toolPrefix")

    @field_validator("request_timeout_ms", mode="before")
    @classmethod
    def _duration_ms(cls, value: object) -> int:
        number = as_int(value)
        if number is not None and 0 < number <= MAX_DURATION_MS:
            return number
        raise invalid("requestTimeoutMs")

    @field_validator("max_retries", mode="before")
    @classmethod
    def _retries(cls, value: object) -> int:
        number = as_int(value)
        if number is not None and 0 <= number <= MAX_RETRIES_LIMIT:
            return number
        raise invalid("maxRetries")

    @field_validator("daemon", "credential_store", "lock", "tool_naming", mode="before")
    @classmethod
    def _choice(cls, value: object, info: ValidationInfo) -> str:
        allowed = {
            "daemon": ("auto", "off"),
            "credential_store": ("file", "keyring"),
            "lock": ("warn", "strict"),
            "tool_naming": ("hashed", "pi"),
        }
        name = str(info.field_name)
        if value in allowed[name]:
            return str(value)
        raise invalid(SETTING_KEYS[name])

    @field_validator("roots", mode="before")
    @classmethod
    def _roots(cls, value: object) -> tuple[str, ...] | None:
        if value is None:  # stated in code: the default
            return None
        return values.roots("settings.roots", list(value) if isinstance(value, tuple) else value)

    @field_validator("sampling", mode="before")
    @classmethod
    def _sampling(cls, value: object) -> SamplingConfig | None:
        if value is None or isinstance(value, SamplingConfig):
            return value
        if isinstance(value, dict):
            command = value.get("command")
            timeout = as_int(value.get("timeoutMs", DEFAULT_SAMPLING_TIMEOUT_MS))
            if (
                isinstance(command, list)
                and command
                and all(isinstance(a, str) and "\x00" not in a for a in command)
                and command[0].strip()
                and timeout is not None
                and 0 < timeout <= MAX_DURATION_MS
            ):
                return SamplingConfig(tuple(command), timeout)
        raise invalid("sampling")

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Values given in code, then the settings variables, then the files of ``from_files``,
        highest first; never a ``.env`` file, a secrets dir or pydantic-settings' own reading of
        the environment (a cloned project must not bring settings that way; orbmcp's variables
        have orbmcp's names, ``environment.SETTINGS``)."""
        layers, environ = _SOURCES.get()
        files = [JsoncSource(settings_cls, layer) for layer in reversed(layers)]
        variables = [] if environ is None else [EnvironmentSource(settings_cls, environ)]
        return (init_settings, *variables, *files)

    @classmethod
    def from_files(
        cls, layers: Sequence[SettingsLayer], environ: Mapping[str, str] | None = None
    ) -> tuple[Settings, list[ConfigWarning]]:
        """The settings the settings variables of ``environ`` (default: the process's) and the
        file layers (lowest precedence first) state, and what was wrong in the files. A bad
        variable raises ``ConfigError``."""
        with _sources(layers, os.environ if environ is None else environ):
            settings = cls()
        return settings, [w for layer in layers for w in layer.warnings]


class SettingsLayer:
    """One config file as a settings source: its document, its name, whether it is a project's."""

    __slots__ = ("document", "file", "project", "warnings")

    def __init__(self, document: Mapping[str, object], file: str | None, *, project: bool = False) -> None:
        self.document = document
        self.file = file
        self.project = project
        self.warnings: list[ConfigWarning] = []


# The sources of the ``Settings()`` being built: the file layers, and the environment whose
# settings variables count (None: none do; a plain ``Settings()`` is the defaults).
_SOURCES: ContextVar[tuple[Sequence[SettingsLayer], Mapping[str, str] | None]] = ContextVar(
    "orbmcp_settings_sources", default=((), None)
)


@contextmanager
def _sources(layers: Sequence[SettingsLayer], environ: Mapping[str, str] | None) -> Iterator[None]:
    token = _SOURCES.set((layers, environ))
    try:
        yield
    finally:
        _SOURCES.reset(token)


class EnvironmentSource(PydanticBaseSettingsSource):
    """The settings orbmcp's settings variables state (``environment.SETTINGS``), each validated
    by its field's validator; a bad value is a ``ConfigError`` naming the variable."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        super().__init__(settings_cls)
        self.environ = environ

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # __call__ answers for every variable

    def __call__(self) -> dict[str, Any]:
        stated: dict[str, Any] = {}
        for variable, key in environment.SETTINGS.items():
            value = environment.text(variable, self.environ)
            if not value:
                continue
            field_name, want = _KEYS[key]
            try:
                stated[field_name] = _validated(field_name, _typed(field_name, value.strip()))
            except ValidationError:
                raise ConfigError(
                    f"{variable} must be {want} (got {show(value)}): fix or unset it",
                    reason="invalid_setting",
                ) from None
        return stated


def _typed(field_name: str, value: str) -> object:
    """A variable's text as its field's type: a number for a number field, as a file states it."""
    if Settings.model_fields[field_name].annotation is int:
        return int(value) if re.fullmatch(r"[+-]?\d{1,18}", value) else value
    return value


class JsoncSource(PydanticBaseSettingsSource):
    """The settings one JSONC document states, each key validated on its own."""

    def __init__(self, settings_cls: type[BaseSettings], layer: SettingsLayer) -> None:
        super().__init__(settings_cls)
        self.layer = layer

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # __call__ answers for the whole document

    def __call__(self) -> dict[str, Any]:
        layer = self.layer
        stated, warnings = parse_settings(layer.document, file=layer.file)
        if layer.project:
            for key in sorted(GLOBAL_ONLY & stated.keys()):
                del stated[key]
                spelled = SETTING_KEYS.get(key, key)
                message = f'"{spelled}" is a global setting; a project cannot set it (ignored)'
                warnings.append(ConfigWarning(message, file=layer.file, reason="global_only_setting"))
        layer.warnings = warnings
        return stated


def parse_settings(
    document: Mapping[str, object], *, file: str | None
) -> tuple[dict[str, object], list[ConfigWarning]]:
    """Only the keys this file states, as ``Settings`` field names; bad values are ignored with a warning."""
    problems = Problems(None, file)
    stated: dict[str, object] = {}
    top = {key: document[key] for key in _TOP_LEVEL if key in document}
    if top and isinstance(document.get("settings"), dict | None):
        _settings_block(problems, top, stated)
    _settings_block(problems, document.get("settings"), stated)
    _extensions_block(problems, document.get("goExtensions"), stated)
    return stated, problems.warnings()


def _settings_block(problems: Problems, raw: object, stated: dict[str, object]) -> None:
    if raw is None:
        return
    if not isinstance(raw, dict):
        problems.ignore(
            f'"settings" must be an object, not {type_name(raw)}; ignored', reason="invalid_setting"
        )
        return
    if "imports" in raw:
        _imports(problems, raw["imports"], stated)
    for key, (field_name, want) in _KEYS.items():
        if key not in raw:
            continue
        try:
            stated[field_name] = _validated(field_name, raw[key])
        except ValidationError:
            problems.ignore(
                f'"settings.{key}" must be {want} (got {show(raw[key])}); ignored', reason="invalid_setting"
            )


def _validated(field_name: str, value: object) -> object:
    """One value through its field's validator (no file source: this runs inside one)."""
    with _sources((), None):
        return getattr(Settings.model_validate({field_name: value}), field_name)


def _imports(problems: Problems, value: object, stated: dict[str, object]) -> None:
    """``imports``: a list of client names; an unknown name is dropped with a warning."""
    if not isinstance(value, list):
        problems.ignore(
            f'"settings.imports" must be a list of client names (got {show(value)}); ignored',
            reason="invalid_setting",
        )
        return
    chosen: list[str] = []
    for item in value:
        client = parse_client(item) if isinstance(item, str) else None
        if client is None:
            problems.ignore(
                f'"settings.imports": unknown client {show(item)} (known: {", ".join(CLIENTS)}); ignored',
                reason="invalid_setting",
            )
        elif client not in chosen:
            chosen.append(client)
    stated["imports"] = tuple(chosen)


def _extensions_block(problems: Problems, extensions: object, stated: dict[str, object]) -> None:
    if extensions is None:
        return
    if not isinstance(extensions, dict):
        problems.ignore(
            f'"goExtensions" must be an object, not {type_name(extensions)}; ignored',
            reason="invalid_setting",
        )
    elif "mcp" in extensions:
        if isinstance(extensions["mcp"], bool):
            stated["extension_enabled"] = extensions["mcp"]
        else:
            problems.ignore(
                f'"goExtensions.mcp" must be true or false (got {show(extensions["mcp"])}); ignored',
                reason="invalid_setting",
            )
