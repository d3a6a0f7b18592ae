"""Bookings across every connection, for supplier staff: search, history, redeem, decide
PENDING ones, cancel past the cutoff."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Query
from pydantic import BaseModel, ConfigDict, Field
from starlette.responses import Response

from berth.capabilities.base import View
from berth.capabilities.ids import MAPPINGS
from berth.capabilities.registry import CAPABILITIES
from berth.container import Services
from berth.domain import lengths
from berth.domain.staff import Actor
from berth.http.admin.exports import bookings_csv
from berth.http.admin.roles import operator
from berth.http.context import current_services
from berth.http.octo.schemas import ADMIN_ERROR_RESPONSES
from berth.http.responses import json_response
from berth.http.types import MAX_OFFSET, Flag, IsoDate
from berth.read_models.bookings import BookingDetails
from berth.store.bookings_reads import BookingFilter
from berth.views.bookings import booking_view

router = APIRouter(responses=ADMIN_ERROR_RESPONSES)
# Every capability's fields but vendor/mappings: mapping rows belong to one connection and staff
# see them under /admin/api/mappings.
STAFF_VIEW = View(capabilities=frozenset(c.id for c in CAPABILITIES if c.id != MAPPINGS))


class RejectBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    reason: str | None = Field(default=None, max_length=1000)


class CancelBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    reason: str | None = Field(default=None, max_length=1000)
    force: Flag = Field(default=False, description="Cancel even after the cancellation cutoff")


class UndoAdmissionBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    unitItemUuids: list[Annotated[str, Field(max_length=lengths.UNIT_ITEM_UUID)]] = Field(
        min_length=1, max_length=500, description="The tickets whose admission at the gate to take back"
    )
    reason: str = Field(
        min_length=1, max_length=1000, description="Why: kept in the booking's history and the audit trail"
    )


def search_filter(
    reference: str | None = Query(default=None, description="Supplier or reseller reference, or uuid"),
    localDate: IsoDate | None = None,
    localDateStart: IsoDate | None = None,
    localDateEnd: IsoDate | None = None,
    productId: str | None = None,
    status: str | None = None,
    connectionId: str | None = None,
) -> BookingFilter:
    """The bookings search's filters (the search and its CSV export)."""
    return BookingFilter(
        connection_id=connectionId,
        reference=reference,
        date_from=localDate or localDateStart,
        date_to=localDate or localDateEnd,
        product_id=productId,
        status=status,
    )


def _staff_json(svc: Services, details: BookingDetails) -> dict[str, Any]:
    out = booking_view(details, STAFF_VIEW)
    out["connectionId"] = details.booking.connection_id
    return out


@router.get("/bookings", summary="Search bookings of every connection")
async def search_bookings(
    where: BookingFilter = Depends(search_filter),
    limit: int = Query(default=50, ge=1, le=500),
    offset: int = Query(default=0, ge=0, le=MAX_OFFSET),
    svc: Services = Depends(current_services),
) -> Response:
    catalog = (await svc.catalog.snapshot()).catalog
    found, total = await svc.staff_bookings.search(catalog, where, limit, offset)
    return json_response(
        {"total": total, "limit": limit, "offset": offset, "bookings": [_staff_json(svc, d) for d in found]}
    )


@router.get(
    "/bookings.csv",
    summary="The bookings search as CSV (the same filters), streamed",
    response_class=Response,
    responses={200: {"content": {"text/csv": {}}}},
)
async def export_bookings(
    where: BookingFilter = Depends(search_filter),
    svc: Services = Depends(current_services),
) -> Response:
    catalog = (await svc.catalog.snapshot()).catalog
    return bookings_csv(svc, catalog, where, "bookings.csv")


@router.get("/bookings/{bookingId}", summary="One booking with its history")
async def get_booking(bookingId: str, svc: Services = Depends(current_services)) -> Response:
    catalog = (await svc.catalog.snapshot()).catalog
    details, history = await svc.staff_bookings.get(catalog, bookingId)
    return json_response({"booking": _staff_json(svc, details), "history": history})


@router.post("/bookings/{bookingId}/redeem", summary="Mark a CONFIRMED booking REDEEMED")
async def redeem(
    bookingId: str, actor: Actor = Depends(operator), svc: Services = Depends(current_services)
) -> Response:
    catalog = (await svc.catalog.snapshot()).catalog
    return json_response(_staff_json(svc, await svc.staff_bookings.redeem(catalog, bookingId, actor=actor)))


@router.post("/bookings/{bookingId}/accept", summary="Accept a PENDING booking (CONFIRMED)")
async def accept(
    bookingId: str, actor: Actor = Depends(operator), svc: Services = Depends(current_services)
) -> Response:
    catalog = (await svc.catalog.snapshot()).catalog
    return json_response(_staff_json(svc, await svc.staff_bookings.accept(catalog, bookingId, actor=actor)))


@router.post("/bookings/{bookingId}/reject", summary="Reject a PENDING booking (REJECTED, places released)")
async def reject(
    bookingId: str,
    body: RejectBody | None = Body(default=None),
    actor: Actor = Depends(operator),
    svc: Services = Depends(current_services),
) -> Response:
    catalog = (await svc.catalog.snapshot()).catalog
    details = await svc.staff_bookings.reject(catalog, bookingId, body.reason if body else None, actor=actor)
    return json_response(_staff_json(svc, details))


@router.post("/bookings/{bookingId}/cancel", summary="Cancel a booking (force: even after the cutoff)")
async def cancel(
    bookingId: str,
    body: CancelBody | None = Body(default=None),
    actor: Actor = Depends(operator),
    svc: Services = Depends(current_services),
) -> Response:
    catalog = (await svc.catalog.snapshot()).catalog
    details = await svc.staff_bookings.cancel(
        catalog, bookingId, body.reason if body else None, actor=actor, force=bool(body and body.force)
    )
    return json_response(_staff_json(svc, details))


@router.post(
    "/bookings/{bookingId}/undo-admission",
    summary="Take back the admission of tickets at the gate, however long ago, with a reason",
    description=(
        "The tickets are no longer admitted and the booking is CONFIRMED again (its "
        "`utcRedeemedAt` cleared), as the gate's own undo within 10 minutes does; the reason is "
        "kept in the booking's history and the audit trail (`checkin.undo`). A ticket not "
        "admitted at the gate is UNPROCESSABLE_ENTITY, one not of the booking BAD_REQUEST. "
        "Answers the booking."
    ),
)
async def undo_admission(
    bookingId: str,
    body: UndoAdmissionBody,
    actor: Actor = Depends(operator),
    svc: Services = Depends(current_services),
) -> Response:
    catalog = (await svc.catalog.snapshot()).catalog
    await svc.checkin.take_back(catalog, bookingId, body.unitItemUuids, body.reason, actor=actor)
    details, _ = await svc.staff_bookings.get(catalog, bookingId)
    return json_response(_staff_json(svc, details))
