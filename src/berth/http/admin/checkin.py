"""Check-in at the gate over the admin API: scan a code (operator), look one up (viewer), undo
an admission (operator), and a departure's parties for a scanner to keep offline."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, ConfigDict, Field
from starlette.responses import Response

from berth.container import Services
from berth.domain import lengths
from berth.domain.catalog import Catalog
from berth.domain.checkin import MAX_CODE_LENGTH, MAX_DEVICE_LENGTH, Departure, check_nonce, clean_code
from berth.domain.staff import Actor
from berth.http.admin.roles import operator, viewer
from berth.http.context import current_services
from berth.http.octo.schemas import ADMIN_ERROR_RESPONSES, OctoErrorBody
from berth.http.responses import json_response
from berth.http.types import Flag
from berth.services.checkin import ScanRequest
from berth.views.checkin import departure_parties_json, scan_json, undo_json

router = APIRouter(responses=ADMIN_ERROR_RESPONSES)


class GateDeparture(BaseModel):
    model_config = ConfigDict(extra="forbid")
    productId: str = Field(min_length=1, max_length=100)
    optionId: str = Field(min_length=1, max_length=100)
    availabilityId: str = Field(min_length=1, max_length=40)


class ScanBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    code: str = Field(max_length=MAX_CODE_LENGTH * 2, description="What was scanned or typed")
    nonce: str = Field(
        max_length=100, description="Made once per scan by the scanner and sent again on each retry"
    )
    departure: GateDeparture | None = Field(default=None, description="The departure the gate admits to")
    unitItemUuids: list[Annotated[str, Field(max_length=lengths.UNIT_ITEM_UUID)]] | None = Field(
        default=None, max_length=500, description="A voucher's tickets to admit (default: all)"
    )
    device: str | None = Field(default=None, max_length=MAX_DEVICE_LENGTH, description="The gate device")
    admitAnotherDay: Flag = Field(
        default=False,
        description="Admit the tickets even though their departure is on another day than today "
        '(staff\'s "Admit anyway" after an ANOTHER_DAY answer)',
    )

    def request(self) -> ScanRequest:
        gate = self.departure
        return ScanRequest(
            code=clean_code(self.code),
            nonce=check_nonce(self.nonce),
            departure=Departure(gate.productId, gate.optionId, gate.availabilityId) if gate else None,
            unit_item_uuids=tuple(self.unitItemUuids) if self.unitItemUuids else None,
            device=(self.device or "").strip() or None,
            admit_another_day=self.admitAnotherDay,
        )


class UndoBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    nonce: str = Field(max_length=100, description="The nonce of the scan whose admission to take back")


async def _catalog(svc: Services) -> Catalog:
    return (await svc.catalog.snapshot()).catalog


async def departure_parties(svc: Services, departure: Departure) -> Response:
    catalog = await _catalog(svc)
    slot, parties = await svc.checkin.parties(catalog, departure)
    gate = {
        "productId": departure.product_id,
        "optionId": departure.option_id,
        "availabilityId": slot.id,
    }
    today = svc.clock().astimezone(slot.start.tzinfo).date()
    return json_response(departure_parties_json(slot, parties, gate, today))


@router.post(
    "/checkin",
    summary="Scan a code at the gate: admit the tickets it names that are not through yet",
    description=(
        "`result`: ADMITTED, ALREADY_ADMITTED (with who admitted the ticket and when), "
        "ANOTHER_DAY (tickets of a departure on another day than today: nothing admitted unless "
        "`admitAnotherDay` is true), NOT_THIS_DEPARTURE, CANCELLED, NOT_CONFIRMED or UNKNOWN_CODE. "
        "The same `nonce` sent again "
        "with the same body is answered the same (`replayed`) and admits nothing more; UNDONE when "
        "the admission was undone since (it no longer counts). Sent with another code, departure "
        "or tickets, the nonce is refused with 409 CONFLICT. A code is looked for as given, then "
        "read as one of Berth's references: spaces dropped, O as 0, I and L as 1."
    ),
    responses={409: {"model": OctoErrorBody, "description": "CONFLICT: the nonce was used by another scan"}},
)
async def scan(
    body: ScanBody, actor: Actor = Depends(operator), svc: Services = Depends(current_services)
) -> Response:
    outcome = await svc.checkin.scan(await _catalog(svc), body.request(), actor=actor)
    return json_response(scan_json(outcome))


@router.post(
    "/checkin/lookup",
    summary="What a ticket is, admitting nothing (viewer role)",
    description=(
        "`result`: VALID where a scan would admit the tickets the code names, else what a scan "
        "would answer (ALREADY_ADMITTED, ANOTHER_DAY, NOT_THIS_DEPARTURE, CANCELLED, "
        "NOT_CONFIRMED, UNKNOWN_CODE). It admits nothing."
    ),
)
async def lookup(
    body: ScanBody, _: Actor = Depends(viewer), svc: Services = Depends(current_services)
) -> Response:
    outcome = await svc.checkin.lookup(await _catalog(svc), body.request())
    return json_response(scan_json(outcome))


@router.post(
    "/checkin/undo",
    summary="Take back what a scan admitted, within 10 minutes",
    description="`undone`: the tickets taken back; `booking`: the party as it stands now.",
)
async def undo(
    body: UndoBody, actor: Actor = Depends(operator), svc: Services = Depends(current_services)
) -> Response:
    outcome = await svc.checkin.undo(await _catalog(svc), check_nonce(body.nonce), actor=actor)
    return json_response(undo_json(outcome))


@router.get("/checkin/departure", summary="A departure's parties and running count, for the scanner")
async def departure(
    productId: str = Query(min_length=1, max_length=100),
    optionId: str = Query(min_length=1, max_length=100),
    availabilityId: str = Query(min_length=1, max_length=40),
    svc: Services = Depends(current_services),
) -> Response:
    return await departure_parties(svc, Departure(productId, optionId, availabilityId))
