"""The keys every server entry may have whatever its transport: on/off, lifecycle, timeouts,
retries, health checks, OAuth, roots. A pydantic model validated beside the transport's own."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from orbmcp.config import entry_values as values
from orbmcp.config.model import DEFAULT_TIMEOUT_MS, Lifecycle
from orbmcp.config.oauth_entry import OAuthEntry
from orbmcp.config.problems import as_int, invalid, problems_of, show
from orbmcp.config.settings import MAX_RETRIES_LIMIT, Settings


class EntryOptions(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    enabled: bool | None = None
    disabled: bool | None = None
    lifecycle: Lifecycle | None = None
    timeout_ms: int | None = Field(None, alias="timeoutMs")
    request_timeout_ms: int | None = Field(None, alias="requestTimeoutMs")
    timeout: int | None = None  # seconds, already in milliseconds once validated
    max_retries: int | None = Field(None, alias="maxRetries")
    health_check_interval_ms: int | None = Field(None, alias="healthCheckIntervalMs")
    auth: OAuthEntry | None = None
    roots: tuple[str, ...] | None = None

    @model_validator(mode="before")
    @classmethod
    def _one_of_each(cls, raw: object, info: ValidationInfo) -> object:
        """Keys with two spellings: the documented one wins, with a warning."""
        if not isinstance(raw, dict):
            return raw
        out = dict(raw)
        problems = problems_of(info)
        if "requestTimeoutMs" in out and "timeout" in out:
            problems.ignore('both "requestTimeoutMs" and "timeout" are set; using "requestTimeoutMs"')
            del out["timeout"]
        key = "auth" if "auth" in out else "oauth"
        if "auth" in out and "oauth" in out:
            problems.ignore('both "auth" and "oauth" are set; using "auth", "oauth" ignored')
        value = out.pop("oauth", None)
        value = out.get("auth", value)
        if value is None or value is False:
            out.pop("auth", None)
        else:
            out["auth"] = value
            context: Any = info.context
            if isinstance(context, dict):
                context["auth_key"] = key
        if out.get("healthCheckIntervalMs") == 0:
            del out["healthCheckIntervalMs"]  # 0 means no health checks
        return out

    @field_validator("enabled", "disabled", mode="before")
    @classmethod
    def _flag(cls, value: object, info: ValidationInfo) -> bool:
        return values.flag(str(info.field_name), value)

    @field_validator("lifecycle", mode="before")
    @classmethod
    def _lifecycle(cls, value: object) -> str:
        if value in ("eager", "lazy"):
            return str(value)
        raise invalid(f'"lifecycle" must be "eager" or "lazy" (got {show(value)})')

    @field_validator("timeout_ms", "request_timeout_ms", "health_check_interval_ms", mode="before")
    @classmethod
    def _duration(cls, value: object, info: ValidationInfo) -> int:
        return values.positive_int(str(cls.model_fields[str(info.field_name)].alias), value)

    @field_validator("timeout", mode="before")
    @classmethod
    def _seconds(cls, value: object) -> int:
        return values.scaled_duration_ms("timeout", value, unit_ms=1000)

    @field_validator("max_retries", mode="before")
    @classmethod
    def _retries(cls, value: object, info: ValidationInfo) -> int:
        retries = as_int(value)
        if retries is None:
            raise invalid(f'"maxRetries" must be an integer (got {show(value)})')
        if retries > MAX_RETRIES_LIMIT:
            problems_of(info).ignore(
                f'"maxRetries" {retries} is above {MAX_RETRIES_LIMIT}; using {MAX_RETRIES_LIMIT}'
            )
            return MAX_RETRIES_LIMIT
        return max(0, retries)  # 0 or a negative number disables retries

    @field_validator("roots", mode="before")
    @classmethod
    def _roots(cls, value: object) -> tuple[str, ...]:
        return values.roots("roots", value)

    @property
    def switched_on(self) -> bool | None:
        """False when ``enabled: false`` or ``disabled: true``; None when neither is stated."""
        states = [
            s for s in (self.enabled, None if self.disabled is None else not self.disabled) if s is not None
        ]
        return None if not states else all(states)

    def server_fields(self, settings: Settings) -> dict[str, object]:
        """What a ``ServerConfig`` takes from these keys; unstated ones from ``settings``."""
        on = self.switched_on
        lifecycle: Literal["eager", "lazy"] = self.lifecycle or "eager"
        return {
            "enabled": on is not False,
            # off means out of the eager set, even if "eager" is stated
            "lifecycle": "lazy" if on is False else lifecycle,
            "timeout_ms": self.timeout_ms or DEFAULT_TIMEOUT_MS,
            "request_timeout_ms": self.request_timeout_ms or self.timeout or settings.request_timeout_ms,
            "max_retries": settings.max_retries if self.max_retries is None else self.max_retries,
            "health_check_interval_ms": self.health_check_interval_ms,
            "auth": None if self.auth is None else self.auth.config(),
            "roots": self.roots,
        }


def switched_off(raw: dict[str, object]) -> bool:
    """``enabled: false`` or ``disabled: true`` (a value of any other type counts as unstated)."""
    return raw.get("enabled") is False or raw.get("disabled") is True
