"""One departure as staff see it: the slot as it runs, the catalogue's capacity and staff's
override, the places held and confirmed, its state as resellers see it."""

from __future__ import annotations

from dataclasses import dataclass

from berth.domain.availability import SlotState
from berth.domain.bookings import Booking, UnitItem
from berth.domain.catalog import Option, Product
from berth.domain.departures import DepartureOverride, NotThrough
from berth.domain.slots import Slot


@dataclass(frozen=True)
class Departure:
    product: Product
    option: Option
    slot: Slot  # as the catalogue has it
    override: DepartureOverride | None
    state: SlotState  # as a reseller's check sees it (overrides applied)
    held: int  # places of the live bookings starting on it (holds, PENDING, CONFIRMED, REDEEMED)
    confirmed: int  # of which CONFIRMED or REDEEMED

    @property
    def closed(self) -> bool:
        """Closed by staff (the catalogue's closed dates are `slot.closed`)."""
        return self.override is not None and self.override.closed

    @property
    def capacity_override(self) -> int | None:
        return self.override.capacity if self.override is not None else None

    @property
    def note(self) -> str:
        return self.override.note if self.override is not None else ""


@dataclass(frozen=True)
class DepartureCancellation:
    """What cancelling a departure did: the departure (now closed), the bookings on it that were
    cancelled (a package's included bookings go with their package) and their connections."""

    departure: Departure
    cancelled: tuple[str, ...]  # booking ids
    connection_ids: tuple[str, ...]
    # Bookings partly through the gate, each with its tickets not through, and what became of
    # those tickets (None: no booking was partly through).
    boarding: tuple[Boarding, ...] = ()
    not_through: NotThrough | None = None


@dataclass(frozen=True)
class Affected:
    """What cancelling a departure would cancel, for the confirmation step."""

    bookings: int
    connection_ids: tuple[str, ...]
    boarding: tuple[Boarding, ...] = ()  # bookings partly through the gate, which the choice concerns


@dataclass(frozen=True)
class Boarding:
    """A booking on the departure partly through the gate, and its tickets not through."""

    booking: Booking
    waiting: tuple[UnitItem, ...]
