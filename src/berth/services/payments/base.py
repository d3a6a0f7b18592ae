"""What every part of the payments service shares (`service.Payments` is them all): the
services it runs with, the card provider (none: card payments are off, `PaymentsOff`), and
the booking a payment is for, found by its id or uuid and locked."""

from __future__ import annotations

import uuid

from berth.domain.audit import Target
from berth.domain.bookings import Booking, as_of
from berth.domain.errors import NotFound, UnprocessableEntity
from berth.services.bookings.steps import BookingSteps
from berth.services.catalog import CatalogService
from berth.services.clock import Clock
from berth.services.payments.provider import CardProvider
from berth.settings import Settings
from berth.store import bookings_reads, connections_repo, payments_repo
from berth.store.connection import DbConnection
from berth.store.database import Database

GUEST = "guest"


class PaymentsOff(UnprocessableEntity):
    def __init__(self) -> None:
        super().__init__("Card payments are not set up: BERTH_STRIPE_SECRET_KEY is not set")


def new_id() -> str:
    return str(uuid.uuid4())


def target_of(booking: Booking) -> Target:
    return Target("booking", booking.id, booking.supplier_reference)


def provider_unreachable() -> UnprocessableEntity:
    return UnprocessableEntity(
        "The payment provider cannot be reached just now: nothing was charged. Your booking stays held "
        "until its hold runs out; please try again in a moment"
    )


class PaymentsBase:
    def __init__(
        self,
        database: Database,
        settings: Settings,
        clock: Clock,
        steps: BookingSteps,
        catalogs: CatalogService,
        provider: CardProvider | None,
    ) -> None:
        self._db = database
        self._settings = settings
        self._clock = clock
        self._steps = steps
        self._loader = steps.loader
        self._catalogs = catalogs
        self.provider = provider

    def _card(self) -> CardProvider:
        if self.provider is None:
            raise PaymentsOff()
        return self.provider

    async def close(self) -> None:
        if self.provider is not None:
            await self.provider.close()

    # --- bookings ----------------------------------------------------------------------------

    async def _find(self, conn: DbConnection, booking_ref: str) -> Booking:
        """A booking by its id or by the uuid its (paying) channel gave it, as it stands now."""
        booking = await bookings_reads.get_by_id(conn, booking_ref)
        if booking is None:
            booking = await self._paying_by_uuid(conn, booking_ref)
        if booking is None:
            raise NotFound(f"No booking {booking_ref!r}")
        return as_of(booking, self._clock())

    async def _paying_by_uuid(self, conn: DbConnection, uuid_: str) -> Booking | None:
        found = await payments_repo.bookings_by_uuid(conn, uuid_)
        connections = await connections_repo.connections_by_id(conn, {b.connection_id for b in found})
        paying = [b for b in found if (c := connections.get(b.connection_id)) and c.contract.takes_payment]
        return paying[0] if paying else None

    async def _locked(self, conn: DbConnection, booking_id: str) -> Booking:
        booking = await bookings_reads.get_by_id(conn, booking_id)
        if booking is None:
            raise NotFound(f"No booking {booking_id!r}")
        return as_of(await self._steps.lock_in(conn, booking), self._clock())
