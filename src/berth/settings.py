"""Settings from `BERTH_*` environment variables."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


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
    log_level: str = "INFO"
    log_format: Literal["json", "console"] = "json"

    @property
    def octo_endpoint(self) -> str:
        return self.public_url.rstrip("/") + "/octo"
