"""Staff and the audit trail in the admin API: who is calling, the staff accounts (admin
role), and what staff did, newest first."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query
from starlette.responses import Response

from berth.container import Services
from berth.domain.audit import AuditFilter
from berth.domain.staff import Actor
from berth.http.admin.roles import admin, viewer
from berth.http.context import current_services
from berth.http.octo.schemas import ADMIN_ERROR_RESPONSES
from berth.http.responses import json_response
from berth.http.types import MAX_OFFSET, IsoDateTime
from berth.views.staff import audit_json, staff_json

router = APIRouter(responses=ADMIN_ERROR_RESPONSES)


@router.get("/me", summary="Who the token belongs to, and their role")
async def me(actor: Actor = Depends(viewer)) -> Response:
    return json_response({"name": actor.name, "role": actor.role.value, "staffId": actor.staff_id})


@router.get("/staff", summary="Staff accounts (admin role); `berth staff` creates and disables them")
async def list_staff(_: Actor = Depends(admin), svc: Services = Depends(current_services)) -> Response:
    return json_response([staff_json(m) for m in await svc.staff.list()])


@router.get("/audit", summary="What staff did, newest first (every filter optional)")
async def audit(
    actor: str | None = Query(
        default=None, description="The member's email or staff id, or BERTH_ADMIN_TOKEN"
    ),
    target: str | None = Query(default=None, description="The target's id or label (a booking's reference)"),
    targetKind: str | None = Query(default=None, description="booking, mapping, connection, webhook, ..."),
    action: str | None = Query(default=None, description="booking.redeem, catalog.import, ..."),
    since: IsoDateTime | None = Query(default=None, description="From this time (inclusive)"),
    until: IsoDateTime | None = Query(default=None, description="Before this time"),
    limit: int = Query(default=50, ge=1, le=500),
    offset: int = Query(default=0, ge=0, le=MAX_OFFSET),
    _: Actor = Depends(viewer),
    svc: Services = Depends(current_services),
) -> Response:
    where = AuditFilter(
        actor=actor or None,
        target=target or None,
        target_kind=targetKind or None,
        action=action or None,
        since=since,
        until=until,
    )
    found, total = await svc.audit.search(where, limit, offset)
    return json_response(
        {"total": total, "limit": limit, "offset": offset, "entries": [audit_json(e) for e in found]}
    )
