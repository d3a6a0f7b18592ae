"""A reseller connection as the admin API and `berth connection list --json` show it."""

from __future__ import annotations

from berth.capabilities.base import JSON
from berth.domain.connections import Connection


def connection_json(connection: Connection) -> JSON:
    return {
        "id": connection.id,
        "name": connection.name,
        "keyHint": connection.key_hint,
        "createdAt": connection.created_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "revokedAt": connection.revoked_at.strftime("%Y-%m-%dT%H:%M:%SZ") if connection.revoked_at else None,
        "active": connection.active,
    }
