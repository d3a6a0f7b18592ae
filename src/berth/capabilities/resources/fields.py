"""octo/resources: `hasResources` on availability (check results, batch rows, a booking's
availability, package availability; never calendar days) and `resourceAllocations` on every
booking (OCTO.md §6.5)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from berth.capabilities.base import JSON, Capability, Nested, View
from berth.capabilities.ids import RESOURCES
from berth.domain.bookings import BookingStatus
from berth.domain.catalog import Option, Resource, ResourceGroup, Seat, Seller
from berth.domain.resources import Allocation, has_resources, seats_of

if TYPE_CHECKING:
    from berth.read_models.availability import SlotAvailability
    from berth.read_models.bookings import BookingDetails


# Statuses in which a booking holds its allocations (a passed hold reads as EXPIRED).
HOLDS_ALLOCATIONS = (
    BookingStatus.ON_HOLD, BookingStatus.CONFIRMED, BookingStatus.PENDING, BookingStatus.REDEEMED,
)  # fmt: skip


def seat_json(seat: Seat) -> JSON:
    """A Seat: `row` and `column` are strings (the requirements win over [VT]'s integers);
    `id` and `title` are the extras [VT] has."""
    return {"id": seat.id, "title": seat.label, "row": seat.row, "column": seat.column}


def seller_json(seller: Seller | None) -> JSON | None:
    if seller is None:
        return None
    return {
        "id": seller.id,
        "name": seller.name,
        "reference": seller.reference,
        "tags": list(seller.tags),
        "emailAddress": seller.email_address,
        "phoneNumber": seller.phone_number,
    }


def group_json(group: ResourceGroup) -> JSON:
    return {"id": group.id, "title": group.title, "split": group.split, "required": group.required}


def resource_json(resource: Resource, *, seat_map: bool) -> JSON:
    """A resource; with `seat_map` all of its seats (blocked ones included)."""
    out: JSON = {
        "id": resource.id,
        "title": resource.title,
        "seating": resource.seat_map is not None,
        "driver": seller_json(resource.driver),
        "guide": seller_json(resource.guide),
    }
    if seat_map:
        out["seats"] = [seat_json(s) for s in resource.seat_map.seats] if resource.seat_map else []
    return out


def allocation_json(option: Option, allocation: Allocation) -> JSON:
    group = option.resource_group(allocation.resource_group_id)
    found = option.find_resource(allocation.resource_id)
    resource = found[1] if found is not None else None
    # A group or resource the catalogue no longer has is still shown, by its id.
    return {
        "resourceGroupId": allocation.resource_group_id,
        "resourceGroup": (
            group_json(group)
            if group is not None
            else {"id": allocation.resource_group_id, "title": allocation.resource_group_id, "split": False}
        ),
        "resourceId": allocation.resource_id,
        "resource": (
            resource_json(resource, seat_map=False)
            if resource is not None
            else {
                "id": allocation.resource_id,
                "title": allocation.resource_id,
                "seating": bool(allocation.seat_ids),
            }
        ),
        "seatIds": list(allocation.seat_ids),
        "seats": [seat_json(s) for s in seats_of(resource, allocation.seat_ids)] if resource else [],
        "paxCount": allocation.pax_count,
    }


class ResourcesCapability(Capability):
    id = RESOURCES
    docs = "https://docs.ventrata.com/capabilities/resources"

    def availability_fields(
        self, item: SlotAvailability, out: JSON, view: View, nested: Nested[SlotAvailability]
    ) -> None:
        out["hasResources"] = has_resources(item.option, item.slot)

    def booking_fields(
        self, details: BookingDetails, out: JSON, view: View, nested: Nested[BookingDetails]
    ) -> None:
        booking = details.booking
        held = booking.resource_allocations if booking.status in HOLDS_ALLOCATIONS else ()
        out["resourceAllocations"] = [allocation_json(details.option, a) for a in held]
