"""octo/resources: what live bookings take of each resource, and the index rows behind it
(`booking_resources`, and `booking_seats` whose key makes a seat of a slot unique)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import delete, func, insert, not_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from berth.domain.bookings import Booking
from berth.domain.resources import ResourceUse

# The one definition of "holds places" (ON_HOLD until it expires, CONFIRMED, PENDING,
# REDEEMED; never test mode) is the bookings repository's: resources are held exactly as places.
from berth.store.bookings_repo import _holding as holding
from berth.store.tables import booking_resources, booking_seats, bookings

SlotKey = tuple[str, str, str]  # product id, option id, availability id


async def use_between(
    conn: AsyncConnection, product_id: str, option_id: str, first: datetime, last: datetime, now: datetime
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
            holding(now),
        )
        .group_by(bookings.c.availability_id, booking_resources.c.resource_id)
    )
    found: dict[str, dict[str, ResourceUse]] = {}
    for availability_id, resource_id, places, count in await conn.execute(query):
        found.setdefault(availability_id, {})[resource_id] = ResourceUse(int(places), int(count))
    return found


async def use_of_slot(
    conn: AsyncConnection,
    key: SlotKey,
    slot_start: datetime,
    now: datetime,
    *,
    excluding: str | None = None,
) -> dict[str, ResourceUse]:
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
            holding(now),
        )
        .group_by(booking_resources.c.resource_id)
    )
    seats = (
        select(booking_seats.c.resource_id, booking_seats.c.seat_id)
        .select_from(booking_seats.join(bookings, bookings.c.id == booking_seats.c.booking_id))
        .where(
            booking_seats.c.product_id == product_id,
            booking_seats.c.option_id == option_id,
            booking_seats.c.availability_id == availability_id,
            holding(now),
        )
    )
    if excluding is not None:
        counts = counts.where(bookings.c.id != excluding)
        seats = seats.where(bookings.c.id != excluding)
    taken: dict[str, set[str]] = {}
    for resource_id, seat_id in await conn.execute(seats):
        taken.setdefault(resource_id, set()).add(seat_id)
    found: dict[str, ResourceUse] = {}
    for resource_id, places, count in await conn.execute(counts):
        found[resource_id] = ResourceUse(int(places), int(count), frozenset(taken.pop(resource_id, ())))
    for resource_id, seat_ids in taken.items():  # seats without a count row: never written so
        found[resource_id] = ResourceUse(0, 0, frozenset(seat_ids))
    return found


async def release(conn: AsyncConnection, booking_id: str) -> None:
    await conn.execute(delete(booking_seats).where(booking_seats.c.booking_id == booking_id))
    await conn.execute(delete(booking_resources).where(booking_resources.c.booking_id == booking_id))


async def _clear_released_seats(conn: AsyncConnection, key: SlotKey, now: datetime) -> None:
    """Seats of the slot still indexed for bookings that stopped holding them (a hold that ran
    out before the sweeper stored EXPIRED): they are free, so their rows go before new ones."""
    product_id, option_id, availability_id = key
    stale = select(bookings.c.id).where(
        bookings.c.product_id == product_id,
        bookings.c.option_id == option_id,
        bookings.c.availability_id == availability_id,
        not_(holding(now)),
    )
    await conn.execute(
        delete(booking_seats).where(
            booking_seats.c.product_id == product_id,
            booking_seats.c.option_id == option_id,
            booking_seats.c.availability_id == availability_id,
            booking_seats.c.booking_id.in_(stale),
        )
    )


async def hold(conn: AsyncConnection, booking: Booking, now: datetime) -> None:
    """Index the allocations of a booking that holds places (replacing what it had). A seat
    another live booking of the slot has violates the primary key of `booking_seats`."""
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
        await _clear_released_seats(conn, key, now)
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
