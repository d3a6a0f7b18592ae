"""A reseller's booking use cases (OCTO.md §4.6 to §4.12), each one transaction: reserve, get,
list, update, confirm, extend and cancel.

Capabilities that group bookings (octo/cart orders, octo/packages) register a `Grouping`: the
use cases hand a reservation to the grouping that claims it, and confirm, extend and cancel
the booking's companions (a package's included bookings) with it, in the same transaction.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import Protocol

from sqlalchemy.exc import IntegrityError

from berth.domain.bookings import Booking, BookingStatus, as_of, extendable
from berth.domain.catalog import Catalog
from berth.domain.errors import BadRequest, InvalidBookingUuid
from berth.read_models.bookings import BookingDetails
from berth.services.bookings.base import CompanionStep, Step
from berth.services.bookings.inputs import RESELLER, ConfirmInput, ReserveInput, UpdateInput
from berth.services.bookings.preparing import PreparedBooking
from berth.services.bookings.steps import BookingSteps
from berth.services.clock import Clock
from berth.store import bookings_reads, bookings_repo
from berth.store.bookings_reads import BookingFilter
from berth.store.connection import DbConnection
from berth.store.database import Database
from berth.store.one_call import NotOneCall, OneCallRefused


class Grouping(Protocol):
    """A capability that makes some reservations itself (octo/cart, octo/packages)."""

    def claims(self, catalog: Catalog, data: ReserveInput, capabilities: frozenset[str]) -> bool:
        """Whether this grouping makes the reservation."""

    async def reserve(
        self, catalog: Catalog, connection_id: str, data: ReserveInput, *, test_mode: bool
    ) -> BookingDetails: ...


class ResellerBookings:
    def __init__(self, database: Database, clock: Clock, steps: BookingSteps) -> None:
        self._db = database
        self._clock = clock
        self._steps = steps
        self._loader = steps.loader
        self._groupings: tuple[Grouping, ...] = ()

    def add_grouping(self, grouping: Grouping) -> None:
        self._groupings = (*self._groupings, grouping)

    async def _owned(self, conn: DbConnection, connection_id: str, uuid: str) -> Booking:
        """The connection's booking, locked for this transaction, as it stands now."""
        booking = await bookings_repo.lock_alone_by_uuid(conn, connection_id, uuid)
        if booking is None:
            found = await bookings_repo.get_by_uuid(conn, connection_id, uuid)
            if found is None:
                raise InvalidBookingUuid(uuid)
            booking = await self._steps.lock_in(conn, found)
        return as_of(booking, self._clock())

    # --- reserve -----------------------------------------------------------------------------

    async def reserve(
        self,
        catalog: Catalog,
        connection_id: str,
        data: ReserveInput,
        *,
        test_mode: bool = False,
        capabilities: frozenset[str] = frozenset(),
    ) -> BookingDetails:
        await self._steps.refresh()
        for grouping in self._groupings:
            if grouping.claims(catalog, data, capabilities):
                return await grouping.reserve(catalog, connection_id, data, test_mode=test_mode)
        prepared = self._steps.prepare(catalog, connection_id, data, test_mode=test_mode)
        await self._steps.read_ahead(prepared)
        try:
            booking = await self._place(catalog, prepared)
        except IntegrityError:
            booking = None
        if booking is None:
            return await self.repeated(catalog, prepared)
        # Serialized after commit: the write lock is held only for the write itself. The reads
        # (the slot's places; its resources or order, if any) are each as of now: no BEGIN and
        # COMMIT round trips around them.
        async with self._db.single_read() as conn:
            return await self._loader.one(conn, catalog, booking)

    async def _place(self, catalog: Catalog, prepared: PreparedBooking) -> Booking | None:
        """The reservation's write. On PostgreSQL first as one statement (`Database.one_call`),
        where its steps fit in one; None when its uuid was taken by then (the statement wrote
        nothing). Otherwise, or when the places were not there (nothing was written), in a
        transaction, whose check under the departure's lock says why (or finds them freed)."""
        if self._db.sends_one_call and self._steps.fits_one_call(prepared):
            try:
                async with self._db.one_call() as call:
                    booking, _ = await self._steps.place_in(call, catalog, prepared)
                return booking if call.written else None
            except (NotOneCall, OneCallRefused):
                pass
        async with self._db.transaction(write=True) as conn:
            booking, _ = await self._steps.place_in(conn, catalog, prepared)
        return booking

    async def repeated(self, catalog: Catalog, prepared: PreparedBooking) -> BookingDetails:
        """After losing a race on the uuid's unique constraint: answer as a repeat of the winner."""
        booking = prepared.booking
        async with self._db.transaction(write=False) as conn:
            existing = await bookings_repo.get_by_uuid(conn, booking.connection_id, booking.uuid)
            if existing is None:
                raise BadRequest(f"The reservation {booking.uuid!r} conflicted with another; try again")
            self._steps.check_repeat(existing, booking.request_fingerprint)
            return await self._loader.one(conn, catalog, existing)

    # --- reads -------------------------------------------------------------------------------

    async def get(self, catalog: Catalog, connection_id: str, uuid: str) -> BookingDetails:
        async with self._db.transaction(write=False) as conn:
            booking = await bookings_repo.get_by_uuid(conn, connection_id, uuid)
            if booking is None:
                raise InvalidBookingUuid(uuid)
            return await self._loader.one(conn, catalog, booking)

    async def find_page(
        self, catalog: Catalog, where: BookingFilter, *, limit: int, offset: int = 0
    ) -> tuple[list[BookingDetails], bool]:
        """At most `limit` matching bookings from `offset` on, and whether more match."""
        async with self._db.transaction(write=False) as conn:
            found, _ = await bookings_reads.find_bookings(
                conn, where, limit=limit + 1, offset=offset, count=False
            )
            return await self._loader.describe(conn, catalog, found[:limit]), len(found) > limit

    # --- changes -----------------------------------------------------------------------------

    async def _with_companions(
        self,
        catalog: Catalog,
        connection_id: str,
        uuid: str,
        verb: str,
        first: Step,
        companion: CompanionStep,
        *,
        skip: Sequence[BookingStatus] = (),
    ) -> BookingDetails:
        async with self._db.transaction(write=True) as conn:
            booking = await self._owned(conn, connection_id, uuid)
            after = await self._steps.with_companions(
                conn, catalog, booking, verb, first, companion, skip=skip
            )
        # Read after commit, as a reservation's answer: the write holds its locks for the
        # write only.
        async with self._db.single_read() as conn:
            return await self._loader.one(conn, catalog, after)

    async def confirm(
        self, catalog: Catalog, connection_id: str, uuid: str, data: ConfirmInput
    ) -> BookingDetails:
        await self._steps.refresh()
        now = self._clock()
        for_companions = ConfirmInput(contact=data.contact, notes=data.notes)
        return await self._with_companions(
            catalog, connection_id, uuid, "confirm",
            lambda conn, b: self._steps.confirm_in(conn, catalog, b, data, now),
            lambda conn, b, _: self._steps.confirm_in(conn, catalog, b, for_companions, now),
        )  # fmt: skip

    async def extend(
        self, catalog: Catalog, connection_id: str, uuid: str, minutes: int | None
    ) -> BookingDetails:
        now = self._clock()

        async def first(conn: DbConnection, booking: Booking) -> Booking:
            expires_at = self._steps.extended_expiry(extendable(booking), minutes, now)
            return await self._steps.hold_until_in(conn, catalog, booking, expires_at)

        async def companion(conn: DbConnection, booking: Booking, extended: Booking) -> Booking:
            if booking.status is not BookingStatus.ON_HOLD or extended.expires_at is None:
                return booking
            return await self._steps.hold_until_in(conn, catalog, booking, extended.expires_at)

        return await self._with_companions(catalog, connection_id, uuid, "extend", first, companion)

    async def cancel(
        self, catalog: Catalog, connection_id: str, uuid: str, reason: str | None
    ) -> BookingDetails:
        def step(conn: DbConnection, booking: Booking) -> Awaitable[Booking]:
            return self._steps.cancel_in(conn, catalog, booking, reason, force=False, actor=RESELLER)

        return await self._with_companions(
            catalog, connection_id, uuid, "cancel", step, lambda conn, b, _: step(conn, b),
            skip=(BookingStatus.EXPIRED,),
        )  # fmt: skip

    async def update(
        self, catalog: Catalog, connection_id: str, uuid: str, data: UpdateInput
    ) -> BookingDetails:
        await self._steps.refresh()
        now = self._clock()
        async with self._db.transaction(write=True) as conn:
            booking = await self._owned(conn, connection_id, uuid)
            await self._steps.companions(conn, booking, "update")
            updated = await self._steps.change_in(conn, catalog, booking, data, now)
            await self._steps.follow_in(conn, catalog, [(booking, updated)])
            return await self._loader.one(conn, catalog, updated)
