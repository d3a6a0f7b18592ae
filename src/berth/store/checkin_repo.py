"""Check-in: the bookings a scanned code names, the tickets admitted at the gate, and the scans
kept by nonce."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import String, bindparam, cast, delete, insert, or_, select

from berth.domain.bookings import Booking
from berth.domain.checkin import Admission, Departure, Scanned, ticket_token
from berth.domain.tickets import VOUCHER
from berth.store import tickets_repo
from berth.store.bookings_repo import booking_from_row
from berth.store.connection import DbConnection
from berth.store.tables import admissions, bookings, checkin_scans


def _ticket_of(booking: Booking, code: str) -> Scanned | None:
    folded = code.upper()
    for item in booking.unit_items:
        if item.supplier_reference.upper() == folded:
            return Scanned(booking, item)
    return None


# Built once: a scan runs them with its own values.
_NAMED = select(bookings).where(
    or_(
        bookings.c.supplier_reference == bindparam("upper"),
        bookings.c.reseller_reference == bindparam("code"),
        bookings.c.uuid == bindparam("code"),
    )
)
_TICKET_TEXT = cast(bookings.c.unit_items, String).ilike(bindparam("pattern"))
_TICKETS = select(bookings).where(_TICKET_TEXT)
_TICKETS_ON = select(bookings).where(
    bookings.c.product_id == bindparam("product_id"),
    bookings.c.option_id == bindparam("option_id"),
    or_(bookings.c.slot_start == bindparam("slot_start"), bookings.c.slot_start.is_(None)),
    _TICKET_TEXT,
)


async def find_code(
    conn: DbConnection, code: str, departure: Departure | None, slot_start: datetime | None
) -> list[Scanned]:
    """What `code` names: a ticket document's URL (the voucher's or a ticket's, by its token),
    a booking by its supplier reference (any case), reseller reference or uuid (exactly), or a
    ticket by its supplier reference (any case). A ticket's reference
    lives in the booking's document: with the gate's departure (`slot_start`) only that
    departure's bookings are searched for it, without one every booking is."""
    token = ticket_token(code)
    if token is not None:
        issued = await tickets_repo.find(conn, token)
        if issued is None:
            return []
        booking, key = issued
        if key == VOUCHER:
            return [Scanned(booking, None)]
        item = next((i for i in booking.unit_items if i.uuid == key), None)
        return [Scanned(booking, item)] if item is not None else []
    found = await conn.execute(_NAMED, {"upper": code.upper(), "code": code})
    named = [Scanned(booking_from_row(row), None) for row in found]
    if named:
        return named
    pattern = f"%{code.upper().replace('%', '').replace('_', '')}%"
    if departure is not None:
        where = {
            "product_id": departure.product_id,
            "option_id": departure.option_id,
            "slot_start": slot_start,
        }
        rows = await conn.execute(_TICKETS_ON, {**where, "pattern": pattern})
    else:
        rows = await conn.execute(_TICKETS, {"pattern": pattern})
    tickets = (_ticket_of(booking_from_row(row), code) for row in rows)
    return [t for t in tickets if t is not None]


def _admission(row: Any) -> Admission:
    return Admission(row.unit_uuid, row.admitted_at, row.admitted_by, row.device, row.nonce)


_OF_ONE = select(admissions).where(admissions.c.booking_id == bindparam("booking_id"))


async def admissions_of(conn: DbConnection, booking_ids: Sequence[str]) -> dict[str, dict[str, Admission]]:
    """The tickets admitted per booking: {booking id: {unit uuid: admission}}."""
    found: dict[str, dict[str, Admission]] = {}
    if not booking_ids:
        return found
    if len(booking_ids) == 1:
        rows = await conn.execute(_OF_ONE, {"booking_id": booking_ids[0]})
    else:
        rows = await conn.execute(select(admissions).where(admissions.c.booking_id.in_(list(booking_ids))))
    for row in rows:
        found.setdefault(row.booking_id, {})[row.unit_uuid] = _admission(row)
    return found


async def admit(conn: DbConnection, booking_id: str, admitted: Sequence[Admission]) -> None:
    await conn.execute(
        insert(admissions),
        [
            {
                "booking_id": booking_id,
                "unit_uuid": a.unit_uuid,
                "admitted_at": a.at,
                "admitted_by": a.by,
                "device": a.device,
                "nonce": a.nonce,
            }
            for a in admitted
        ],
    )


async def admitted_by_scan(conn: DbConnection, nonce: str) -> tuple[str, list[Admission]] | None:
    """The booking and the tickets that the scan `nonce` admitted and that are still admitted."""
    rows = (await conn.execute(select(admissions).where(admissions.c.nonce == nonce))).all()
    if not rows:
        return None
    return rows[0].booking_id, [_admission(row) for row in rows]


async def take_back(conn: DbConnection, booking_id: str, unit_uuids: Sequence[str]) -> None:
    await conn.execute(
        delete(admissions).where(
            admissions.c.booking_id == booking_id, admissions.c.unit_uuid.in_(list(unit_uuids))
        )
    )


_KEPT = select(checkin_scans.c.outcome).where(checkin_scans.c.nonce == bindparam("nonce"))


async def scan(conn: DbConnection, nonce: str) -> dict[str, Any] | None:
    """The outcome kept of the scan `nonce`, if it admitted before."""
    outcome = await conn.scalar(_KEPT, {"nonce": nonce})
    return dict(outcome) if outcome is not None else None


async def keep_scan(
    conn: DbConnection, nonce: str, at: datetime, booking_id: str, outcome: dict[str, Any]
) -> None:
    await conn.execute(
        insert(checkin_scans).values(nonce=nonce, at=at, booking_id=booking_id, outcome=outcome)
    )
