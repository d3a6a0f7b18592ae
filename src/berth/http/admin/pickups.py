"""octo/pickups for supplier staff: the driver's pickup list of one departure as CSV, ordered
by pickup time (admin API, and the back office's manifest)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable

from fastapi import APIRouter, Depends
from starlette.responses import Response

from berth.capabilities.pickups.driver_list import PickupStop, pickup_list
from berth.container import Services
from berth.domain.catalog import Catalog
from berth.domain.times import format_local
from berth.http.admin.backoffice import Manifest, guests, manifest
from berth.http.admin.exports import csv_download, file_name
from berth.http.admin.pages.rendering import unit_summary
from berth.http.context import services
from berth.http.octo.schemas import ADMIN_ERROR_RESPONSES
from berth.views.exports import Row, csv_file

router = APIRouter(responses=ADMIN_ERROR_RESPONSES)

COLUMNS = (
    "pickupFrom", "pickupTo", "pickupPointId", "pickupPoint", "address", "directions", "hotel", "hotelRoom",
    "leadGuest", "phoneNumber", "guests", "units", "status", "supplierReference", "resellerReference",
)  # fmt: skip


def _row(stop: PickupStop) -> Row:
    booking, point = stop.details.booking, stop.point
    return (
        format_local(stop.opens) if stop.opens is not None else "",
        format_local(stop.closes) if stop.closes is not None else "",
        stop.pickup.point_id or "",
        point.name if point is not None else "",
        stop.address or "",
        (point.directions or "") if point is not None else "",
        stop.pickup.hotel or "",
        stop.pickup.hotel_room or "",
        booking.contact.full_name or "",
        booking.contact.get("phoneNumber") or "",
        guests(stop.details),
        unit_summary(stop.details),
        booking.status.value,
        booking.supplier_reference,
        booking.reseller_reference or "",
    )


async def pickup_csv(
    svc: Services, catalog: Catalog, product_id: str, option_id: str, availability_id: str
) -> Response:
    """The pickup list of the guests expected on one departure, one row per booking."""
    found = await manifest(svc, catalog, product_id, option_id, availability_id)
    name = f"pickups-{product_id}-{option_id}-{found.occupancy.slot.start.strftime('%Y%m%dT%H%M')}.csv"
    return csv_download(csv_file(COLUMNS, _stops(found)), file_name(name))


async def _stops(found: Manifest) -> AsyncIterator[Iterable[Row]]:
    yield [_row(stop) for stop in pickup_list(found.expected)]


@router.get(
    "/slots/{productId}/{optionId}/{availabilityId}/pickups",
    summary="octo/pickups: the driver's pickup list of one departure (CSV, by pickup time)",
    response_class=Response,
    responses={200: {"content": {"text/csv": {}}}},
)
async def slot_pickups(
    productId: str, optionId: str, availabilityId: str, svc: Services = Depends(services)
) -> Response:
    catalog = (await svc.catalog.snapshot()).catalog
    return await pickup_csv(svc, catalog, productId, optionId, availabilityId)
