"""An HTTP server's entry: a URL orbmcp connects to (Streamable HTTP; ``sse_entry`` for SSE)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator, model_validator

from orbmcp.config import entry_values as values
from orbmcp.config.problems import invalid, problems_of

# Keys that belong to stdio servers: stated on an HTTP server, they warn and are ignored.
STDIO_ONLY = ("args", "env", "cwd")


class UrlEntry(BaseModel):
    """The fields every HTTP transport shares: ``url`` and ``headers``."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    url: str
    headers: dict[str, str] = {}

    @model_validator(mode="before")
    @classmethod
    def _other_transports_keys(cls, raw: object, info: ValidationInfo) -> object:
        if isinstance(raw, dict):
            for key in STDIO_ONLY:
                if key in raw:
                    problems_of(info).ignore(f'"{key}" applies only to stdio servers; ignored')
        return raw

    @field_validator("url", mode="before")
    @classmethod
    def _url(cls, value: object) -> str:
        url = values.text("url", value)
        # A URL with ${VAR} is checked once expanded (expand.finalize).
        problem = values.url_problem("url", url) if "$" not in url else None
        if problem is not None:
            raise invalid(problem)
        return url

    @field_validator("headers", mode="before")
    @classmethod
    def _headers(cls, value: object) -> dict[str, str]:
        return values.string_map("headers", value, headers=True)

    def server_fields(self) -> dict[str, object]:
        """What a ``ServerConfig`` takes from this entry."""
        return {"url": self.url, "headers": self.headers}


class HttpEntry(UrlEntry):
    """``{"url": ...}`` (``transport``/``type`` ``streamable-http`` or ``http``, or none)."""

    transport: Literal["streamable-http"] = "streamable-http"
