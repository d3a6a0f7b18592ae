"""Reseller connections and their API keys."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime

from berth.domain.contracts import DEFAULT_CONTRACT, Contract

KEY_PREFIX = "berth_"


@dataclass(frozen=True)
class Connection:
    id: str
    name: str
    key_hint: str
    created_at: datetime
    revoked_at: datetime | None
    contract: Contract = DEFAULT_CONTRACT
    contract_version: int = 0  # 0: never saved (the default contract)

    @property
    def active(self) -> bool:
        return self.revoked_at is None


def new_api_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def hash_api_key(key: str) -> str:
    """Keys are long random strings, so one SHA-256 is enough (no salt or stretching needed)."""
    return hashlib.sha256(key.encode()).hexdigest()


def key_hint(key: str) -> str:
    """The last characters of a key: enough for staff to tell keys apart, useless to an attacker."""
    return "…" + key[-4:]
