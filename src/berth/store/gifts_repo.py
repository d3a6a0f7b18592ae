"""Gift vouchers and the ledger of their balances (domain.gifts)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Select, and_, func, insert, select, true, update

from berth.domain.bookings import Contact
from berth.domain.gifts import Gift, GiftStatus, Movement, MovementKind, SettlementMethod
from berth.store.connection import DbConnection
from berth.store.tables import gift_movements, gifts


def _contact(document: Any) -> Contact | None:
    return Contact.from_document(document) if document is not None else None


def _locked(query: Select[Any], conn: DbConnection, lock: bool) -> Select[Any]:
    """`query` locking the rows it reads for the rest of the transaction when `lock` (PostgreSQL's
    row lock; SQLite's write transaction serialises writers already)."""
    return query.with_for_update() if lock and conn.dialect.name == "postgresql" else query


def _gift(row: Any) -> Gift:
    return Gift(
        id=row.id, uuid=row.uuid, connection_id=row.connection_id, status=GiftStatus(row.status),
        supplier_reference=row.supplier_reference, currency=row.currency,
        currency_precision=row.currency_precision, amount=int(row.amount), net=int(row.net),
        contact=Contact.from_document(row.contact), created_at=row.created_at, updated_at=row.updated_at,
        expires_at=row.expires_at, request_fingerprint=row.request_fingerprint,
        recipient=_contact(row.recipient), message=row.message, notes=row.notes,
        reseller_reference=row.reseller_reference, alias=row.alias, test_mode=row.test_mode,
        email_receipt=row.email_receipt, settlement_method=SettlementMethod(row.settlement_method),
        confirmed_at=row.confirmed_at, cancelled_at=row.cancelled_at,
        cancellation_reason=row.cancellation_reason, code_digest=row.code_digest,
        code_sealed=row.code_sealed, code_hint=row.code_hint,
    )  # fmt: skip


def _values(gift: Gift) -> dict[str, Any]:
    return {
        "status": gift.status.value, "reseller_reference": gift.reseller_reference, "alias": gift.alias,
        "currency": gift.currency, "currency_precision": gift.currency_precision, "amount": gift.amount,
        "net": gift.net, "contact": gift.contact.to_document(),
        "recipient": gift.recipient.to_document() if gift.recipient is not None else None,
        "message": gift.message, "notes": gift.notes, "test_mode": gift.test_mode,
        "email_receipt": gift.email_receipt, "settlement_method": gift.settlement_method.value,
        "updated_at": gift.updated_at, "expires_at": gift.expires_at, "confirmed_at": gift.confirmed_at,
        "cancelled_at": gift.cancelled_at, "cancellation_reason": gift.cancellation_reason,
        "code_digest": gift.code_digest, "code_sealed": gift.code_sealed, "code_hint": gift.code_hint,
    }  # fmt: skip


async def insert_gift(conn: DbConnection, gift: Gift) -> None:
    await conn.execute(
        insert(gifts).values(
            id=gift.id,
            connection_id=gift.connection_id,
            uuid=gift.uuid,
            supplier_reference=gift.supplier_reference,
            request_fingerprint=gift.request_fingerprint,
            created_at=gift.created_at,
            **_values(gift),
        )
    )


async def save_gift(conn: DbConnection, gift: Gift) -> None:
    await conn.execute(update(gifts).where(gifts.c.id == gift.id).values(**_values(gift)))


async def by_uuid(conn: DbConnection, connection_id: str, uuid: str, *, lock: bool = False) -> Gift | None:
    """A connection's gift by its uuid, locked (`_locked`) when `lock`."""
    query = _locked(
        select(gifts).where(gifts.c.connection_id == connection_id, gifts.c.uuid == uuid), conn, lock
    )
    row = (await conn.execute(query)).first()
    return _gift(row) if row is not None else None


async def by_id(conn: DbConnection, gift_id: str, *, lock: bool = False) -> Gift | None:
    query = _locked(select(gifts).where(gifts.c.id == gift_id), conn, lock)
    row = (await conn.execute(query)).first()
    return _gift(row) if row is not None else None


async def by_digest(conn: DbConnection, digest: str, *, lock: bool = False) -> Gift | None:
    """The gift whose code has this digest, locked (`_locked`) when `lock`."""
    query = _locked(select(gifts).where(gifts.c.code_digest == digest), conn, lock)
    row = (await conn.execute(query)).first()
    return _gift(row) if row is not None else None


async def add_movement(conn: DbConnection, movement: Movement) -> None:
    await conn.execute(
        insert(gift_movements).values(
            gift_id=movement.gift_id,
            kind=movement.kind.value,
            amount=movement.amount,
            booking_id=movement.booking_id,
            at=movement.at,
            actor=movement.actor[:254],
        )
    )


def _movement(row: Any) -> Movement:
    return Movement(
        row.gift_id, MovementKind(row.kind), int(row.amount), row.at, row.actor, row.booking_id, row.sequence
    )


async def movements_of(conn: DbConnection, gift_ids: Sequence[str]) -> dict[str, list[Movement]]:
    """Each gift's movements, oldest first (a gift without any: an empty list)."""
    found: dict[str, list[Movement]] = {gift_id: [] for gift_id in gift_ids}
    if not gift_ids:
        return found
    rows = await conn.execute(
        select(gift_movements)
        .where(gift_movements.c.gift_id.in_(list(gift_ids)))
        .order_by(gift_movements.c.sequence)
    )
    for row in rows:
        found[row.gift_id].append(_movement(row))
    return found


async def movements_of_booking(conn: DbConnection, booking_id: str) -> list[Movement]:
    rows = await conn.execute(
        select(gift_movements)
        .where(gift_movements.c.booking_id == booking_id)
        .order_by(gift_movements.c.sequence)
    )
    return [_movement(row) for row in rows]


@dataclass(frozen=True)
class GiftFilter:
    """OCTO's `GET /gifts` filters (ListGiftsQueryParams) on one connection's gifts; None: any."""

    connection_id: str
    reseller_reference: str | None = None
    supplier_reference: str | None = None
    created_from: datetime | None = None
    created_until: datetime | None = None
    updated_from: datetime | None = None
    updated_until: datetime | None = None
    contact_email: str | None = None


async def list_gifts(conn: DbConnection, where: GiftFilter, limit: int) -> list[Gift]:
    """The gifts `where` finds, oldest first, at most `limit`. Times are inclusive bounds."""
    conditions = [gifts.c.connection_id == where.connection_id]
    if where.reseller_reference is not None:
        conditions.append(gifts.c.reseller_reference == where.reseller_reference)
    if where.supplier_reference is not None:
        conditions.append(func.upper(gifts.c.supplier_reference) == where.supplier_reference.upper())
    if where.created_from is not None:
        conditions.append(gifts.c.created_at >= where.created_from)
    if where.created_until is not None:
        conditions.append(gifts.c.created_at <= where.created_until)
    if where.updated_from is not None:
        conditions.append(gifts.c.updated_at >= where.updated_from)
    if where.updated_until is not None:
        conditions.append(gifts.c.updated_at <= where.updated_until)
    query = select(gifts).where(and_(*conditions)).order_by(gifts.c.created_at, gifts.c.id)
    rows = await conn.execute(query)
    found = [_gift(row) for row in rows]
    if where.contact_email is not None:
        # The address as sent is a JSON value: compared here, case-insensitively, over the
        # connection's gifts the other filters left.
        wanted = where.contact_email.strip().lower()
        found = [g for g in found if (g.contact.get("emailAddress") or "").strip().lower() == wanted]
    return found[:limit]


async def due(conn: DbConnection, status: GiftStatus, now: datetime, batch: int) -> list[Gift]:
    """Gifts in `status` whose time (a hold's, a voucher's) has come, oldest first."""
    rows = await conn.execute(
        select(gifts)
        .where(gifts.c.status == status.value, gifts.c.expires_at <= now)
        .order_by(gifts.c.expires_at)
        .limit(batch)
    )
    return [_gift(row) for row in rows]


async def outstanding_by_currency(conn: DbConnection, now: datetime) -> dict[str, int]:
    """What the supplier owes in gifts still to be spent, by currency: the balances of the
    confirmed, unexpired vouchers (test ones aside)."""
    query = (
        select(gifts.c.currency, func.coalesce(func.sum(gift_movements.c.amount), 0))
        .select_from(gift_movements.join(gifts, gifts.c.id == gift_movements.c.gift_id))
        .where(
            gifts.c.status == GiftStatus.CONFIRMED.value,
            gifts.c.expires_at > now,
            gifts.c.test_mode.is_(False),
        )
        .group_by(gifts.c.currency)
    )
    return {currency: int(amount) for currency, amount in sorted(await conn.execute(query))}


async def staff_candidates(
    conn: DbConnection, *, digest: str | None, sold_from: datetime | None, sold_before: datetime | None
) -> list[Gift]:
    """Every connection's gifts, newest first: the one whose code has `digest` when given, sold
    in [sold_from, sold_before) when given. The back office filters the rest (domain.gift_search)."""
    conditions = []
    if digest is not None:
        conditions.append(gifts.c.code_digest == digest)
    if sold_from is not None:
        conditions.append(gifts.c.created_at >= sold_from)
    if sold_before is not None:
        conditions.append(gifts.c.created_at < sold_before)
    query = select(gifts).where(and_(true(), *conditions)).order_by(gifts.c.created_at.desc(), gifts.c.id)
    return [_gift(row) for row in await conn.execute(query)]


async def ledger_before(conn: DbConnection, ends_at: datetime) -> list[tuple[str, Movement]]:
    """Every movement before `ends_at` of the gifts not sold in test mode, each with its gift's
    currency: what the monthly report (domain.gift_report) adds up."""
    query = (
        select(gifts.c.currency, gift_movements)
        .select_from(gift_movements.join(gifts, gifts.c.id == gift_movements.c.gift_id))
        .where(gift_movements.c.at < ends_at, gifts.c.test_mode.is_(False))
        .order_by(gift_movements.c.sequence)
    )
    return [(row.currency, _movement(row)) for row in await conn.execute(query)]


async def confirmed_between(
    conn: DbConnection, connection_id: str, start: datetime, end: datetime
) -> list[Gift]:
    """The connection's gifts confirmed in [start, end) (a statement's month), test ones aside,
    by their time of confirmation."""
    rows = await conn.execute(
        select(gifts)
        .where(
            gifts.c.connection_id == connection_id,
            gifts.c.confirmed_at >= start,
            gifts.c.confirmed_at < end,
            gifts.c.test_mode.is_(False),
        )
        .order_by(gifts.c.confirmed_at, gifts.c.id)
    )
    return [_gift(row) for row in rows]


async def confirmation_times(conn: DbConnection, connection_id: str) -> list[datetime]:
    """When the connection's gifts (test ones aside) were confirmed."""
    query = select(gifts.c.confirmed_at).where(
        gifts.c.connection_id == connection_id,
        gifts.c.confirmed_at.is_not(None),
        gifts.c.test_mode.is_(False),
    )
    return list((await conn.scalars(query)).all())


async def paid_for_bookings(conn: DbConnection, booking_ids: Sequence[str]) -> dict[str, dict[str, int]]:
    """What gifts paid of each of these bookings and kept (redemptions less their reversals), per
    currency; a booking no gift paid for is left out."""
    if not booking_ids:
        return {}
    kinds = [MovementKind.REDEMPTION.value, MovementKind.REVERSAL.value]
    query = (
        select(gift_movements.c.booking_id, gifts.c.currency, func.sum(gift_movements.c.amount))
        .select_from(gift_movements.join(gifts, gifts.c.id == gift_movements.c.gift_id))
        .where(gift_movements.c.booking_id.in_(list(booking_ids)), gift_movements.c.kind.in_(kinds))
        .group_by(gift_movements.c.booking_id, gifts.c.currency)
    )
    found: dict[str, dict[str, int]] = {}
    for booking_id, currency, amount in await conn.execute(query):
        if amount:
            found.setdefault(booking_id, {})[currency] = -int(amount)
    return found
