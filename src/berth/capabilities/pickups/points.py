"""Pickup points as OCTO shows them, and when a point is served for a departure."""

from __future__ import annotations

from datetime import datetime, timedelta

from berth.capabilities.base import JSON
from berth.domain.catalog.model import PickupPoint
from berth.domain.slots import Slot
from berth.domain.times import format_local


def pickup_window(point: PickupPoint, slot: Slot) -> tuple[datetime, datetime]:
    """When guests are collected at `point` for `slot` (local time of the departure)."""
    opens = slot.start - timedelta(minutes=point.minutes_before)
    return opens, opens + timedelta(minutes=point.window_minutes)


def address_of(point: PickupPoint) -> str | None:
    """The address as declared, else its parts joined (None: no address at all)."""
    if point.address:
        return point.address
    parts = (point.street, point.postal_code, point.locality, point.region, point.state, point.country)
    return ", ".join(p for p in parts if p) or None


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
