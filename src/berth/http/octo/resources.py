"""GET and POST /availability/resources (octo/resources): the resource groups of one
availability, their resources and seats, what is free and what a selection would take."""

from __future__ import annotations

import re
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel, Field, ValidationError
from starlette.responses import Response

from berth.capabilities.resources.service import ResourcesQuery
from berth.capabilities.resources.views import slot_resources_view
from berth.container import Services
from berth.domain.errors import BadRequest
from berth.http.context import OctoRequest, octo_request, services
from berth.http.errors import validation_message
from berth.http.octo.common import octo_response
from berth.http.octo.requests import Identifier, Lenient, ResourceAllocations, UnitQuantity
from berth.http.octo.schemas import ERROR_RESPONSES

router = APIRouter(responses=ERROR_RESPONSES)


class ResourcesBody(Lenient):
    productId: Identifier | None = None
    optionId: Identifier | None = None
    availabilityId: Identifier | None = None
    units: Annotated[list[UnitQuantity], Field(max_length=100)] | None = None
    resourceAllocations: ResourceAllocations | None = None

    def query(self) -> ResourcesQuery:
        return ResourcesQuery(
            product_id=self.productId,
            option_id=self.optionId,
            availability_id=self.availabilityId,
            units=tuple((u.id, u.quantity) for u in self.units) if self.units is not None else None,
            # The route exists for the selection: it is read whether or not the capability is
            # requested (OCTO.md §1.5: capability routes are served anyway).
            resource_ids=(
                tuple(a.resourceId for a in self.resourceAllocations)
                if self.resourceAllocations is not None
                else None
            ),
        )


class SeatOut(BaseModel):
    id: str
    title: str
    row: str
    column: str
    resourceId: str | None = Field(default=None, description="on the group's seat lists")


class SellerOut(BaseModel):
    id: str
    name: str
    reference: str | None
    tags: list[str]
    emailAddress: str | None
    phoneNumber: str | None


class ResourceObjectOut(BaseModel):
    id: str
    title: str
    seating: bool
    driver: SellerOut | None
    guide: SellerOut | None
    seats: list[SeatOut] | None = Field(default=None, description="every seat of the resource")


class ResourceGroupObjectOut(BaseModel):
    id: str
    title: str
    split: bool
    required: bool


class ResourceEntryOut(BaseModel):
    resourceId: str
    resource: ResourceObjectOut
    status: str
    available: bool
    capacity: int
    vacancies: int
    availableSeats: list[SeatOut]
    selectedSeats: list[SeatOut]
    paxCount: int = Field(description="people the previewed allocation puts on this resource")


class ResourceGroupOut(BaseModel):
    resourceGroupId: str
    resourceGroup: ResourceGroupObjectOut
    status: str
    available: bool
    capacity: int
    vacancies: int
    resources: list[ResourceEntryOut]
    availableSeats: list[SeatOut]
    selectedSeats: list[SeatOut]


_INDEXED = re.compile(r"^(units|resourceAllocations)\[(\d{1,3})\]\[(\w+)\]$")


def _from_query(params: list[tuple[str, str]]) -> dict[str, Any]:
    """Query parameters as a request body: plain fields; `units` and `resourceAllocations`
    either as JSON text or indexed (`units[0][id]=adult&units[0][quantity]=2`,
    `resourceAllocations[0][resourceId]=boat-1`)."""
    body: dict[str, Any] = {}
    indexed: dict[str, dict[int, dict[str, Any]]] = {}
    for key, value in params:
        found = _INDEXED.match(key)
        if found:
            name, index, field = found.group(1), int(found.group(2)), found.group(3)
            # Query text is all strings; a count sent this way is a number (JSON bodies must send one).
            number = field == "quantity" and re.fullmatch(r"-?\d{1,9}", value)
            indexed.setdefault(name, {}).setdefault(index, {})[field] = int(value) if number else value
        elif key in ("units", "resourceAllocations"):
            try:
                body[key] = orjson.loads(value)
            except orjson.JSONDecodeError:
                raise BadRequest(f"{key} must be a JSON array, or sent as {key}[0][...]") from None
        else:
            body[key] = value
    for name, items in indexed.items():
        body[name] = [items[index] for index in sorted(items)]
    return body


async def _answer(body: ResourcesBody, octo: OctoRequest, svc: Services) -> Response:
    found = await svc.resources.slot_resources(octo.snapshot.catalog, body.query())
    return octo_response(octo, slot_resources_view(found))


@router.get(
    "/availability/resources",
    response_model=list[ResourceGroupOut],
    summary="Resource groups of one availability (query: productId, optionId, availabilityId, units)",
)
async def resources_by_query(
    request: Request,
    productId: str | None = Query(default=None),
    optionId: str | None = Query(default=None),
    availabilityId: str | None = Query(default=None),
    octo: OctoRequest = Depends(octo_request),
    svc: Services = Depends(services),
) -> Response:
    try:
        body = ResourcesBody.model_validate(_from_query(list(request.query_params.multi_items())))
    except ValidationError as exc:
        raise BadRequest(validation_message(list(exc.errors()))) from None
    return await _answer(body, octo, svc)


@router.post(
    "/availability/resources",
    response_model=list[ResourceGroupOut],
    summary="Resource groups of one availability; resourceAllocations[] previews a selection",
)
async def resources_by_body(
    body: ResourcesBody, octo: OctoRequest = Depends(octo_request), svc: Services = Depends(services)
) -> Response:
    return await _answer(body, octo, svc)
