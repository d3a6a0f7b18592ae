"""The audit trail: who did what to which thing, and when."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class Target:
    """What an action was done to: a kind (`booking`, `connection`, ...), its id, and a label
    people recognise it by (a booking's reference, a connection's name)."""

    kind: str
    id: str
    label: str | None = None


def departure_target(
    product_id: str, option_id: str, availability_id: str, label: str | None = None
) -> Target:
    """A departure (product, option, availability id) as an audit target: its id joins the three
    with `/`, as the manifest's address does."""
    return Target("departure", f"{product_id}/{option_id}/{availability_id}", label)


@dataclass(frozen=True)
class AuditEntry:
    id: int
    at: datetime
    actor: str
    actor_id: str | None
    actor_role: str
    action: str
    target: Target
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class AuditFilter:
    """Blank fields match everything. `actor` is an email (or a staff id), `target` a target's
    id or label; times bound `at` (since inclusive, until exclusive)."""

    actor: str | None = None
    target: str | None = None
    target_kind: str | None = None
    action: str | None = None
    since: datetime | None = None
    until: datetime | None = None
