"""The supplier's back office: server-rendered pages under /admin (the JSON API is /admin/api)."""

from __future__ import annotations

from fastapi import APIRouter

from berth.http.admin.pages import (
    audit,
    booking_money,
    bookings,
    catalog,
    catalog_editor,
    checkin,
    connection,
    connections,
    contracts,
    dashboard,
    departure_list,
    departures,
    gifts,
    manifest,
    mappings,
    offers,
    outbox,
    payments,
    sign_in,
    staff,
    static,
    webhooks,
)

router = APIRouter(include_in_schema=False)
for module in (
    static, sign_in, dashboard, bookings, booking_money, manifest, departures, catalog_editor, catalog, mappings, webhooks, connections, connection, contracts, offers, audit,
    staff, departure_list, outbox, checkin, payments, gifts,
):  # fmt: skip
    router.include_router(module.router, prefix="/admin")
router.include_router(checkin.api, prefix="/admin")
