"""Departure operations for supplier staff: list departures with their places, close or
reopen one, give it a capacity of its own, note something on it, cancel it with every live
booking on it, its manifest as CSV, and its blocks (allotments), each releasable early.

Each action route calls one `DepartureService` method (a role check and an audit record can be
added per route)."""

from __future__ import annotations

from fastapi import APIRouter, Body, Depends
from pydantic import BaseModel, ConfigDict, Field
from starlette.responses import Response

from berth.capabilities.base import JSON
from berth.container import Services
from berth.domain.departures import NotThrough
from berth.domain.errors import Conflict, NotFound
from berth.domain.staff import Actor
from berth.http.admin.exports import bookings_csv, file_name, manifest_filter
from berth.http.admin.roles import operator
from berth.http.context import current_services
from berth.http.octo.schemas import ADMIN_ERROR_RESPONSES, OctoErrorBody
from berth.http.responses import json_response
from berth.http.types import Flag, IsoDate
from berth.services.departures import DepartureChange, day_range
from berth.views.departures import block_json, boarding_json, cancellation_json, departure_json

router = APIRouter(responses=ADMIN_ERROR_RESPONSES)
DEPARTURE = "/departures/{productId}/{optionId}/{availabilityId}"


class DeparturePatch(BaseModel):
    model_config = ConfigDict(extra="forbid")
    closed: Flag | None = Field(default=None, description="true: closed for sale; false: reopened")
    capacity: int | None = Field(
        default=None, ge=0, le=1_000_000, strict=True,
        description="Places for this departure instead of the catalogue's; null: the catalogue's again",
    )  # fmt: skip
    note: str | None = Field(default=None, max_length=2000, description="A note for staff")


class CancelDepartureBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    reason: str = Field(min_length=1, max_length=1000, description="Sent to resellers with each booking")
    notThrough: NotThrough | None = Field(
        default=None,
        description="Once boarding began (bookings partly through the gate): CANCEL their tickets not "
        "through the gate, or KEEP them; required then",
    )


@router.get("/departures", summary="Departures with their capacity, places held and confirmed, status")
async def list_departures(
    productId: str | None = None,
    optionId: str | None = None,
    localDate: IsoDate | None = None,
    localDateStart: IsoDate | None = None,
    localDateEnd: IsoDate | None = None,
    svc: Services = Depends(current_services),
) -> Response:
    first, last = day_range(localDate, localDateStart, localDateEnd)
    catalog = (await svc.catalog.snapshot()).catalog
    found = await svc.departures.find(catalog, productId, optionId, first, last)
    return json_response([departure_json(d) for d in found])


@router.get(DEPARTURE, summary="One departure")
async def get_departure(
    productId: str, optionId: str, availabilityId: str, svc: Services = Depends(current_services)
) -> Response:
    catalog = (await svc.catalog.snapshot()).catalog
    return json_response(
        departure_json(await svc.departures.get(catalog, productId, optionId, availabilityId))
    )


@router.patch(DEPARTURE, summary="Close or reopen a departure, set or clear its capacity, note something")
async def change_departure(
    productId: str,
    optionId: str,
    availabilityId: str,
    body: DeparturePatch,
    svc: Services = Depends(current_services),
    actor: Actor = Depends(operator),
) -> Response:
    change = DepartureChange(
        closed=body.closed,
        set_capacity="capacity" in body.model_fields_set,
        capacity=body.capacity,
        note=body.note,
    )
    catalog = (await svc.catalog.snapshot()).catalog
    departure = await svc.departures.change(catalog, productId, optionId, availabilityId, change, actor=actor)
    return json_response(departure_json(departure))


@router.post(
    DEPARTURE + "/cancel",
    summary="Cancel every ON_HOLD, PENDING and CONFIRMED booking of a departure, and close it",
    description=(
        "A booking partly through the gate (boarding began) is used and stays; its tickets not "
        "through are cancelled (`notThrough`: CANCEL; the booking keeps the tickets admitted, "
        "REDEEMED, and the reseller gets a booking_update, the guest an email where the booking "
        "asked for emails) or kept (KEEP). Without `notThrough` then, UNPROCESSABLE_ENTITY and "
        "nothing changes."
    ),
)
async def cancel_departure(
    productId: str,
    optionId: str,
    availabilityId: str,
    body: CancelDepartureBody = Body(),
    svc: Services = Depends(current_services),
    actor: Actor = Depends(operator),
) -> Response:
    catalog = (await svc.catalog.snapshot()).catalog
    done = await svc.departures.cancel(
        catalog,
        productId,
        optionId,
        availabilityId,
        body.reason,
        actor=actor,
        not_through_tickets=body.notThrough,
    )
    return json_response(cancellation_json(done))


@router.get(DEPARTURE + "/affected", summary="What cancelling the departure would cancel now")
async def affected(
    productId: str, optionId: str, availabilityId: str, svc: Services = Depends(current_services)
) -> Response:
    catalog = (await svc.catalog.snapshot()).catalog
    found = await svc.departures.affected(catalog, productId, optionId, availabilityId)
    return json_response(
        {
            "bookings": found.bookings,
            "connectionIds": list(found.connection_ids),
            "ticketsNotThrough": [boarding_json(b) for b in found.boarding],
        }
    )


@router.get(
    DEPARTURE + "/manifest.csv",
    summary="The departure's manifest as CSV: every booking on it, streamed",
    response_class=Response,
    responses={200: {"content": {"text/csv": {}}}},
)
async def manifest_csv(
    productId: str, optionId: str, availabilityId: str, svc: Services = Depends(current_services)
) -> Response:
    catalog = (await svc.catalog.snapshot()).catalog
    departure = await svc.departures.get(catalog, productId, optionId, availabilityId)
    name = file_name("manifest", productId, optionId, departure.slot.start.strftime("%Y-%m-%d-%H%M")) + ".csv"
    return bookings_csv(svc, catalog, manifest_filter(departure), name)


async def _blocks(svc: Services, productId: str, optionId: str, availabilityId: str) -> list[JSON]:
    catalog = (await svc.catalog.snapshot()).catalog
    departure = await svc.departures.get(catalog, productId, optionId, availabilityId)
    (uses,) = await svc.allotments.blocks_of(departure.product, departure.option, [departure.slot])
    names = {c.id: c.name for c in await svc.connections.list()} if uses else {}
    return [block_json(use, names) for use in uses]


@router.get(
    DEPARTURE + "/blocks",
    summary="The departure's blocks: each connection's allotment on it, what it uses and when it releases",
    description=(
        "One entry per connection whose contract holds places on the departure: `places`, `used` "
        "(what its bookings hold of them), `unused`, `releaseAt` (UTC), `released` (by its time or "
        "early) and `releasedEarly` (by staff)."
    ),
)
async def departure_blocks(
    productId: str, optionId: str, availabilityId: str, svc: Services = Depends(current_services)
) -> Response:
    return json_response(await _blocks(svc, productId, optionId, availabilityId))


@router.post(
    DEPARTURE + "/blocks/{connectionId}/release",
    summary="Release a connection's block on the departure now: its unused places go back on general sale",
    description=(
        "Answers the block, released. 404 NOT_FOUND when the connection has no block on the "
        "departure; 409 CONFLICT when the block is released already (early, or its release time "
        "has come). In the audit trail as `allotment.release`."
    ),
    responses={409: {"model": OctoErrorBody, "description": "CONFLICT: the block is released already"}},
)
async def release_block(
    productId: str,
    optionId: str,
    availabilityId: str,
    connectionId: str,
    svc: Services = Depends(current_services),
    actor: Actor = Depends(operator),
) -> Response:
    catalog = (await svc.catalog.snapshot()).catalog
    departure = await svc.departures.get(catalog, productId, optionId, availabilityId)
    released = await svc.allotments.release_early(
        departure.product, departure.option, departure.slot, connectionId, actor=actor
    )
    if not released:
        raise Conflict(
            f"The block of connection {connectionId} on availability {availabilityId} is released already",
            connectionId=connectionId,
        )
    found = await _blocks(svc, productId, optionId, availabilityId)
    block = next((b for b in found if b["connectionId"] == connectionId), None)
    if block is None:  # its contract changed since
        raise NotFound(f"Connection {connectionId} has no block on availability {availabilityId}")
    return json_response(block)
