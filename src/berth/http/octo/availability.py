"""POST /availability, /availability/calendar and their batch forms."""

from __future__ import annotations

from collections.abc import Awaitable, Hashable
from typing import Annotated, Any, TypeVar

import orjson
from fastapi import APIRouter, Body, Depends
from pydantic import Field
from starlette.responses import Response

from berth.capabilities.ids import OFFERS, RENTALS
from berth.container import Services
from berth.domain.errors import OctoError
from berth.http.context import OctoRequest, current_services, octo_request, octo_request_with_mappings
from berth.http.octo.common import octo_response
from berth.http.octo.requests import AvailabilityBody, CalendarBody
from berth.http.octo.routing import Call, OctoRoute, add_routes
from berth.http.octo.schemas import ERROR_RESPONSES, AvailabilityOut, CalendarDayOut
from berth.read_models.availability import CalendarDay, SlotAvailability
from berth.services.allotments import Viewer
from berth.services.availability import AvailabilityQuery
from berth.views.availability import availability_view, calendar_view

router = APIRouter(responses=ERROR_RESPONSES)
T = TypeVar("T")
BATCH_LIMIT = 100


async def _numbered(index: int, work: Awaitable[T]) -> T:
    """Await one request of a batch; its errors say which request failed."""
    try:
        return await work
    except OctoError as exc:
        exc.message = f"Request [{index}]: {exc.message}"
        raise


def viewer_of(octo: OctoRequest) -> Viewer:
    return Viewer(octo.connection.id, octo.connection.contract.stop_sells)


async def _answer_key(kind: str, octo: OctoRequest, svc: Services, query: AvailabilityQuery) -> Hashable:
    """Everything an availability answer depends on but the database and the clock: the
    catalogue as the connection's contract sells it (its stop-sells included), the question,
    how it is serialized (a connection's mapped rows included), and who asks where blocks
    make each connection's view its own."""
    # The mapped rows themselves: a mapping saved changes the answer's key, not its places.
    mapped_for = (octo.connection.id, octo.view.mappings) if octo.view.mappings is not None else None
    book = await svc.allotments.book()
    blocks_for = octo.connection.id if query.product_id and book.has_blocks(query.product_id) else None
    return (
        kind,
        octo.snapshot.version,
        octo.snapshot.scope,
        query,
        octo.view.shared_key,
        mapped_for,
        blocks_for,
    )


def _offered(octo: OctoRequest, body: AvailabilityBody | CalendarBody) -> tuple[str, str | None] | None:
    """What an answer's offers depend on (octo/offers): the connection, and the code sent."""
    return (octo.connection.id, body.offerCode) if octo.view.has(OFFERS) else None


async def _check(octo: OctoRequest, svc: Services, body: AvailabilityBody) -> list[SlotAvailability]:
    items = await svc.availability.check(
        octo.snapshot.catalog, body.query(octo.view.has(RENTALS)), viewer_of(octo)
    )
    if octo.view.has(OFFERS):
        return await svc.offers.on_departures(items, octo.connection.id, body.offerCode)
    return items


async def _days(octo: OctoRequest, svc: Services, body: CalendarBody) -> list[CalendarDay]:
    days = await svc.availability.calendar(
        octo.snapshot.catalog, body.query(octo.view.has(RENTALS)), viewer_of(octo)
    )
    if octo.view.has(OFFERS):
        return await svc.offers.on_departures(days, octo.connection.id, body.offerCode)
    return days


async def availability_answer(octo: OctoRequest, svc: Services, body: AvailabilityBody) -> Response:
    query = body.query(octo.view.has(RENTALS))

    async def compute() -> bytes:
        return orjson.dumps([availability_view(item, octo.view) for item in await _check(octo, svc, body)])

    key = (await _answer_key("check", octo, svc, query), _offered(octo, body))
    reach = svc.availability.reach(octo.snapshot.catalog, query)
    return octo_response(octo, encoded=await svc.answers.answer(key, compute, reach))


async def calendar_answer(octo: OctoRequest, svc: Services, body: CalendarBody) -> Response:
    query = body.query(octo.view.has(RENTALS))

    async def compute() -> bytes:
        return orjson.dumps([calendar_view(day, octo.view) for day in await _days(octo, svc, body)])

    key = (await _answer_key("calendar", octo, svc, query), _offered(octo, body))
    reach = svc.availability.reach(octo.snapshot.catalog, query)
    return octo_response(octo, encoded=await svc.answers.answer(key, compute, reach))


async def _availability(call: Call) -> Response:
    return await availability_answer(call.octo, call.svc, call.body)


async def _calendar(call: Call) -> Response:
    return await calendar_answer(call.octo, call.svc, call.body)


CHECK = OctoRoute(
    "POST", "/availability", "check_availability", "Check availability", list[AvailabilityOut],
    _availability, AvailabilityBody, mappings=True,
)  # fmt: skip
CALENDAR = OctoRoute(
    "POST", "/availability/calendar", "availability_calendar", "Availability per day", list[CalendarDayOut],
    _calendar, CalendarBody,
)  # fmt: skip
add_routes(router, [CHECK, CALENDAR])


@router.post(
    "/availability/batch",
    response_model=list[AvailabilityOut],
    summary="Several availability checks; one flat list of rows, each with productId and optionId",
)
async def check_availability_batch(
    body: Annotated[list[AvailabilityBody], Body(), Field(min_length=1, max_length=BATCH_LIMIT)],
    octo: OctoRequest = Depends(octo_request_with_mappings),
    svc: Services = Depends(current_services),
) -> Response:
    rows: list[dict[str, Any]] = []
    for index, request in enumerate(body):
        items = await _numbered(index, _check(octo, svc, request))
        rows.extend(
            {"productId": item.product.id, "optionId": item.option.id, **availability_view(item, octo.view)}
            for item in items
        )
    return octo_response(octo, rows)


@router.post(
    "/availability/calendar/batch",
    response_model=list[CalendarDayOut],
    summary="Several calendars; one flat list of days, each with productId and optionId",
)
async def availability_calendar_batch(
    body: Annotated[list[CalendarBody], Body(), Field(min_length=1, max_length=BATCH_LIMIT)],
    octo: OctoRequest = Depends(octo_request),
    svc: Services = Depends(current_services),
) -> Response:
    rows: list[dict[str, Any]] = []
    for index, request in enumerate(body):
        days = await _numbered(index, _days(octo, svc, request))
        rows.extend(
            {"productId": day.product.id, "optionId": day.option.id, **calendar_view(day, octo.view)}
            for day in days
        )
    return octo_response(octo, rows)
