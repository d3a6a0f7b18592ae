"""The supplier's web shop as a sales channel: one more client of the booking core, selling
as its own connection ("Web shop", a contract at retail) so that capacity, allotments, prices
kept with each sale, tickets, emails, webhooks, audit and statements hold for it unchanged.

What the shop adds to the core: who held each of its bookings (a browser session and a client
address, whose live holds are limited: one browser or address cannot hold a departure), and
each booking's "manage my booking" link (a token derived from BERTH_SECRET_KEY, of which only
a salt and a hash are stored: `berth.domain.shop_access`)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol

from berth.domain.bookings import Booking, Contact
from berth.domain.catalog import Catalog, Product
from berth.domain.connections import Connection
from berth.domain.errors import InvalidBookingUuid, InvalidProductId, NotFound, OctoError
from berth.domain.shop_access import (
    HoldLimits,
    Refusal,
    hold_refusal,
    looks_like_token,
    manage_token,
    new_salt,
    shop_key,
    token_hash,
    token_of,
)
from berth.domain.staff import Actor
from berth.read_models.bookings import BookingDetails
from berth.services.answers import AnswerCache
from berth.services.bookings.inputs import ReserveInput, UpdateInput
from berth.services.bookings.reseller import ResellerBookings
from berth.services.catalog import CatalogService, CatalogSnapshot
from berth.services.clock import Clock
from berth.services.connections import ConnectionService
from berth.services.contracts import ContractService
from berth.settings import DEVELOPMENT_SECRET_KEY, Settings
from berth.store import bookings_reads, connections_repo, shop_repo
from berth.store.connection import DbConnection
from berth.store.database import Database
from berth.store.shop_repo import ShopBooking

SHOP_NAME = "Web shop"
# The shop's contract when it is opened: every product at retail (no commission: the sale is
# the supplier's own), its guests' receipts showing the price and the terms (boxOffice), its
# bookings confirmed only for a captured card payment of their price (takesPayment).
SHOP_CONTRACT = {
    "products": "ALL",
    "rate": {"commission": 0},
    "boxOffice": True,
    "takesPayment": True,
    "sellsGifts": True,
    "notes": "The supplier's own web shop (/shop): sold at retail, paid by card.",
}
# How long a process trusts what it read of the shop's connection (a revocation elsewhere
# closes the shop this much later).
CHANNEL_SECONDS = 1.0
CATALOGUE = "catalogue"  # the catalogue snapshot's key in the answers kept until a commit


class ShopClosed(OctoError):
    """No web shop connection, or it was revoked: the shop sells nothing."""

    code = "NOT_FOUND"


class HoldRefused(OctoError):
    """A browser session or client address that has as many live holds as it may."""

    code = "TOO_MANY_REQUESTS"

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(f"The shop's limit on holds was reached ({refusal.value})")
        self.refusal = refusal


@dataclass(frozen=True)
class Holder:
    """Who places a hold: the browser session (the SHA-256 of its nonce), its client address
    and the language the guest reads the shop in."""

    session_hash: str
    address: str
    language: str


@dataclass(frozen=True)
class Shop:
    """The shop's connection and the catalogue its contract sells today."""

    connection: Connection
    snapshot: CatalogSnapshot

    @property
    def catalog(self) -> Catalog:
        return self.snapshot.catalog

    @property
    def products(self) -> list[Product]:
        """What the shop offers: its contract's products (packages too)."""
        return list(self.catalog.products)

    def product(self, product_id: str) -> Product:
        """A product the shop offers (INVALID_PRODUCT_ID for any other)."""
        found = self.catalog.product(product_id)
        if found is None:
            raise InvalidProductId(product_id, self.catalog.unsold)
        return found


class PackageContacts(Protocol):
    """octo/packages' booking service: a package booking's contact changes with its included
    bookings' (a reseller's update of a package booking is refused)."""

    async def set_contact(
        self, catalog: Catalog, connection_id: str, uuid: str, contact: Contact
    ) -> BookingDetails: ...


class ShopService:
    def __init__(
        self,
        database: Database,
        settings: Settings,
        clock: Clock,
        catalogs: CatalogService,
        connections: ConnectionService,
        contracts: ContractService,
        bookings: ResellerBookings,
        packages: PackageContacts,
        answers: AnswerCache,
    ) -> None:
        self._db = database
        self._settings = settings
        self._clock = clock
        self._catalogs = catalogs
        self._connections = connections
        self._contracts = contracts
        self._bookings = bookings
        self._packages = packages
        self._answers = answers
        self._channel: tuple[float, Connection | None] | None = None
        secret = settings.secret_key.get_secret_value() if settings.secret_key else DEVELOPMENT_SECRET_KEY
        previous = (
            settings.secret_key_previous.get_secret_value().split(",") if settings.secret_key_previous else []
        )
        self._link_keys = [shop_key(k.strip(), "manage links") for k in (secret, *previous) if k.strip()]
        self.cookie_key = shop_key(secret, "cookies")

    # --- the channel -------------------------------------------------------------------------

    async def open(self, actor: Actor, name: str = SHOP_NAME) -> Connection:
        """The shop's connection, made with its contract if there is none yet (idempotent: an
        open shop, its contract as staff left it, stays as it is)."""
        existing = await self.connection()
        if existing is not None:
            return existing
        async with self._db.transaction(write=False) as conn:
            connection_id = await shop_repo.channel_connection_id(conn)
        if connection_id is None:
            connection, _, _ = await self._connections.create(name, actor=actor)
            async with self._db.transaction(write=True) as conn:
                if await shop_repo.channel_connection_id(conn) is None:
                    await shop_repo.set_channel(conn, connection.id, self._clock())
            await self._contracts.save(connection.id, SHOP_CONTRACT, base_version=0, actor=actor)
        self._channel = None
        found = await self.connection()
        if found is None:
            raise ShopClosed("The web shop's connection was revoked: the shop stays closed")
        return found

    async def connection(self) -> Connection | None:
        """The shop's connection while it sells (None: never opened, or revoked)."""
        now = time.monotonic()
        if self._channel is not None and now - self._channel[0] < CHANNEL_SECONDS:
            return self._channel[1]
        async with self._db.single_read() as conn:
            connection_id = await shop_repo.channel_connection_id(conn)
        found = None
        if connection_id is not None:
            async with self._db.single_read() as conn:
                found = await connections_repo.find_connection(conn, connection_id)
        answer = found if found is not None and found.active else None
        self._channel = (now, answer)
        return answer

    async def shop(self) -> Shop:
        connection = await self.connection()
        if connection is None:
            raise ShopClosed("The shop is closed")
        # Read again only after a catalogue (or contract) saved: a page reads nothing more.
        base = await self._answers.until_everything_changes(CATALOGUE, self._catalogs.snapshot)
        return Shop(connection, self._contracts.snapshot(base, connection))

    # --- holds -------------------------------------------------------------------------------

    @property
    def limits(self) -> HoldLimits:
        s = self._settings
        return HoldLimits(s.shop_holds_per_session, s.shop_holds_per_address, s.shop_places_per_address)

    async def _refusal(self, holder: Holder, places: int) -> Refusal | None:
        async with self._db.transaction(write=False) as conn:
            live = await shop_repo.live_holds(conn, holder.session_hash, holder.address, self._clock())
        return hold_refusal(self.limits, live, places)

    async def hold(self, shop: Shop, reservation: ReserveInput, holder: Holder) -> BookingDetails:
        """Hold the places through the booking core, as the shop's connection, unless the
        session or the address already holds as much as it may (HoldRefused). Counted before
        the hold and again, under a lock of the session and the address, once it is placed:
        a hold that two requests at once took past the limit is released at once."""
        if reservation.uuid is not None:  # the same form sent again (a double click): its hold
            try:
                return await self.held(shop, reservation.uuid, holder.session_hash)
            except InvalidBookingUuid:
                pass
        places = len(reservation.unit_items or ())
        refusal = await self._refusal(holder, places)
        if refusal is not None:
            raise HoldRefused(refusal)
        held = await self._bookings.reserve(shop.catalog, shop.connection.id, reservation)
        booking = held.booking
        if await self._shop_booking(booking) is not None:  # another browser's form, copied whole
            raise InvalidBookingUuid(booking.uuid)
        salt = new_salt()
        row = ShopBooking(
            booking.id, holder.session_hash, holder.address, booking.pax, salt,
            token_hash(manage_token(self._link_keys[0], booking.id, salt)), holder.language, self._clock(),
        )  # fmt: skip
        async with self._db.transaction(write=True) as conn:
            await shop_repo.lock_holders(conn, (holder.session_hash, holder.address))
            live = await shop_repo.live_holds(conn, holder.session_hash, holder.address, self._clock())
            refusal = hold_refusal(self.limits, live, booking.pax)
            if refusal is None:
                await shop_repo.add_booking(conn, row)
        if refusal is not None:
            await self._bookings.cancel(shop.catalog, shop.connection.id, booking.uuid, "shop hold limit")
            raise HoldRefused(refusal)
        return held

    async def held(self, shop: Shop, uuid: str, session_hash: str) -> BookingDetails:
        """A booking the session held (InvalidBookingUuid for any other: a guest sees only
        their own)."""
        details = await self._bookings.get(shop.catalog, shop.connection.id, uuid)
        found = await self._shop_booking(details.booking)
        if found is None or found.session_hash != session_hash:
            raise InvalidBookingUuid(uuid)
        return details

    async def _shop_booking(self, booking: Booking) -> ShopBooking | None:
        async with self._db.transaction(write=False) as conn:
            return (await shop_repo.of_bookings(conn, [booking.id])).get(booking.id)

    async def set_contact(self, shop: Shop, details: BookingDetails, contact: Contact) -> BookingDetails:
        """The guest's details on their booking (a hold before payment, or a confirmed booking
        from its manage link), through the booking core; a package's on its included bookings
        too."""
        if details.package_bookings:
            return await self._packages.set_contact(
                shop.catalog, shop.connection.id, details.booking.uuid, contact
            )
        return await self.update(shop, details, UpdateInput(contact=contact, sent=frozenset({"contact"})))

    async def update(self, shop: Shop, details: BookingDetails, change: UpdateInput) -> BookingDetails:
        """A change of the guest's booking through the booking core's update, as a reseller's
        PATCH (a promo code applied or dropped: octo/offers' fields in `change.extensions`)."""
        return await self._bookings.update(shop.catalog, shop.connection.id, details.booking.uuid, change)

    async def release(self, shop: Shop, details: BookingDetails) -> BookingDetails:
        """The guest gives up a hold before paying: its places go back on sale."""
        return await self._bookings.cancel(
            shop.catalog, shop.connection.id, details.booking.uuid, "released by the guest"
        )

    # --- manage links ------------------------------------------------------------------------

    async def by_link(self, shop: Shop, token: str) -> BookingDetails:
        """The shop's booking a manage link names (NotFound for any other text)."""
        found = None
        if looks_like_token(token):
            async with self._db.transaction(write=False) as conn:
                found = await shop_repo.by_link_hash(conn, token_hash(token))
        if found is None:
            raise NotFound("No booking has this link")
        async with self._db.transaction(write=False) as conn:
            booking = await bookings_reads.get_by_id(conn, found.booking_id)
        if booking is None or booking.connection_id != shop.connection.id:
            raise NotFound("No booking has this link")
        return await self._bookings.get(shop.catalog, shop.connection.id, booking.uuid)

    async def links(self, booking_ids: list[str]) -> dict[str, str]:
        """The manage link of each of the bookings the shop sold (others have none)."""
        async with self._db.transaction(write=False) as conn:
            return await self.links_in(conn, booking_ids)

    async def links_in(self, conn: DbConnection, booking_ids: list[str]) -> dict[str, str]:
        """`links`, read in the caller's transaction (the mail worker writing a receipt)."""
        found = await shop_repo.of_bookings(conn, booking_ids)
        base = self._settings.tickets_url
        links = {}
        for booking_id, row in found.items():
            token = token_of(self._link_keys, booking_id, row.link_salt, row.link_hash)
            if token is not None:
                links[booking_id] = f"{base}/shop/manage/{token}"
        return links
