"""Expiring a hold whose time has passed (the sweep's step)."""

from __future__ import annotations

from berth.domain.bookings import (
    Booking,
    as_of,
)
from berth.domain.catalog import Catalog
from berth.services.bookings.base import StepsBase
from berth.services.bookings.inputs import (
    SYSTEM,
)
from berth.store import bookings_repo
from berth.store.connection import DbConnection


class Expiring(StepsBase):
    async def expire_in(self, conn: DbConnection, catalog: Catalog, stored: Booking) -> Booking:
        """Store EXPIRED on a (locked) hold whose time has passed."""
        expired = as_of(stored, self._clock())
        await bookings_repo.save_booking(conn, expired, stored)
        # The places came free when the hold ran out; announce the slot(s) now.
        freed = (
            []
            if stored.test_mode or stored.availability_id is None
            else self.policies.counted_in(catalog, stored)
        )
        await self.changed(conn, catalog, stored, expired, "expired", SYSTEM, slots=freed)
        return expired
