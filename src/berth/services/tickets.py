"""Finding a booking's ticket documents: by the token of a ticket URL (one lookup, and no more
for a token that names nothing or a booking that no longer stands), or by the booking."""

from __future__ import annotations

import re
from dataclasses import dataclass

from berth.domain.bookings import BookingStatus
from berth.domain.catalog import Supplier
from berth.domain.tickets import ISSUED, VOUCHER
from berth.read_models.bookings import BookingDetails
from berth.services.bookings.loader import BookingLoader
from berth.services.catalog import CatalogService
from berth.store import bookings_reads, tickets_repo
from berth.store.database import Database

# What a token looks like (berth.domain.tickets.new_token): anything else is not looked up.
TOKEN = re.compile(r"^[A-Za-z0-9_-]{43}$")


@dataclass(frozen=True)
class IssuedTicket:
    """A ticket that stands: the booking's details, whose document it is (VOUCHER: the whole
    booking, else a unit item's uuid) and the supplier who issues it."""

    details: BookingDetails
    key: str
    supplier: Supplier


@dataclass(frozen=True)
class EndedTicket:
    """A ticket that no longer stands: its booking's status (CANCELLED, EXPIRED, REJECTED,
    or still CONFIRMED when the ticket's unit item was taken off the booking)."""

    status: BookingStatus
    removed: bool = False


class TicketService:
    def __init__(self, database: Database, catalog: CatalogService, loader: BookingLoader) -> None:
        self._db = database
        self._catalog = catalog
        self._loader = loader

    async def by_token(self, token: str) -> IssuedTicket | EndedTicket | None:
        """The ticket a URL's token names; None when it names none."""
        if not TOKEN.match(token):
            return None
        async with self._db.transaction(write=False) as conn:
            found = await tickets_repo.find(conn, token)
            if found is None:
                return None
            booking, key = found
            if booking.status not in ISSUED:
                return EndedTicket(booking.status)
            if key != VOUCHER and all(item.uuid != key for item in booking.unit_items):
                return EndedTicket(booking.status, removed=True)
            snapshot = await self._catalog.snapshot_in(conn)
            details = await self._loader.one(conn, snapshot.catalog, booking)
            return IssuedTicket(details, key, snapshot.catalog.supplier)

    async def by_booking(self, booking_id: str) -> IssuedTicket | None:
        """The whole booking's tickets (key VOUCHER); None unless it is issued."""
        async with self._db.transaction(write=False) as conn:
            booking = await bookings_reads.get_by_id(conn, booking_id)
            if booking is None or booking.status not in ISSUED:
                return None
            snapshot = await self._catalog.snapshot_in(conn)
            details = await self._loader.one(conn, snapshot.catalog, booking)
            return IssuedTicket(details, VOUCHER, snapshot.catalog.supplier)
