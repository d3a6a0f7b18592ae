"""The booking routes: reserve, get, list, update, confirm, extend, cancel."""

from __future__ import annotations

from dataclasses import replace

from fastapi import APIRouter, Body, Depends, Query
from starlette.responses import Response

from berth.capabilities.ids import RENTALS, RESOURCES
from berth.container import Services
from berth.domain.errors import BadRequest, InvalidBookingUuid
from berth.domain.languages import accepted_locales
from berth.http.asgi import header
from berth.http.context import OctoRequest, current_services, octo_request_with_mappings
from berth.http.octo.common import octo_response
from berth.http.octo.requests import CancelBody, ConfirmBody, ExtendBody, ReserveBody, UpdateBody, is_uuid
from berth.http.octo.routing import Call, OctoRoute, add_routes
from berth.http.octo.schemas import ERROR_RESPONSES, BookingOut
from berth.http.types import MAX_OFFSET, IsoDate
from berth.read_models.bookings import BookingDetails
from berth.store.bookings_reads import BookingFilter
from berth.views.bookings import booking_view, bookings_view

router = APIRouter(responses=ERROR_RESPONSES)


def _one(octo: OctoRequest, svc: Services, details: BookingDetails) -> Response:
    return octo_response(octo, booking_view(details, octo.view))


def _known_uuid(uuid: str) -> str:
    if not is_uuid(uuid):
        raise InvalidBookingUuid(uuid, f"{uuid!r} is not a booking uuid")
    return uuid


async def reserve_answer(
    octo: OctoRequest, svc: Services, body: ReserveBody, octo_env: str | None
) -> Response:
    test_mode = (octo_env or "").lower() == "test"
    reservation = body.reservation(
        resources=octo.view.has(RESOURCES),
        rentals=octo.view.has(RENTALS),
        capabilities=octo.view.capabilities,
    )
    details = await svc.bookings.reserve(
        octo.snapshot.catalog, octo.connection.id, reservation, test_mode=test_mode,
        capabilities=octo.view.capabilities,
    )  # fmt: skip
    return _one(octo, svc, details)


async def confirm_answer(
    octo: OctoRequest, svc: Services, uuid: str, body: ConfirmBody, accept_language: str | None = None
) -> Response:
    confirmation = body.confirmation(octo.view.has(RESOURCES), octo.view.has(RENTALS), octo.view.capabilities)
    # The guest's tickets and emails are in these languages when the contact names no locales.
    confirmation = replace(confirmation, request_locales=accepted_locales(accept_language))
    details = await svc.bookings.confirm(
        octo.snapshot.catalog, octo.connection.id, _known_uuid(uuid), confirmation
    )
    return _one(octo, svc, details)


async def _reserve(call: Call) -> Response:
    return await reserve_answer(call.octo, call.svc, call.body, header(call.scope, b"octo-env"))


RESERVE = OctoRoute(
    "POST", "/bookings", "reserve", "Reserve: hold places (ON_HOLD)", BookingOut, _reserve, ReserveBody,
    mappings=True, headers=("Octo-Env",),
)  # fmt: skip
add_routes(router, [RESERVE])


@router.get("/bookings", response_model=list[BookingOut], summary="Find your bookings")
async def list_bookings(
    resellerReference: str | None = Query(default=None, max_length=1000),
    supplierReference: str | None = Query(default=None, max_length=100),
    localDate: IsoDate | None = None,
    localDateStart: IsoDate | None = None,
    localDateEnd: IsoDate | None = None,
    productId: str | None = Query(default=None, max_length=200),
    optionId: str | None = Query(default=None, max_length=200),
    limit: int | None = Query(
        default=None,
        ge=1,
        description="Berth extension: answer at most this many (up to BERTH_MAX_LIST_ITEMS)",
    ),
    offset: int = Query(
        default=0, ge=0, le=MAX_OFFSET, description="Berth extension: skip this many (with limit)"
    ),
    octo: OctoRequest = Depends(octo_request_with_mappings),
    svc: Services = Depends(current_services),
) -> Response:
    if (localDateStart is None) != (localDateEnd is None):
        raise BadRequest("localDateStart and localDateEnd must be sent together")
    if not (resellerReference or supplierReference or localDate or localDateStart):
        raise BadRequest(
            "Filter by resellerReference, supplierReference, localDate, or localDateStart with localDateEnd"
        )
    if localDateStart is not None and localDateEnd is not None:
        if localDateEnd < localDateStart:
            raise BadRequest(f"localDateEnd {localDateEnd} is before localDateStart {localDateStart}")
        days, longest = (localDateEnd - localDateStart).days + 1, svc.settings.max_range_days
        if days > longest:
            raise BadRequest(f"The range covers {days} days; at most {longest} are allowed")
    cap = svc.settings.max_list_items
    if limit is not None and limit > cap:
        raise BadRequest(f"limit must be at most {cap}")
    where = BookingFilter(
        connection_id=octo.connection.id,
        reseller_reference=resellerReference,
        supplier_reference=supplierReference,
        date_from=localDate or localDateStart,
        date_to=localDate or localDateEnd,
        product_id=productId,
        option_id=optionId,
    )
    found, more = await svc.bookings.find_page(
        octo.snapshot.catalog, where, limit=limit or cap, offset=offset
    )
    if more and limit is None:  # never a silently shortened list
        raise BadRequest(f"More than {cap} bookings match: narrow the filter, or page with limit and offset")
    return octo_response(octo, bookings_view(found, octo.view))


@router.get("/bookings/{uuid}", response_model=BookingOut, summary="One of your bookings")
async def get_booking(
    uuid: str,
    octo: OctoRequest = Depends(octo_request_with_mappings),
    svc: Services = Depends(current_services),
) -> Response:
    return _one(
        octo, svc, await svc.bookings.get(octo.snapshot.catalog, octo.connection.id, _known_uuid(uuid))
    )


@router.patch("/bookings/{uuid}", response_model=BookingOut, summary="Change a booking before its cutoff")
async def update_booking(
    uuid: str,
    body: UpdateBody,
    octo: OctoRequest = Depends(octo_request_with_mappings),
    svc: Services = Depends(current_services),
) -> Response:
    changes = body.update(octo.view.has(RESOURCES), octo.view.has(RENTALS), octo.view.capabilities)
    details = await svc.bookings.update(octo.snapshot.catalog, octo.connection.id, _known_uuid(uuid), changes)
    return _one(octo, svc, details)


async def _confirm(call: Call) -> Response:
    return await confirm_answer(
        call.octo, call.svc, call.params["uuid"], call.body, header(call.scope, b"accept-language")
    )


CONFIRM = OctoRoute(
    "POST", "/bookings/{uuid}/confirm", "confirm_booking", "Confirm a held booking", BookingOut, _confirm,
    ConfirmBody, mappings=True, headers=("Accept-Language",),
)  # fmt: skip
add_routes(router, [CONFIRM])


@router.post("/bookings/{uuid}/extend", response_model=BookingOut, summary="Extend a hold")
async def extend_booking(
    uuid: str,
    body: ExtendBody | None = Body(default=None),
    octo: OctoRequest = Depends(octo_request_with_mappings),
    svc: Services = Depends(current_services),
) -> Response:
    minutes = body.expirationMinutes if body else None
    details = await svc.bookings.extend(octo.snapshot.catalog, octo.connection.id, _known_uuid(uuid), minutes)
    return _one(octo, svc, details)


async def _cancel(uuid: str, body: CancelBody | None, octo: OctoRequest, svc: Services) -> Response:
    # `force` is the supplier's override of the cutoff; from a reseller it is ignored.
    reason = body.reason if body else None
    details = await svc.bookings.cancel(octo.snapshot.catalog, octo.connection.id, _known_uuid(uuid), reason)
    return _one(octo, svc, details)


@router.post("/bookings/{uuid}/cancel", response_model=BookingOut, summary="Cancel before the cutoff")
async def cancel_booking(
    uuid: str,
    body: CancelBody | None = Body(default=None),
    octo: OctoRequest = Depends(octo_request_with_mappings),
    svc: Services = Depends(current_services),
) -> Response:
    return await _cancel(uuid, body, octo, svc)


@router.delete("/bookings/{uuid}", response_model=BookingOut, summary="Cancel (alias of POST …/cancel)")
async def delete_booking(
    uuid: str,
    body: CancelBody | None = Body(default=None),
    octo: OctoRequest = Depends(octo_request_with_mappings),
    svc: Services = Depends(current_services),
) -> Response:
    return await _cancel(uuid, body, octo, svc)
