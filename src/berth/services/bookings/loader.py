"""Bookings with what serializing them needs (`BookingDetails`), loaded in batches: one
availability query per option whatever the number of bookings, one for their orders, and
what each registered `DetailsPart` adds for all of them at once (a capability's part)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol
from zoneinfo import ZoneInfo

from berth.domain.availability import SlotState
from berth.domain.bookings import Booking, as_of, is_cancellable
from berth.domain.catalog import Catalog, Option, Product
from berth.domain.errors import NotFound
from berth.domain.slots import Slot, cancellation_cutoff, slot_for_id
from berth.domain.tickets import ISSUED, NO_TICKETS, IssuedTickets, issues_documents
from berth.read_models.bookings import BookingDetails
from berth.services.bookings.capacity import CapacityPolicies
from berth.services.clock import Clock
from berth.store import catalog_repo, orders_repo, tickets_repo
from berth.store.connection import DbConnection


def booked_slot(product: Product, option: Option, booking: Booking) -> Slot | None:
    """The slot a booking occupies: its availability's, ending when the booking's stored
    interval ends (a rental's item is due back then)."""
    if booking.availability_id is None:
        return None
    slot = slot_for_id(product, option, booking.availability_id)
    if slot is None or booking.slot_end is None:
        return slot
    return replace(slot, end=booking.slot_end.astimezone(ZoneInfo(product.time_zone)))


class DetailsPart(Protocol):
    """A capability's part of bookings' details (what the core does not know of them), added
    in one pass over a batch: a query for all of them, never one per booking."""

    async def add(
        self, conn: DbConnection, catalog: Catalog, details: list[BookingDetails], exact: bool
    ) -> list[BookingDetails]:
        """`details` with the capability's part (`exact`: as `BookingLoader.describe`'s)."""


class BookingLoader:
    def __init__(
        self,
        clock: Clock,
        policies: CapacityPolicies,
        tickets_url: str = "",
    ) -> None:
        self._clock = clock
        self._policies = policies
        self._tickets_url = tickets_url  # the base URL of ticket documents
        self._parts: tuple[DetailsPart, ...] = ()

    def add_part(self, part: DetailsPart) -> None:
        self._parts = (*self._parts, part)

    async def product(self, conn: DbConnection, catalog: Catalog, product_id: str) -> Product:
        """A booking's product: from the catalogue, or archived once the catalogue dropped it."""
        product = catalog.product(product_id) or await catalog_repo.load_archived_product(conn, product_id)
        if product is None:
            raise NotFound(f"Product {product_id!r} of a booking is missing from the catalogue")
        return product

    async def booked(self, conn: DbConnection, catalog: Catalog, booking: Booking) -> tuple[Product, Option]:
        """A booking's own product and option, whatever its connection's contract sells today
        (`Catalog.booked`), or as archived once the catalogue dropped the product. An option the
        catalogue itself dropped reads as the product's default."""
        product = catalog.booked(booking.product_id, booking.option_id) or await self.product(
            conn, catalog, booking.product_id
        )
        return product, product.option(booking.option_id) or product.default_option

    async def describe(
        self, conn: DbConnection, catalog: Catalog, bookings: Sequence[Booking], *, exact: bool = False
    ) -> list[BookingDetails]:
        """Serializable details for bookings, shown as they stand now (a passed hold as EXPIRED)
        unless `exact`."""
        now = self._clock()
        resolved: list[tuple[Booking, Product, Option, Slot | None]] = []
        by_option: dict[tuple[str, str], list[int]] = {}  # indexes into `resolved`
        for raw in bookings:
            booking = raw if exact else as_of(raw, now)
            product, option = await self.booked(conn, catalog, booking)
            slot = booked_slot(product, option, booking)
            if slot is not None:
                by_option.setdefault((product.id, option.id), []).append(len(resolved))
            resolved.append((booking, product, option, slot))
        states: dict[int, SlotState] = {}
        for indexes in by_option.values():
            _, product, option, _ = resolved[indexes[0]]
            slots = [slot for index in indexes if (slot := resolved[index][3]) is not None]
            found = await self._policies.of(option).states(conn, product, option, slots, now)
            states.update(zip(indexes, found, strict=True))
        order_references = await orders_repo.references(
            conn, (b.order_id for b, *_ in resolved if b.order_id)
        )
        tokens = await tickets_repo.tokens_of(
            conn, [b.id for b, p, *_ in resolved if b.status in ISSUED and issues_documents(p)]
        )
        details = []
        for index, (booking, product, option, slot) in enumerate(resolved):
            cutoff = cancellation_cutoff(option, slot) if slot is not None else None
            details.append(
                BookingDetails(
                    booking,
                    product,
                    option,
                    slot,
                    states.get(index),
                    is_cancellable(booking, cutoff, now),
                    order_references.get(booking.order_id or ""),
                    tickets=IssuedTickets(self._tickets_url, tokens[booking.id])
                    if booking.id in tokens
                    else NO_TICKETS,
                )
            )
        for part in self._parts:
            details = await part.add(conn, catalog, details, exact)
        return details

    async def one(self, conn: DbConnection, catalog: Catalog, booking: Booking) -> BookingDetails:
        return (await self.describe(conn, catalog, [booking]))[0]

    async def exactly(self, conn: DbConnection, catalog: Catalog, booking: Booking) -> BookingDetails:
        return (await self.describe(conn, catalog, [booking], exact=True))[0]
