"""The audit trail: one row per staff action, written in the action's own transaction."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, func, insert, or_, select

from berth.domain.audit import AuditEntry, AuditFilter, Target
from berth.domain.staff import Actor
from berth.store.connection import DbConnection
from berth.store.tables import audit_log


async def record(
    conn: DbConnection,
    actor: Actor,
    action: str,
    target: Target,
    details: dict[str, Any] | None = None,
    *,
    at: datetime,
) -> None:
    """Note that `actor` did `action` to `target`; call it inside the transaction that does it."""
    await conn.execute(
        insert(audit_log).values(
            at=at,
            actor=actor.name,
            actor_id=actor.staff_id,
            actor_role=actor.role.value,
            action=action,
            target_kind=target.kind,
            target_id=target.id,
            target_label=target.label,
            details=details or {},
        )
    )


def _entry(row: Any) -> AuditEntry:
    return AuditEntry(
        id=row.id,
        at=row.at,
        actor=row.actor,
        actor_id=row.actor_id,
        actor_role=row.actor_role,
        action=row.action,
        target=Target(row.target_kind, row.target_id, row.target_label),
        details=row.details,
    )


async def search(
    conn: DbConnection, where: AuditFilter, *, limit: int, offset: int
) -> tuple[list[AuditEntry], int]:
    """Matching entries, newest first, and how many match."""
    clauses: list[ColumnElement[bool]] = []
    if where.actor is not None:
        name = where.actor.strip()
        clauses.append(or_(audit_log.c.actor.in_({name, name.lower()}), audit_log.c.actor_id == name))
    if where.target is not None:
        clauses.append(or_(audit_log.c.target_id == where.target, audit_log.c.target_label == where.target))
    if where.target_kind is not None:
        clauses.append(audit_log.c.target_kind == where.target_kind)
    if where.action is not None:
        clauses.append(audit_log.c.action == where.action)
    if where.since is not None:
        clauses.append(audit_log.c.at >= where.since)
    if where.until is not None:
        clauses.append(audit_log.c.at < where.until)
    condition = and_(*clauses) if clauses else None
    query = (
        select(audit_log).order_by(audit_log.c.at.desc(), audit_log.c.id.desc()).limit(limit).offset(offset)
    )
    counting = select(func.count()).select_from(audit_log)
    if condition is not None:
        query = query.where(condition)
        counting = counting.where(condition)
    rows = (await conn.execute(query)).all()
    return [_entry(row) for row in rows], int(await conn.scalar(counting) or 0)
