"""Staff accounts, for admins: every account with its role and status; create one (its one-time
password is shown on that page only), give one a new API token (shown once), disable one."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Form, Request
from starlette.responses import Response

from berth.domain.errors import BadRequest, OctoError
from berth.domain.staff import ROLE_POWERS, Role, StaffMember, parse_role
from berth.http.admin.pages.errors import PageRoute
from berth.http.admin.pages.rendering import page, redirect
from berth.http.admin.pages.session import Notice, Staff, admin_form, staff

router = APIRouter(route_class=PageRoute)


async def _list_page(
    request: Request,
    me: Staff,
    *,
    created: tuple[StaffMember, str] | None = None,
    issued: tuple[StaffMember, str] | None = None,
    error: str | None = None,
    email: str = "",
    role: str = Role.VIEWER.value,
) -> Response:
    me.actor.require(Role.ADMIN, "Managing staff accounts")
    members = await me.services.staff.list()
    # Active accounts first, each group by email.
    ordered = sorted(members, key=lambda m: (not m.active, m.email))
    return page(
        request,
        "staff.html",
        me,
        section="staff",
        status_code=400 if error else 200,
        members=ordered,
        roles=list(Role),
        powers=ROLE_POWERS,
        created=created,
        issued=issued,
        error=error,
        email=email,
        role=role,
    )


@router.get("/staff")
async def staff_list(request: Request, me: Staff = Depends(staff)) -> Response:
    return await _list_page(request, me)


@router.post("/staff")
async def create(
    request: Request,
    email: str = Form(default="", max_length=254),
    role: str = Form(default="", max_length=20),
    me: Staff = Depends(admin_form),
) -> Response:
    try:
        created = await me.services.staff.create(email, parse_role(role), actor=me.actor)
    except OctoError as exc:
        return await _list_page(request, me, error=exc.message, email=email, role=role)
    # Answered here rather than redirected: a password must not travel in a cookie or an address.
    return await _list_page(request, me, created=created)


@router.post("/staff/{member_id}/token")
async def token(member_id: str, request: Request, me: Staff = Depends(admin_form)) -> Response:
    issued = await me.services.staff.issue_token(member_id, actor=me.actor)
    return await _list_page(request, me, issued=issued)


@router.post("/staff/{member_id}/disable")
async def disable(member_id: str, me: Staff = Depends(admin_form)) -> Response:
    try:
        disabled = await me.services.staff.disable(member_id, actor=me.actor)
    except BadRequest as exc:
        return redirect("/admin/staff", me, Notice("error", exc.message.rstrip(".") + "."))
    text = f"{disabled.email} disabled: signed out everywhere, and their API token no longer works."
    return redirect("/admin/staff", me, Notice("success", text))
