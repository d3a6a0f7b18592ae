"""The supplier's booking use cases (the back office and the admin API), each one
transaction: find, redeem, accept, reject and cancel at any time."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from datetime import datetime
from typing import Any

from berth.domain.audit import Target
from berth.domain.bookings import ENDED, Booking, BookingStatus, as_of
from berth.domain.catalog import Catalog, Product
from berth.domain.errors import NotFound, UnprocessableEntity
from berth.domain.staff import Actor
from berth.read_models.bookings import BookingDetails
from berth.services.bookings.inputs import SUPPLIER
from berth.services.bookings.steps import BookingSteps
from berth.services.clock import Clock
from berth.store import audit_repo, bookings_reads, bookings_repo
from berth.store.bookings_reads import BookingFilter
from berth.store.connection import DbConnection
from berth.store.database import Database

# Bookings read per batch by an export.
EXPORT_BATCH = 500


def booking_target(booking: Booking) -> Target:
    return Target("booking", booking.id, booking.supplier_reference)


class SupplierBookings:
    def __init__(self, database: Database, clock: Clock, steps: BookingSteps) -> None:
        self._db = database
        self._clock = clock
        self._steps = steps
        self._loader = steps.loader

    async def _by_id(self, conn: DbConnection, booking_id: str) -> Booking:
        booking = await bookings_reads.get_by_id(conn, booking_id)
        if booking is None:
            raise NotFound(f"No booking with id {booking_id!r}")
        return as_of(await self._steps.lock_in(conn, booking), self._clock())

    # --- reads -------------------------------------------------------------------------------

    async def search(
        self, catalog: Catalog, where: BookingFilter, limit: int, offset: int
    ) -> tuple[list[BookingDetails], int]:
        async with self._db.transaction(write=False) as conn:
            found, total = await bookings_reads.find_bookings(conn, where, limit=limit, offset=offset)
            return await self._loader.describe(conn, catalog, found), total

    async def find(self, catalog: Catalog, where: BookingFilter) -> list[BookingDetails]:
        """Every matching booking (callers bound the filter: a day's manifest, a reference)."""
        async with self._db.transaction(write=False) as conn:
            found, _ = await bookings_reads.find_bookings(conn, where)
            return await self._loader.describe(conn, catalog, found)

    async def export(
        self, catalog: Catalog, where: BookingFilter, batch: int = EXPORT_BATCH
    ) -> AsyncIterator[list[tuple[Booking, Product]]]:
        """Every matching booking (as it stands now) with its product, in batches of `batch`,
        each read in a transaction of its own: an export never holds the whole result."""
        after: tuple[Any, ...] | None = None
        while True:
            async with self._db.transaction(write=False) as conn:
                found = await bookings_reads.bookings_after(conn, where, after, batch)
                now = self._clock()
                rows = [
                    (as_of(b, now), await self._loader.product(conn, catalog, b.product_id)) for b in found
                ]
            if rows:
                yield rows
            if len(found) < batch:
                return
            after = bookings_reads.export_key(found[-1])

    async def get(self, catalog: Catalog, booking_id: str) -> tuple[BookingDetails, list[dict[str, Any]]]:
        """A booking and its history."""
        async with self._db.transaction(write=False) as conn:
            booking = await bookings_reads.get_by_id(conn, booking_id)
            if booking is None:
                raise NotFound(f"No booking with id {booking_id!r}")
            return await self._loader.one(conn, catalog, booking), await bookings_reads.events_of(
                conn, booking_id
            )

    # --- changes -----------------------------------------------------------------------------

    async def _transition(
        self,
        catalog: Catalog,
        booking_id: str,
        expected: BookingStatus,
        kind: str,
        change: Callable[[Booking, datetime], Booking],
        actor: Actor,
        action: str,
        details: dict[str, Any] | None = None,
    ) -> BookingDetails:
        now = self._clock()
        async with self._db.transaction(write=True) as conn:
            booking = await self._by_id(conn, booking_id)
            if booking.status is not expected:
                raise UnprocessableEntity(
                    f"Booking {booking_id!r} is {booking.status.value}; only {expected.value} bookings can be {kind}"
                )
            changed = replace(change(booking, now), updated_at=now)
            await bookings_repo.save_booking(conn, changed, booking)
            await self._steps.changed(conn, catalog, booking, changed, kind, SUPPLIER)
            await self._steps.follow_in(conn, catalog, [(booking, changed)])
            await audit_repo.record(
                conn,
                actor,
                action,
                booking_target(booking),
                {"from": booking.status.value, "to": changed.status.value, **(details or {})},
                at=now,
            )
            return await self._loader.one(conn, catalog, changed)

    async def redeem(self, catalog: Catalog, booking_id: str, *, actor: Actor) -> BookingDetails:
        return await self._transition(
            catalog, booking_id, BookingStatus.CONFIRMED, "redeemed",
            lambda b, now: replace(b, status=BookingStatus.REDEEMED, redeemed_at=now),
            actor, "booking.redeem",
        )  # fmt: skip

    async def accept(self, catalog: Catalog, booking_id: str, *, actor: Actor) -> BookingDetails:
        return await self._transition(
            catalog, booking_id, BookingStatus.PENDING, "accepted",
            lambda b, now: replace(b, status=BookingStatus.CONFIRMED, confirmed_at=now),
            actor, "booking.accept",
        )  # fmt: skip

    async def reject(
        self, catalog: Catalog, booking_id: str, reason: str | None, *, actor: Actor
    ) -> BookingDetails:
        return await self._transition(
            catalog, booking_id, BookingStatus.PENDING, "rejected",
            lambda b, now: replace(b, status=BookingStatus.REJECTED, rejected_at=now, rejection_reason=reason),
            actor, "booking.reject", {"reason": reason},
        )  # fmt: skip

    async def cancel(
        self, catalog: Catalog, booking_id: str, reason: str | None, *, actor: Actor, force: bool = False
    ) -> BookingDetails:
        """Cancel a booking (`force`: whatever its cutoff); a package booking's included
        bookings go with it."""
        async with self._db.transaction(write=True) as conn:
            booking = await self._by_id(conn, booking_id)

            def step(c: DbConnection, b: Booking) -> Awaitable[Booking]:
                return self._steps.cancel_in(c, catalog, b, reason, force=force, actor=SUPPLIER)

            cancelled = await self._steps.with_companions(
                conn, catalog, booking, "cancel", step, lambda c, b, _: step(c, b), staff=True, skip=ENDED
            )
            if cancelled.status is not booking.status:
                details = {
                    "from": booking.status.value,
                    "to": cancelled.status.value,
                    "reason": reason,
                    "force": force,
                }
                await audit_repo.record(
                    conn, actor, "booking.cancel", booking_target(booking), details, at=self._clock()
                )
            return await self._loader.one(conn, catalog, cancelled)
