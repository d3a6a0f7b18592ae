"""Mapping rows of every connection, for supplier staff: the pending list with counts, one row
with its notifications, and completing a row (which notifies the reseller)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, ConfigDict, Field
from starlette.responses import Response

from berth.container import Services
from berth.domain.mappings import MappingRow, Resolution, mapping_json
from berth.domain.staff import Actor
from berth.domain.times import format_utc_or_none
from berth.http.admin.roles import operator
from berth.http.admin.webhooks import delivery_json
from berth.http.context import services
from berth.http.octo.schemas import ADMIN_ERROR_RESPONSES
from berth.http.responses import json_response
from berth.http.types import MAX_OFFSET

router = APIRouter(responses=ADMIN_ERROR_RESPONSES)


class CompleteBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    productId: str = Field(min_length=1, max_length=100)
    optionId: str | None = Field(default=None, max_length=100, description="Required when optionRequired")
    unitId: str | None = Field(default=None, max_length=100, description="Required when unitRequired")


def staff_mapping_json(row: MappingRow, connection_name: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": row.id,
        "connectionId": row.connection_id,
        "status": "MAPPED" if row.mapped else "PENDING",
        **mapping_json(row),
        "createdAt": format_utc_or_none(row.created_at),
        "updatedAt": format_utc_or_none(row.updated_at),
        "mappedAt": format_utc_or_none(row.mapped_at),
    }
    if connection_name is not None:
        out["connectionName"] = connection_name
    return out


@router.get("/mappings", summary="Mapping rows of every connection (pending=true: those waiting for you)")
async def list_mappings(
    pending: bool | None = Query(default=None, description="true: waiting rows; false: mapped rows"),
    connectionId: str | None = None,
    limit: int = Query(default=50, ge=1, le=500),
    offset: int = Query(default=0, ge=0, le=MAX_OFFSET),
    svc: Services = Depends(services),
) -> Response:
    found, total = await svc.mappings.search(
        pending=pending, connection_id=connectionId, limit=limit, offset=offset
    )
    counts = await svc.mappings.counts()
    return json_response(
        {
            "total": total,
            "pending": sum(c.pending for c in counts if connectionId in (None, c.connection_id)),
            "limit": limit,
            "offset": offset,
            "mappings": [staff_mapping_json(s.row, s.connection_name) for s in found],
        }
    )


@router.get("/mappings/counts", summary="Pending and mapped rows per connection")
async def mapping_counts(svc: Services = Depends(services)) -> Response:
    counts = await svc.mappings.counts()
    return json_response(
        {
            "pending": sum(c.pending for c in counts),
            "mapped": sum(c.mapped for c in counts),
            "connections": [
                {
                    "connectionId": c.connection_id,
                    "connectionName": c.connection_name,
                    "pending": c.pending,
                    "mapped": c.mapped,
                }
                for c in counts
            ],
        }
    )


@router.get("/mappings/{mappingId}", summary="One mapping row with its notifications, newest first")
async def get_mapping(mappingId: str, svc: Services = Depends(services)) -> Response:
    row, notifications = await svc.mappings.get(mappingId)
    return json_response(
        {**staff_mapping_json(row), "notifications": [delivery_json(d) for d in notifications]}
    )


@router.patch(
    "/mappings/{mappingId}",
    summary="Map a row to a product (and option and unit where required); notifies the reseller",
)
async def complete_mapping(
    mappingId: str, body: CompleteBody, actor: Actor = Depends(operator), svc: Services = Depends(services)
) -> Response:
    catalog = (await svc.catalog.snapshot()).catalog
    row = await svc.mappings.complete(
        catalog, mappingId, Resolution(body.productId, body.optionId, body.unitId), actor=actor
    )
    return json_response(staff_mapping_json(row))
