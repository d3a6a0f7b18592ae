"""A booking with what serializing it needs."""

from __future__ import annotations

from dataclasses import dataclass

from berth.domain.availability import SlotState
from berth.domain.bookings import Booking
from berth.domain.catalog import Option, Product, RentalDuration
from berth.domain.offer_rules import OfferChoice
from berth.domain.slots import Slot
from berth.domain.tickets import NO_TICKETS, IssuedTickets


@dataclass(frozen=True)
class BookingDetails:
    """A booking with what serializing it needs: its product, option, slot and slot state."""

    booking: Booking
    product: Product
    option: Option
    slot: Slot | None
    state: SlotState | None
    cancellable: bool
    order_reference: str | None = None
    rental: RentalDuration | None = None
    # octo/packages: the included bookings of a package booking.
    package_bookings: tuple[BookingDetails, ...] = ()
    # octo/offers: the offers its channel is shown for it, each usable or not (and why).
    offer_choices: tuple[OfferChoice, ...] = ()
    # The tokens of its ticket documents (PDF_URL, PKPASS_URL) once issued.
    tickets: IssuedTickets = NO_TICKETS
