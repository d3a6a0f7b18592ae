"""Availability status of a slot and of a calendar day (OCTO.md §5.6)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import NamedTuple

from berth.domain.slots import Slot


class AvailabilityStatus(StrEnum):
    AVAILABLE = "AVAILABLE"
    LIMITED = "LIMITED"
    SOLD_OUT = "SOLD_OUT"
    FREESALE = "FREESALE"
    CLOSED = "CLOSED"


SELLABLE = frozenset({AvailabilityStatus.AVAILABLE, AvailabilityStatus.LIMITED, AvailabilityStatus.FREESALE})


class SlotState(NamedTuple):
    """`vacancies` and `capacity` are None only for FREESALE (and capacity also for a CLOSED
    freesale slot); `available` is `status in SELLABLE`. (A named tuple: a calendar builds
    thousands, and a frozen dataclass takes several times longer to build.)"""

    status: AvailabilityStatus
    available: bool
    vacancies: int | None
    capacity: int | None


def _state(status: AvailabilityStatus, vacancies: int | None, capacity: int | None) -> SlotState:
    return SlotState(status, status in SELLABLE, vacancies, capacity)


def slot_state(slot: Slot, held: int, now: datetime, requested: int | None = None) -> SlotState:
    """The state of `slot` with `held` pax taken by live bookings, for a request of `requested`
    pax (None when the request named no units). `now` must be aware."""
    if slot.closed or now >= slot.cutoff_utc:
        return _state(AvailabilityStatus.CLOSED, 0, slot.capacity)
    if slot.capacity is None:
        return _state(AvailabilityStatus.FREESALE, None, None)
    remaining = max(slot.capacity - held, 0)
    if remaining <= 0 or (requested is not None and remaining < requested):
        status = AvailabilityStatus.SOLD_OUT
    elif 2 * remaining < slot.capacity:  # less than half the capacity left
        status = AvailabilityStatus.LIMITED
    else:
        status = AvailabilityStatus.AVAILABLE
    return _state(status, remaining, slot.capacity)


def day_state(states: Sequence[SlotState]) -> SlotState:
    """One calendar day from its slots' states: the best status among the slots that are not
    CLOSED, the largest vacancies and capacity; CLOSED when nothing operates."""
    operating = [s for s in states if s.status is not AvailabilityStatus.CLOSED]
    if not operating:
        capacities = [s.capacity for s in states if s.capacity is not None]
        return _state(AvailabilityStatus.CLOSED, 0, max(capacities, default=0))
    if any(s.status is AvailabilityStatus.FREESALE for s in operating):
        return _state(AvailabilityStatus.FREESALE, None, None)
    statuses = {s.status for s in operating}
    if AvailabilityStatus.AVAILABLE in statuses:
        status = AvailabilityStatus.AVAILABLE
    elif AvailabilityStatus.LIMITED in statuses:
        status = AvailabilityStatus.LIMITED
    else:
        status = AvailabilityStatus.SOLD_OUT
    vacancies = max((s.vacancies for s in operating if s.vacancies is not None), default=0)
    capacity = max((s.capacity for s in operating if s.capacity is not None), default=0)
    return _state(status, vacancies, capacity)
