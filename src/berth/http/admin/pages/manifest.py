"""The manifest of one slot: who is booked on it, with their units and references, and the
blocks resellers hold on it (allotments)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from starlette.responses import Response

from berth.capabilities.registry import booking_lines, departure_parts
from berth.domain.audit import AuditFilter, departure_target
from berth.domain.bookings import Booking
from berth.domain.checkin import admitted_earlier
from berth.domain.staff import shown_name
from berth.http.admin.backoffice import manifest, resource_boards
from berth.http.admin.pages.dates import of_product
from berth.http.admin.pages.departures import capacity_words, manifest_path
from berth.http.admin.pages.errors import PageRoute
from berth.http.admin.pages.rendering import page
from berth.http.admin.pages.session import Staff, staff
from berth.http.admin.pickups import pickup_csv

router = APIRouter(route_class=PageRoute)


@router.get("/slots/{product_id}/{option_id}/{availability_id}")
async def slot_manifest(
    product_id: str, option_id: str, availability_id: str, request: Request, me: Staff = Depends(staff)
) -> Response:
    catalog = me.catalog.catalog
    found = await manifest(me.services, catalog, product_id, option_id, availability_id)
    connections = {c.id: c for c in await me.services.connections.list()}
    departure = await me.services.departures.get(catalog, product_id, option_id, availability_id)
    (blocks,) = await me.services.allotments.blocks_of(departure.product, departure.option, [departure.slot])
    affected = await me.services.departures.affected(catalog, product_id, option_id, availability_id)
    target = departure_target(product_id, option_id, availability_id).id
    cancels, _ = await me.services.audit.search(AuditFilter(target=target, action="departure.cancel"), 1, 0)
    return page(
        request, "manifest.html", me, section="dashboard", manifest=found, connections=connections,
        boards=resource_boards(found), local=of_product(found.occupancy.product), departure=departure,
        affected=affected, blocks=blocks, path=manifest_path(product_id, option_id, availability_id),
        capacity=capacity_words(departure), catalogue_capacity=capacity_words(departure, catalogue=True),
        parts=departure_parts(found.occupancy.option, found.expected),
        lines=lambda details: booking_lines(details, None),
        cancelled=cancels[0] if cancels else None,
        cancelled_by=shown_name(cancels[0].actor) if cancels else "",
        through=sum(len(through_gate(d.booking)) for d in found.expected),
        tickets=sum(len(d.booking.unit_items) for d in found.expected),
        through_gate=through_gate,
    )  # fmt: skip


def through_gate(booking: Booking) -> set[str]:
    """The booking's tickets through the gate (all of a booking redeemed whole)."""
    return admitted_earlier(booking, {})


@router.get("/slots/{product_id}/{option_id}/{availability_id}/pickups.csv")
async def slot_pickup_list(
    product_id: str, option_id: str, availability_id: str, me: Staff = Depends(staff)
) -> Response:
    """octo/pickups: the driver's pickup list of the departure, as the admin API gives it."""
    return await pickup_csv(me.services, me.catalog.catalog, product_id, option_id, availability_id)
