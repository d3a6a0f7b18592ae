"""Settings from `BERTH_*` environment variables."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from berth.domain.webhooks import parse_schedule


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="BERTH_", extra="ignore")

    database_url: str = "sqlite+aiosqlite:///./berth.db"
    admin_token: SecretStr | None = None
    public_url: str = Field(
        default="http://127.0.0.1:8000", description="Base URL resellers use; `/octo` is appended"
    )
    default_expiration_minutes: int = Field(default=30, ge=1)
    max_expiration_minutes: int = Field(default=1440, ge=1)
    max_range_days: int = Field(default=366, ge=1)
    expiry_sweep_seconds: float = Field(default=5.0, gt=0, description="How often expired holds are swept")
    debug_disable_slot_lock: bool = Field(
        default=False,
        description="DEBUG ONLY: check capacity outside the slot lock. Exists so a test can show the race it closes.",
    )
    retry_schedule: str = Field(
        default="5,60,300,1800,7200,18000,36000,43200,43200,43200,43200,43200",
        description="Seconds between delivery attempts (about 3.3 days in all by default)",
    )
    webhook_allow_private_targets: bool = Field(
        default=False, description="Allow webhook and mapping URLs on loopback or private networks"
    )
    delivery_concurrency: int = Field(default=20, ge=1, description="Deliveries sent at once per worker")
    delivery_timeout_seconds: float = Field(
        default=10.0, gt=0, description="How long a receiver may take to answer"
    )
    delivery_poll_seconds: float = Field(
        default=1.0, gt=0, description="How often an idle worker looks for work"
    )
    run_worker: bool = Field(default=True, description="Run the background worker inside `berth serve`")
    auth_cache_seconds: float = Field(
        default=1.0,
        ge=0,
        description="How long a process trusts an API key check (revocations elsewhere take this long)",
    )
    log_level: str = "INFO"
    log_format: Literal["json", "console"] = "json"

    @field_validator("retry_schedule")
    @classmethod
    def _schedule(cls, value: str) -> str:
        parse_schedule(value)
        return value

    @property
    def octo_endpoint(self) -> str:
        return self.public_url.rstrip("/") + "/octo"
