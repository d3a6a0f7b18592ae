"""Staff accounts and audit entries as the admin API (and `berth staff list --json`) answer them."""

from __future__ import annotations

from typing import Any

from berth.domain.audit import AuditEntry
from berth.domain.staff import StaffMember
from berth.domain.times import format_utc, format_utc_or_none


def staff_json(member: StaffMember) -> dict[str, Any]:
    return {
        "id": member.id,
        "email": member.email,
        "role": member.role.value,
        "active": member.active,
        "tokenHint": member.token_hint,
        "createdAt": format_utc(member.created_at),
        "disabledAt": format_utc_or_none(member.disabled_at),
    }


def audit_json(entry: AuditEntry) -> dict[str, Any]:
    return {
        "id": entry.id,
        "at": format_utc(entry.at),
        "actor": entry.actor,
        "actorId": entry.actor_id,
        "actorRole": entry.actor_role,
        "action": entry.action,
        "target": {"kind": entry.target.kind, "id": entry.target.id, "label": entry.target.label},
        "details": entry.details,
    }
