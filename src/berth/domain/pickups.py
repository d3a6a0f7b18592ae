"""Pickup points (octo/pickups): when a point is served for a departure, and its address, for
the capability's answers and the shop's form alike."""

from __future__ import annotations

from datetime import datetime, timedelta

from berth.domain.catalog.model import PickupPoint
from berth.domain.slots import Slot


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
