"""Booking extensions: what a capability keeps of a booking beside the core's fields (the
pickup chosen, the answers given, the extras added), read from the request fields it declares.

The core never tests a capability id. At each step that takes a reseller's fields (reserve,
update, confirm) it hands every registered extension the booking as the step leaves it and the
fields the request sent for that extension; the extension answers its document for the booking
(validated against the option booked) or refuses the step with an OCTO error. The document is
stored with the booking (`Booking.extensions[key]`) in the step's transaction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from berth.domain.bookings import Booking
from berth.domain.catalog import Option, Product
from berth.domain.slots import Slot

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
    `sent`: the fields the request sent for this extension (None: none)."""

    stage: Stage
    product: Product
    option: Option
    slot: Slot | None
    booking: Booking
    sent: Sent | None

    def kept(self, key: str) -> Mapping[str, Any] | None:
        return self.booking.extensions.get(key)


class BookingExtension:
    """A capability's part of a booking. `key` is its capability id: the request fields it
    reads arrive under it, and its document is stored under it."""

    key: str = ""

    def apply(self, step: ExtensionStep) -> dict[str, Any] | None:
        """The extension's document for the booking after `step` (None: nothing to keep);
        raises an OCTO error to refuse the step."""
        return None


class BookingExtensions:
    """The registered extensions, applied in order."""

    def __init__(self, extensions: Sequence[BookingExtension] = ()) -> None:
        self._extensions = tuple(extensions)

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
