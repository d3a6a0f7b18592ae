"""Departure operations: what staff change on one departure (product, option, availability id)
without touching the catalogue, and how a slot reads once they have.

A departure's override can close it (resellers see CLOSED, reservations are refused), replace
its catalogue capacity for that departure alone, and carry a note for staff. Places already
held stay held: closing stops new sales, and a capacity below the places held is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum

from berth.domain.errors import BadRequest, UnprocessableEntity
from berth.domain.slots import Slot

MAX_NOTE_LENGTH = 2000
MAX_CAPACITY = 1_000_000


@dataclass(frozen=True)
class DepartureOverride:
    """Staff's changes to one departure. `capacity` None: the catalogue's."""

    product_id: str
    option_id: str
    availability_id: str
    slot_start: datetime
    closed: bool = False
    capacity: int | None = None
    note: str = ""
    updated_at: datetime | None = None

    @property
    def is_default(self) -> bool:
        """Whether it changes nothing (its row can go)."""
        return not self.closed and self.capacity is None and not self.note


def as_run(slot: Slot, override: DepartureOverride | None) -> Slot:
    """The slot as it runs: closed if the catalogue or staff closed it, with staff's capacity
    if they set one."""
    if override is None:
        return slot
    capacity = slot.capacity if override.capacity is None else override.capacity
    if capacity == slot.capacity and (slot.closed or not override.closed):
        return slot
    return replace(slot, capacity=capacity, closed=slot.closed or override.closed)


def check_capacity(availability_id: str, capacity: int | None, held: int) -> None:
    """A capacity override must be a place count no lower than the places already held."""
    if capacity is None:
        return
    if capacity < 0 or capacity > MAX_CAPACITY:
        raise BadRequest(f"capacity must be between 0 and {MAX_CAPACITY}; {capacity} given")
    if capacity < held:
        raise UnprocessableEntity(
            f"Departure {availability_id} already has {held} place(s) held; its capacity cannot go "
            f"below that ({capacity} requested). Cancel bookings first, or close the departure"
        )


def check_note(note: str) -> None:
    if len(note) > MAX_NOTE_LENGTH:
        raise BadRequest(f"note must be at most {MAX_NOTE_LENGTH} characters; {len(note)} given")


class NotThrough(StrEnum):
    """What a departure's cancellation does with the tickets not through the gate of bookings
    partly through it (boarding began): staff choose."""

    CANCEL = "CANCEL"  # cancelled: the bookings keep the tickets admitted, REDEEMED
    KEEP = "KEEP"  # kept: the bookings stay CONFIRMED, their tickets valid
