"""Booking extensions: what a capability keeps of a booking beside the core's fields (the
pickup chosen, the answers given, the extras added), read from the request fields it declares.

The core never tests a capability id. At each step that takes a reseller's fields (reserve,
update, confirm) it hands every registered extension the booking as the step leaves it and the
fields the request sent for that extension; the extension answers its document for the booking
(validated against the option booked) or refuses the step with an OCTO error. The document is
stored with the booking (`Booking.extensions[key]`) in the step's transaction.

An extension that counts against a stock of its own (octo/extras: an extra's pieces per
departure) takes it in `hold`, inside the step's transaction after the booking's places, under
the same slot lock row through the lock manager (`read_ahead` is its part of a reservation's
read ahead, for `locks.NoLocks`); a booking releases it as it releases its places. `hold` is also
called when a booking is cancelled, for what an extension takes that is not counted from the
booking's status (it gives it back there). `priceables`
are the parts a booking is priced for beside its units (octo/extras: its pieces); `lines` may
change the prices of a booking's lines once they are priced (octo/offers: its discount).

An extension that reads something of its own to answer (octo/offers: the offers document) reads
it in `refresh`, which every step awaits before it prepares anything (`BookingSteps.refresh`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import Any

from berth.domain.bookings import Booking
from berth.domain.catalog import Option, Product
from berth.domain.price_lines import Priceable, PriceLines
from berth.domain.slots import Slot
from berth.services.bookings.locks import SlotKey, SlotLocks
from berth.store.connection import DbConnection

# The fields a request sent for one extension: its booking-level fields by their OCTO names and,
# when it reads fields of unit items, "unitItems": one mapping per unit item sent, in order.
Sent = Mapping[str, Any]


class Stage(StrEnum):
    RESERVE = "reserve"
    UPDATE = "update"
    CONFIRM = "confirm"


@dataclass(frozen=True)
class ExtensionStep:
    """One step of a booking as an extension sees it. `booking`: as the step leaves it (its
    product, option, slot and unit items; its extension documents as they were before);
    `sent`: the fields the request sent for this extension (empty: none; None: the request did
    not ask for the extension's capability)."""

    stage: Stage
    product: Product
    option: Option
    slot: Slot | None
    booking: Booking
    sent: Sent | None

    def kept(self, key: str) -> Mapping[str, Any] | None:
        return self.booking.extensions.get(key)


@dataclass(frozen=True)
class Holding:
    """A step's write as an extension's stock sees it: the booking before (None: new) and
    after, the slot it is on and the lock row its places take (None: it takes none, as a
    freesale or test booking)."""

    product: Product
    option: Option
    slot: Slot | None
    lock_key: SlotKey | None
    before: Booking | None
    after: Booking
    now: datetime


class BookingExtension:
    """A capability's part of a booking. `key` is its capability id: the request fields it
    reads arrive under it, and its document is stored under it."""

    key: str = ""

    async def refresh(self) -> None:
        """Before a step: read what `apply` and `lines` answer from, if it may have changed."""
        return None

    def apply(self, step: ExtensionStep) -> dict[str, Any] | None:
        """The extension's document for the booking after `step` (None: nothing to keep);
        raises an OCTO error to refuse the step."""
        return None

    async def read_ahead(
        self, locks: SlotLocks, product: Product, option: Option, slot: Slot, booking: Booking
    ) -> None:
        """Before a reservation's write transaction: what the lock manager should read ahead."""
        return None

    async def hold(self, conn: DbConnection, locks: SlotLocks, holding: Holding) -> None:
        """Take (or give back) what the booking holds of the extension's stock, in the step's
        transaction; raises an OCTO error when it is not there. Writes nothing for a booking
        that has no document of the extension (a reservation without any may leave its check
        of places to its COMMIT: `BookingSteps._hold_places`)."""
        return None

    def priceables(self, booking: Booking, product: Product, option: Option) -> list[Priceable]:
        """The parts the booking is priced for beside its units, at today's catalogue prices
        in its currency (what a new part is sold at: `domain.price_lines`)."""
        return []

    def lines(self, booking: Booking, lines: PriceLines) -> PriceLines:
        """The booking's priced lines as the extension prices them (unchanged by default)."""
        return lines


class BookingExtensions:
    """The registered extensions, applied in order."""

    def __init__(self, extensions: Sequence[BookingExtension] = ()) -> None:
        self._extensions = tuple(extensions)

    async def refresh(self) -> None:
        for extension in self._extensions:
            await extension.refresh()

    def apply(
        self,
        stage: Stage,
        product: Product,
        option: Option,
        slot: Slot | None,
        booking: Booking,
        sent: Mapping[str, Sent],
    ) -> Booking:
        if not self._extensions:
            return booking
        documents = dict(booking.extensions)
        for extension in self._extensions:
            step = ExtensionStep(stage, product, option, slot, booking, sent.get(extension.key))
            document = extension.apply(step)
            if document is None:
                documents.pop(extension.key, None)
            else:
                documents[extension.key] = document
        return replace(booking, extensions=documents) if documents != booking.extensions else booking

    async def read_ahead(
        self, locks: SlotLocks, product: Product, option: Option, slot: Slot, booking: Booking
    ) -> None:
        for extension in self._extensions:
            await extension.read_ahead(locks, product, option, slot, booking)

    async def hold(self, conn: DbConnection, locks: SlotLocks, holding: Holding) -> None:
        for extension in self._extensions:
            await extension.hold(conn, locks, holding)

    def priceables(self, booking: Booking, product: Product, option: Option) -> list[Priceable]:
        return [part for e in self._extensions for part in e.priceables(booking, product, option)]

    def lines(self, booking: Booking, lines: PriceLines) -> PriceLines:
        for extension in self._extensions:
            lines = extension.lines(booking, lines)
        return lines
