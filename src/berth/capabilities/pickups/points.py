"""Pickup points as OCTO shows them (when a point is served, and its address:
`berth.domain.pickups`)."""

from __future__ import annotations

from berth.capabilities.base import JSON
from berth.domain.catalog.model import PickupPoint
from berth.domain.pickups import address_of, pickup_window
from berth.domain.slots import Slot
from berth.domain.times import format_local


def point_view(point: PickupPoint, slot: Slot | None) -> JSON:
    """OCTO `PickupPoint`; its times are those of `slot` (null where no departure is named)."""
    window = pickup_window(point, slot) if slot is not None else None
    return {
        "id": point.id,
        "name": point.name,
        "directions": point.directions,
        "address": address_of(point),
        "latitude": point.latitude,
        "longitude": point.longitude,
        "localDateTime": format_local(window[0]) if window else None,
        "localDateTimeTo": format_local(window[1]) if window else None,
        "googlePlaceId": point.google_place_id,
        "street": point.street,
        "postalCode": point.postal_code,
        "locality": point.locality,
        "region": point.region,
        "state": point.state,
        "country": point.country,
    }
