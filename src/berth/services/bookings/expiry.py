"""The expiry sweep: holds whose time has passed are stored EXPIRED (reads already show them
so), and their slots announced; what counts nothing any more is dropped (ended holds' counts,
availability changes every process has read)."""

from __future__ import annotations

from berth.services.bookings.steps import BookingSteps
from berth.services.catalog import CatalogService
from berth.services.clock import Clock
from berth.store import availability_changes_repo, bookings_reads, bookings_repo
from berth.store.database import Database


class HoldExpiry:
    def __init__(
        self, database: Database, clock: Clock, catalogs: CatalogService, steps: BookingSteps
    ) -> None:
        self._db = database
        self._clock = clock
        self._catalogs = catalogs
        self._steps = steps

    async def expire_due(self, batch: int = 500) -> int:
        """Mark holds whose time has passed EXPIRED. Holds of an order expire with their order
        (the cart's own sweep), which is locked first."""
        now = self._clock()
        catalog = (await self._catalogs.snapshot()).catalog
        async with self._db.transaction(write=True) as conn:
            due = await bookings_reads.due_holds(conn, now, batch)
            for stored in due:
                await self._steps.expire_in(conn, catalog, stored)
            await bookings_repo.forget_ended_holds(conn, now)
            await availability_changes_repo.forget_old(conn, now)
        return len(due)
