"""octo/resources: what live bookings take of each resource, and the index rows behind it
(`booking_resources`, and `booking_seats` whose key makes a seat of a slot unique)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import case, delete, func, insert, select

from berth.domain.bookings import Booking
from berth.domain.resources import ResourceUse

# The one definition of "holds places" (ON_HOLD until it expires, CONFIRMED, PENDING,
# REDEEMED; never test mode) is the bookings repository's: resources are held exactly as places.
from berth.store.bookings_reads import HOLDING_NOW
from berth.store.connection import DbConnection
from berth.store.tables import booking_resources, booking_seats, bookings

SlotKey = tuple[str, str, str]  # product id, option id, availability id


async def use_between(
    conn: DbConnection, product_id: str, option_id: str, first: datetime, last: datetime, now: datetime
) -> dict[str, dict[str, ResourceUse]]:
    """Places and bookings per resource, for each slot starting in [first, last]: one query
    (no seats: availability needs only the counts)."""
    query = (
        select(
            bookings.c.availability_id,
            booking_resources.c.resource_id,
            func.sum(booking_resources.c.places),
            func.count(),
        )
        .select_from(booking_resources.join(bookings, bookings.c.id == booking_resources.c.booking_id))
        .where(
            bookings.c.product_id == product_id,
            bookings.c.option_id == option_id,
            bookings.c.slot_start >= first,
            bookings.c.slot_start <= last,
            HOLDING_NOW,
        )
        .group_by(bookings.c.availability_id, booking_resources.c.resource_id)
    )
    found: dict[str, dict[str, ResourceUse]] = {}
    for availability_id, resource_id, places, count in await conn.execute(query, {"now": now}):
        found.setdefault(availability_id, {})[resource_id] = ResourceUse(int(places), int(count))
    return found


@dataclass(frozen=True)
class SlotIndex:
    """One slot as the index has it: the use of each resource by bookings that hold places,
    and seat rows still there for bookings that stopped holding them (a hold that ran out
    before the sweeper stored EXPIRED), by (resource id, seat id)."""

    use: dict[str, ResourceUse]
    released: dict[tuple[str, str], str]


async def use_of_slot(
    conn: DbConnection,
    key: SlotKey,
    slot_start: datetime,
    now: datetime,
    *,
    excluding: str | None = None,
) -> SlotIndex:
    """Places, bookings and taken seats per resource in one slot, leaving out one booking (the
    one being allocated): two queries."""
    product_id, option_id, availability_id = key
    counts = (
        select(booking_resources.c.resource_id, func.sum(booking_resources.c.places), func.count())
        .select_from(booking_resources.join(bookings, bookings.c.id == booking_resources.c.booking_id))
        .where(
            bookings.c.product_id == product_id,
            bookings.c.option_id == option_id,
            bookings.c.slot_start == slot_start,
            bookings.c.availability_id == availability_id,
            HOLDING_NOW,
        )
        .group_by(booking_resources.c.resource_id)
    )
    seats = (
        select(
            booking_seats.c.resource_id,
            booking_seats.c.seat_id,
            booking_seats.c.booking_id,
            case((HOLDING_NOW, 1), else_=0),
        )
        .select_from(booking_seats.join(bookings, bookings.c.id == booking_seats.c.booking_id))
        .where(
            booking_seats.c.product_id == product_id,
            booking_seats.c.option_id == option_id,
            booking_seats.c.availability_id == availability_id,
        )
    )
    if excluding is not None:
        counts = counts.where(bookings.c.id != excluding)
        seats = seats.where(bookings.c.id != excluding)
    taken: dict[str, set[str]] = {}
    released: dict[tuple[str, str], str] = {}
    for resource_id, seat_id, booking_id, live in await conn.execute(seats, {"now": now}):
        if live:
            taken.setdefault(resource_id, set()).add(seat_id)
        else:
            released[(resource_id, seat_id)] = booking_id
    found: dict[str, ResourceUse] = {}
    for resource_id, places, count in await conn.execute(counts, {"now": now}):
        found[resource_id] = ResourceUse(int(places), int(count), frozenset(taken.pop(resource_id, ())))
    for resource_id, seat_ids in taken.items():  # seats without a count row: never written so
        found[resource_id] = ResourceUse(0, 0, frozenset(seat_ids))
    return SlotIndex(found, released)


async def release(conn: DbConnection, booking_id: str) -> None:
    await conn.execute(delete(booking_seats).where(booking_seats.c.booking_id == booking_id))
    await conn.execute(delete(booking_resources).where(booking_resources.c.booking_id == booking_id))


async def clear_released_seats(conn: DbConnection, key: SlotKey, seats: Sequence[tuple[str, str]]) -> None:
    """Delete the rows of seats whose booking stopped holding them (see `SlotIndex`), before
    a booking that was just given those seats indexes its own."""
    product_id, option_id, availability_id = key
    by_resource: dict[str, list[str]] = {}
    for resource_id, seat_id in seats:
        by_resource.setdefault(resource_id, []).append(seat_id)
    for resource_id, seat_ids in by_resource.items():
        await conn.execute(
            delete(booking_seats).where(
                booking_seats.c.product_id == product_id,
                booking_seats.c.option_id == option_id,
                booking_seats.c.availability_id == availability_id,
                booking_seats.c.resource_id == resource_id,
                booking_seats.c.seat_id.in_(seat_ids),
            )
        )


async def hold(conn: DbConnection, booking: Booking, *, fresh: bool = False) -> None:
    """Index the allocations of a booking that holds places, replacing what it had (`fresh`:
    a new booking has nothing to replace). A seat another live booking of the slot has violates
    the primary key of `booking_seats`."""
    if not fresh:
        await release(conn, booking.id)
    if booking.availability_id is None or not booking.resource_allocations:
        return
    key = (booking.product_id, booking.option_id, booking.availability_id)
    await conn.execute(
        insert(booking_resources),
        [
            {
                "booking_id": booking.id,
                "resource_id": a.resource_id,
                "resource_group_id": a.resource_group_id,
                "places": a.places,
            }
            for a in booking.resource_allocations
        ],
    )
    seats = _seat_rows(booking, key)
    if seats:
        await conn.execute(insert(booking_seats), seats)


def _seat_rows(booking: Booking, key: SlotKey) -> Sequence[dict[str, str]]:
    product_id, option_id, availability_id = key
    return [
        {
            "product_id": product_id,
            "option_id": option_id,
            "availability_id": availability_id,
            "resource_id": a.resource_id,
            "seat_id": seat_id,
            "booking_id": booking.id,
        }
        for a in booking.resource_allocations
        for seat_id in a.seat_ids
    ]
