"""Reseller connections: create one (its API key and webhook signing secret are shown on that
page only), rotate its signing secret (the new one shown once, the old one signing alongside
for a day), revoke one."""

from __future__ import annotations

import math
from collections import Counter
from datetime import datetime, timedelta

from fastapi import APIRouter, Depends, Form, Query, Request
from starlette.responses import Response

from berth.domain.connections import Connection
from berth.domain.errors import OctoError
from berth.http.admin.pages.errors import PageRoute
from berth.http.admin.pages.rendering import page, redirect
from berth.http.admin.pages.session import Notice, Staff, admin_form, staff
from berth.http.context import octo_endpoint

router = APIRouter(route_class=PageRoute)
PAGE_SIZE = 50
# How long a rotated-out signing secret keeps signing next to the new one: time for the
# reseller to install the new secret without rejecting a delivery.
ROTATION_GRACE = timedelta(hours=24)


async def _list_page(
    request: Request,
    me: Staff,
    page_number: int = 1,
    *,
    created: tuple[Connection, str, str] | None = None,
    rotated: tuple[Connection, str, datetime] | None = None,
    error: str | None = None,
    name: str = "",
) -> Response:
    everything = await me.services.connections.list()
    # Active connections first, each group oldest first (the order they were created in).
    ordered = sorted(everything, key=lambda c: (not c.active, c.created_at, c.name))
    shown = ordered[(page_number - 1) * PAGE_SIZE : page_number * PAGE_SIZE]
    webhooks = Counter(w.connection_id for w in await me.services.webhooks.find())
    return page(
        request,
        "connections.html",
        me,
        section="connections",
        status_code=400 if error else 200,
        connections=shown,
        total=len(everything),
        page_number=page_number,
        pages=max(1, math.ceil(len(everything) / PAGE_SIZE)),
        pager_url=lambda number: f"/admin/connections?page={number}",
        created=created,
        rotated=rotated,
        webhooks=webhooks,
        error=error,
        name=name,
        endpoint=octo_endpoint(request),
    )


@router.get("/connections")
async def connections(
    request: Request, page_number: int = Query(default=1, ge=1, alias="page"), me: Staff = Depends(staff)
) -> Response:
    return await _list_page(request, me, page_number)


@router.post("/connections")
async def create(
    request: Request, name: str = Form(default="", max_length=200), me: Staff = Depends(admin_form)
) -> Response:
    try:
        created = await me.services.connections.create(name, actor=me.actor)
    except OctoError as exc:
        return await _list_page(request, me, error=exc.message, name=name)
    # Answered here rather than redirected: secrets must not travel in a cookie or an address.
    return await _list_page(request, me, created=created)


@router.post("/connections/{connection_id}/revoke")
async def revoke(connection_id: str, me: Staff = Depends(admin_form)) -> Response:
    revoked = await me.services.connections.revoke(connection_id, actor=me.actor)
    text = f"Connection “{revoked.name}” revoked: its API key {revoked.key_hint} no longer works."
    return redirect("/admin/connections", me, Notice("success", text))


@router.post("/connections/{connection_id}/rotate-secret")
async def rotate_secret(connection_id: str, request: Request, me: Staff = Depends(admin_form)) -> Response:
    connection = await me.services.connections.get(connection_id)
    if not connection.active:
        text = f"Connection “{connection.name}” is revoked: its signing secret was not rotated."
        return redirect("/admin/connections", me, Notice("error", text))
    secret = await me.services.webhooks.rotate_secret(connection.id, ROTATION_GRACE, actor=me.actor)
    # Answered here rather than redirected: the new secret must not travel in a cookie or an address.
    retired_at = me.services.clock() + ROTATION_GRACE
    return await _list_page(request, me, rotated=(connection, secret, retired_at))
