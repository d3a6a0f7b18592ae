"""The offers document's versions, and the bookings' uses of offers (counted under a lock per
offer, so that a limit is exact when bookings race for its last uses)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, case, delete, func, insert, or_, select, text, update

from berth.domain.bookings import HOLDING, BookingStatus
from berth.domain.offer_rules import Uses
from berth.domain.offers import NO_OFFERS, OffersDocument
from berth.domain.staff import Actor
from berth.store import availability_changes_repo
from berth.store.change_marks import EVERYTHING
from berth.store.connection import DbConnection
from berth.store.tables import LAST_VERSION, bookings, offer_uses, offer_versions


@dataclass(frozen=True)
class OffersVersion:
    version: int  # 0: never saved
    created_at: datetime | None
    actor: str
    actor_role: str
    summary: str
    document: OffersDocument


NEVER_SAVED = OffersVersion(0, None, "", "", "", NO_OFFERS)


def _version(row: Any) -> OffersVersion:
    return OffersVersion(
        row.version, row.created_at, row.actor, row.actor_role, row.summary,
        OffersDocument.model_validate(row.document),
    )  # fmt: skip


async def current(conn: DbConnection) -> OffersVersion:
    row = (
        await conn.execute(select(offer_versions).order_by(offer_versions.c.version.desc()).limit(1))
    ).first()
    return _version(row) if row is not None else NEVER_SAVED


async def current_number(conn: DbConnection) -> int:
    return int(await conn.scalar(select(func.coalesce(func.max(offer_versions.c.version), 0))) or 0)


async def version(conn: DbConnection, number: int) -> OffersVersion | None:
    if not 0 < number <= LAST_VERSION:  # no version, and beyond the column's integers
        return None
    row = (await conn.execute(select(offer_versions).where(offer_versions.c.version == number))).first()
    return _version(row) if row is not None else None


async def versions(conn: DbConnection, limit: int) -> list[OffersVersion]:
    rows = await conn.execute(select(offer_versions).order_by(offer_versions.c.version.desc()).limit(limit))
    return [_version(row) for row in rows]


async def lock_document(conn: DbConnection) -> None:
    """Serialise saves of the offers document for the rest of the transaction (PostgreSQL: an
    advisory lock; SQLite's write transaction already does)."""
    if conn.dialect.name == "postgresql":
        await conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _lock_key("document")})


async def save(
    conn: DbConnection, document: OffersDocument, number: int, *, actor: Actor, summary: str, at: datetime
) -> None:
    """Store `document` as version `number` (two saves of one number: the key refuses the second)."""
    await conn.execute(
        insert(offer_versions).values(
            version=number,
            created_at=at,
            actor=actor.name,
            actor_id=actor.staff_id,
            actor_role=actor.role.value,
            summary=summary[:300],
            document=document.to_document(),
        )
    )
    # Offers change the prices every availability answer shows.
    await availability_changes_repo.record(conn, [EVERYTHING], at)


def _lock_key(key: str) -> int:
    """A PostgreSQL advisory lock's 64-bit key for `key`."""
    return int.from_bytes(hashlib.sha256(b"berth offer\0" + key.encode()).digest()[:8], "big", signed=True)


async def lock_offer(conn: DbConnection, offer_id: str) -> None:
    """Serialise the uses of one offer for the rest of the transaction (PostgreSQL: an advisory
    lock; SQLite's write transaction already does)."""
    if conn.dialect.name == "postgresql":
        await conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _lock_key(offer_id)})


def _live(now: datetime) -> Any:
    """A booking that holds places at `now` (domain.bookings.holds_places), test bookings aside."""
    return and_(
        bookings.c.test_mode.is_(False),
        or_(
            bookings.c.status.in_([s.value for s in HOLDING]),
            and_(bookings.c.status == BookingStatus.ON_HOLD.value, bookings.c.expires_at > now),
        ),
    )


async def uses(conn: DbConnection, offer_id: str, email: str | None, now: datetime, excluding: str) -> Uses:
    """The offer's uses by live bookings other than `excluding`, in all and by `email`."""
    query = (
        select(func.count(), func.coalesce(func.sum(case((offer_uses.c.email == email, 1), else_=0)), 0))
        .select_from(offer_uses.join(bookings, bookings.c.id == offer_uses.c.booking_id))
        .where(offer_uses.c.offer_id == offer_id, offer_uses.c.booking_id != excluding, _live(now))
    )
    total, by_email = (await conn.execute(query)).one()
    return Uses(int(total), int(by_email) if email is not None else 0)


async def record_use(
    conn: DbConnection, booking_id: str, offer_id: str | None, email: str | None, at: datetime
) -> None:
    """The booking's use of `offer_id` (None: it uses none)."""
    await conn.execute(delete(offer_uses).where(offer_uses.c.booking_id == booking_id))
    if offer_id is not None:
        await conn.execute(
            insert(offer_uses).values(booking_id=booking_id, offer_id=offer_id, email=email, created_at=at)
        )


async def set_email(conn: DbConnection, booking_id: str, email: str | None) -> None:
    await conn.execute(update(offer_uses).where(offer_uses.c.booking_id == booking_id).values(email=email))


async def use_of(conn: DbConnection, booking_id: str) -> tuple[str, str | None] | None:
    """The offer a booking's use counts against, and its email (None: no use recorded)."""
    row = (
        await conn.execute(
            select(offer_uses.c.offer_id, offer_uses.c.email).where(offer_uses.c.booking_id == booking_id)
        )
    ).first()
    return (row.offer_id, row.email) if row is not None else None


async def use_counts(conn: DbConnection, now: datetime) -> dict[str, int]:
    """Live uses per offer (the back office's list)."""
    query = (
        select(offer_uses.c.offer_id, func.count())
        .select_from(offer_uses.join(bookings, bookings.c.id == offer_uses.c.booking_id))
        .where(_live(now))
        .group_by(offer_uses.c.offer_id)
    )
    return {row[0]: int(row[1]) for row in await conn.execute(query)}
