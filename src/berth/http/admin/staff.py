"""Staff and the audit trail in the admin API: who is calling, the staff accounts (the admin
role lists, creates, re-tokens and disables them), and what staff did, newest first."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, ConfigDict, Field
from starlette.responses import Response

from berth.container import Services
from berth.domain.audit import AuditFilter
from berth.domain.staff import Actor, Role
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


class StaffCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    email: str = Field(min_length=3, max_length=254)
    role: Role


@router.post("/staff", summary="Create a staff account (admin role); answers its one-time password, once")
async def create_staff(
    body: StaffCreate, actor: Actor = Depends(admin), svc: Services = Depends(current_services)
) -> Response:
    member, password = await svc.staff.create(body.email, body.role, actor=actor)
    return json_response({"staff": staff_json(member), "password": password})


@router.post("/staff/{staffId}/token", summary="A new admin API token for the account (admin role), once")
async def staff_token(
    staffId: str, actor: Actor = Depends(admin), svc: Services = Depends(current_services)
) -> Response:
    member, token = await svc.staff.issue_token(staffId, actor=actor)
    return json_response({"staff": staff_json(member), "token": token})


@router.post("/staff/{staffId}/disable", summary="Disable an account (admin role): sessions end, token stops")
async def disable_staff(
    staffId: str, actor: Actor = Depends(admin), svc: Services = Depends(current_services)
) -> Response:
    return json_response(staff_json(await svc.staff.disable(staffId, actor=actor)))


@router.get("/audit", summary="What staff did, newest first (every filter optional)")
async def audit(
    actor: str | None = Query(
        default=None, description="The member's email or staff id, or BERTH_ADMIN_TOKEN"
    ),
    target: str | None = Query(default=None, description="The target's id or label (a booking's reference)"),
    targetKind: str | None = Query(default=None, description="booking, mapping, connection, webhook, ..."),
    action: str | None = Query(default=None, description="booking.redeem, catalog.import, ..."),
    since: IsoDateTime | None = Query(
        default=None, description="From this time (inclusive; UTC without an offset)"
    ),
    until: IsoDateTime | None = Query(default=None, description="Before this time (UTC without an offset)"),
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
