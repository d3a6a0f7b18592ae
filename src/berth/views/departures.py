"""A departure as the admin API shows it."""

from __future__ import annotations

from collections.abc import Mapping

from berth.capabilities.base import JSON
from berth.domain.allotments import BlockUse
from berth.domain.times import format_local, format_utc, format_utc_or_none
from berth.read_models.departures import Boarding, Departure, DepartureCancellation


def departure_json(departure: Departure) -> JSON:
    slot, state = departure.slot, departure.state
    return {
        "productId": departure.product.id,
        "optionId": departure.option.id,
        "availabilityId": slot.id,
        "localDateTimeStart": format_local(slot.start),
        "localDateTimeEnd": format_local(slot.end),
        "status": state.status.value,
        "available": state.available,
        "vacancies": state.vacancies,
        "capacity": state.capacity,
        "catalogCapacity": slot.capacity,
        "capacityOverride": departure.capacity_override,
        "placesHeld": departure.held,
        "placesConfirmed": departure.confirmed,
        "closed": departure.closed,
        "closedInCatalog": slot.closed,
        "note": departure.note,
        "updatedAt": format_utc_or_none(departure.override.updated_at if departure.override else None),
    }


def boarding_json(boarding: Boarding) -> JSON:
    """A booking partly through the gate, and its tickets not through (unit item uuids)."""
    return {
        "bookingId": boarding.booking.id,
        "supplierReference": boarding.booking.supplier_reference,
        "unitItemUuids": [item.uuid for item in boarding.waiting],
    }


def cancellation_json(done: DepartureCancellation) -> JSON:
    """`ticketsNotThrough`: the bookings partly through the gate, whose tickets not through
    were cancelled or kept as `notThrough` says."""
    return {
        "departure": departure_json(done.departure),
        "cancelledBookingIds": list(done.cancelled),
        "connectionIds": list(done.connection_ids),
        "notThrough": done.not_through.value if done.not_through is not None else None,
        "ticketsNotThrough": [boarding_json(b) for b in done.boarding],
    }


def block_json(use: BlockUse, names: Mapping[str, str]) -> JSON:
    """A block (one connection's allotment) on a departure; `names`: connection names by id."""
    block = use.block
    return {
        "connectionId": block.connection_id,
        "connectionName": names.get(block.connection_id),
        "places": block.places,
        "used": use.used,
        "unused": use.unused,
        "releaseAt": format_utc(block.release_at),
        "released": use.released,
        "releasedEarly": use.released_early,
    }
