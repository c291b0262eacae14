"""A stdio server's entry: the program orbmcp starts and talks to over its stdin and stdout."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator, model_validator

from orbmcp.config import entry_values as values
from orbmcp.config.problems import problems_of

# Keys that belong to the other transports: stated on a stdio server, they warn and are ignored.
HTTP_ONLY = ("headers",)


class StdioEntry(BaseModel):
    """``{"command": ..., "args": [...], "env": {...}, "cwd": ...}`` (``transport``/``type``
    ``stdio``, or no transport and a ``command``)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    transport: Literal["stdio"] = "stdio"
    command: str
    args: tuple[str, ...] = ()
    env: dict[str, str] = {}
    cwd: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _other_transports_keys(cls, raw: object, info: ValidationInfo) -> object:
        if isinstance(raw, dict):
            for key in HTTP_ONLY:
                if key in raw:
                    problems_of(info).ignore(f'"{key}" applies only to HTTP servers; ignored')
        return raw

    @field_validator("command", "cwd", mode="before")
    @classmethod
    def _text(cls, value: object, info: ValidationInfo) -> str:
        return values.text(str(info.field_name), value)

    @field_validator("args", mode="before")
    @classmethod
    def _args(cls, value: object) -> tuple[str, ...]:
        return values.string_list("args", value)

    @field_validator("env", mode="before")
    @classmethod
    def _env(cls, value: object) -> dict[str, str]:
        return values.string_map("env", value, headers=False)

    def server_fields(self) -> dict[str, object]:
        """What a ``ServerConfig`` takes from this entry."""
        return {"command": self.command, "args": self.args, "env": self.env, "cwd": self.cwd}
