"""Sales for statements, written straight into the bookings table (a statement reads only that
table): a large month, fast, as copies of one real sold booking; a sold booking given an offer's
discount."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import timedelta

from sqlalchemy import insert, update

from berth.container import Services
from berth.domain.bookings import Booking
from berth.domain.discounts import OfferTerms, discounted
from berth.domain.price_lines import lines_to_document
from berth.store import bookings_reads, bookings_repo
from berth.store.tables import bookings


async def sold_copies(services: Services, sold: Booking, count: int, days: int = 28) -> None:
    """`count` copies of `sold` (a confirmed booking), each with its own ids and references,
    on `sold`'s departure and the `days - 1` days after it in turn."""
    rows = []
    for n in range(count):
        later = timedelta(days=n % days)
        copy = replace(
            sold,
            id=str(uuid.uuid4()),
            uuid=str(uuid.uuid4()),
            supplier_reference=f"C{n:09d}",
            reseller_reference=f"copy {n}",
            slot_start=sold.slot_start + later if sold.slot_start else None,
            local_date=sold.local_date + later if sold.local_date else None,
        )
        rows.append(bookings_repo.row_values(copy))
    async with services.database.transaction(write=True) as conn:
        for start in range(0, len(rows), 1000):
            await conn.execute(insert(bookings), rows[start : start + 1000])


async def with_offer(services: Services, booking_id: str, terms: OfferTerms) -> Booking:
    """The stored booking sold with the offer `terms` instead: its priced lines discounted as the
    offers' booking step discounts them (domain.discounts), written into its row."""
    async with services.database.transaction(write=True) as conn:
        found = await bookings_reads.get_by_id(conn, booking_id)
        assert found is not None, booking_id
        lines = discounted(found.price_lines, terms)
        await conn.execute(
            update(bookings).where(bookings.c.id == booking_id).values(price_lines=lines_to_document(lines))
        )
    return replace(found, price_lines=lines)
