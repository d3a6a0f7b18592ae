"""The manifest of one slot: who is booked on it, with their units and references, and the
blocks resellers hold on it (allotments)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from starlette.responses import Response

from berth.capabilities.registry import booking_lines, departure_parts
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
    return page(
        request, "manifest.html", me, section="dashboard", manifest=found, connections=connections,
        boards=resource_boards(found), local=of_product(found.occupancy.product), departure=departure,
        affected=affected, blocks=blocks, path=manifest_path(product_id, option_id, availability_id),
        capacity=capacity_words(departure), catalogue_capacity=capacity_words(departure, catalogue=True),
        parts=departure_parts(found.occupancy.option, found.expected),
        lines=lambda details: booking_lines(details, None),
    )  # fmt: skip


@router.get("/slots/{product_id}/{option_id}/{availability_id}/pickups.csv")
async def slot_pickup_list(
    product_id: str, option_id: str, availability_id: str, me: Staff = Depends(staff)
) -> Response:
    """octo/pickups: the driver's pickup list of the departure, as the admin API gives it."""
    return await pickup_csv(me.services, me.catalog.catalog, product_id, option_id, availability_id)
