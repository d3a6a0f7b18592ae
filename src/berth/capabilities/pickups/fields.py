"""octo/pickups: `pickupAvailable`, `pickupRequired` and `pickupPoints` on options and
availability (the schema puts none on products), and the pickup chosen on bookings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from berth.capabilities.base import JSON, Capability, Nested, View
from berth.capabilities.ids import PICKUPS
from berth.capabilities.pickups.driver_list import PickupStop, pickup_list
from berth.capabilities.pickups.extension import REQUEST_FIELDS, Pickup
from berth.capabilities.pickups.points import point_view
from berth.domain.bookings import UnitItem
from berth.domain.catalog import Option, Product
from berth.domain.catalog.model import PickupPoint
from berth.domain.pickups import address_of, pickup_window
from berth.domain.slots import Slot
from berth.domain.tickets import TicketLine, local_time
from berth.translations import N_

if TYPE_CHECKING:
    from berth.read_models.availability import SlotAvailability
    from berth.read_models.bookings import BookingDetails


def _pickup_fields(option: Option, slot: Slot | None, out: JSON) -> None:
    out["pickupAvailable"] = bool(option.pickup_points)
    out["pickupRequired"] = option.pickup_required
    out["pickupPoints"] = [point_view(p, slot) for p in option.pickup_points]


def _point_line(point: PickupPoint, details: BookingDetails) -> TicketLine:
    """The point, its address and the time (or window) it collects the booking's guests."""
    where = ", ".join(p for p in (point.name, address_of(point)) if p)
    if details.slot is None:
        return TicketLine("Pickup", where)
    opens, closes = (local_time(moment) for moment in pickup_window(point, details.slot))
    if opens == closes:
        return TicketLine("Pickup", f"{where}, {opens}")
    return _worded("Pickup", N_("{place}, {opens} to {closes}"), place=where, opens=opens, closes=closes)


def _worded(label: str, message: str, **values: str) -> TicketLine:
    """A line whose text has words of Berth's own: English for staff, the guest's language on
    the guest's tickets and emails."""
    return TicketLine(label, message.format(**values), message=message, values=tuple(values.items()))


class PickupsCapability(Capability):
    id = PICKUPS
    docs = "https://docs.ventrata.com/capabilities/pickups"
    booking_request_fields = frozenset(REQUEST_FIELDS)

    def option_fields(self, product: Product, option: Option, out: JSON, view: View) -> None:
        _pickup_fields(option, None, out)

    def availability_fields(
        self, item: SlotAvailability, out: JSON, view: View, nested: Nested[SlotAvailability]
    ) -> None:
        _pickup_fields(item.option, item.slot, out)

    def booking_fields(
        self, details: BookingDetails, out: JSON, view: View, nested: Nested[BookingDetails]
    ) -> None:
        pickup = Pickup.from_document(details.booking.extensions.get(PICKUPS))
        point = details.option.pickup_point(pickup.point_id) if pickup.point_id is not None else None
        out["pickupRequested"] = pickup.requested
        out["pickupPointId"] = pickup.point_id
        out["pickupPoint"] = point_view(point, details.slot) if point is not None else None
        out["pickupHotel"] = pickup.hotel
        out["pickupHotelRoom"] = pickup.hotel_room
        # The schema's older name of the room; the same value.
        out["pickupRoom"] = pickup.hotel_room
        # Berth takes no pickup notes and dispatches no vehicles: never set.
        out["pickupNotes"] = None
        out["pickupDispatch"] = None
        out["dropoffDispatch"] = None

    def booking_lines(self, details: BookingDetails, item: UnitItem | None) -> list[TicketLine]:
        pickup = Pickup.from_document(details.booking.extensions.get(PICKUPS))
        if not pickup.requested:
            return []
        point = details.option.pickup_point(pickup.point_id) if pickup.point_id is not None else None
        lines = []
        if point is not None:
            lines.append(_point_line(point, details))
            if point.directions:
                lines.append(TicketLine("Directions", point.directions))
        if pickup.hotel_room:
            message = N_("{hotel}, room {room}") if pickup.hotel else N_("room {room}")
            lines.append(_worded("Pickup at", message, hotel=pickup.hotel or "", room=pickup.hotel_room))
        elif pickup.hotel:
            lines.append(TicketLine("Pickup at", pickup.hotel))
        if not lines:
            lines.append(_worded("Pickup", N_("requested")))
        return lines

    def departure_part(self, option: Option, travelling: Sequence[BookingDetails]) -> list[PickupStop] | None:
        """The driver's pickup list; empty (not None) for an option with pickup points that
        nobody has asked for yet."""
        stops = pickup_list(travelling)
        return stops if stops or option.pickup_points else None
