"""Staff accounts: the password's argon2 hash and the API token's SHA-256, never either."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import insert, select, update

from berth.domain.staff import Role, StaffMember
from berth.store.connection import DbConnection
from berth.store.tables import staff

_COLUMNS = (
    staff.c.id,
    staff.c.email,
    staff.c.role,
    staff.c.created_at,
    staff.c.disabled_at,
    staff.c.token_hint,
    staff.c.must_change_password,
    staff.c.session_generation,
)


def _member(row: Any) -> StaffMember:
    return StaffMember(
        id=row.id,
        email=row.email,
        role=Role(row.role),
        created_at=row.created_at,
        disabled_at=row.disabled_at,
        token_hint=row.token_hint,
        must_change_password=row.must_change_password,
        session_generation=row.session_generation,
    )


async def insert_member(conn: DbConnection, member: StaffMember, password_hash: str) -> None:
    await conn.execute(
        insert(staff).values(
            id=member.id,
            email=member.email,
            role=member.role.value,
            password_hash=password_hash,
            must_change_password=member.must_change_password,
            token_hash=None,
            token_hint=None,
            session_generation=member.session_generation,
            created_at=member.created_at,
            disabled_at=None,
        )
    )


async def list_members(conn: DbConnection) -> list[StaffMember]:
    rows = await conn.execute(select(*_COLUMNS).order_by(staff.c.email))
    return [_member(row) for row in rows]


async def find_member(conn: DbConnection, email_or_id: str) -> StaffMember | None:
    row = (
        await conn.execute(
            select(*_COLUMNS).where(
                (staff.c.email == email_or_id.strip().lower()) | (staff.c.id == email_or_id)
            )
        )
    ).first()
    return None if row is None else _member(row)


async def with_password_hash(conn: DbConnection, email: str) -> tuple[StaffMember, str] | None:
    row = (await conn.execute(select(*_COLUMNS, staff.c.password_hash).where(staff.c.email == email))).first()
    return None if row is None else (_member(row), row.password_hash)


async def by_token_hash(conn: DbConnection, token_hash: str) -> StaffMember | None:
    row = (await conn.execute(select(*_COLUMNS).where(staff.c.token_hash == token_hash))).first()
    return None if row is None else _member(row)


async def set_token(conn: DbConnection, member_id: str, token_hash: str, hint: str) -> None:
    await conn.execute(
        update(staff).where(staff.c.id == member_id).values(token_hash=token_hash, token_hint=hint)
    )


async def set_password(
    conn: DbConnection, member_id: str, password_hash: str, *, must_change: bool, end_sessions: bool
) -> None:
    values: dict[str, Any] = {"password_hash": password_hash, "must_change_password": must_change}
    if end_sessions:
        values["session_generation"] = staff.c.session_generation + 1
    await conn.execute(update(staff).where(staff.c.id == member_id).values(**values))


async def disable(conn: DbConnection, member_id: str, now: datetime) -> None:
    """Disabled: its token forgotten and every session ended."""
    await conn.execute(
        update(staff)
        .where(staff.c.id == member_id)
        .values(
            disabled_at=now,
            token_hash=None,
            token_hint=None,
            session_generation=staff.c.session_generation + 1,
        )
    )


async def active_admin_ids(conn: DbConnection) -> list[str]:
    """The active admins' ids, their rows locked on PostgreSQL until the transaction ends: two
    admins disabling each other at once cannot both see the other left."""
    query = select(staff.c.id).where((staff.c.role == Role.ADMIN.value) & staff.c.disabled_at.is_(None))
    if conn.dialect.name == "postgresql":
        query = query.with_for_update()
    return list((await conn.execute(query)).scalars())
