"""The driver's pickup list of one departure: who is collected where and when."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from berth.capabilities.ids import PICKUPS
from berth.capabilities.pickups.extension import Pickup
from berth.domain.catalog.model import PickupPoint
from berth.domain.pickups import address_of, pickup_window
from berth.read_models.bookings import BookingDetails


@dataclass(frozen=True)
class PickupStop:
    """One booking's pickup. `opens`/`closes`: the point's window for the departure (None for
    a hotel pickup, which has no declared time)."""

    details: BookingDetails
    pickup: Pickup
    point: PickupPoint | None
    opens: datetime | None
    closes: datetime | None

    @property
    def place(self) -> str:
        if self.point is not None:
            return self.point.name
        return self.pickup.hotel or ""

    @property
    def address(self) -> str | None:
        return address_of(self.point) if self.point is not None else None


def pickup_list(travelling: Sequence[BookingDetails]) -> list[PickupStop]:
    """The bookings of `travelling` that asked for pickup, by pickup time (hotel pickups, which
    have none, last), then place, then lead guest."""
    stops: list[PickupStop] = []
    for details in travelling:
        pickup = Pickup.from_document(details.booking.extensions.get(PICKUPS))
        if not pickup.requested:
            continue
        point = details.option.pickup_point(pickup.point_id) if pickup.point_id is not None else None
        window = (
            pickup_window(point, details.slot) if point is not None and details.slot is not None else None
        )
        stops.append(
            PickupStop(details, pickup, point, window[0] if window else None, window[1] if window else None)
        )
    return sorted(
        stops,
        key=lambda s: (
            s.opens is None,
            s.opens.astimezone(UTC).isoformat() if s.opens is not None else "",
            s.place.casefold(),
            (s.details.booking.contact.full_name or "").casefold(),
        ),
    )
