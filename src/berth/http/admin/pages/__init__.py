"""The supplier's back office: server-rendered pages under /admin (the JSON API is /admin/api)."""

from __future__ import annotations

from fastapi import APIRouter

from berth.http.admin.pages import (
    audit,
    bookings,
    catalog,
    checkin,
    connections,
    dashboard,
    departures,
    manifest,
    mappings,
    sign_in,
    staff,
    static,
    webhooks,
)

router = APIRouter(include_in_schema=False)
for module in (
    static, sign_in, dashboard, bookings, manifest, departures, catalog, mappings, webhooks, connections, audit,
    staff, checkin,
):  # fmt: skip
    router.include_router(module.router, prefix="/admin")
router.include_router(checkin.api, prefix="/admin")
