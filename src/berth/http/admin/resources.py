"""Resources for supplier staff (admin token): the resource groups of the catalogue, and one
slot's resources with who has which places and seats."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends
from starlette.responses import Response

from berth.capabilities.resources.fields import HOLDS_ALLOCATIONS
from berth.capabilities.resources.views import slot_resources_view
from berth.container import Services
from berth.domain.catalog.lookup import find_option, find_product
from berth.http.admin.backoffice import manifest
from berth.http.context import services
from berth.http.octo.schemas import ADMIN_ERROR_RESPONSES
from berth.http.responses import json_response

router = APIRouter(responses=ADMIN_ERROR_RESPONSES)


@router.get("/resources", summary="Resource groups of every option that has them (catalogue file schema)")
async def list_resources(svc: Services = Depends(services)) -> Response:
    catalog = (await svc.catalog.snapshot()).catalog
    found = [
        {
            "productId": product.id,
            "optionId": option.id,
            "resourceGroups": [
                g.model_dump(mode="json", by_alias=True, exclude_none=True) for g in option.resource_groups
            ],
        }
        for product in catalog.products
        for option in product.options
        if option.resource_groups
    ]
    return json_response(found)


@router.get("/resources/{productId}", summary="Resource groups of one product's options")
async def product_resources(productId: str, svc: Services = Depends(services)) -> Response:
    product = find_product((await svc.catalog.snapshot()).catalog, productId)
    return json_response(
        [
            {
                "optionId": option.id,
                "resourceGroups": [
                    g.model_dump(mode="json", by_alias=True, exclude_none=True)
                    for g in option.resource_groups
                ],
            }
            for option in product.options
        ]
    )


@router.get(
    "/slots/{productId}/{optionId}/{availabilityId}/resources",
    summary="One slot's resources: what is free, and which booking has which places and seats",
)
async def slot_resources(
    productId: str, optionId: str, availabilityId: str, svc: Services = Depends(services)
) -> Response:
    catalog = (await svc.catalog.snapshot()).catalog
    option = find_option(find_product(catalog, productId), optionId)
    found = await manifest(svc, catalog, productId, optionId, availabilityId)
    groups = slot_resources_view(found.resources) if found.resources is not None else []
    holders: dict[str, list[dict[str, Any]]] = {}
    for details in found.expected:
        booking = details.booking
        if booking.status not in HOLDS_ALLOCATIONS:
            continue
        for allocation in booking.resource_allocations:
            holders.setdefault(allocation.resource_id, []).append(
                {
                    "bookingId": booking.id,
                    "supplierReference": booking.supplier_reference,
                    "status": booking.status.value,
                    "testMode": booking.test_mode,
                    "leadName": booking.contact.full_name,
                    "paxCount": allocation.pax_count,
                    "places": allocation.places,
                    "seatIds": list(allocation.seat_ids),
                }
            )
    for group in groups:
        for resource in group["resources"]:
            resource["allocations"] = holders.get(resource["resourceId"], [])
    return json_response(
        {
            "productId": productId,
            "optionId": option.id,
            "availabilityId": found.occupancy.slot.id,
            "resourceGroups": groups,
        }
    )
